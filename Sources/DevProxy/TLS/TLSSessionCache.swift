import CertAuthority
import CTLS
import Foundation

/// Remembers the last TLS session per upstream so new connections resume it (saving a full
/// handshake, which dominates the cost of a new upstream connection).
public struct TLSSessionCache: Sendable {
    let store: TLSSessionCacheStore
    let key: String

    func resume(_ ssl: OpaquePointer) { store.resume(ssl, key: key) }

    func store(_ ssl: OpaquePointer, clientIdentity: ClientIdentity? = nil) {
        store.store(ssl, key: key, clientIdentity: clientIdentity)
    }

    /// The client certificate presented in the handshake that made the remembered session.
    func clientIdentity() -> ClientIdentity? { store.clientIdentity(key: key) }
}

/// The per-process store behind `TLSSessionCache` handles: at most `capacity` upstreams are
/// remembered (a session holds the server's certificate chain, ~5 KiB measured), the earliest
/// remembered going first, so a client that visits thousands of hosts cannot grow it for good.
/// 256 covers the hosts a phone app talks to; one beyond costs one full upstream handshake.
public final class TLSSessionCacheStore: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var sessions: [String: OpaquePointer] = [:]
    /// The client certificate each remembered session was made with (only those with one).
    private var clientIdentities: [String: ClientIdentity] = [:]
    /// Keys in the order they were first stored; `evictionStart` skips those already evicted.
    private var order: [String] = []
    private var evictionStart = 0
    public let capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    deinit {
        for session in sessions.values { SSL_SESSION_free(session) }
    }

    /// A handle for one upstream (`host:port`).
    public func handle(for key: String) -> TLSSessionCache { TLSSessionCache(store: self, key: key) }

    /// How many upstreams have a session remembered.
    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return sessions.count
    }

    /// Whether a session is remembered for `key`.
    public func contains(_ key: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return sessions[key] != nil
    }

    func resume(_ ssl: OpaquePointer, key: String) {
        lock.lock()
        defer { lock.unlock() }
        if let session = sessions[key] { SSL_set_session(ssl, session) }
    }

    func clientIdentity(key: String) -> ClientIdentity? {
        lock.lock()
        defer { lock.unlock() }
        return clientIdentities[key]
    }

    func store(_ ssl: OpaquePointer, key: String, clientIdentity: ClientIdentity? = nil) {
        guard let session = SSL_get1_session(ssl) else { return }
        var evicted: [OpaquePointer] = []
        lock.lock()
        clientIdentities[key] = clientIdentity
        if let old = sessions.updateValue(session, forKey: key) {
            evicted.append(old)
        } else {
            order.append(key)
            while sessions.count > capacity, evictionStart < order.count {
                if let oldest = sessions.removeValue(forKey: order[evictionStart]) { evicted.append(oldest) }
                clientIdentities[order[evictionStart]] = nil
                evictionStart += 1
            }
            // Drop the evicted prefix now and then rather than shifting the array every time.
            if evictionStart > capacity {
                order.removeFirst(evictionStart)
                evictionStart = 0
            }
        }
        lock.unlock()
        evicted.forEach { SSL_SESSION_free($0) }
    }
}
