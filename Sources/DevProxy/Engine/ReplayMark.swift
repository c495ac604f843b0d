import HTTP1

/// `X-DevProxy-Replay: SECRET NEW_ID [ORIGINAL_ID]`: how the web UI's replayer, a client of the
/// proxy's own listener, names the flow it makes and the flow it replays.
struct ReplayMark: Equatable {
    static let header = "X-DevProxy-Replay"

    /// The new flow's id.
    let id: String
    /// The replayed flow's id; nil for a request composed in the UI.
    let original: String?

    /// Takes the header off `head` (it never reaches an origin) and returns its mark when it
    /// carries this run's secret; nil otherwise (no secret configured, a wrong one, or malformed).
    static func take(from head: inout HTTPRequestHead, secret: String?) -> ReplayMark? {
        guard let value = head.headers[header] else { return nil }
        head.headers.remove(header)
        let parts = value.split(separator: " ").map(String.init)
        guard let secret, parts.count == 2 || parts.count == 3, constantTimeEqual(parts[0], secret),
              parts[1].utf8.count <= 128 else { return nil }
        return ReplayMark(id: parts[1], original: parts.count == 3 ? parts[2] : nil)
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
