import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The upstream pool's eager connections (`prepare`), against a listener that never answers TLS;
/// its ALPN probe, against an origin that serves one connection at a time.
@Suite struct UpstreamPoolTests {
    /// A burst of CONNECTs to many hosts opens at most `maxPreparing` origin connections at once;
    /// one host is prepared once however many clients ask; the stuck ones end at the timeout.
    @Test func preparationsAreBoundedAndOnePerHost() throws {
        let silent = try Listener(host: "127.0.0.1", port: 0)   // completes TCP, never speaks TLS
        var configuration = ProxyConfiguration()
        configuration.resolve = [try ResolveOverride(parsing: "*.prepare.test:\(silent.address.port):127.0.0.1")]
        configuration.connectTimeout = 1
        configuration.upstreamTimeout = 1
        let pool = UpstreamPool(configuration: configuration,
                                tlsContext: try TLSContext.client(extraCAs: [], insecure: false))
        for _ in 0..<3 { pool.prepare(host: "h0.prepare.test", port: silent.address.port, tls: true) }
        #expect(pool.preparingConnections == 1)
        for index in 1...(UpstreamPool.maxPreparing + 8) {
            pool.prepare(host: "h\(index).prepare.test", port: silent.address.port, tls: true)
        }
        #expect(pool.preparingConnections == UpstreamPool.maxPreparing)
        let deadline = Date().addingTimeInterval(10)
        while pool.preparingConnections > 0 && Date() < deadline { usleep(20_000) }
        #expect(pool.preparingConnections == 0, "handshakes with a silent origin end at the 1 s timeout")
        #expect(pool.idleConnections == 0, "failed preparations leave nothing in the pool")
        pool.closeAll()
    }

    /// An HTTP/1.1 client's request to an origin that negotiates no ALPN and serves one connection
    /// at a time (`openssl s_server -www`, as Python's HTTPServer wrapped in TLS): DevProxy asks such
    /// an origin once whether it speaks h2, and did so on a second connection while it held the
    /// first, on which the origin waited for a request: the second's handshake was never answered
    /// and the request waited out the upstream timeout (httpx and requests through `devproxy exec`
    /// timed out; curl, which offers h2, did not). The first is closed before the second opens.
    @Test(.timeLimit(.minutes(1))) func anOriginWithoutALPNServingOneConnectionAtATimeIsAnswered() throws {
        let dir = TemporaryDirectory()
        let store = CAStore(directory: dir.file("origin-ca"))
        try store.initialize(name: "Origin Test CA", keyType: .p256, days: 2, passphrase: nil)
        let leaf = try LeafIssuer(signer: try store.rootSigner(passphrase: nil)).issue(for: [try LeafName("localhost")])
        let certificate = dir.write("origin.pem", leaf.certificate.pem)
        let key = dir.write("origin.key", bytes: try leaf.key.pem())
        let (origin, port) = try HTTP2Origin.launchOnFreePort { port in
            Process.quietServer("/usr/bin/openssl", ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate,
                                                     "-key", key, "-www", "-quiet"])
        }
        defer {
            kill(origin.processIdentifier, SIGKILL)
            origin.waitUntilExit()
        }
        let originCA = try store.rootCertificate()
        let proxy = try ProxyHarness { configuration in
            configuration.upstreamCAs = [originCA]
            configuration.upstreamTimeout = 20
        }
        // The second request finds what the origin answered in ALPN remembered.
        for attempt in 1...2 {
            let started = Date()
            let result = try proxy.curl(["--http1.1", "--max-time", "8", "-o", "/dev/null", "-w", "%{http_code}",
                                         "https://localhost:\(port)/"])
            #expect(result.stdout == "200", "request \(attempt): \(result.output)")
            #expect(Date().timeIntervalSince(started) < 5, "request \(attempt)")
        }
        #expect(proxy.flows(count: 2).map { $0.response?.status } == [200, 200])
    }
}
