import CertAuthority
import CTLS
@testable import DevProxy
import Testing
import TestSupport

/// The upstream session store keeps at most `capacity` upstreams, the earliest remembered first
/// out, and replacing a host's session neither grows it nor changes that order.
@Suite struct TLSSessionCacheTests {
    /// An SSL holding a fresh (empty) session, as one after a handshake would.
    private final class SSLWithSession {
        let ssl: OpaquePointer
        init(context: TLSContext) throws {
            ssl = try #require(SSL_new(context.pointer))
            let session = try #require(SSL_SESSION_new())
            SSL_set_session(ssl, session)
            SSL_SESSION_free(session)
        }
        deinit { SSL_free(ssl) }
    }

    /// Stores a fresh session for `host`, keeping its SSL alive until the store took it.
    private func remember(_ host: String, in store: TLSSessionCacheStore, context: TLSContext) throws {
        let holder = try SSLWithSession(context: context)
        withExtendedLifetime(holder) { store.handle(for: host).store(holder.ssl) }
    }

    /// Real handshakes with a Python TLS origin: the second connection resumes the session the
    /// store kept (a TLS 1.3 ticket, which arrives after the handshake), and OpenSSL's own client cache stays empty (it would keep every upstream's
    /// session, certificate chain included, up to 20,480 of them).
    @Test func sessionsLiveOnlyInTheBoundedStore() throws {
        let origin = try OriginServer()
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let context = try TLSContext.client(extraCAs: cas, insecure: false)
        let store = TLSSessionCacheStore(capacity: 8)
        var resumed: [Bool] = []
        for _ in 0..<2 {
            let socket = try Socket.connect(host: "127.0.0.1", port: origin.port, timeout: 5)
            socket.setTimeout(5)
            let tls = try TLSConnection.connect(socket: socket, context: context, serverName: "localhost",
                                                session: store.handle(for: "localhost:\(origin.port)"))
            // TLS 1.3 tickets arrive after the handshake: one request and response brings them in.
            try tls.write(Array("GET /cl?n=2 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
            var buffer = [UInt8](repeating: 0, count: 4096)
            while try buffer.withUnsafeMutableBytes({ try tls.read(into: $0) }) > 0 {}
            resumed.append(tls.sessionReused)
            tls.close()
        }
        #expect(resumed == [false, true])
        #expect(store.count == 1)
        #expect(CTLS_SSL_CTX_sess_number(context.pointer) == 0)
    }

    @Test func evictsTheEarliestRememberedUpstreamBeyondCapacity() throws {
        let context = try TLSContext.client(extraCAs: [], insecure: true)
        let store = TLSSessionCacheStore(capacity: 3)
        for host in ["a", "b", "c"] {
            try remember(host, in: store, context: context)
        }
        // Replacing b's session keeps three entries and a's place at the front.
        try remember("b", in: store, context: context)
        #expect(store.count == 3)
        try remember("d", in: store, context: context)
        #expect(store.count == 3)
        #expect(!store.contains("a"))
        #expect(store.contains("b") && store.contains("c") && store.contains("d"))
        // Many more hosts: the store never holds more than its capacity.
        for index in 0..<50 {
            try remember("host\(index)", in: store, context: context)
            #expect(store.count <= 3)
        }
        #expect(store.contains("host49") && store.contains("host48") && store.contains("host47"))
        // An evicted host can come back.
        try remember("a", in: store, context: context)
        #expect(store.contains("a") && store.count == 3)
    }
}
