import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Transfer codings besides chunked (`Transfer-Encoding: gzip, chunked`, RFC 9112 §7) are
/// hop-by-hop: the proxy decodes them, since it drops the field and frames the body its own way.
/// Before, the client got the gzip bytes as the body itself, with nothing saying so (curl straight
/// to the origin decodes them).
@Suite struct TransferCodingTests {
    private static let text = String(repeating: "hello transfer-coded world ", count: 100)

    private func setUp() throws -> (OriginServer, ProxyHarness) {
        let origin = try OriginServer()
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        return (origin, try ProxyHarness(configure: { $0.upstreamCAs = cas }))
    }

    @Test func aGzipTransferCodedResponseReachesAnHTTP1ClientDecoded() throws {
        let (origin, proxy) = try setUp()
        let direct = try Subprocess.run("curl", ["-sS", "--cacert", origin.caPath, origin.url("/te-gzip")], timeout: 20)
        #expect(direct.stdout == Self.text, "curl decodes it without a proxy: \(direct.output)")
        let result = try proxy.curl(["--http1.1", "-D", "-", origin.url("/te-gzip")])
        #expect(result.stdout.hasSuffix("\r\n\r\n" + Self.text), "\(result.output)")
        #expect(!result.stdout.lowercased().contains("transfer-encoding: gzip"), "\(result.stdout.prefix(300))")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.body?.text == Self.text)
        #expect(flow.response?.headers.contains(["Transfer-Encoding", "gzip, chunked"]) == true, "the origin's head as it came")
        #expect(flow.error == nil)
    }

    @Test func aGzipTransferCodedResponseReachesAnH2ClientDecoded() throws {
        let (origin, proxy) = try setUp()
        let output = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/te-gzip")
        #expect(output.alpn == "h2")
        #expect(output.responses.first?.status == 200)
        #expect(output.responses.first?.body == Self.text)
        #expect(output.responses.first?.headers.contains { $0.first == "transfer-encoding" } == false)
    }

    @Test func aTransferCodedBodyThatDoesNotDecodeGets502() throws {
        let (origin, proxy) = try setUp()
        let result = try proxy.curl(["--http1.1", "-w", "\n%{http_code}", origin.url("/te-gzip?bad=1")])
        #expect(result.stdout == "502 Bad Gateway: upstream sent a malformed body: the transfer-coded body (gzip or "
                + "deflate) did not decode\n\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.message.contains("did not decode") == true, "\(String(describing: flow.error))")
    }

    /// A request body with `Transfer-Encoding: gzip, chunked` reaches the origin decoded and chunked.
    @Test func aGzipTransferCodedRequestReachesTheOriginDecoded() throws {
        let (origin, proxy) = try setUp()
        let script = proxy.pythonTunnel(to: origin.port) + """

        import gzip
        coded = gzip.compress(b"hello request")
        t.sendall(b"POST /echo HTTP/1.1\\r\\nHost: localhost\\r\\nTransfer-Encoding: gzip, chunked\\r\\nConnection: close\\r\\n\\r\\n"
                  + b"%x\\r\\n" % len(coded) + coded + b"\\r\\n0\\r\\n\\r\\n")
        """ + ProxyHarness.pythonPrintUntilClose
        let result = try Subprocess.run("python3", ["-c", script], timeout: 20)
        #expect(result.stdout.hasPrefix("HTTP/1.1 200"), "\(result.output)")
        #expect(result.stdout.hasSuffix("echo:hello request"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.body?.text == "hello request")
    }
}
