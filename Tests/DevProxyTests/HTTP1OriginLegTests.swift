@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// What an HTTP/1.1 exchange's origin side says when the origin cannot carry it.
@Suite struct HTTP1OriginLegTests {
    /// A request through the regular listener to an origin that speaks only h2c (nghttpd
    /// --no-tls) gets a 502 whose advice works when followed through this same proxy: it named
    /// `curl --http2-prior-knowledge`, which through a proxy still sends HTTP/1.1 (the same 502);
    /// h2 by prior knowledge reaches the origin inside a CONNECT tunnel.
    @Test(.timeLimit(.minutes(1))) func anH2COnlyOriginsRefusalNamesWhatReachesIt() throws {
        let (origin, port) = try HTTP2Origin.launchOnFreePort { port in
            Process.quietServer("/usr/sbin/nghttpd", ["--no-tls", "-a", "127.0.0.1", String(port)])
        }
        defer {
            kill(origin.processIdentifier, SIGKILL)
            origin.waitUntilExit()
        }
        let proxy = try ProxyHarness()
        let url = "http://127.0.0.1:\(port)/"
        let refused = try proxy.curl(["--http2-prior-knowledge", "-w", "\n%{http_code}", url])
        #expect(refused.stdout.hasSuffix("\n502"), "\(refused.output)")
        #expect(refused.stdout.contains("h2 by prior knowledge is relayed to it over h2: through a CONNECT tunnel "
                                        + "(curl --proxytunnel --http2-prior-knowledge;"), "\(refused.output)")
        // As the 502 says: nghttpd answers (404: it serves no files here) over h2.
        let tunnelled = try proxy.curl(["--proxytunnel", "--http2-prior-knowledge", "-o", "/dev/null",
                                        "-w", "%{http_code} %{http_version}", url])
        #expect(tunnelled.stdout == "404 2", "\(tunnelled.output)")
        let flows = proxy.flows(count: 2)
        #expect(flows.map { $0.error?.kind } == [FlowErrorKind.protocolMismatch.rawValue, nil], "\(flows.map { $0.error })")
    }
}
