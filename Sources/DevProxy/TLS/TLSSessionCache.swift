import CTLS
import Foundation

/// Remembers the last TLS session per upstream so new connections resume it (saving a full
/// handshake, which dominates the cost of a new upstream connection).
public struct TLSSessionCache: Sendable {
    let store: TLSSessionCacheStore
    let key: String

    func resume(_ ssl: OpaquePointer) { store.resume(ssl, key: key) }

    func store(_ ssl: OpaquePointer) { store.store(ssl, key: key) }
}

/// The per-process store behind `TLSSessionCache` handles.
public final class TLSSessionCacheStore: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var sessions: [String: OpaquePointer] = [:]

    public init() {}

    deinit {
        for session in sessions.values { SSL_SESSION_free(session) }
    }

    /// A handle for one upstream (`host:port`).
    public func handle(for key: String) -> TLSSessionCache { TLSSessionCache(store: self, key: key) }

    func resume(_ ssl: OpaquePointer, key: String) {
        lock.lock()
        defer { lock.unlock() }
        if let session = sessions[key] { SSL_set_session(ssl, session) }
    }

    func store(_ ssl: OpaquePointer, key: String) {
        guard let session = SSL_get1_session(ssl) else { return }
        lock.lock()
        defer { lock.unlock() }
        if let old = sessions.updateValue(session, forKey: key) { SSL_SESSION_free(old) }
    }
}
