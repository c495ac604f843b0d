/// A WebSocket opcode (RFC 6455 §5.2), kept as its 4-bit value so reserved ones can be shown.
public struct WebSocketOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 4-bit opcode.
    public let rawValue: UInt8

    /// Wraps a 4-bit opcode.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue & 0x0F
    }

    /// `%x0`: continues a fragmented message.
    public static let continuation = WebSocketOpcode(rawValue: 0x0)
    /// `%x1`: text (UTF-8) message.
    public static let text = WebSocketOpcode(rawValue: 0x1)
    /// `%x2`: binary message.
    public static let binary = WebSocketOpcode(rawValue: 0x2)
    /// `%x8`: connection close.
    public static let close = WebSocketOpcode(rawValue: 0x8)
    /// `%x9`: ping.
    public static let ping = WebSocketOpcode(rawValue: 0x9)
    /// `%xA`: pong.
    public static let pong = WebSocketOpcode(rawValue: 0xA)

    /// Whether this is a control opcode (`%x8`–`%xF`), which may not be fragmented.
    public var isControl: Bool { rawValue & 0x08 != 0 }

    /// Whether RFC 6455 defines this opcode.
    public var isDefined: Bool { [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(rawValue) }

    /// The opcode's name, or `opcode 0xN` for reserved ones.
    public var description: String {
        switch rawValue {
        case 0x0: "continuation"
        case 0x1: "text"
        case 0x2: "binary"
        case 0x8: "close"
        case 0x9: "ping"
        case 0xA: "pong"
        default: "opcode 0x" + String(rawValue, radix: 16, uppercase: true)
        }
    }
}

/// One WebSocket frame as seen on the wire, with a bounded prefix of its payload for logging.
public struct WebSocketFrame: Sendable, Equatable {
    /// Whether this is the final fragment of its message.
    public var fin: Bool
    /// RSV1–RSV3 as the low three bits (RSV1 = 0b100), set by extensions such as permessage-deflate.
    public var reservedBits: UInt8
    /// The frame's opcode.
    public var opcode: WebSocketOpcode
    /// Whether the payload was masked (client-to-server frames must be).
    public var masked: Bool
    /// The payload length the frame declared.
    public var payloadLength: UInt64
    /// The first bytes of the payload, unmasked, at most the decoder's prefix limit.
    public var payloadPrefix: [UInt8]

    /// Creates a frame description.
    public init(
        fin: Bool, reservedBits: UInt8 = 0, opcode: WebSocketOpcode, masked: Bool, payloadLength: UInt64,
        payloadPrefix: [UInt8]
    ) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.masked = masked
        self.payloadLength = payloadLength
        self.payloadPrefix = payloadPrefix
    }
}

/// A complete WebSocket message: one unfragmented frame, or a data frame and its continuations.
public struct WebSocketMessage: Sendable, Equatable {
    /// The opcode of the first frame: text, binary, or a control opcode.
    public var opcode: WebSocketOpcode
    /// The payload length summed over every frame.
    public var length: UInt64
    /// The first bytes of the message payload, unmasked, at most the decoder's prefix limit.
    public var prefix: [UInt8]
    /// How many frames carried the message.
    public var frameCount: Int
    /// RSV1–RSV3 of the first frame (RSV1 = 0b100: a permessage-deflate message is compressed).
    public var reservedBits: UInt8

    /// Creates a message description.
    public init(opcode: WebSocketOpcode, length: UInt64, prefix: [UInt8], frameCount: Int, reservedBits: UInt8 = 0) {
        self.opcode = opcode
        self.length = length
        self.prefix = prefix
        self.frameCount = frameCount
        self.reservedBits = reservedBits
    }
}

/// What the decoder reports: every frame, and every message once its last frame is complete.
public enum WebSocketEvent: Sendable, Equatable {
    /// A frame whose payload has been fully received.
    case frame(WebSocketFrame)
    /// A message whose final frame has been fully received; follows that frame's `.frame`.
    case message(WebSocketMessage)
    /// Payload bytes of a data frame (text, binary or continuation), unmasked, as they arrive;
    /// only from a decoder made with `streamingPayload` (to inflate permessage-deflate messages).
    /// The frame is its header: opcode and reserved bits, no payload prefix.
    case payload(WebSocketFrame, [UInt8])
}

/// Why a byte stream is not valid WebSocket framing (RFC 6455 §5).
public struct WebSocketFrameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line saying what was wrong, e.g. "control frame is fragmented".
    public let reason: String

    /// Creates an error with `reason`.
    public init(reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}
