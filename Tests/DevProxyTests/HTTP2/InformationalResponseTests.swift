import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Informational (1xx) responses other than `100 Continue` and `101` (103 Early Hints, 102
/// Processing): relayed to the client, in order and before the final response, whichever
/// versions the client and the origin speak; and kept in the flow (`informational`), the first
/// `FlowDraft.informationalLimit` of them, the rest counted.
@Suite(.serialized) struct InformationalResponseTests {
    /// The `Link` field both test origins send with their 103.
    static let link = "</style.css>; rel=preload; as=style"

    /// HTTP/1.1 client, HTTP/1.1 origin (origin.py): curl -v shows the 103 before the 200, and the
    /// flow holds the 103 with its `Link` field and reason phrase.
    @Test func anHTTP1ClientOfAnHTTP1OriginSeesAndRecordsEarlyHints() throws {
        let (origin, proxy) = try HTTP2ProxyTests.http1OriginAndProxy()
        let result = try proxy.curl(["-v", "--http1.1", origin.url("/early-hints")])
        #expect(result.stdout == "hinted", "\(result.output)")
        try Self.expectInOrder(result.stderr, ["< HTTP/1.1 103", "< Link: \(Self.link)", "< HTTP/1.1 200"])
        let flow = try #require(proxy.flows(count: 1).first)
        try Self.expectEarlyHints(flow, reason: "Early Hints")
    }

    /// HTTP/2 client, HTTP/1.1 origin: the 103 is a HEADERS frame of its own, and recorded.
    @Test func anH2ClientOfAnHTTP1OriginRecordsEarlyHints() throws {
        let (origin, proxy) = try HTTP2ProxyTests.http1OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/early-hints")
        let response = try #require(json.responses.first)
        #expect(response.status == 200 && response.body == "hinted", "\(json)")
        #expect(response.informational?.first?.contains(["link", Self.link]) == true, "\(json)")
        let flow = try #require(proxy.flows(count: 1).first)
        try Self.expectEarlyHints(flow, reason: "Early Hints")
    }

    /// HTTP/2 client, HTTP/2 origin (Python h2): the 103 reaches the client and the flow.
    @Test func anH2ClientOfAnH2OriginSeesAndRecordsEarlyHints() throws {
        let (origin, proxy) = try Self.h2OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/early-hints")
        let response = try #require(json.responses.first)
        #expect(response.status == 200 && response.body == "hinted", "\(json)")
        #expect(response.informational?.first?.contains([":status", "103"]) == true, "\(json)")
        #expect(response.informational?.first?.contains(["link", Self.link]) == true, "\(json)")
        let flow = try #require(proxy.flows(count: 1).first)
        try Self.expectEarlyHints(flow, reason: nil)
    }

    /// HTTP/1.1 client, HTTP/2-only origin: the 103 is translated to an HTTP/1.1 head (a reason
    /// phrase made up) before the 200, and recorded as it came (no reason: HTTP/2 has none).
    @Test func anHTTP1ClientOfAnH2OriginSeesAndRecordsEarlyHints() throws {
        let (origin, proxy) = try Self.h2OriginAndProxy()
        let result = try proxy.curl(["-v", "--http1.1", origin.url("/early-hints")])
        #expect(result.stdout == "hinted", "\(result.output)")
        try Self.expectInOrder(result.stderr, ["< HTTP/1.1 103 Early Hints", "< link: \(Self.link)", "< HTTP/1.1 200"])
        let flow = try #require(proxy.flows(count: 1).first)
        try Self.expectEarlyHints(flow, reason: nil)
        #expect(flow.response?.httpVersion == "HTTP/2")
    }

    /// The flow log line carries them (`informational`, each with status, reason, headers, time),
    /// the JSON read back equals the flow, and the console line says `(after 103)`.
    @Test func theFlowLogAndTheConsoleLineCarryThem() throws {
        let (origin, proxy) = try HTTP2ProxyTests.http1OriginAndProxy()
        _ = try proxy.curl(["--http1.1", origin.url("/early-hints")])
        let flow = try #require(proxy.flows(count: 1).first)
        let line = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(line.contains(#""informational":[{"headers":[["Link","</style.css>; rel=preload; as=style"]],"reason":"Early Hints","status":103,"time":""#),
                "\(line)")
        #expect(try JSONDecoder().decode(Flow.self, from: Data(flow.jsonBytes)) == flow)
        #expect(try FlowJSON.encoder().encode(flow) == Data(flow.jsonBytes))
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix("(after 103)"), "\(ConsoleFlowPrinter.line(for: flow))")
    }

    /// A hostile origin that sends 10,000 `103`s before its answer: the client still gets every
    /// one and then the 200; the flow keeps the first `informationalLimit` and counts the rest,
    /// so the record does not grow with them.
    @Test func tenThousandEarlyHintsAreCountedNotKept() throws {
        let origin = try BackgroundServer(script: Self.manyHintsOrigin, arguments: ["10000"])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        // A raw client: curl refuses more than 300 KB of response heads, 1xx included.
        let client = try RawClient.plain(port: proxy.port, timeout: 30)
        client.send("GET http://127.0.0.1:\(origin.port)/ HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n")
        let answer = String(decoding: client.readToEnd(timeout: 30).bytes, as: UTF8.self)
        #expect(answer.hasSuffix("hinted"), "\(answer.suffix(300))")
        #expect(answer.components(separatedBy: "HTTP/1.1 103 Early Hints\r\n").count - 1 == 10_000)
        #expect(answer.hasPrefix("HTTP/1.1 103 Early Hints\r\nLink: </n/0>\r\n"), "\(answer.prefix(300))")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 200)
        #expect(flow.informational?.count == FlowDraft.informationalLimit)
        #expect(flow.informationalNotKept == 10_000 - FlowDraft.informationalLimit)
        #expect(flow.informational?.last?.headers.flat == ["Link", "</n/\(FlowDraft.informationalLimit - 1)>"])
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix("(after 10000 informational responses: 103)"))
    }

    /// `100 Continue` is the body's go-ahead, not a response the flow lists.
    @Test func oneHundredContinueIsNotListed() throws {
        let (origin, proxy) = try HTTP2ProxyTests.http1OriginAndProxy()
        let result = try proxy.curl(["--http1.1", "-H", "Expect: 100-continue", "--data-binary", "hello",
                                     origin.url("/echo")])
        #expect(result.status == 0, "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.informational == nil, "\(String(describing: flow.informational))")
    }

    /// Plain HTTP/1.1 on 127.0.0.1:0: each request is answered with N (argv[1]) `103`s, each with
    /// `Link: </n/I>`, then 200 "hinted".
    static let manyHintsOrigin = #"""
    import socket, sys, threading
    n = int(sys.argv[1])
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
    print(s.getsockname()[1], flush=True)
    def serve(c):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(65536)
            if not chunk: return
            data += chunk
        hints = b"".join(b"HTTP/1.1 103 Early Hints\r\nLink: </n/%d>\r\n\r\n" % i for i in range(n))
        c.sendall(hints + b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhinted")
        c.close()
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// The scripted h2-only origin (`h2bad.py`, `/early-hints`) and a proxy that trusts its CA.
    static func h2OriginAndProxy() throws -> (HTTP2Origin, ProxyHarness) {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        return (origin, try ProxyHarness(configure: { $0.upstreamCAs = cas }))
    }

    /// The flow records one 103 with the test origins' `Link` field, before its 200.
    static func expectEarlyHints(_ flow: Flow, reason: String?) throws {
        #expect(flow.response?.status == 200, "\(String(describing: flow.response))")
        let hints = try #require(flow.informational, "no informational responses in \(flow)")
        #expect(hints.count == 1 && flow.informationalNotKept == nil, "\(hints)")
        #expect(hints.first?.status == 103 && hints.first?.reason == reason, "\(hints)")
        #expect(hints.first?.headers.flat.map { $0.lowercased() } == ["link", link], "\(hints)")
        #expect((hints.first?.time ?? "") >= flow.started && (hints.first?.time ?? "") <= flow.ended, "\(hints)")
    }

    /// Each of `parts` appears in `text`, in this order.
    static func expectInOrder(_ text: String, _ parts: [String]) throws {
        var rest = Substring(text)
        for part in parts {
            let found = try #require(rest.range(of: part), "\"\(part)\" missing (or out of order) in \(text)")
            rest = rest[found.upperBound...]
        }
    }
}
