import Foundation
import Synchronization

/// A bounded, thread-safe cache of leaves by host name; the least recently used leaf goes
/// first. Concurrent requests for the same name mint once: later callers wait for the first.
public final class LeafCache: Sendable {
    /// Default capacity: every host a phone app talks to in a long session (mitmproxy keeps
    /// 100). A cached P-256 leaf holds ~12 KiB (certificate, key, OpenSSL's caches of both), so
    /// 1,024 of them were 12 MiB after a crawl of many hosts; a miss costs one mint (~0.15 ms).
    public static let defaultCapacity = 256

    /// The issuer leaves come from now (`renewal` may replace it).
    public var issuer: LeafIssuer { current.withLock { $0 } }
    public let capacity: Int
    /// A leaf is replaced when it has less than this left to live.
    public let renewBefore: TimeInterval
    /// A new issuer when the signer has less than `renewSignerBefore` left (a local development
    /// CA issuing itself a new intermediate); nil: the signer is never replaced here.
    private let renewal: (@Sendable (Date) throws -> LeafIssuer)?
    /// How long before the signer's not-after `renewal` runs: a day.
    public static let renewSignerBefore: TimeInterval = 86_400

    private let current: Mutex<LeafIssuer>
    private let state: Mutex<State>
    private let minted = Condition()

    private struct State {
        var entries: [LeafName: (leaf: Leaf, lastUse: UInt64)] = [:]
        var inFlight: Set<LeafName> = []
        var clock: UInt64 = 0
        var mintCount = 0
    }

    /// - Parameter renewal: makes a new issuer when the current signer is within a day of its
    ///   not-after (or past it): a local development CA renews its intermediate while running.
    ///   Leaves minted meanwhile come from the new one; a renewal that fails leaves the old one.
    public init(issuer: LeafIssuer, capacity: Int = LeafCache.defaultCapacity, renewBefore: TimeInterval = 3600,
                renewal: (@Sendable (Date) throws -> LeafIssuer)? = nil) {
        self.current = Mutex(issuer)
        self.capacity = max(1, capacity)
        self.renewBefore = renewBefore
        self.renewal = renewal
        self.state = Mutex(State())
    }

    /// The issuer to mint with at `now`, renewed first when `renewal` says so. Renewals are
    /// serialised by `current`'s lock, so a burst of connections renews once.
    private func issuer(at now: Date) -> LeafIssuer {
        current.withLock { issuer in
            guard let renewal, issuer.signer.certificate.notAfter.timeIntervalSince(now) < Self.renewSignerBefore,
                  let renewed = try? renewal(now) else { return issuer }
            issuer = renewed
            return renewed
        }
    }

    /// How many leaves this cache has minted (for tests and statistics).
    public var mintCount: Int { state.withLock { $0.mintCount } }

    /// How many leaves are cached.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The cached leaf for `name`, minting one if needed.
    ///
    /// - Throws: whatever `LeafIssuer.issue` throws; a failure is not cached.
    public func leaf(for name: LeafName, now: Date = Date()) throws -> Leaf {
        let signing = issuer(at: now)
        let signerEnds = signing.signer.certificate.notAfter
        while true {
            let claim: Leaf? = state.withLock { state in
                // Fresh when it has time left, or already lasts as long as its signer lets a new one
                // (in an intermediate's last hour every connection minted a leaf of its own).
                if let entry = state.entries[name], entry.leaf.certificate.notAfter > now,
                   entry.leaf.certificate.notAfter.timeIntervalSince(now) > renewBefore
                       || entry.leaf.certificate.notAfter >= signerEnds {
                    state.clock += 1
                    state.entries[name] = (entry.leaf, state.clock)
                    return entry.leaf
                }
                return nil
            }
            if let claim { return claim }
            let mine = state.withLock { state in state.inFlight.insert(name).inserted }
            if mine { break }
            minted.wait { self.state.withLock { !$0.inFlight.contains(name) } }
        }
        defer {
            _ = state.withLock { $0.inFlight.remove(name) }
            minted.broadcast()
        }
        let leaf = try signing.issue(for: [name], now: now)
        state.withLock { state in
            state.clock += 1
            state.mintCount += 1
            state.entries[name] = (leaf, state.clock)
            if state.entries.count > capacity,
               let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries.removeValue(forKey: oldest)
            }
        }
        return leaf
    }
}

/// A condition variable for waiters that re-check a predicate after each broadcast.
final class Condition: @unchecked Sendable {
    // pthread primitives are used only through this class, which serialises access.
    private var mutex = pthread_mutex_t()
    private var cond = pthread_cond_t()

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&cond, nil)
    }

    deinit {
        pthread_cond_destroy(&cond)
        pthread_mutex_destroy(&mutex)
    }

    /// Blocks until `done()` is true, re-checking at each broadcast (and every 50 ms, so a
    /// broadcast between the check and the wait is never lost for long).
    func wait(until done: () -> Bool) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while !done() {
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            deadline.tv_nsec += 50_000_000
            if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
            pthread_cond_timedwait(&cond, &mutex, &deadline)
        }
    }

    func broadcast() {
        pthread_mutex_lock(&mutex)
        pthread_cond_broadcast(&cond)
        pthread_mutex_unlock(&mutex)
    }
}
