/// What an `HTTP2Session` observed, in the order it happened.
///
/// The end of a peer's message is the `endStream` flag of the event that carried it; trailers
/// always end it. Stream 0 in `protocolError` means the connection.
public enum HTTP2Event: Hashable, Sendable {
    /// Server role: a request head arrived.
    case requestHead(stream: Int32, HTTP2HeaderBlock, endStream: Bool)
    /// Client role: the final (non-1xx) response head arrived.
    case responseHead(stream: Int32, HTTP2HeaderBlock, endStream: Bool)
    /// Client role: an informational (1xx) response head arrived; the final one follows.
    case informationalHead(stream: Int32, HTTP2HeaderBlock)
    /// A trailer block arrived; it ends the peer's message.
    case trailers(stream: Int32, [HTTP2Field])
    /// Body bytes arrived. Not acknowledged to the peer until `consume(stream:count:)` is called
    /// for them. Adjacent chunks of one stream are merged; `bytes` may be empty when only
    /// END_STREAM arrived.
    case data(stream: Int32, bytes: [UInt8], endStream: Bool)
    /// This many bytes given to `submitData` left the outbound queue for the wire (they are in
    /// what `pendingOutput()` returns). A relay consumes as many on the session they came from.
    case dataSent(stream: Int32, count: Int)
    /// This many bytes given to `submitData` were dropped because the stream closed first. A relay
    /// consumes them too, or the source connection's window shrinks for good.
    case dataDiscarded(stream: Int32, count: Int)
    /// A RST_STREAM was received (`byPeer`) or sent (by the caller, or by the library for a
    /// protocol error on the stream).
    case streamReset(stream: Int32, code: HTTP2ErrorCode, byPeer: Bool)
    /// Client role: a request the library dropped before its HEADERS went out (a GOAWAY arrived
    /// first), so nothing of it reached the peer: the body bytes given to `submitData` (all still
    /// queued), whether the body had ended, and its trailers. They are not reported as
    /// `dataDiscarded`: a relay may send them again on another connection, whose `dataSent`
    /// then acknowledges them. `.streamClosed(stream, .refusedStream)` follows.
    case requestNotSent(stream: Int32, body: [UInt8], endStream: Bool, trailers: [HTTP2Field]?)
    /// The stream is closed and forgotten; `code` is NO_ERROR after a clean end of both sides.
    case streamClosed(stream: Int32, code: HTTP2ErrorCode)
    /// The peer sent GOAWAY: streams above `lastStreamID` were not and will not be processed.
    case goAway(lastStreamID: Int32, code: HTTP2ErrorCode, debugData: [UInt8])
    /// The peer's SETTINGS frame (not an ACK), in frame order.
    case settingsReceived([HTTP2Setting])
    /// The peer sent a PING; the library answers it.
    case pingReceived(opaque: [UInt8])
    /// The peer acknowledged one of our PINGs.
    case pingAcknowledged(opaque: [UInt8])
    /// A header block exceeded `HTTP2Limits.maxHeaderListSize` and was dropped. Server role, request
    /// head: the session answers 431 itself. Otherwise it resets the stream with CANCEL.
    case headerListTooLarge(stream: Int32, size: Int)
    /// The peer broke the protocol: on a stream (the library resets it) or on the connection
    /// (stream 0: the library sends GOAWAY, or `receive` throws). `reason` is the library's text.
    case protocolError(stream: Int32, reason: String)
    /// The session refused a new stream of the peer's over `HTTP2Limits.maxConcurrentStreams`
    /// (RST_STREAM REFUSED_STREAM): nothing of it was processed, and the peer may send it again.
    case streamRefused(stream: Int32)
}

/// One SETTINGS parameter (RFC 9113 §6.5.2).
public struct HTTP2Setting: Hashable, Sendable, CustomStringConvertible {
    public var id: UInt16
    public var value: UInt32

    public init(id: UInt16, value: UInt32) {
        self.id = id
        self.value = value
    }

    public static let headerTableSizeID: UInt16 = 0x1
    public static let enablePushID: UInt16 = 0x2
    public static let maxConcurrentStreamsID: UInt16 = 0x3
    public static let initialWindowSizeID: UInt16 = 0x4
    public static let maxFrameSizeID: UInt16 = 0x5
    public static let maxHeaderListSizeID: UInt16 = 0x6
    public static let enableConnectProtocolID: UInt16 = 0x8

    public var description: String { "0x\(String(id, radix: 16))=\(value)" }
}
