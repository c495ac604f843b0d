@testable import DevProxy
import Foundation
import Testing

/// The upstream pool's eager connections (`prepare`), against a listener that never answers TLS.
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
}
