import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `reverse:URL`, `upstream:URL` / `--upstream-proxy`, and plain HTTP inside CONNECT, with curl
/// as the client and a second DevProxy as the upstream proxy.
@Suite struct ReverseAndUpstreamModeTests {
    private func originCAs(_ origin: OriginServer) throws -> [Certificate] {
        try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
    }

    private func curl(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run("curl", ["-sS", "--max-time", "20"] + arguments, timeout: 30)
    }

    /// The reverse listener is the origin for a client that knows no proxy: plain HTTP in, TLS
    /// to the origin, `Host` rewritten to the origin's.
    @Test func reverseModeForwardsToTheURLWithHostRewritten() throws {
        let origin = try OriginServer()
        let reversePort = try HTTP2Origin.freePort()
        let url = try ModeURL(parsing: "https://localhost:\(origin.port)", what: "test")
        let harness = try ProxyHarness(configure: {
            $0.upstreamCAs = try! originCAs(origin)
            $0.modes = [ListenerMode(kind: .regular), ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort,
                                                                   url: url)]
        })
        let body = try curl(["http://127.0.0.1:\(reversePort)/cl?n=5"])
        #expect(body.stdout == "hello", "\(body.output)")
        let headers = try curl(["http://127.0.0.1:\(reversePort)/headers"])
        #expect(headers.stdout.lowercased().contains("host: localhost:\(origin.port)"), "\(headers.output)")
        let flows = harness.flows(count: 2)
        let flow = try #require(flows.first)
        #expect(flow.listener?.mode == "reverse:https://localhost:\(origin.port)")
        #expect(flow.request?.url == "https://localhost:\(origin.port)/cl?n=5")
        #expect(flow.tls?.upstream?.verified == true)
        #expect(flow.response?.status == 200)
    }

    /// With `--reverse-tls` the listener speaks TLS with a leaf for the name the client asked
    /// for (its SNI; without one, the listener's address), chaining to the team root.
    @Test func reverseTLSPresentsALeafForTheListenersName() throws {
        let origin = try OriginServer()
        let reversePort = try HTTP2Origin.freePort()
        let url = try ModeURL(parsing: "https://localhost:\(origin.port)", what: "test")
        let harness = try ProxyHarness(configure: {
            $0.upstreamCAs = try! originCAs(origin)
            $0.reverseTLS = true
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort, url: url)]
        })
        let byName = try curl(["--cacert", harness.pki.rootPath, "--resolve", "app.test:\(reversePort):127.0.0.1",
                               "https://app.test:\(reversePort)/cl?n=5"])
        #expect(byName.stdout == "hello", "\(byName.output)")
        let byAddress = try curl(["--cacert", harness.pki.rootPath, "--http1.1",
                                  "https://127.0.0.1:\(reversePort)/cl?n=5"])
        #expect(byAddress.stdout == "hello", "\(byAddress.output)")
        let flows = harness.flows(count: 2)
        let originURL = "https://localhost:\(origin.port)/cl?n=5"
        #expect(flows.contains { $0.tls?.client?.sni == "app.test" && $0.request?.url == originURL })
        #expect(flows.allSatisfy { $0.response?.status == 200 && $0.listener?.mode.hasPrefix("reverse:") == true })
    }

    /// `--reverse-tls` makes the `reverse:https://` listeners speak TLS and leaves a
    /// `reverse:http://` one beside them plain: the process refused to start with both.
    @Test func reverseTLSLeavesAPlainReverseListenerPlain() throws {
        let tlsOrigin = try OriginServer()
        let plainOrigin = try OriginServer(tls: false)
        let tlsPort = try HTTP2Origin.freePort()
        let plainPort = try HTTP2Origin.freePort()
        let harness = try ProxyHarness(configure: {
            $0.upstreamCAs = try! originCAs(tlsOrigin)
            $0.reverseTLS = true
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: tlsPort,
                                     url: try! ModeURL(parsing: "https://localhost:\(tlsOrigin.port)", what: "test")),
                        ListenerMode(kind: .reverse, host: "127.0.0.1", port: plainPort,
                                     url: try! ModeURL(parsing: "http://127.0.0.1:\(plainOrigin.port)", what: "test"))]
        })
        let overTLS = try curl(["--cacert", harness.pki.rootPath, "https://localhost:\(tlsPort)/cl?n=5"])
        #expect(overTLS.stdout == "hello", "\(overTLS.output)")
        let plain = try curl(["http://127.0.0.1:\(plainPort)/cl?n=5"])
        #expect(plain.stdout == "hello", "\(plain.output)")
    }

    /// A client speaking h2 by prior knowledge (no TLS) to an HTTP/1.1-only origin is told that
    /// (`protocol_mismatch`): it was told the origin "broke the HTTP/2 protocol (GOAWAY
    /// PROTOCOL_ERROR: SETTINGS expected)", a GOAWAY DevProxy itself sent.
    @Test func anH2CClientMeetingAnHTTP1OriginIsToldSo() throws {
        let origin = try OriginServer(tls: false)
        let reversePort = try HTTP2Origin.freePort()
        let harness = try ProxyHarness(configure: {
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort,
                                     url: try! ModeURL(parsing: "http://127.0.0.1:\(origin.port)", what: "test"))]
        })
        let result = try curl(["--http2-prior-knowledge", "http://127.0.0.1:\(reversePort)/cl?n=5"])
        #expect(result.stdout.contains("did not answer in HTTP/2: it does not speak HTTP/2 without TLS"), "\(result.output)")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.error?.kind == "protocol_mismatch", "\(String(describing: flow.error))")
    }

    /// CONNECT sent to a reverse listener is refused (405, saying only a proxy listener takes
    /// it): it went to the origin, which answered 501, under the URL
    /// `http://127.0.0.1:PORTlocalhost:443`.
    @Test func aReverseListenerRefusesCONNECT() throws {
        let origin = try OriginServer(tls: false)
        let reversePort = try HTTP2Origin.freePort()
        let harness = try ProxyHarness(configure: {
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort,
                                     url: try! ModeURL(parsing: "http://127.0.0.1:\(origin.port)", what: "test"))]
        })
        let client = try RawClient.plain(port: reversePort)
        client.send("CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n")
        let answer = RawAnswer(client.readToEnd())
        #expect(answer.status == 405, "\(answer.text)")
        #expect(answer.body.contains("CONNECT is taken only by a proxy listener"), "\(answer.text)")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.server.host == "localhost" && flow.server.port == 443, "\(flow.server)")
        #expect(flow.request?.url == "localhost:443")
    }

    /// What hypercorn's `/echo` saw: its protocol and the `host` it was given (from `:authority`
    /// over h2).
    private func echoed(_ result: Subprocess.Result) throws -> (version: String, host: String?) {
        struct Echo: Decodable { var http_version: String; var headers: [[String]] }
        let echo = try JSONDecoder().decode(Echo.self, from: Data(result.stdout.utf8))
        return (echo.http_version, echo.headers.first { $0.first == "host" }?.last)
    }

    /// A plain reverse listener in front of an h2c origin (hypercorn without TLS, as a plaintext
    /// gRPC server is): a client that starts with the HTTP/2 preface (h2 by prior knowledge) is
    /// relayed over h2 both ways, `:authority` rewritten to the origin's as `Host` is for HTTP/1.1;
    /// an HTTP/1.1 client on the same listener still gets HTTP/1.1.
    @Test func plainReverseListenerRelaysH2ByPriorKnowledge() throws {
        let origin = try HTTP2Origin(.hypercornCleartext)
        let reversePort = try HTTP2Origin.freePort()
        let url = try ModeURL(parsing: "http://localhost:\(origin.port)", what: "test")
        let harness = try ProxyHarness(configure: {
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort, url: url)]
        })
        let h2 = try curl(["--http2-prior-knowledge", "http://127.0.0.1:\(reversePort)/echo?via=h2"])
        let h2Echo = try echoed(h2)
        #expect(h2Echo.version == "2", "\(h2.output)")
        #expect(h2Echo.host == "localhost:\(origin.port)", "\(h2.output)")
        let h1 = try curl(["--http1.1", "http://127.0.0.1:\(reversePort)/echo?via=h1"])
        let h1Echo = try echoed(h1)
        #expect(h1Echo.version == "1.1", "\(h1.output)")
        #expect(h1Echo.host == "localhost:\(origin.port)", "\(h1.output)")
        let flows = harness.flows(count: 2)
        let stream = try #require(flows.first { $0.request?.httpVersion == "HTTP/2" })
        #expect(stream.request?.url == "http://localhost:\(origin.port)/echo?via=h2")
        #expect(stream.response?.status == 200 && stream.response?.httpVersion == "HTTP/2")
        #expect(stream.h2?.streamID == 1 && stream.h2?.upstreamStreamID == 1)
        #expect(stream.tls == nil && stream.error == nil)
        // The flow keeps what the client sent; the origin got the rewritten authority.
        #expect(stream.request?.pseudoHeaders?.contains([":authority", "127.0.0.1:\(reversePort)"]) == true,
                "\(String(describing: stream.request?.pseudoHeaders))")
        #expect(flows.contains { $0.request?.httpVersion == "HTTP/1.1" && $0.response?.status == 200 })
    }

    /// With `--reverse-tls`, an h2 client's `:authority` (the name it asked the listener for) is
    /// rewritten to the origin's too, and a client that speaks h2 by prior knowledge without TLS
    /// to that listener still reaches the https origin over TLS.
    @Test func reverseTLSRewritesTheAuthorityOfH2Streams() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let reversePort = try HTTP2Origin.freePort()
        let url = try ModeURL(parsing: "https://localhost:\(origin.port)", what: "test")
        let harness = try ProxyHarness(configure: {
            $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
            $0.reverseTLS = true
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort, url: url)]
        })
        let overTLS = try curl(["--http2", "--cacert", harness.pki.rootPath, "--resolve", "app.test:\(reversePort):127.0.0.1",
                                "https://app.test:\(reversePort)/echo"])
        let tlsEcho = try echoed(overTLS)
        #expect(tlsEcho.version == "2" && tlsEcho.host == "localhost:\(origin.port)", "\(overTLS.output)")
        let cleartext = try curl(["--http2-prior-knowledge", "http://127.0.0.1:\(reversePort)/echo"])
        let cleartextEcho = try echoed(cleartext)
        #expect(cleartextEcho.version == "2" && cleartextEcho.host == "localhost:\(origin.port)", "\(cleartext.output)")
        let flows = harness.flows(count: 2)
        #expect(flows.allSatisfy { $0.request?.url == "https://localhost:\(origin.port)/echo" }, "\(flows.map { $0.request?.url })")
        #expect(flows.allSatisfy { $0.tls?.upstream?.verified == true && $0.tls?.upstream?.alpn == "h2" })
        #expect(flows.contains { $0.tls?.client?.sni == "app.test" })
        #expect(flows.contains { $0.tls?.client == nil })
    }

    /// `curl --http2 http://…` through the regular listener offers the origin an h2c upgrade
    /// (`Upgrade: h2c`), which an h2c-capable origin (hypercorn) would accept with a 101: it is
    /// not relayed, so the exchange stays HTTP/1.1 and is recorded like any other, instead of
    /// becoming an opaque tunnel with nothing in the flow.
    @Test func anH2CUpgradeIsNotRelayed() throws {
        let origin = try HTTP2Origin(.hypercornCleartext)
        let harness = try ProxyHarness()
        let result = try harness.curl(["--http2", "http://127.0.0.1:\(origin.port)/echo"])
        let echo = try echoed(result)
        #expect(echo.version == "1.1", "\(result.output)")
        #expect(!result.stdout.lowercased().contains("h2c") && !result.stdout.lowercased().contains("http2-settings"),
                "\(result.output)")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.mode == .http && flow.websocket == nil)
        #expect(flow.response?.status == 200)
        #expect(flow.response?.body?.text?.contains("\"http_version\": \"1.1\"") == true)
    }

    /// A second DevProxy that wants credentials is the upstream proxy: HTTPS goes through it by
    /// CONNECT, plain HTTP by absolute-form, both with the credentials from the file's pair.
    @Test(arguments: [true, false])
    func upstreamProxyCarriesHTTPSAndPlainHTTP(_ tls: Bool) throws {
        let origin = try OriginServer(tls: tls)
        let credential = ProxyCredential(user: "qa", password: "s3cret")
        let upstream = try ProxyHarness(configure: {
            $0.upstreamCAs = try! originCAs(origin)
            $0.proxyCredentials = [credential]
        })
        let upstreamRoot = try Certificate.all(from: SecureFile.read(upstream.pki.rootPath, what: "root"))
        let proxyURL = try ModeURL(parsing: upstream.proxyURL, what: "test")
        let front = try ProxyHarness(configure: {
            $0.upstreamCAs = upstreamRoot
            $0.upstreamProxy = try! UpstreamProxy(url: proxyURL,
                                                  authorization: UpstreamProxy.basicAuthorization(credential))
        })
        let result = try front.curl([origin.url("/cl?n=5", tls: tls)])
        #expect(result.stdout == "hello", "\(result.output)")
        let seen = upstream.flows(count: 1)
        #expect(seen.first?.request?.url == origin.url("/cl?n=5", tls: tls))
        #expect(seen.first?.response?.status == 200)
        #expect(front.flows(count: 1).first?.response?.status == 200)
    }

    /// An upstream proxy that answers 407 (no credentials given) or refuses the connection: the
    /// client gets a 502 whose body says so, and the flow records it.
    @Test(arguments: [true, false])
    func upstreamProxy407AndRefusalBecome502(_ tls: Bool) throws {
        let origin = try OriginServer(tls: tls)
        let upstream = try ProxyHarness(configure: { $0.proxyCredentials = [ProxyCredential(user: "qa",
                                                                                            password: "s3cret")] })
        let proxyURL = try ModeURL(parsing: upstream.proxyURL, what: "test")
        let front = try ProxyHarness(configure: { $0.upstreamProxy = try! UpstreamProxy(url: proxyURL) })
        let answered = try front.curl(["-w", "%{http_code}", origin.url("/cl?n=5", tls: tls)])
        #expect(answered.stdout.hasSuffix("502"), "\(answered.output)")
        #expect(answered.stdout.contains("407"), "\(answered.output)")
        let flow = try #require(front.flows(count: 1).first)
        #expect(flow.error?.kind == FlowErrorKind.upstreamProxyFailed.rawValue)
        #expect(flow.error?.message.contains("407") == true, "\(flow.error?.message ?? "")")

        let closedPort = try HTTP2Origin.freePort()
        let nowhere = try ModeURL(parsing: "http://127.0.0.1:\(closedPort)", what: "test")
        let refused = try ProxyHarness(configure: { $0.upstreamProxy = try! UpstreamProxy(url: nowhere) })
        let plainOrigin = try OriginServer(tls: false)
        let reply = try refused.curl(["-w", "%{http_code}", plainOrigin.url("/cl?n=5", tls: false)])
        #expect(reply.stdout.hasSuffix("502"), "\(reply.output)")
        #expect(reply.stdout.contains("upstream proxy"), "\(reply.output)")
        #expect(refused.flows(count: 1).first?.error?.kind == FlowErrorKind.upstreamProxyFailed.rawValue)
    }

    /// Plain HTTP through an upstream proxy that answers garbage or closes: the failure names the
    /// proxy (`upstream_proxy_failed`), where it was told as the origin's ("upstream ORIGIN sent a
    /// malformed response"), as the HTTPS path already did.
    @Test func anUpstreamProxysBadAnswerForPlainHTTPNamesTheProxy() throws {
        for (answer, words) in [("garbage\r\n\r\n", "sent a malformed response for"),
                                ("", "closed the connection before answering for")] {
            let liar = try ScriptedOrigin(answer, then: .close)
            let proxyURL = try ModeURL(parsing: "http://127.0.0.1:\(liar.port)", what: "test")
            let front = try ProxyHarness(configure: { $0.upstreamProxy = try! UpstreamProxy(url: proxyURL) })
            let reply = try front.curl(["-w", "%{http_code}", "http://origin.test:8080/cl"])
            #expect(reply.stdout.hasSuffix("502"), "\(reply.output)")
            let flow = try #require(front.flows(count: 1).first)
            #expect(flow.error?.kind == FlowErrorKind.upstreamProxyFailed.rawValue, "\(String(describing: flow.error))")
            #expect(flow.error?.message.hasPrefix("the upstream proxy 127.0.0.1:\(liar.port) \(words) origin.test:8080")
                    == true, "\(flow.error?.message ?? "")")
        }
    }

    /// HTTPS through an upstream proxy that answers CONNECT with something that is not HTTP (an
    /// SSH banner) and closes, or with the start of a head and then closes: said at once, naming
    /// the proxy. Peeking showed the same bytes after its close, so the whole upstream timeout
    /// passed and the reason said the proxy timed out.
    @Test func anUpstreamProxysBadCONNECTAnswerIsSaidAtOnce() throws {
        for (answer, words) in [("SSH-2.0-garbage\r\n", "answered \"SSH-2.0-garbage\", not HTTP"),
                                ("HTTP/1.1 200 Connection", "closed the connection after 23 bytes of an incomplete response head")] {
            let liar = try ScriptedOrigin(answer, then: .close)
            let proxyURL = try ModeURL(parsing: "http://127.0.0.1:\(liar.port)", what: "test")
            let front = try ProxyHarness(configure: { $0.upstreamProxy = try! UpstreamProxy(url: proxyURL); $0.upstreamTimeout = 20 })
            let clock = ContinuousClock()
            let start = clock.now
            let reply = try front.curl(["-w", "%{http_code}", "-k", "https://origin.test:8443/cl"])
            #expect(clock.now - start < .seconds(5), "\(reply.output)")
            let flow = try #require(front.flows(count: 1).first)
            #expect(flow.error?.kind == FlowErrorKind.upstreamProxyFailed.rawValue, "\(String(describing: flow.error))")
            #expect(flow.error?.message.contains(words) == true, "\(flow.error?.message ?? "")")
        }
    }

    /// `devproxy run --upstream-proxy URL --upstream-proxy-auth-file FILE`: the file's pair reaches
    /// the upstream proxy (which refuses without it), and never appears in argv.
    @Test func upstreamProxyFlagsReadTheCredentialsFile() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let upstream = try ProxyHarness(configure: { $0.proxyCredentials = [ProxyCredential(user: "qa", password: "s3cret")] })
        let credentials = dir.write("upstream.cred", "qa:s3cret\n")
        chmod(credentials, 0o600)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--quiet", "--upstream-proxy", upstream.proxyURL,
                                         "--upstream-proxy-auth-file", credentials])
        let result = try curl(["--proxy", "http://127.0.0.1:\(proxy.port)", origin.url("/cl?n=5", tls: false)])
        #expect(result.stdout == "hello", "\(result.output)")
        #expect(upstream.flows(count: 1).first?.response?.status == 200)
        let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--upstream-proxy", "http://qa:s3cret@127.0.0.1:1"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--upstream-proxy-auth-file"), "\(refused.output)")
    }

    /// `upstream:URL` is one listener's: the regular listener beside it still goes direct.
    @Test func upstreamModeIsPerListener() throws {
        let origin = try OriginServer(tls: false)
        let upstream = try ProxyHarness()
        let proxyURL = try ModeURL(parsing: upstream.proxyURL, what: "test")
        let viaPort = try HTTP2Origin.freePort()
        let front = try ProxyHarness(configure: {
            $0.modes = [ListenerMode(kind: .regular), ListenerMode(kind: .upstream, host: "127.0.0.1", port: viaPort,
                                                                   url: proxyURL)]
        })
        let direct = try front.curl([origin.url("/cl?n=5", tls: false)])
        #expect(direct.stdout == "hello", "\(direct.output)")
        #expect(upstream.sink.flows.isEmpty)
        let via = try curl(["--proxy", "http://127.0.0.1:\(viaPort)", origin.url("/cl?n=5", tls: false)])
        #expect(via.stdout == "hello", "\(via.output)")
        #expect(upstream.flows(count: 1).count == 1)
        #expect(front.flows(count: 2).last?.listener?.mode == "upstream:\(upstream.proxyURL)")
    }

    /// Plain HTTP inside a CONNECT tunnel (`curl -p -x … http://…`) is parsed and recorded as HTTP
    /// flows, one per request, not tunnelled blind.
    @Test func plainHTTPInsideCONNECTIsRecordedAsHTTPFlows() throws {
        let origin = try OriginServer(tls: false)
        let harness = try ProxyHarness()
        let result = try harness.curl(["-p", origin.url("/cl?n=5", tls: false), origin.url("/cl?n=5", tls: false)])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout == "hellohello", "\(result.output)")
        let flows = harness.flows(count: 2)
        #expect(flows.count == 2)
        #expect(flows.allSatisfy { $0.mode == .http && $0.response?.status == 200 })
        #expect(flows.first?.request?.url == origin.url("/cl?n=5", tls: false))
    }
}
