/// The limits and settings an `HTTP2Session` applies, every default stated with its reason.
///
/// libnghttp2 caps neither concurrent streams nor header list size on its own; every value here
/// is set on the session explicitly, so what the peer sees never depends on library defaults.
public struct HTTP2Limits: Hashable, Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS we advertise: 100, the value RFC 9113 §6.5.2 recommends as
    /// the least, and SwiftNIO's. The library refuses streams beyond it (REFUSED_STREAM).
    public var maxConcurrentStreams: UInt32 = 100
    /// SETTINGS_MAX_HEADER_LIST_SIZE we advertise and enforce (name + value + 32 per field):
    /// 64 KiB. Above it a block is dropped and answered (431 or RST_STREAM), so an HPACK bomb
    /// never accumulates. grpcio advertises 16 KiB; browsers' cookies fit in 64 KiB.
    public var maxHeaderListSize: Int = 65_536
    /// SETTINGS_MAX_FRAME_SIZE we advertise: 16 KiB, the protocol's initial value. Larger frames
    /// save little and let one stream hold the connection longer.
    public var maxFrameSize: UInt32 = 16_384
    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise, per stream: 256 KiB. A relay holds at most this
    /// much unconsumed per stream; 64 KiB would cap a download at 64 KiB per round trip
    /// (1.3 MB/s at 50 ms), 256 KiB allows ~5 MB/s at 50 ms while bounding memory.
    public var initialWindowSize: UInt32 = 262_144
    /// The connection-level receive window: 2 MiB, raised from 65 535 by a WINDOW_UPDATE at start.
    /// A relay acknowledges it as DATA arrives (`consumeConnection`) and each stream's window as
    /// the other side takes the bytes (`consumeStream`): a stalled stream then holds at most its
    /// stream window, so what a connection holds is bounded by streams × `initialWindowSize`
    /// (25 MiB at the defaults) and stalled streams never starve the others of this window.
    public var connectionWindowSize: UInt32 = 2_097_152
    /// SETTINGS_HEADER_TABLE_SIZE we advertise (the peer's encoder table): 4 KiB, the default.
    public var headerTableSize: UInt32 = 4096
    /// Our encoder's dynamic table cap, whatever the peer allows: 4 KiB (libnghttp2's default).
    public var maxDeflateDynamicTableSize: Int = 4096
    /// SETTINGS entries accepted per frame before the connection is closed: 32 (libnghttp2's
    /// default; seven parameters exist).
    public var maxSettingsEntries: Int = 32
    /// SETTINGS ACK and PING ACK frames we may owe before the peer is deemed flooding and the
    /// session fails: 1000 (libnghttp2's default).
    public var maxOutboundAck: Int = 1000
    /// CONTINUATION frames accepted after one HEADERS: 8 (libnghttp2's default, CVE-2024-28182).
    public var maxContinuations: Int = 8
    /// Server role: RST_STREAM frames a peer may send at once before GOAWAY (a token bucket):
    /// 1000, libnghttp2's default against rapid reset (CVE-2023-44487).
    public var streamResetBurst: UInt64 = 1000
    /// Server role: tokens the reset bucket regains per second: 33 (libnghttp2's default).
    public var streamResetRatePerSecond: UInt64 = 33
    /// SETTINGS_ENABLE_PUSH: false. A client session sends 0, so a PUSH_PROMISE is a connection
    /// error; a server session never pushes.
    public var enablePush: Bool = false
    /// Whether closed streams are kept for the RFC 7540 priority tree: false (saves memory, and
    /// RFC 9113 deprecated that tree).
    public var keepClosedStreams: Bool = false

    /// The defaults above.
    public init() {}

    /// The text body of the 431 a server session answers to a request head of `size` bytes over
    /// `limit` (`maxHeaderListSize`), in the words of the proxy's other answers (`status reason: detail`).
    public static func headerListAnswer(size: Int, limit: Int) -> [UInt8] {
        Array("431 Request Header Fields Too Large: the request's header list (\(size) bytes) exceeds \(limit) bytes\n".utf8)
    }
}
