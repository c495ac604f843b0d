/// One length-prefixed message as it arrived in a gRPC body, with as many of its bytes as the
/// splitter kept.
///
/// PROTOCOL-HTTP2.md: `Length-Prefixed-Message → Compressed-Flag Message-Length Message`, a
/// flag byte of 0 or 1, then a 4-byte big-endian length. gRPC-Web (PROTOCOL-WEB.md) sets the
/// flag's most significant bit on the frame that carries the trailers instead of a message.
public struct GRPCWireMessage: Sendable, Equatable {
    /// The Compressed-Flag: the message is coded with the direction's `grpc-encoding`.
    public var compressed: Bool
    /// gRPC-Web: this frame holds the trailers (`name:value` lines); Connect: the end-of-stream
    /// JSON. Not a message either way.
    public var isTrailers = false
    /// The Message-Length the prefix declared.
    public var length: Int
    /// Bytes of the message that arrived: `length`, or fewer when the body ended first.
    public var received: Int
    /// The whole message when `isHeld`, else its first bytes (up to the splitter's `keptBytes`).
    public var bytes: [UInt8]
    /// Whether `bytes` is the whole message.
    public var isHeld: Bool

    /// `message` as it goes in a gRPC body: uncompressed (flag 0), its length, its bytes.
    public static func framed(_ message: [UInt8]) -> [UInt8] {
        let length = UInt32(message.count)
        return [0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + message
    }

    public init(compressed: Bool, length: Int, received: Int, bytes: [UInt8], isHeld: Bool, isTrailers: Bool = false) {
        self.compressed = compressed
        self.isTrailers = isTrailers
        self.length = length
        self.received = received
        self.bytes = bytes
        self.isHeld = isHeld
    }

    /// Whether every byte the prefix declared arrived.
    public var isComplete: Bool { received == length }
}
