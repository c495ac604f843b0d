import Foundation

/// What each origin answered in ALPN, remembered for a while (per `host:port`), so that the
/// next connection offers what works at once instead of repeating a fallback.
///
/// An origin that negotiates nothing when offered `http/1.1` may speak only h2 (nghttpd does
/// this), or may predate ALPN and speak only HTTP/1.1: the pool tries the other protocol once and
/// remembers the answer here.
final class ALPNMemory: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var entries: [String: (protocolName: String?, until: Date)] = [:]
    /// How long an answer is trusted. Servers change rarely; a deploy that adds h2 is noticed
    /// within this time.
    let lifetime: TimeInterval
    /// Most origins remembered; beyond it the oldest answers go first.
    let capacity: Int

    init(lifetime: TimeInterval = 600, capacity: Int = 4096) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// What the origin chose last time when it had to fall back (`h2`, `http/1.1`, or nil for
    /// none), unless that is forgotten; the outer nil means nothing is known.
    func fallback(for key: String, now: Date = Date()) -> String?? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries[key] else { return nil }
        guard entry.until > now else {
            entries[key] = nil
            return nil
        }
        return .some(entry.protocolName)
    }

    /// Remembers the protocol an origin settled on after a fallback.
    func remember(_ protocolName: String?, for key: String, now: Date = Date()) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.until < $1.value.until })?.key {
            entries[oldest] = nil
        }
        entries[key] = (protocolName, now.addingTimeInterval(lifetime))
    }
}
