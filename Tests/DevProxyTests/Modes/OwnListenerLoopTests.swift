import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// A request whose destination is the proxy's own listener, or an upstream proxy that is the
/// proxy itself, came back to the proxy: `--upstream-proxy http://127.0.0.1:8080` on 8080 nested
/// ~2,000 connections before one failed with a certificate error that named nothing of the loop,
/// and a CONNECT to the proxy's port ended in "did not speak TLS". Now each is refused at once
/// (403, `destination_refused`, a body that says why), and the onboarding address, which a phone
/// opens through its proxy, is served as `devproxy.test` is.
@Suite struct OwnListenerLoopTests {
    @Test func aRequestToTheProxysOwnListenerIsRefused() throws {
        let proxy = try ProxyHarness()
        let own = "127.0.0.1:\(proxy.port)"
        let plain = try proxy.curl(["-i", "http://\(own)/anything"])
        #expect(plain.stdout.hasPrefix("HTTP/1.1 403"), "\(plain.output)")
        #expect(plain.stdout.contains("refused: \(own) is DevProxy's own proxy listener (\(own)); the request would come "
                                      + "back to it in a loop"), "\(plain.output)")
        let tunnel = try proxy.curl(["-p", "-i", "http://\(own)/"])
        #expect(tunnel.output.contains("403"), "\(tunnel.output)")
        // 0.0.0.0 is where a connection to the unspecified address lands: this machine's loopback.
        let unspecified = try proxy.curl(["-i", "http://0.0.0.0:\(proxy.port)/anything"])
        #expect(unspecified.stdout.hasPrefix("HTTP/1.1 403"), "\(unspecified.output)")
        let flows = proxy.flows(count: 3)
        #expect(flows.count == 3)
        #expect(flows.allSatisfy { $0.error?.kind == "destination_refused" }, "\(flows.map { $0.error?.kind ?? "-" })")
        #expect(flows.allSatisfy { $0.error?.message.contains("own proxy listener") == true })
    }

    @Test func anUpstreamProxyThatIsTheProxyItselfIsRefused() throws {
        let listener = try Listener(host: "127.0.0.1", port: 0)   // stands for the proxy: never accepts
        let own = OwnListeners()
        own.set([listener.address])
        var configuration = ProxyConfiguration()
        configuration.connectTimeout = 2
        configuration.upstreamTimeout = 2
        let proxy = try UpstreamProxy(url: ModeURL(tls: false, host: "localhost", port: listener.address.port))
        let pool = UpstreamPool(configuration: configuration, tlsContext: try TLSContext.client(extraCAs: [], insecure: false),
                                proxy: proxy, ownListeners: own)
        defer { pool.closeAll() }
        #expect {
            _ = try pool.connection(host: "api.example.test", port: 443, tls: true)
        } throws: { error in
            let network = error as? NetworkError
            return network?.kind == .forbidden
                && network?.message.hasPrefix("refused: the upstream proxy localhost:\(listener.address.port) is DevProxy's own "
                                              + "proxy listener") == true
        }
    }

    /// The loop check matches the address a listener takes, not every loopback address on its
    /// port as the web UI's refusal does: `[::1]:8080` is another program's while DevProxy
    /// listens on `127.0.0.1:8080`, and a request for it reached the onboarding page instead.
    @Test func onlyWhatAListenerTakesIsItsOwn() throws {
        func address(_ host: String) throws -> SocketAddress {
            try #require(try Resolver.resolve(host: host, port: 8080).first)
        }
        let loopback = [try address("127.0.0.1")]
        #expect(loopback.isListening(try address("127.0.0.1")))
        #expect(!loopback.isListening(try address("::1")))
        #expect(!loopback.isListening(try address("127.0.0.2")))
        #expect(loopback.isForbidden(try address("::1")), "the web UI's refusal stays as wide as it was")
        let any4 = [try address("0.0.0.0")]
        let (v4, v6) = (try address("127.0.0.1"), try address("::1"))
        #expect(any4.isListening(v4) && !any4.isListening(v6))
        let any6 = [try address("::")]
        #expect(any6.isListening(v6) && any6.isListening(v4))
    }

    /// The onboarding address a phone opens after its proxy is set arrives as an absolute-form
    /// request for the proxy's own port: the site answers it, nothing is dialled.
    @Test func theOnboardingAddressThroughTheProxyIsServed() throws {
        let (proxy, _) = try OnboardingProxyTests.proxy()
        let directory = TemporaryDirectory()
        let result = try proxy.curl(["-o", directory.file("root.crt"), "-w", "%{http_code}",
                                     "http://127.0.0.1:\(proxy.port)/root.crt"])
        #expect(result.stdout == "200", "\(result.output)")
        #expect(try OnboardingProxyTests.sameRoot(directory.file("root.crt"), der: true, as: proxy))
        let other = try proxy.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(proxy.port)/not-the-site"])
        #expect(other.stdout == "403", "\(other.output)")
        let flows = proxy.flows(count: 2)
        #expect(flows.first { $0.request?.url.hasSuffix("/root.crt") == true }?.response?.status == 200)
    }
}
