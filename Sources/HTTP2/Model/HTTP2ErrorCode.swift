/// An HTTP/2 error code, as carried by RST_STREAM and GOAWAY (RFC 9113 §7).
///
/// A struct rather than an enum: a peer may send any 32-bit value, and an unknown code must
/// travel through a relay unchanged ("Unknown or unsupported error codes MUST NOT trigger any
/// special behavior", §7).
public struct HTTP2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// NO_ERROR (0x0): a graceful shutdown or a stream no longer needed after a complete response.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// PROTOCOL_ERROR (0x1).
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    /// INTERNAL_ERROR (0x2).
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// FLOW_CONTROL_ERROR (0x3).
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS_TIMEOUT (0x4).
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// STREAM_CLOSED (0x5).
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// FRAME_SIZE_ERROR (0x6).
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// REFUSED_STREAM (0x7): the stream was not processed; the client may retry it.
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    /// CANCEL (0x8): the stream is no longer needed.
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// COMPRESSION_ERROR (0x9): the HPACK state can no longer be kept.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    /// CONNECT_ERROR (0xa).
    public static let connectError = HTTP2ErrorCode(rawValue: 0xa)
    /// ENHANCE_YOUR_CALM (0xb): the peer behaves in a way that may be generating excessive load.
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xb)
    /// INADEQUATE_SECURITY (0xc).
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xc)
    /// HTTP_1_1_REQUIRED (0xd).
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xd)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The RFC's name (`REFUSED_STREAM`), or `0x…` for a code the RFC does not define.
    public var description: String {
        rawValue < UInt32(Self.names.count) ? Self.names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}
