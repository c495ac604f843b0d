import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `Max-Forwards` on TRACE and OPTIONS (RFC 9110 §7.6.2): at 0 DevProxy answers itself (OPTIONS:
/// 200 with `Allow`; TRACE: 405, since echoing a captured request back is cross-site tracing) and
/// nothing reaches the origin; above 0 the request goes on with the value one lower. A flow either way.
@Suite(.serialized) struct MaxForwardsTests {
    /// OPTIONS with `Max-Forwards: 0` from an HTTP/1.1 client: 200 with `Allow`, answered by
    /// DevProxy, recorded; the origin never hears of it.
    @Test func optionsWithNoHopsLeftIsAnsweredByTheProxy() throws {
        let origin = try BackgroundServer(script: Self.echoOrigin, arguments: [])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-i", "-X", "OPTIONS", "-H", "Max-Forwards: 0", "http://127.0.0.1:\(origin.port)/x"])
        #expect(result.stdout.hasPrefix("HTTP/1.1 200"), "\(result.output)")
        #expect(result.stdout.contains("Allow: \(MaxForwards.allow)\r\n"), "\(result.output)")
        #expect(!result.stdout.contains("TRACE"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.method == "OPTIONS" && flow.response?.status == 200, "\(flow)")
        #expect(flow.server.address == nil, "the origin was contacted: \(flow)")
        #expect(try Self.requestsSeen(by: origin).isEmpty)
    }

    /// TRACE with `Max-Forwards: 0`: 405 with `Allow` and a body that says why (the echo would
    /// hand captured headers to a script), and no echo of the request's cookie.
    @Test func traceWithNoHopsLeftIsRefusedWithTheReason() throws {
        let origin = try BackgroundServer(script: Self.echoOrigin, arguments: [])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-i", "-X", "TRACE", "-H", "Max-Forwards: 0", "-H", "Cookie: session=secret",
                                     "http://127.0.0.1:\(origin.port)/x"])
        #expect(result.stdout.hasPrefix("HTTP/1.1 405"), "\(result.output)")
        #expect(result.stdout.contains("Allow: \(MaxForwards.allow)\r\n"), "\(result.output)")
        #expect(result.stdout.contains("cross-site tracing") && !result.stdout.contains("secret"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 405 && flow.response?.body?.text?.contains("cross-site tracing") == true,
                "\(flow)")
        #expect(try Self.requestsSeen(by: origin).isEmpty)
    }

    /// Above 0 the request goes on, one hop lower (HTTP/1.1 both sides); the flow keeps the value
    /// the client sent. Other methods, and values that are not numbers, go on as they came.
    @Test func moreHopsGoOnOneLower() throws {
        let origin = try BackgroundServer(script: Self.echoOrigin, arguments: [])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        for (method, sent, expected) in [("TRACE", "3", "2"), ("OPTIONS", "1", "0"), ("GET", "5", "5"),
                                          ("OPTIONS", "x", "x")] {
            let result = try proxy.curl(["-X", method, "-H", "Max-Forwards: \(sent)", "http://127.0.0.1:\(origin.port)/x"])
            #expect(result.stdout.hasPrefix("\(method) /x HTTP/1.1"), "\(result.output)")
            #expect(result.stdout.contains("\r\nMax-Forwards: \(expected)\r\n"), "\(method) \(sent): \(result.output)")
        }
        let flows = proxy.flows(count: 4)
        #expect(flows.first?.request?.headers.flat.contains("3") == true, "\(String(describing: flows.first?.request))")
    }

    /// An HTTP/2 client (Python h2, offering only h2): at 0 the same answers, over h2; above 0 one
    /// lower, whether the origin speaks h2 or only HTTP/1.1 (hypercorn's /echo lists what arrived).
    @Test(arguments: [HTTP2Origin.Kind.hypercornBoth, .hypercornHTTP1])
    func anH2ClientGetsTheSame(_ kind: HTTP2Origin.Kind) throws {
        let origin = try HTTP2Origin(kind)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        func send(_ method: String, _ hops: String) throws -> H2Client.Output.Response {
            let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/echo",
                                        extra: ["--method", method, "max-forwards=\(hops)"])
            #expect(json.alpn == "h2", "\(json)")
            return try #require(json.responses.first, "\(json)")
        }
        let options = try send("OPTIONS", "0")
        #expect(options.status == 200 && options.headers.contains(["allow", MaxForwards.allow]), "\(options)")
        let trace = try send("TRACE", "0")
        #expect(trace.status == 405 && trace.body.contains("cross-site tracing"), "\(trace)")
        let forwarded = try send("OPTIONS", "4")
        #expect(forwarded.status == 200 && forwarded.body.contains(#"["max-forwards", "3"]"#), "\(forwarded)")
        let flows = proxy.flows(count: 3)
        #expect(flows.map { $0.response?.status } == [200, 405, 200], "\(flows)")
        #expect(flows.first?.h2 != nil && flows.first?.server.address == nil, "\(String(describing: flows.first))")
    }

    /// An HTTP/1.1 client (curl --http1.1) of an origin that speaks only h2 (`h2bad.py`'s
    /// /headers lists the fields that arrived): the translated request carries the value one
    /// lower, as from an HTTP/1.1 origin; other methods' values go on as they came.
    @Test func anHTTP1ClientOfAnH2OnlyOriginSendsOneLower() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        for (method, sent, expected) in [("OPTIONS", "4", "3"), ("TRACE", "1", "0"), ("GET", "5", "5")] {
            let result = try proxy.curl(["--http1.1", "-X", method, "-H", "Max-Forwards: \(sent)", origin.url("/headers")])
            #expect(result.stdout.contains(":method: \(method)\n"), "\(result.output)")
            #expect(result.stdout.contains("\nmax-forwards: \(expected)\n"), "\(method) \(sent): \(result.output)")
        }
        let flows = proxy.flows(count: 3)
        #expect(flows.allSatisfy { $0.response?.status == 200 && $0.response?.httpVersion == "HTTP/2" }, "\(flows)")
    }

    /// The request lines `echoOrigin` received (its `/seen`).
    static func requestsSeen(by origin: BackgroundServer) throws -> String {
        let seen = try Subprocess.run("curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(origin.port)/seen"], timeout: 10)
        return seen.stdout
    }

    /// Plain HTTP/1.1 on 127.0.0.1:0 answering any method with its own request head as the body;
    /// GET /seen lists the request lines received before it.
    static let echoOrigin = #"""
    import socket, threading
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
    print(s.getsockname()[1], flush=True)
    seen = []
    def serve(c):
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    c.close(); return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            line = head.split(b"\r\n")[0]
            body = b"\n".join(seen) if line.startswith(b"GET /seen ") else head + b"\r\n\r\n"
            seen.append(line)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#
}
