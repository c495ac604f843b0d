import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Request framing that could smuggle a second request past the proxy (RFC 9112 §6, §11.2) is
/// refused at the proxy: 400 with a body that says why, the connection closed, and the flow
/// recorded as `bad_request` — for absolute-form `http://` requests and inside CONNECT + TLS.
@Suite(.serialized) struct FramingAttackTests {
    /// One malformed request: the bytes after the request line's target, what the proxy answers.
    struct Case: CustomStringConvertible, Sendable {
        let name: String
        /// The request; `TARGET` is replaced by the absolute or origin-form target, `HOST` by the Host value.
        let request: String
        let status: Int
        let reason: String
        var description: String { name }
    }

    static let chunkedPost = "POST TARGET HTTP/1.1\r\nHost: HOST\r\nTransfer-Encoding: chunked\r\n\r\n"

    static let cases: [Case] = [
        Case(name: "Content-Length with Transfer-Encoding",
             request: "POST TARGET HTTP/1.1\r\nHost: HOST\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             status: 400, reason: "both Content-Length and Transfer-Encoding present"),
        Case(name: "differing Content-Length values",
             request: "POST TARGET HTTP/1.1\r\nHost: HOST\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
             status: 400, reason: "several differing Content-Length values"),
        Case(name: "differing Content-Length list",
             request: "POST TARGET HTTP/1.1\r\nHost: HOST\r\nContent-Length: 5, 6\r\n\r\nhello!",
             status: 400, reason: "several differing Content-Length values"),
        Case(name: "last transfer coding not chunked",
             request: "POST TARGET HTTP/1.1\r\nHost: HOST\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
             status: 400, reason: "Transfer-Encoding whose final coding is not chunked"),
        Case(name: "chunk size not hex", request: chunkedPost + "zz\r\nhello\r\n0\r\n\r\n",
             status: 400, reason: "chunk size is not hexadecimal"),
        Case(name: "negative chunk size", request: chunkedPost + "-5\r\nhello\r\n0\r\n\r\n",
             status: 400, reason: "chunk size is negative"),
        Case(name: "chunk size over 64 bits", request: chunkedPost + "1ffffffffffffffff\r\nhello\r\n0\r\n\r\n",
             status: 400, reason: "chunk size has more than 16 hex digits"),
        Case(name: "chunk extension over the limit",
             request: chunkedPost + "5;" + String(repeating: "x", count: 5000) + "\r\nhello\r\n0\r\n\r\n",
             status: 400, reason: "chunk extension longer than 4096 bytes"),
        Case(name: "obs-fold", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX-Folded: a\r\n b\r\n\r\n",
             status: 400, reason: "obsolete line folding"),
        Case(name: "space before the colon", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX-Space : a\r\n\r\n",
             status: 400, reason: "whitespace between header field name and colon"),
        Case(name: "NUL in a header", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX-Nul: a\u{0}b\r\n\r\n",
             status: 400, reason: "NUL byte in header line"),
        Case(name: "bare CR in a header", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX-CR: a\rb\r\n\r\n",
             status: 400, reason: "bare CR"),
        Case(name: "bare LF in a header", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX-LF: a\nX-Next: b\r\n\r\n",
             status: 400, reason: "ends in a bare LF without CR"),
        Case(name: "request line without HTTP-version", request: "GET TARGET\r\nHost: HOST\r\n\r\n",
             status: 400, reason: "request line has no HTTP version"),
        Case(name: "non-token header name", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX(Bad): a\r\n\r\n",
             status: 400, reason: "header field name contains an invalid character"),
        Case(name: "header name with a slash", request: "GET TARGET HTTP/1.1\r\nHost: HOST\r\nX/Y: a\r\n\r\n",
             status: 400, reason: "header field name contains an invalid character"),
    ]

    @Test(arguments: cases)
    func plainRequestIsRefused(_ attack: Case) throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        let authority = "127.0.0.1:\(origin.port)"
        let client = try RawClient.plain(port: proxy.port)
        client.send(Self.fill(attack.request, target: "http://\(authority)/echo", host: authority))
        try expectRefused(attack, RawAnswer(client.readToEnd()), proxy: proxy)
    }

    @Test(arguments: cases)
    func requestInsideTLSIsRefused(_ attack: Case) throws {
        let origin = try OriginServer()
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "origin CA"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let client = try RawClient.tunnelled(port: proxy.port, host: "localhost", targetPort: origin.port, root: proxy.pki.rootPath)
        client.send(Self.fill(attack.request, target: "/echo", host: "localhost:\(origin.port)"))
        try expectRefused(attack, RawAnswer(client.readToEnd()), proxy: proxy)
        #expect(proxy.sink.flows.first?.mode == .https)
    }

    /// RFC 9112 §3.2.2: a proxy forwarding an absolute-form request takes the authority from the
    /// URL and replaces Host; a differing Host is rewritten, not refused.
    @Test func absoluteFormHostWinsOverADifferentHostHeader() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let proxy = try ProxyHarness()
        let client = try RawClient.plain(port: proxy.port)
        client.send("GET http://127.0.0.1:\(origin.port)/x HTTP/1.1\r\nHost: victim.example\r\nConnection: close\r\n\r\n")
        let answer = RawAnswer(client.readToEnd())
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.body == "ok")
        let head = try #require(origin.receivedHeads.first)
        #expect(head.contains("Host: 127.0.0.1:\(origin.port)\r\n"), "\(head)")
        #expect(!head.contains("victim.example"))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == "http://127.0.0.1:\(origin.port)/x")
        #expect(flow.error == nil)
    }

    /// `Connection: Content-Length` (RFC 9110 §7.6.1 lets Connection name hop-by-hop fields, never
    /// one meant for every recipient): the proxy removed Content-Length with the fields Connection
    /// names but still sent the body, so the origin read the body as a second request that nobody
    /// recorded, and its answer went to whichever client used that pooled connection next. Framing
    /// and routing fields stay, whatever Connection names; the origin sees one request.
    @Test func connectionCannotStripContentLength() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        let authority = "127.0.0.1:\(origin.port)"
        let smuggled = "DELETE /smuggled HTTP/1.1\r\nHost: \(authority)\r\nContent-Length: 0\r\n\r\n"
        let client = try RawClient.plain(port: proxy.port)
        client.send("POST http://\(authority)/echo HTTP/1.1\r\nHost: \(authority)\r\nConnection: close, Content-Length, Host\r\n"
                    + "Content-Length: \(smuggled.utf8.count)\r\n\r\n" + smuggled)
        let answer = RawAnswer(client.readToEnd())
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.body == "echo:" + smuggled, "\(answer.text)")
        let seen = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-x", "http://127.0.0.1:\(proxy.port)",
                                               "http://\(authority)/requests"], timeout: 15)
        #expect(!seen.stdout.contains("/smuggled"), "\(seen.stdout)")
        #expect(proxy.flows(count: 2).count == 2)
    }

    /// NTLM (and Negotiate) authenticate the origin connection, not each request. Pooled across
    /// clients, the connection Alice signed in on served Bob, who sent no credentials, as Alice;
    /// and while Bob held the other pooled connection, Alice's TYPE3 went out on a fresh one and
    /// was refused 401. A connection that carried the handshake stays with its client.
    @Test func ntlmConnectionsStayWithTheirClient() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        let authority = "127.0.0.1:\(origin.port)"
        @Sendable func get(_ client: RawClient, _ path: String, auth: String? = nil) throws -> RawAnswer {
            client.send("GET http://\(authority)\(path) HTTP/1.1\r\nHost: \(authority)\r\n"
                        + (auth.map { "Authorization: NTLM \($0)\r\n" } ?? "") + "\r\n")
            return try client.readResponse()
        }
        let alice = try RawClient.plain(port: proxy.port)
        let bob = try RawClient.plain(port: proxy.port)
        #expect(try get(alice, "/ntlm", auth: "TYPE1").status == 401)
        // Bob's slow request holds a second origin connection while Alice finishes her handshake.
        let slow = Thread { _ = try? get(bob, "/ntlm-slow") }
        slow.start()
        Thread.sleep(forTimeInterval: 0.2)
        let signedIn = try get(alice, "/ntlm", auth: "TYPE3-alice")
        #expect(signedIn.status == 200 && signedIn.body == "welcome alice", "\(signedIn.text)")
        Thread.sleep(forTimeInterval: 1.2)
        let asBob = try get(bob, "/ntlm")
        #expect(asBob.status == 401 && !asBob.body.contains("alice"), "\(asBob.text)")
        let carol = try RawClient.plain(port: proxy.port)
        #expect(try get(carol, "/ntlm").status == 401)
        let again = try get(alice, "/ntlm")
        #expect(again.status == 200 && again.body == "authenticated as alice", "\(again.text)")
    }

    /// An interim response (103 Early Hints) reaches an HTTP/1.1 client and never an HTTP/1.0 one
    /// (RFC 9110 §15.2: it would read the 103 as the response).
    @Test func interimResponsesSkipHTTP10Clients() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        for (version, expected) in [("1.1", true), ("1.0", false)] {
            let client = try RawClient.plain(port: proxy.port)
            client.send("GET http://127.0.0.1:\(origin.port)/early-hints HTTP/\(version)\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                        + "Connection: close\r\n\r\n")
            let answer = RawAnswer(client.readToEnd())
            #expect(answer.text.contains(" 103 ") == expected, "HTTP/\(version): \(answer.text)")
            #expect(answer.text.hasSuffix("hinted"), "HTTP/\(version): \(answer.text)")
        }
    }

    /// A client that hangs up partway through its request head (a cancelled request) is
    /// `client_closed`, as any client that gives up: it was `bad_request` with a 400 nobody read.
    @Test func aHeadCutByTheClientIsClientClosed() throws {
        let proxy = try ProxyHarness()
        let client = try RawClient.plain(port: proxy.port)
        client.send("GET http://127.0.0.1:9/x HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept: te")
        Thread.sleep(forTimeInterval: 0.2)
        client.stream.close()
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
        #expect(flow.error?.message.contains("bytes of an incomplete request head") == true, "\(String(describing: flow.error))")
        #expect(flow.response == nil)
    }

    /// A raw UTF-8 path (`curl 'http://host/café'`) reaches the origin as it came, as it does
    /// without the proxy (nginx and mitmproxy take it): it was refused 400.
    @Test func aRawUTF8PathIsForwarded() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        let answer = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/café"])
        #expect(answer.stdout.hasSuffix("404"), "the origin's own 404: \(answer.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == "http://127.0.0.1:\(origin.port)/café", "\(String(describing: flow.request?.url))")
        #expect(flow.error == nil)
    }

    /// Clients trickling partial request heads cannot hold every slot: at the connection limit a
    /// newcomer takes the place of the connection that has waited longest for a complete head
    /// (they locked everyone out with 503 for the header timeout). The one closed says why.
    @Test func partialHeadsCannotHoldEverySlot() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness(configure: { $0.maxConnections = 4 })
        var trickling: [RawClient] = []
        for _ in 0..<4 {
            let client = try RawClient.plain(port: proxy.port)
            client.send("GET http://127.0.0.1:\(origin.port)/cl?n=5 HTTP/1.1\r\nHost: 127.0.0.1")
            trickling.append(client)
            Thread.sleep(forTimeInterval: 0.05)
        }
        let answer = try proxy.curl(["-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)/cl?n=5"])
        #expect(answer.stdout == "hello\n200", "\(answer.output)")
        let flows = proxy.flows(count: 2)
        #expect(flows.contains { $0.error?.kind == "overloaded" && $0.error?.message.contains("to make room") == true },
                "\(flows.map { String(describing: $0.error) })")
        withExtendedLifetime(trickling) {}
    }

    /// Header bytes that are not UTF-8 (a Latin-1 filename, and valid UTF-8 beside a stray byte)
    /// reach the client exactly as the origin sent them, and the flow shows them as Latin-1 letters:
    /// they were re-encoded as UTF-8, the valid UTF-8 twice.
    @Test func headerBytesThatAreNotUTF8CrossUnchanged() throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"r".utf8) + [0xE9] + Array("sum".utf8)
            + [0xE9] + Array(".pdf\"\r\nX-Mixed: caf\u{E9} ".utf8) + [0xFF] + Array("\r\nContent-Length: 2\r\n\r\nok".utf8)
        let origin = try ScriptedOrigin(head, then: .close)
        let proxy = try ProxyHarness()
        let client = try RawClient.plain(port: proxy.port)
        client.send("GET http://127.0.0.1:\(origin.port)/f HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n")
        let received = client.readToEnd().bytes
        let disposition = Array("filename=\"r".utf8) + [0xE9] + Array("sum".utf8) + [0xE9] + Array(".pdf\"".utf8)
        #expect(received.firstRange(of: disposition) != nil, "\(String(decoding: received, as: UTF8.self))")
        #expect(received.firstRange(of: Array("X-Mixed: caf\u{E9} ".utf8) + [0xFF, 13, 10]) != nil)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.headers.contains(["Content-Disposition", "attachment; filename=\"r\u{E9}sum\u{E9}.pdf\""]) == true,
                "\(String(describing: flow.response?.headers))")
    }

    private func expectRefused(_ attack: Case, _ answer: RawAnswer, proxy: ProxyHarness) throws {
        #expect(answer.status == attack.status, "\(attack.name): \(answer.text.prefix(300))")
        #expect(answer.body.contains(attack.reason), "\(attack.name): \(answer.text.prefix(300))")
        #expect(answer.closed, "\(attack.name): the proxy kept the connection open")
        let flow = try #require(proxy.flows(count: 1).first, "\(attack.name): no flow recorded")
        #expect(flow.error?.kind == "bad_request", "\(attack.name): \(String(describing: flow.error))")
        #expect(flow.error?.message.contains(attack.reason) == true, "\(attack.name): \(String(describing: flow.error))")
        expectOwnAnswer(flow, status: attack.status, kind: "bad_request", detail: attack.reason)
        #expect(proxy.sink.flows.count == 1, "\(attack.name): one refused request is one flow")
    }

    private static func fill(_ template: String, target: String, host: String) -> String {
        template.replacingOccurrences(of: "TARGET", with: target).replacingOccurrences(of: "HOST", with: host)
    }
}
