import HTTP1

/// `X-DevProxy-Replay: SECRET NEW_ID [ORIGINAL_ID] [host=HOST] [alpn=h2]`: how the web UI's
/// replayer, a client of the proxy's own listener, names the flow it makes, the flow it replays, a
/// `Host` edited to differ from the URL's, and that the replayed flow went over HTTP/2.
public struct ReplayMark: Equatable, Sendable {
    public static let header = "X-DevProxy-Replay"

    /// The new flow's id.
    public let id: String
    /// The replayed flow's id; nil for a request composed in the UI.
    public let original: String?
    /// The `Host` the user typed in place of the URL's, sent as typed while the connection goes
    /// to the URL's host (as mitmproxy's and Charles's edited requests do); nil: the URL's. RFC
    /// 9112 §3.2.2 has a proxy replace an absolute-form request's Host with the URL's authority,
    /// which made the edit a no-op.
    public let host: String?
    /// The replayed flow went over HTTP/2: the origin is offered `h2` first, so that the replay
    /// (which the replayer sends over HTTP/1.1) reaches it as the original did, as mitmproxy's
    /// replays of HTTP/2 flows do. Without it an origin that speaks both got HTTP/1.1.
    public let http2: Bool

    public init(id: String, original: String?, host: String? = nil, http2: Bool = false) {
        self.id = id
        self.original = original
        self.host = host
        self.http2 = http2
    }

    /// The header's value for this mark under `secret`.
    public func value(secret: String) -> String {
        [secret, id, original, host.map { Self.hostPrefix + $0 }, http2 ? Self.http2Token : nil].compactMap { $0 }
            .joined(separator: " ")
    }

    private static let hostPrefix = "host="
    private static let http2Token = "alpn=h2"

    /// Whether `host` can travel in the mark: not empty, no whitespace or control character
    /// (the mark's parts are separated by spaces, and no authority holds one).
    public static func canCarry(host: String) -> Bool {
        !host.isEmpty && !host.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    /// Takes the header off `head` (it never reaches an origin) and returns its mark when it
    /// carries this run's secret; nil otherwise (no secret configured, a wrong one, or malformed).
    static func take(from head: inout HTTPRequestHead, secret: String?) -> ReplayMark? {
        guard let value = head.headers[header] else { return nil }
        head.headers.remove(header)
        var parts = value.split(separator: " ").map(String.init)
        var http2 = false
        if parts.count >= 3, parts.last == http2Token {
            http2 = true
            parts.removeLast()
        }
        var host: String?
        if parts.count >= 3, let last = parts.last, last.hasPrefix(hostPrefix) {
            host = String(last.dropFirst(hostPrefix.count))
            parts.removeLast()
        }
        guard let secret, parts.count == 2 || parts.count == 3, constantTimeEqual(parts[0], secret),
              parts[1].utf8.count <= 128, host.map(canCarry) != false else { return nil }
        return ReplayMark(id: parts[1], original: parts.count == 3 ? parts[2] : nil, host: host, http2: http2)
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
