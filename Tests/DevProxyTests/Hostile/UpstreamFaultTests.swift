import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Upstreams that misbehave: the client always gets a clear 502 or 504 — or, once a response
/// has begun, a cut connection, never a truncated body that looks complete — the flow records
/// what happened, and the proxy goes on serving others.
@Suite(.serialized) struct UpstreamFaultTests {
    /// A malformed response head from upstream and the reason the 502 must give.
    struct Case: CustomStringConvertible, Sendable {
        let name: String
        let response: String
        let reason: String
        var description: String { name }
    }

    static let malformed: [Case] = [
        Case(name: "Content-Length with Transfer-Encoding",
             response: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             reason: "both Content-Length and Transfer-Encoding present"),
        Case(name: "differing Content-Length values",
             response: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello!!",
             reason: "several differing Content-Length values"),
        Case(name: "Content-Length not a number", response: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
             reason: "Content-Length is not a decimal number"),
        Case(name: "obs-fold", response: "HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
             reason: "obsolete line folding"),
        Case(name: "space before the colon", response: "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
             reason: "whitespace between header field name and colon"),
        Case(name: "NUL in a header", response: "HTTP/1.1 200 OK\r\nX-Nul: a\u{0}b\r\nContent-Length: 0\r\n\r\n",
             reason: "NUL byte in header line"),
        Case(name: "bare CR in a header", response: "HTTP/1.1 200 OK\r\nX-CR: a\rb\r\nContent-Length: 0\r\n\r\n",
             reason: "bare CR"),
        Case(name: "bare LF in a header", response: "HTTP/1.1 200 OK\r\nX-LF: a\nContent-Length: 0\r\n\r\n",
             reason: "header line ends in a bare LF without CR"),
        Case(name: "non-token header name", response: "HTTP/1.1 200 OK\r\nX(Bad): a\r\nContent-Length: 0\r\n\r\n",
             reason: "header field name contains an invalid character"),
        Case(name: "status code not three digits", response: "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",
             reason: "status code is not three digits"),
        Case(name: "not HTTP at all", response: "SSH-2.0-OpenSSH_9.6 hello\r\n\r\n",
             reason: "malformed HTTP version"),
        Case(name: "HTTP/2 version", response: "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
             reason: "HTTP version HTTP/2.0 is not supported"),
    ]

    @Test(arguments: malformed)
    func malformedResponseHeadGets502WithTheReason(_ fault: Case) throws {
        let origin = try ScriptedOrigin(fault.response)
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/x"])
        #expect(result.stdout.hasSuffix("\n502"), "\(fault.name): \(result.output)")
        #expect(result.stdout.contains("502 Bad Gateway: upstream 127.0.0.1:\(origin.port) sent a malformed response: \(fault.reason)"),
                "\(fault.name): \(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_bad_response", "\(fault.name): \(String(describing: flow.error))")
        #expect(flow.error?.message.contains(fault.reason) == true)
        expectOwnAnswer(flow, status: 502, kind: "upstream_bad_response", detail: fault.reason)
        try expectStillServing(proxy)
    }

    /// Body faults after the head went to the client: the client connection is cut (curl 18,
    /// "transfer closed with outstanding read data remaining") and the flow says why.
    @Test(arguments: [
        ("reset mid-body", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 100),
         ScriptedOrigin.Ending.reset, "upstream failed mid-body"),
        ("truncated Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 100),
         .close, "connection closed before the message was complete"),
        ("truncated chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
         .close, "connection closed before the message was complete"),
        ("bad chunk size mid-body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n",
         .hold(3), "upstream sent a malformed body: chunk size is not hexadecimal"),
    ])
    func bodyFaultCutsTheClientConnection(_ name: String, _ response: String, _ ending: ScriptedOrigin.Ending,
                                          _ reason: String) throws {
        let origin = try ScriptedOrigin(response, then: ending)
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/x"])
        #expect(result.status == 18, "\(name): curl must see an incomplete transfer: \(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 200)
        // A body that does not parse is the origin's fault, not a close.
        let kind = reason.hasPrefix("upstream sent a malformed body") ? "upstream_bad_response" : "upstream_closed"
        #expect(flow.error?.kind == kind, "\(name): \(String(describing: flow.error))")
        #expect(flow.error?.message.contains(reason) == true, "\(name): \(String(describing: flow.error))")
        try expectStillServing(proxy)
    }

    /// An IPv6 origin's address in a refusal is bracketed (`[::1]:PORT`): `::1:PORT` read as one address.
    @Test func anIPv6OriginsRefusalBracketsItsAddress() throws {
        let closed = try HTTP2Origin.freePort()
        let proxy = try ProxyHarness()
        let answer = try proxy.curl(["-g", "http://[::1]:\(closed)/"])
        #expect(answer.stdout.contains("cannot connect to upstream [::1]:\(closed)"), "\(answer.output)")
    }

    /// A `Transfer-Encoding: gzip, chunked` body that is not gzip fails before any of it reaches
    /// the client: the client's 502 says why (`X-DevProxy-Error`) and is the flow's response; the
    /// flow recorded the origin's 200 the client never saw, as `upstream_closed`.
    @Test func aTransferCodingThatDoesNotDecodeIsThe502TheClientGot() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                                        then: .hold(3))
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-i", "http://127.0.0.1:\(origin.port)/x"])
        #expect(result.stdout.hasPrefix("HTTP/1.1 502"), "\(result.output)")
        #expect(result.stdout.lowercased().contains("x-devproxy-error: upstream_bad_response"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 502, "\(String(describing: flow.response))")
        #expect(flow.error?.kind == "upstream_bad_response", "\(String(describing: flow.error))")
        #expect(flow.error?.message.contains("did not decode") == true, "\(String(describing: flow.error))")
    }

    /// A pooled connection the server closes just as the next request arrives: a bodiless GET
    /// goes again on a fresh connection (the flow says so); a POST is never resent, it gets a 502.
    @Test(arguments: [("GET", 200, 3), ("POST", 502, 2)])
    func aRequestOnAConnectionTheServerDroppedIsResentOnlyWhenIdempotent(_ method: String, _ status: Int,
                                                                         _ heads: Int) throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", then: .closeOnSecondRequest)
        let proxy = try ProxyHarness()
        let first = try proxy.curl(["-w", "%{http_code}", "http://127.0.0.1:\(origin.port)/first"])
        #expect(first.stdout == "ok200", "\(first.output)")
        let second = try proxy.curl(["-X", method, "-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/second"])
        #expect(second.stdout.hasSuffix("\(status)"), "\(second.output)")
        let flows = proxy.flows(count: 2)
        // The POST's flow has the 502 the client got, not a response from the origin.
        #expect(flows.last?.response?.status == status)
        #expect(flows.last?.server.retried == (method == "GET" ? true : nil))
        #expect(flows.first?.server.retried == nil)
        if method == "POST" {
            #expect(flows.last?.error?.message.contains("a reused keep-alive connection") == true,
                    "\(String(describing: flows.last?.error))")
        }
        #expect(origin.receivedHeads.count == heads)
        try expectStillServing(proxy)
    }

    /// An origin that switches protocols (101) though the request asked for no upgrade would leave
    /// the client reading a protocol it never chose: the client gets a 502 that says so, and the
    /// flow records it (RFC 9110 §15.2.2). A request that asks (WebSocket) is relayed as before.
    @Test func anUnaskedSwitchOfProtocolsGets502() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: upgrade\r\n\r\nraw",
                                        then: .hold(3))
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/x"])
        #expect(result.stdout.hasSuffix("\n502"), "\(result.output)")
        let reason = "answered 101 Switching Protocols to a request that asked for no upgrade"
        #expect(result.stdout.contains(reason), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        expectOwnAnswer(flow, status: 502, kind: "upstream_bad_response", detail: reason)
        try expectStillServing(proxy)
    }

    /// A silent upstream is answered with 504 within the configured upstream timeout.
    @Test func silentUpstreamGets504InTime() throws {
        let origin = try ScriptedOrigin("", then: .hold(10))
        let proxy = try ProxyHarness(configure: { $0.upstreamTimeout = 1 })
        let start = Date()
        let result = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/x"])
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.stdout.hasSuffix("\n504"), "\(result.output)")
        #expect(result.stdout.contains("did not respond within 1 s"))
        #expect(elapsed < 4, "the 504 took \(elapsed) s with a 1 s upstream timeout")
        expectOwnAnswer(proxy.flows(count: 1).first, status: 504, kind: "upstream_timeout", detail: "did not respond within 1 s")
        try expectStillServing(proxy)
    }

    @Test func unresolvableUpstreamGets502() throws {
        let proxy = try ProxyHarness(configure: {
            $0.resolve = [try! ResolveOverride(parsing: "app.test:80:nowhere.invalid")]
        })
        for url in ["http://nothing.invalid/x", "http://app.test/x"] {
            let result = try proxy.curl(["-w", "\n%{http_code}", url])
            #expect(result.stdout.hasSuffix("\n502"), "\(url): \(result.output)")
            #expect(result.stdout.contains("cannot connect to upstream"), "\(url): \(result.output)")
        }
        let flows = proxy.flows(count: 2)
        #expect(flows.map(\.error?.kind) == ["upstream_unresolvable", "upstream_unresolvable"], "\(flows.map(\.error))")
    }

    @Test func refusedPlainUpstreamGets502() throws {
        let proxy = try ProxyHarness()
        let closed = try Listener(host: "127.0.0.1", port: 0).address.port   // bound, then closed: refuses
        let result = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(closed)/x"])
        #expect(result.stdout.hasSuffix("\n502"), "\(result.output)")
        #expect(result.stdout.contains("connection refused"))
        // The flow has the answer the client got, byte for byte.
        let flow = proxy.flows(count: 1).first
        expectOwnAnswer(flow, status: 502, kind: "upstream_refused", detail: "connection refused")
        #expect(result.stdout.hasPrefix(flow?.response?.body?.text ?? "-"), "\(result.output)")
    }

    /// A HEAD's 502 is the head alone (RFC 9110 §9.3.2), its Content-Length the one a GET's 502
    /// has: the plain request's bytes end with the head, and over TLS curl takes the answer over
    /// either HTTP version (it reported the DATA after an h2 HEAD's 502 as PROTOCOL_ERROR). The
    /// flows keep the reason in their error, and no body the client did not get.
    @Test func aHEADsOwnErrorAnswerHasNoBody() throws {
        let proxy = try ProxyHarness()
        let closed = try Listener(host: "127.0.0.1", port: 0).address.port   // bound, then closed: refuses
        let socket = try Socket.connect(host: "127.0.0.1", port: proxy.port, timeout: 5)
        socket.setTimeout(10)
        let stream = PlainStream(socket)
        defer { stream.close() }
        try stream.write(Array("HEAD http://127.0.0.1:\(closed)/x HTTP/1.1\r\nHost: 127.0.0.1:\(closed)\r\n\r\n".utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {   // the answer says Connection: close; everything up to the close is the answer
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let answer = String(decoding: received, as: UTF8.self)
        let get = try proxy.curl(["http://127.0.0.1:\(closed)/x"]).stdout
        #expect(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n") && answer.hasSuffix("\r\n\r\n"), "\(answer)")
        #expect(answer.contains("\r\nContent-Length: \(get.utf8.count)\r\n"), "\(answer) vs GET's \(get)")
        #expect(answer.contains("\r\nX-DevProxy-Error: upstream_refused\r\n"), "\(answer)")
        for version in ["--http1.1", "--http2"] {
            let result = try proxy.curl([version, "-I", "-w", "%{http_code} %{http_version}", "https://127.0.0.1:\(closed)/x"])
            #expect(result.status == 0, "\(version): \(result.output)")
            #expect(result.stdout.hasSuffix("502 \(version == "--http2" ? "2" : "1.1")"), "\(version): \(result.output)")
        }
        let flows = proxy.flows(count: 4)
        for flow in flows where flow.request?.method == "HEAD" {
            #expect(flow.response?.status == 502 && flow.error?.kind == "upstream_refused", "\(flow)")
            #expect(flow.error?.message.contains("connection refused") == true, "\(String(describing: flow.error))")
            #expect((flow.response?.body?.size ?? 0) == 0, "\(String(describing: flow.response?.body))")
        }
        #expect(flows.filter { $0.request?.method == "HEAD" }.count == 3, "\(flows.map(\.request?.method))")
    }

    /// More bytes than Content-Length: the client gets exactly the declared body, and the
    /// surplus (here a forged second response) never reaches the next request on a pooled
    /// upstream connection.
    @Test func bytesBeyondContentLengthNeverAnswerTheNextRequest() throws {
        let forged = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged"
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" + forged, then: .hold(5))
        let proxy = try ProxyHarness(configure: { $0.upstreamTimeout = 2 })
        let first = try proxy.curl(["http://127.0.0.1:\(origin.port)/one"])
        #expect(first.stdout == "hello", "\(first.output)")
        let second = try proxy.curl(["http://127.0.0.1:\(origin.port)/two"])
        #expect(second.stdout == "hello", "the second request got someone else's bytes: \(second.output)")
        #expect(origin.receivedHeads.count == 2, "the second request must reach the origin: \(origin.receivedHeads)")
    }

    @Test func plainHTTPOnATLSPortGets502() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", waitForHead: false)
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["-w", "\n%{http_code}", "https://127.0.0.1:\(origin.port)/x"])
        #expect(result.stdout.hasSuffix("\n502"), "\(result.output)")
        #expect(result.stdout.contains("TLS to upstream 127.0.0.1:\(origin.port) failed"), "\(result.output)")
        #expect(proxy.flows(count: 1).first?.error?.kind == "upstream_tls_failed")
    }

    @Test func wrongHostCertificateGets502() throws {
        let origin = try OriginServer()
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "origin CA"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.resolve = [try! ResolveOverride(parsing: "wrong.test:\(origin.port):127.0.0.1")]
        })
        let result = try proxy.curl(["-w", "\n%{http_code}", "https://wrong.test:\(origin.port)/cl"])
        #expect(result.stdout.hasSuffix("\n502"), "\(result.output)")
        #expect(result.stdout.contains("hostname mismatch"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_certificate_invalid")
    }

    @Test func expiredCertificateGets502() throws {
        let origin = try ExpiredTLSOrigin()
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = [origin.root] })
        let result = try proxy.curl(["-w", "\n%{http_code}", "https://localhost:\(origin.port)/x"])
        #expect(result.stdout.hasSuffix("\n502"), "\(result.output)")
        #expect(result.stdout.contains("certificate has expired"), "\(result.output)")
        #expect(proxy.flows(count: 1).first?.error?.kind == "upstream_certificate_invalid")
    }
}

/// A well-behaved request through `proxy` still works: faults on one connection leave others alone.
func expectStillServing(_ proxy: ProxyHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let healthy = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhealthy")
    let result = try proxy.curl(["http://127.0.0.1:\(healthy.port)/ok"])
    #expect(result.stdout == "healthy", "the proxy stopped serving: \(result.output)", sourceLocation: sourceLocation)
}

/// `flow` records DevProxy's own answer as its response, as the client got it: `status`, the
/// failure's kind in `X-DevProxy-Error`, and the one-line body `status reason: …` that contains
/// `detail`.
func expectOwnAnswer(_ flow: Flow?, status: Int, kind: String, detail: String,
                     sourceLocation: SourceLocation = #_sourceLocation) {
    let response = flow?.response
    #expect(response?.status == status, "\(String(describing: flow))", sourceLocation: sourceLocation)
    #expect(flow?.error?.kind == kind, "\(String(describing: flow?.error))", sourceLocation: sourceLocation)
    #expect(response?.headers.contains(["X-DevProxy-Error", kind]) == true,
            "\(String(describing: response?.headers))", sourceLocation: sourceLocation)
    let text = response?.body?.text ?? ""
    #expect(text.hasPrefix("\(status) ") && text.contains(detail) && text.hasSuffix("\n"), "\(text)",
            sourceLocation: sourceLocation)
    #expect(response?.body?.size == text.utf8.count, sourceLocation: sourceLocation)
}
