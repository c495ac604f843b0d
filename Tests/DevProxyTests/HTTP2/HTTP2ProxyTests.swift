import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// HTTP/2 through the proxy with real peers: curl, httpx and a Python h2 client; nghttpd and
/// hypercorn as origins. Each case asserts what the client negotiated and received, and what
/// the flow records.
@Suite(.serialized) struct HTTP2ProxyTests {
    /// A client of the ALPN matrix.
    enum Client: String, CaseIterable, CustomStringConvertible {
        /// curl offering `h2,http/1.1`.
        case curlH2
        /// curl offering `http/1.1`.
        case curlH1
        /// httpx offering `http/1.1,h2` (its own order).
        case httpx
        /// Python h2 offering `h2` alone (as gRPC clients do).
        case h2Only
        /// OkHttp 3.13 (Debian's) offering `h2,http/1.1`, as Android apps' OkHttp does.
        case okhttp
        var description: String { rawValue }
    }

    /// `OkHttpH2Client.java`, compiled once for the suite; its classpath.
    static let okHttpClasspath: Result<String, any Error> = Result {
        try PinnedClientEndToEndTests.compileClient(in: okHttpClasses, source: "OkHttpH2Client.java")
    }
    nonisolated(unsafe) private static let okHttpClasses = TemporaryDirectory()   // kept for the process: never written

    /// What a client should end up speaking to DevProxy, and DevProxy to the origin.
    static func expected(_ client: Client, _ origin: HTTP2Origin.Kind) -> (client: String, origin: String) {
        let originSpeaksH2 = origin != .hypercornHTTP1
        switch client {
        case .curlH1: return ("HTTP/1.1", originSpeaksH2 && origin == .nghttpd ? "HTTP/2" : "HTTP/1.1")
        case .curlH2, .httpx, .okhttp: return originSpeaksH2 ? ("HTTP/2", "HTTP/2") : ("HTTP/1.1", "HTTP/1.1")
        case .h2Only: return ("HTTP/2", originSpeaksH2 ? "HTTP/2" : "HTTP/1.1")
        }
    }

    /// Every client × origin pairing gets its answer, each side speaking what it offered and
    /// what the origin chose; the flow says which version each side spoke. mitmproxy fails two
    /// of these cells: the h2-only client with an HTTP/1.1-only origin, and curl --http1.1 with
    /// nghttpd.
    @Test(arguments: Client.allCases, [HTTP2Origin.Kind.nghttpd, .hypercornBoth, .hypercornHTTP1])
    func alpnMatrix(client: Client, originKind: HTTP2Origin.Kind) throws {
        let origin = try HTTP2Origin(originKind)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let path = originKind == .nghttpd ? "/index.html" : "/echo"
        let want = Self.expected(client, originKind)
        let (status, version, body) = try fetch(client, proxy: proxy, url: origin.url(path), port: origin.port, path: path)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(status == 200, "\(client) × \(originKind): \(body)")
        #expect(version == want.client, "\(client) × \(originKind)")
        #expect(body.contains(originKind == .nghttpd ? "hello from nghttpd" : "\"path\": \"/echo\""), "\(body)")
        #expect(flow.request?.httpVersion == want.client)
        #expect(flow.response?.httpVersion == want.origin)
        #expect(flow.response?.status == 200)
        #expect(flow.tls?.client?.alpn == (want.client == "HTTP/2" ? "h2" : (client == .h2Only ? nil : "http/1.1")))
        // Offered only h2, an HTTP/1.1-only origin negotiates nothing and speaks HTTP/1.1.
        let originALPN: String? = want.origin == "HTTP/2" ? "h2" : (client == .h2Only ? nil : "http/1.1")
        #expect(flow.tls?.upstream?.alpn == originALPN)
        if want.client == "HTTP/2" {
            // OkHttp opens its first stream as 3: it keeps 1 for an HTTP/1.1 Upgrade, as RFC 7540 had it.
            #expect(flow.h2?.streamID == (client == .okhttp ? 3 : 1))
            #expect(flow.request?.pseudoHeaders?.contains([":path", path]) == true)
            #expect(flow.request?.headers.contains { $0[0].hasPrefix(":") } == false)
        }
        #expect(flow.error == nil)
    }

    /// Runs one request with `client`; returns the status, the HTTP version the client spoke, and the body.
    private func fetch(_ client: Client, proxy: ProxyHarness, url: String, port: Int,
                       path: String) throws -> (Int, String, String) {
        switch client {
        case .curlH1, .curlH2:
            let result = try proxy.curl([client == .curlH2 ? "--http2" : "--http1.1", "-w", "\n%{http_code} %{http_version}", url])
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let last = (lines.last ?? "").split(separator: " ")
            let version = last.count == 2 ? (last[1] == "2" ? "HTTP/2" : "HTTP/\(last[1])") : "?"
            return (Int(last.first ?? "") ?? 0, version, lines.dropLast().joined(separator: "\n") + result.stderr)
        case .httpx:
            let script = """
                import httpx, sys
                with httpx.Client(http2=True, proxy="\(proxy.proxyURL)", verify="\(proxy.pki.rootPath)", timeout=15) as c:
                    r = c.get("\(url)")
                    sys.stdout.write(f"{r.status_code} {r.http_version}\\n{r.text}")
                """
            let result = try Subprocess.run("python3", ["-c", script], timeout: 30)
            let lines = result.stdout.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            let first = (lines.first ?? "").split(separator: " ")
            return (Int(first.first ?? "") ?? 0, first.count > 1 ? String(first[1]) : "?", (lines.count > 1 ? String(lines[1]) : "") + result.stderr)
        case .h2Only:
            let json = try H2Client.run(proxy: proxy, port: port, alpn: "h2", path: path)
            let response = json.responses.first
            return (response?.status ?? 0, json.alpn == "h2" ? "HTTP/2" : "?", response?.body ?? "")
        case .okhttp:
            let (lines, body) = try okhttp(proxy: proxy, url: url, count: 1)
            let first = (lines.first ?? "").split(separator: " ")
            let version = first.first.map { $0 == "h2" ? "HTTP/2" : $0.uppercased() } ?? "?"
            return (Int(first.last ?? "") ?? 0, version, body)
        }
    }

    /// OkHttp fetching `url` `count` times through `proxy` on one client: its `PROTOCOL STATUS`
    /// lines, and the last body (or the failure).
    private func okhttp(proxy: ProxyHarness, url: String, count: Int) throws -> (lines: [String], body: String) {
        let result = try Subprocess.run("java", ["-cp", try Self.okHttpClasspath.get(), "OkHttpH2Client", String(proxy.port),
                                                 proxy.pki.rootPath, url, String(count)], timeout: 60)
        var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let statusLines = lines.prefix { $0.split(separator: " ").count == 2 && Int($0.split(separator: " ")[1]) != nil }
        lines.removeFirst(statusLines.count)
        return (Array(statusLines), lines.joined(separator: "\n") + result.stderr)
    }

    /// OkHttp, as an app uses it: its calls to an h2 origin share one h2 connection through
    /// DevProxy (one connection id, streams 3, 5, 7: OkHttp keeps 1 for an Upgrade), each a flow
    /// of its own.
    @Test func okHttpReusesOneH2Connection() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let (lines, body) = try okhttp(proxy: proxy, url: origin.url("/echo"), count: 3)
        #expect(lines == ["h2 200", "h2 200", "h2 200"], "\(lines) \(body)")
        let flows = proxy.flows(count: 3)
        #expect(Set(flows.compactMap { $0.h2?.connectionID }).count == 1, "\(flows.map(\.h2))")
        #expect(flows.compactMap { $0.h2?.streamID }.sorted() == [3, 5, 7])
        #expect(flows.allSatisfy { $0.request?.httpVersion == "HTTP/2" && $0.response?.httpVersion == "HTTP/2" })
    }

    /// Request bodies and large response bodies cross intact both ways on h2⇄h2 and on an
    /// HTTP/1.1 client with an h2-only origin, and the flow records their sizes.
    @Test func largeBodiesCrossIntact() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let big = (0..<(700 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        try origin.serve("big.bin", big)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let directory = TemporaryDirectory()
        for flag in ["--http2", "--http1.1"] {
            let out = directory.file("out\(flag).bin")
            let result = try proxy.curl([flag, "-o", out, origin.url("/big.bin")])
            #expect(result.status == 0, "\(result.output)")
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: out))) == big, "\(flag)")
        }
        let flows = proxy.flows(count: 2)
        #expect(flows.map { $0.response?.body?.size } == [big.count, big.count])
        #expect(Set(flows.compactMap { $0.request?.httpVersion }) == ["HTTP/2", "HTTP/1.1"])
        #expect(flows.allSatisfy { $0.response?.httpVersion == "HTTP/2" })
    }

    /// Several streams on one connection each become a flow, sharing the connection id, with
    /// their own stream ids; hypercorn echoes what reached it: cookie crumbs joined, no
    /// connection-specific fields, `te: trailers` kept.
    @Test func streamsShareAConnectionAndFieldsCrossCleanly() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/echo",
                                    extra: ["cookie=a=1", "cookie=b=2", "te=trailers", "x-custom=1", "--count", "3"])
        #expect(json.responses.count == 3)
        #expect(json.responses.allSatisfy { $0.status == 200 })
        let echoed = try #require(json.responses.first?.body)
        #expect(echoed.contains("\"te\", \"trailers\""), "\(echoed)")
        #expect(echoed.contains("\"x-custom\", \"1\""))
        let flows = proxy.flows(count: 3)
        #expect(Set(flows.compactMap { $0.h2?.connectionID }).count == 1)
        #expect(Set(flows.compactMap { $0.h2?.streamID }) == [1, 3, 5])
    }

    /// An h2 origin's trailers reach an h2 client and the flow.
    @Test func trailersReachTheClientAndTheFlow() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/trailers", extra: ["te=trailers"])
        let response = try #require(json.responses.first)
        #expect(response.body == "body")
        #expect(response.trailers == [["x-checksum", "abc123"]])
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.trailers == [["x-checksum", "abc123"]])
        // HAR has no field for trailers: `_trailers`, and the version as Firefox writes it.
        let entry = try #require(HARWriter.document(for: [flow]).log.entries.first)
        #expect(entry.response.trailers?.map(\.name) == ["x-checksum"])
        #expect(entry.response.httpVersion == "HTTP/2")
        #expect(entry.request.httpVersion == "HTTP/2")
    }

    /// A client's RST_STREAM is recorded with its code and who sent it.
    @Test func clientResetIsRecorded() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        _ = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/big?n=5000000", extra: ["--reset-after-headers"])
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == FlowErrorKind.clientReset.rawValue)
        #expect(flow.error?.code == "CANCEL")
        #expect(flow.error?.by == "client")
    }

    /// An origin's RST_STREAM reaches the client with its own code: REFUSED_STREAM before any
    /// response (never a made-up 502, so the client may retry), once the bodiless request has gone
    /// again `maxResends` times and been refused each time, and INTERNAL_ERROR after part of a body
    /// (the client sees the 200 and the part, then the reset). The flow says who reset.
    @Test func originResetsPassThroughWithTheirCodes() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let refused = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/refused")
        #expect(refused.responses.first?.reset == 7, "\(refused)")
        #expect(refused.responses.first?.status == nil)
        let partial = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/rst")
        #expect(partial.responses.first?.status == 200)
        #expect(partial.responses.first?.body == "partial")
        #expect(partial.responses.first?.reset == 2)
        let flows = proxy.flows(count: 2)
        let byPath = Dictionary(flows.map { ($0.request?.url.components(separatedBy: "/").last ?? "", $0) }) { first, _ in first }
        #expect(byPath["refused"]?.error?.kind == FlowErrorKind.upstreamReset2.rawValue)
        #expect(byPath["refused"]?.error?.code == "REFUSED_STREAM")
        #expect(byPath["refused"]?.error?.by == "server")
        #expect(byPath["refused"]?.server.retried == true)
        #expect(byPath["rst"]?.error?.code == "INTERNAL_ERROR")
        #expect(byPath["rst"]?.error?.afterBytes == 7)
        #expect(byPath["rst"]?.response?.status == 200)
    }

    /// A request that names its host with a `host` field instead of `:authority` (RFC 9113
    /// §8.3.1 allows either) reaches the origin with `:authority` built from it, as an
    /// intermediary must: the field was dropped and nghttpd reset a request with no authority.
    @Test func aHostFieldWithoutAuthorityBecomesTheAuthority() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("hello.txt", Array("hello".utf8))
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let output = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/hello.txt", extra: ["--host-only"])
        #expect(output.responses.first?.status == 200 && output.responses.first?.body == "hello", "\(output)")
        #expect(proxy.flows(count: 1).first?.response?.status == 200)
    }

    /// A CONNECT inside an intercepted connection (a tunnel through a proxy behind the origin)
    /// is answered 501 with the reason, over HTTP/1.1 and HTTP/2: the HTTP/1.1 one's 2xx came
    /// back re-chunked and no tunnel began (its URL glued two authorities), and the HTTP/2 one
    /// reached an HTTP/1.1 origin as `CONNECT / HTTP/1.1` with a chunked body, and hung.
    @Test func aConnectInsideAnInterceptedConnectionIsRefused() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let h2 = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "inner.example:443", extra: ["--connect"])
        #expect(h2.responses.first?.status == 501, "\(h2)")
        let script = proxy.pythonTunnel(to: origin.port) + """

            t.sendall(b"CONNECT inner.example:443 HTTP/1.1\\r\\nHost: inner.example:443\\r\\n\\r\\n")
            print(t.recv(4096).split(b"\\r\\n")[0].decode())
            """
        let h1 = try Subprocess.run("python3", ["-c", script], timeout: 20)
        #expect(h1.stdout.hasPrefix("HTTP/1.1 501"), "\(h1.output)")
        let flows = proxy.flows(count: 2)
        #expect(flows.count == 2 && flows.allSatisfy { $0.error?.message.hasPrefix("a CONNECT inside an intercepted connection") == true },
                "\(flows.map(\.error))")
    }

    /// Streams a client opens past the 100 DevProxy allows (before it read DevProxy's SETTINGS)
    /// are refused with REFUSED_STREAM, so it may send them again, and their flows say so:
    /// `overloaded`, code REFUSED_STREAM, by the proxy. They said the request was malformed,
    /// with PROTOCOL_ERROR.
    @Test func streamsOverTheLimitAreRecordedAsRefused() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("hello.txt", Array("hello".utf8))
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let output = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/hello.txt", extra: ["--count", "120"])
        let refused = output.responses.filter { $0.reset == 7 }.count
        #expect(refused == 20 && output.responses.filter { $0.status == 200 }.count == 100, "\(refused) refused")
        let flows = proxy.flows(count: 120, timeout: 20)
        let recorded = flows.filter { $0.error?.code == "REFUSED_STREAM" }
        #expect(recorded.count == 20, "\(flows.compactMap(\.error))")
        #expect(recorded.allSatisfy { $0.error?.kind == "overloaded" && $0.error?.by == "proxy"
                    && $0.error?.message.hasPrefix("refused with REFUSED_STREAM") == true }, "\(recorded.map(\.error))")
    }

    /// HTTP/2 streams to an HTTP/1.1-only origin each take a thread and an origin connection: as
    /// many at once as DevProxy takes connections (`maxConnections`, 4 here), and the streams past
    /// that are refused with REFUSED_STREAM and recorded so. Nothing bounded them: 30 connections
    /// of 100 streams made 3,036 threads and 375 MiB.
    @Test func streamsToAnHTTP1OriginAreBoundedProxyWide() throws {
        let origin = try OriginServer(tls: true)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas; $0.maxConnections = 4 })
        let output = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/slow?s=1", extra: ["--count", "7"])
        let refused = output.responses.filter { $0.reset == 7 }.count
        #expect(refused == 3 && output.responses.filter { $0.status == 200 }.count == 4,
                "\(output.responses.map { ($0.status, $0.reset) })")
        let flows = proxy.flows(count: 7, timeout: 20)
        let recorded = flows.filter { $0.error?.code == "REFUSED_STREAM" }
        #expect(recorded.count == 3 && recorded.allSatisfy { $0.error?.kind == "overloaded" && $0.error?.by == "proxy"
                    && $0.error?.message.contains("HTTP/1.1 requests of HTTP/2 streams in flight") == true },
                "\(flows.map(\.error))")
        // Their places come back: the next streams go.
        let again = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/slow?s=0", extra: ["--count", "3"])
        #expect(again.responses.filter { $0.status == 200 }.count == 3, "\(again.responses.map { ($0.status, $0.reset) })")
    }

    /// An HTTP/1.1 client's request that an HTTP/2 origin left unprocessed (REFUSED_STREAM, or
    /// GOAWAY below its stream: RFC 9113 §8.7) goes again on a fresh connection, as an HTTP/2
    /// client's stream does: the HTTP/1.1 client got a 502 (an origin rotating its connections,
    /// nginx's keepalive_requests or gRPC's max_connection_age, made them at random).
    @Test func anHTTP1RequestTheH2OriginLeftUnprocessedGoesAgain() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        for path in ["/refused-once", "/goaway-once"] {
            let result = try proxy.curl(["--http1.1", "-w", " %{http_code}", origin.url(path)])
            #expect(result.stdout == "ok 200", "\(path): \(result.output)")
        }
        let flows = proxy.flows(count: 2)
        #expect(flows.allSatisfy { $0.server.retried == true && $0.response?.status == 200 && $0.error == nil },
                "\(flows.map { ($0.server.retried, $0.response?.status, $0.error) })")
    }

    /// An origin whose body is longer than its content-length (malformed, RFC 9113 §8.1.1): the
    /// client's stream is reset rather than left waiting or given a body that lies, and the flow
    /// says the origin was at fault.
    /// An h2 origin may answer before the request body is in, then send RST_STREAM NO_ERROR
    /// (RFC 9113 §8.1: the response is whole, stop sending). The client gets that answer whatever
    /// version it speaks (an HTTP/1.1 client's upload went to a 502 saying the stream had closed),
    /// an h2 client sees what it sees without DevProxy (curl ends the same way directly), and the
    /// flow is the 200 with no failure (it was `upstream_reset_stream`).
    @Test(arguments: ["--http1.1", "--http2"])
    func anAnswerBeforeTheWholeUploadReachesTheClient(_ version: String) throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let dir = TemporaryDirectory()
        let upload = dir.write("upload.bin", bytes: [UInt8](repeating: 0x61, count: 3 << 20))
        let arguments = [version, "-X", "POST", "--data-binary", "@\(upload)", "-w", "\n%{http_code}", origin.url("/early")]
        let proxied = try proxy.curl(arguments, timeout: 30)
        #expect(proxied.stdout == "early\n200", "\(proxied.output)")
        if version == "--http1.1" {
            #expect(proxied.status == 0, "\(proxied.output)")
        } else {
            let direct = try Subprocess.run("curl", ["-sS", "--cacert", origin.caPath, "--max-time", "20"] + arguments,
                                            timeout: 30)
            #expect(direct.stdout == "early\n200" && proxied.status == direct.status, "direct \(direct.output); proxied \(proxied.output)")
        }
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 200 && flow.response?.body?.text == "early")
        #expect(flow.error == nil, "\(String(describing: flow.error))")
    }

    /// An HTTP/1.1 origin that refuses an upload before reading it (413 at once, then it closes
    /// the connection, origin.py's /too-large): an h2-only client's stream, whose rest of the body
    /// met the closed connection, gets the 413 instead of a 502 (`closed the connection while we
    /// were writing`), and so does an HTTP/1.1 client, with or without `Expect: 100-continue`;
    /// no flow is a failure.
    @Test func anHTTP1OriginsRefusalOfAnUploadReachesTheClient() throws {
        let (origin, proxy) = try Self.http1OriginAndProxy()
        let h2 = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/too-large",
                                  extra: ["--body-size", "\(3 << 20)"])
        #expect(h2.responses.map(\.status) == [413] && h2.responses.first?.body == "too large", "\(h2)")
        let dir = TemporaryDirectory()
        let upload = dir.write("upload.bin", bytes: [UInt8](repeating: 0x61, count: 3 << 20))
        // curl sends `Expect: 100-continue` with a large body (origin.py answers 100, then the 413
        // while the body comes); without it the body follows the head at once. Either way the
        // client reads the 413 before its connection closes (DevProxy drains the rest first).
        for expect in [[], ["-H", "Expect:"]] {
            let h1 = try proxy.curl(["--http1.1", "--data-binary", "@\(upload)", "-w", "\n%{http_code}"] + expect
                                    + [origin.url("/too-large")])
            #expect(h1.stdout.hasSuffix("too large\n413"), "\(expect): \(h1.output)")
        }
        let flows = proxy.flows(count: 3)
        #expect(flows.map { $0.response?.status } == [413, 413, 413])
        #expect(flows.allSatisfy { $0.error == nil }, "\(flows.map(\.error))")
    }

    /// An `:authority` without a port (grpc's `ssl_target_name_override`) that reached another
    /// port: the flow's URL names the port, or replay and curl export went to :443.
    @Test func anAuthorityWithoutAPortKeepsThePortInTheURL() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("hello.txt", Array("hello".utf8))
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let out = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/hello.txt",
                                   extra: ["--authority", "localhost"])
        #expect(out.responses.first?.status == 200, "\(out)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == "https://localhost:\(origin.port)/hello.txt", "\(String(describing: flow.request?.url))")
    }

    /// An origin that cuts a gRPC call mid-response (GOAWAY INTERNAL_ERROR "boom", then the
    /// connection closed): the client gets trailers with `grpc-status` 14 (UNAVAILABLE), as a
    /// lost connection gives without a proxy (a reset's INTERNAL_ERROR reached the app as
    /// INTERNAL), and the flow names the GOAWAY's code and text.
    @Test func aGRPCCallCutByTheOriginEndsUnavailable() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let out = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/grpc-goaway-mid",
                                   extra: ["content-type=application/grpc", "te=trailers"])
        let response = try #require(out.responses.first, "\(out)")
        #expect(response.status == 200 && response.reset == nil, "\(out)")
        #expect(response.trailers.contains(["grpc-status", "14"]), "\(response.trailers)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_closed" && flow.error?.code == "INTERNAL_ERROR", "\(String(describing: flow.error))")
        #expect(flow.error?.message.contains("GOAWAY INTERNAL_ERROR: boom") == true, "\(String(describing: flow.error))")
        // The trailers DevProxy sent are the flow's, as the client got them (it had no status).
        #expect(flow.grpc?.status == 14 && flow.response?.trailers?.contains(["grpc-status", "14"]) == true,
                "\(String(describing: flow.grpc?.status)) \(String(describing: flow.response?.trailers))")
    }

    /// An origin that resets a gRPC call mid-response: the client's stream is reset with the same
    /// code, and the flow's status is the one a gRPC client reports for it (PROTOCOL-HTTP2.md's
    /// mapping: INTERNAL_ERROR → INTERNAL, CANCEL → CANCELLED, ENHANCE_YOUR_CALM → RESOURCE_EXHAUSTED),
    /// where it read UNKNOWN with a note that the client reported UNKNOWN.
    @Test(arguments: [(2, "INTERNAL_ERROR", 13), (8, "CANCEL", 1), (11, "ENHANCE_YOUR_CALM", 8)])
    func aGRPCCallTheOriginResetsHasTheStatusTheClientReports(_ row: (Int, String, Int)) throws {
        let (code, name, status) = row
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let out = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/grpc-rst-mid?code=\(code)",
                                   extra: ["content-type=application/grpc", "te=trailers"])
        #expect(out.responses.first?.reset == code, "\(out)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_reset_stream" && flow.error?.code == name, "\(String(describing: flow.error))")
        #expect(flow.grpc?.status == status, "\(flow.grpc?.notes ?? [])")
        #expect(flow.grpc?.notes.contains { $0.hasPrefix("response: the client's stream was reset (\(name))") } == true,
                "\(flow.grpc?.notes ?? [])")
    }

    @Test func anOriginsMalformedResponseResetsTheClientsStream() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let start = Date()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/long-body", extra: ["--then", "/ok"])
        #expect(Date().timeIntervalSince(start) < 8, "the client waited")
        #expect(json.responses.first?.body != "too long", "\(json)")
        #expect(json.responses.first?.reset != nil, "\(json)")
        #expect(json.responses.last?.body == "ok", "\(json)")
        let flow = try #require(proxy.flows(count: 2).first { $0.request?.url.hasSuffix("/long-body") == true })
        #expect(flow.error?.by == "server" && flow.error?.code == "PROTOCOL_ERROR", "\(String(describing: flow.error))")
        #expect(flow.error?.kind == FlowErrorKind.upstreamBadResponse.rawValue)
        // An HTTP/1.1 client of the same origin has its connection cut at once (the head had gone).
        let h1Start = Date()
        let h1 = try proxy.curl(["--http1.1", origin.url("/long-body")])
        #expect(h1.status != 0 && h1.stdout != "too long", "\(h1.output)")
        #expect(Date().timeIntervalSince(h1Start) < 8, "the HTTP/1.1 client waited")
        let h1Flow = try #require(proxy.flows(count: 3).last)
        #expect(h1Flow.error?.kind == FlowErrorKind.upstreamBadResponse.rawValue, "\(String(describing: h1Flow.error))")
        // A head with a field HTTP/2 forbids: nothing of it went to the client, which gets a 502 saying why.
        for client in ["--http2", "--http1.1"] {
            let bad = try proxy.curl([client, "-w", "\n%{http_code}", origin.url("/bad-header")])
            #expect(bad.stdout.hasSuffix("\n502") && bad.stdout.contains("Invalid HTTP header field"), "\(client): \(bad.output)")
        }
        let badFlows = proxy.flows(count: 5).suffix(2)
        #expect(badFlows.allSatisfy { $0.error?.kind == FlowErrorKind.upstreamBadResponse.rawValue && $0.response?.status == 502 },
                "\(badFlows.map(\.error))")
        // The origin's failure in the same read as its head and first bytes: the client got only a
        // RST_STREAM (it went out ahead of the queued HEADERS and DATA) while the flow said 200 and
        // 7 bytes relayed. It gets the head and the bytes, then the reset.
        let burst = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/burst-error")
        #expect(burst.responses.first?.status == 200 && burst.responses.first?.body == "partial"
                && burst.responses.first?.reset != nil, "\(burst)")
        // A head larger than DevProxy takes (70 KiB): an HTTP/1.1 client waited out the upstream
        // timeout for it and got a 504 "did not respond"; it gets a 502 that says why at once.
        let hugeStart = Date()
        let huge = try proxy.curl(["--http1.1", "-w", "\n%{http_code}", origin.url("/huge-header")])
        #expect(huge.stdout.hasSuffix("\n502") && huge.stdout.contains("header list"), "\(huge.output)")
        #expect(Date().timeIntervalSince(hugeStart) < 8, "the HTTP/1.1 client waited")
    }

    /// An origin that says nothing after the request is answered 504 at the upstream timeout
    /// (exactly it: an HTTPS origin's read used to wait twice as long), whichever versions the
    /// client and the origin speak, and the flow says upstream_timeout with the time waited.
    @Test func aMuteOriginIsAnswered504AtTheUpstreamTimeout() throws {
        let (origin, slow, proxy) = try Self.scriptedOriginsAndProxy(upstreamTimeout: 2)
        for (client, url) in [("--http2", origin.url("/mute")), ("--http1.1", origin.url("/mute")),
                              ("--http1.1", slow.url("/slow?s=5"))] {
            let start = Date()
            let result = try proxy.curl([client, "-w", "\n%{http_code}", url], timeout: 30)
            let elapsed = Date().timeIntervalSince(start)
            #expect(elapsed < 3.5, "\(client) \(url) waited \(elapsed) s: \(result.output)")
            #expect(result.stdout.hasSuffix("\n504"), "\(client) \(url): \(result.output)")
        }
        // An h2-only client of an HTTP/1.1 origin (each stream on an HTTP/1.1 connection of its own).
        let start = Date()
        let h1Origin = try H2Client.run(proxy: proxy, port: slow.port, alpn: "h2", path: "/slow?s=5")
        #expect(h1Origin.responses.first?.status == 504 && Date().timeIntervalSince(start) < 3.5, "\(h1Origin)")
        let flows = proxy.flows(count: 4)
        #expect(flows.count == 4 && flows.allSatisfy { $0.error?.kind == FlowErrorKind.upstreamTimeout.rawValue
                                                           && $0.error?.message.hasSuffix("did not respond within 2 s") == true },
                "\(flows.map(\.error))")
    }

    /// A response that has begun may go quiet for longer than the upstream timeout (an event
    /// stream between events, a watch, a long poll answered in parts): it is relayed whole, as
    /// without a proxy, over each pairing of versions (an HTTP/1.1 and an h2 client, an HTTP/1.1
    /// and an h2-only origin). It used to be cut at the timeout: the h2 client's stream reset with
    /// INTERNAL_ERROR, the flow an upstream_timeout.
    @Test func aQuietResponseIsRelayedWholePastTheUpstreamTimeout() throws {
        let (h2, h1, proxy) = try Self.scriptedOriginsAndProxy(upstreamTimeout: 1)
        let whole = "data: first\n\ndata: second\n\n"
        for (client, url) in [("--http2", h2.url("/quiet?s=2.5")), ("--http1.1", h2.url("/quiet?s=2.5")),
                              ("--http1.1", h1.url("/quiet?s=2.5"))] {
            let result = try proxy.curl([client, "-N", url], timeout: 30)
            #expect(result.stdout == whole, "\(client) \(url): \(result.output)")
        }
        let h2Client = try H2Client.run(proxy: proxy, port: h1.port, alpn: "h2", path: "/quiet?s=2.5")
        #expect(h2Client.responses.first?.body == whole && h2Client.responses.first?.reset == nil, "\(h2Client)")
        let flows = proxy.flows(count: 4)
        #expect(flows.count == 4 && flows.allSatisfy { $0.error == nil && $0.response?.body?.text == whole },
                "\(flows.map(\.error))")
        #expect(flows.map { $0.request?.httpVersion ?? "" } == ["HTTP/2", "HTTP/1.1", "HTTP/1.1", "HTTP/2"])
    }

    /// A client that leaves a quiet response is noticed at once, whichever versions speak: the
    /// flow says client_closed (or client_reset) when it left, not at the next event, and the
    /// origin's stream or connection ends with it.
    @Test func aClientLeavingAQuietResponseEndsItAtOnce() throws {
        let (h2, h1, proxy) = try Self.scriptedOriginsAndProxy(upstreamTimeout: 1)
        for (client, url) in [("--http2", h2.url("/quiet?s=8&h2")), ("--http1.1", h2.url("/quiet?s=8&h1")),
                              ("--http1.1", h1.url("/quiet?s=8"))] {
            let result = try proxy.curl([client, "-N", "--max-time", "2", url], timeout: 30)
            #expect(result.stdout == "data: first\n\n", "\(client) \(url): \(result.output)")
        }
        let h2Client = try H2Client.run(proxy: proxy, port: h1.port, alpn: "h2", path: "/quiet?s=8",
                                        extra: ["--reset-after-headers"])
        #expect(h2Client.responses.first?.status == 200, "\(h2Client)")
        let flows = proxy.flows(count: 4, timeout: 5)
        #expect(flows.count == 4, "\(flows.map(\.error))")
        for flow in flows {
            let took = (ISO8601.date(flow.ended) ?? .distantFuture).timeIntervalSince(ISO8601.date(flow.started) ?? .distantPast)
            #expect(["client_closed", "client_reset"].contains(flow.error?.kind ?? "-") && took < 3.5,
                    "\(flow.request?.url ?? "") took \(took) s: \(String(describing: flow.error))")
        }
        // The origins saw each exchange end before its second event.
        let deadline = Date().addingTimeInterval(5)
        var resets = "", requests = ""
        repeat {
            resets = try Subprocess.run("curl", ["-sS", "--cacert", h2.caPath, h2.url("/resets")], timeout: 10).stdout
            requests = try Subprocess.run("curl", ["-sS", "--cacert", h1.caPath, h1.url("/requests")], timeout: 10).stdout
            if resets.contains("&h2") && resets.contains("&h1") && requests.components(separatedBy: "/quiet abandoned").count == 3 {
                break
            }
            usleep(100_000)
        } while Date() < deadline
        #expect(resets.contains("/quiet?s=8&h2") && resets.contains("/quiet?s=8&h1"), "\(resets)")
        #expect(requests.components(separatedBy: "/quiet abandoned").count == 3, "\(requests)")
    }

    /// An h2 client's stream to an HTTP/1.1-only origin goes out on a pooled keep-alive
    /// connection; when the server had dropped that connection as the request came (origin.py's
    /// `/drop-next`), a bodiless idempotent request goes again on a fresh connection, as an
    /// HTTP/1.1 client's would (the flow says `retried`), and a POST is never resent: it gets the
    /// 502, which names the reused connection.
    @Test(arguments: [("GET", 200), ("HEAD", 200), ("POST", 502)])
    func aStreamOnAPooledConnectionTheOriginDroppedIsResentOnlyWhenIdempotent(_ method: String, _ status: Int) throws {
        let (origin, proxy) = try Self.http1OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/drop-next",
                                    extra: ["--then", "/cl?n=5", "--then-method", method])
        #expect(json.alpn == "h2")
        #expect(json.responses.map(\.status) == [200, status], "\(json)")
        let flows = proxy.flows(count: 2)
        #expect(flows.first?.server.retried == nil)
        #expect(flows.last?.request?.method == method)
        #expect(flows.last?.response?.status == status)
        if status == 200 {
            #expect(json.responses.last?.body == (method == "HEAD" ? "" : "hello"), "\(json)")
            #expect(flows.last?.server.retried == true)
            #expect(flows.last?.error == nil)
        } else {
            #expect(flows.last?.server.retried == nil)
            #expect(flows.last?.error?.kind == FlowErrorKind.upstreamClosed.rawValue)
            #expect(flows.last?.error?.message.contains("(a reused keep-alive connection)") == true,
                    "\(String(describing: flows.last?.error))")
        }
        // The origin saw the request on the dropped connection, and (resent) on a fresh one.
        let seen = try Subprocess.run("curl", ["-sS", "--cacert", origin.caPath, origin.url("/requests")], timeout: 20).stdout
        let lines = seen.split(separator: "\n").filter { $0.contains("/cl?n=5") }
        #expect(lines.count == (status == 200 ? 2 : 1) && lines.first?.hasSuffix("(dropped)") == true, "\(seen)")
    }

    /// An HTTP/1.1 origin's 204 with a `Content-Length` (RFC 9110 §8.6 forbids it; some servers
    /// send it) reaches an h2-only client without it: Python h2 took `content-length: 5` with no
    /// DATA as a malformed stream and failed the request. The flow keeps what the origin sent.
    @Test func a204sContentLengthIsNotRelayedToAnH2Client() throws {
        let (origin, proxy) = try Self.http1OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/204?length=5",
                                    extra: ["--then", "/cl?n=3"])
        #expect(json.responses.map(\.status) == [204, 200], "\(json)")
        #expect(json.responses.first?.reset == nil && json.responses.first?.body == "")
        #expect(json.responses.first?.headers.contains { $0.first == "content-length" } == false, "\(json)")
        let flow = try #require(proxy.flows(count: 2).first)
        #expect(flow.response?.status == 204 && flow.error == nil)
        #expect(flow.response?.headers.contains(["Content-Length", "5"]) == true, "\(String(describing: flow.response?.headers))")
    }

    /// A trailer section with a `Content-Length` (a framing field RFC 9110 §6.5.1 keeps out of
    /// trailers) from an HTTP/1.1 origin reaches an h2-only client without it: nghttp2 clients
    /// take it as the body's length and reset the stream (curl: PROTOCOL_ERROR). The other
    /// trailers pass, and the flow keeps what the origin sent.
    @Test func aTrailersContentLengthIsNotRelayedToAnH2Client() throws {
        let (origin, proxy) = try Self.http1OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/chunked?cl=1")
        #expect(json.responses.first?.body == "first,second,third", "\(json)")
        #expect(json.responses.first?.trailers == [["x-checksum", "abc123"]], "\(json)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.trailers?.contains(["Content-Length", "99"]) == true,
                "\(String(describing: flow.response?.trailers))")
    }

    /// 103 Early Hints from an HTTP/1.1 origin reach an h2 client as a HEADERS frame of their own
    /// before the response (browsers act on them over HTTP/2 only), the `Link` field with them.
    @Test func earlyHintsFromAnHTTP1OriginReachAnH2Client() throws {
        let (origin, proxy) = try Self.http1OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/early-hints")
        let response = try #require(json.responses.first)
        #expect(response.status == 200 && response.body == "hinted", "\(json)")
        let hints = try #require(response.informational?.first, "\(json)")
        #expect(hints.contains([":status", "103"]), "\(json)")
        #expect(hints.contains(["link", "</style.css>; rel=preload; as=style"]), "\(json)")
        #expect(proxy.flows(count: 1).first?.response?.status == 200)
    }

    /// An HTTP/1.1 origin that answers an h2 client's request with 101 Switching Protocols (an
    /// HTTP/2 stream has no 101, RFC 9113 §8.6, and the request asked for no upgrade) gets the
    /// client a 502 that says so, not a stream left waiting for an answer that never comes; the
    /// flow records why, and the client's connection goes on serving.
    @Test func anUnaskedSwitchOfProtocolsGetsAnH2Client502() throws {
        let (origin, proxy) = try Self.http1OriginAndProxy()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/switch", extra: ["--then", "/cl"])
        #expect(json.responses.map(\.status) == [502, 200], "\(json)")
        #expect(json.responses.first?.body.contains("answered 101 Switching Protocols to an HTTP/2 client's request") == true,
                "\(json)")
        #expect(json.responses.last?.body == "hello world", "\(json)")
        let flow = try #require(proxy.flows(count: 2).first { $0.request?.url.hasSuffix("/switch") == true })
        #expect(flow.error?.kind == "upstream_bad_response", "\(String(describing: flow.error))")
        #expect(flow.response?.status == 502)
    }

    /// nginx closes an HTTP/2 connection after `keepalive_requests` (1,000 by default, 2 here)
    /// with GOAWAY and leaves the streams above its last one unprocessed. Six requests at once on
    /// one h2 client connection all get nginx's answer: those it left went again on a new
    /// connection (their flows say `server.retried`). They had reached the client as
    /// REFUSED_STREAM for DevProxy's own connection to the origin going away.
    @Test func requestsTheOriginLeftUnprocessedGoAgainOnANewConnection() throws {
        let material = try MTLSMaterial()
        let nginx = try NginxServer(certificate: material.originCert, key: material.originKey, directives: """
            keepalive_requests 2;
            location / { default_type text/plain; return 200 "nginx\\n"; }
            """)
        let cas = try Certificate.all(from: SecureFile.read(material.originCert, what: "origin certificate"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: nginx.port, alpn: "h2", path: "/", extra: ["--count", "6"])
        #expect(json.responses.map(\.status) == Array(repeating: 200, count: 6), "\(json)")
        #expect(json.responses.allSatisfy { $0.body == "nginx\n" && $0.reset == nil }, "\(json)")
        let flows = proxy.flows(count: 6)
        #expect(flows.allSatisfy { $0.error == nil && $0.response?.status == 200 }, "\(flows.map { $0.error })")
        // nginx answered two streams a connection: four of the six went again, some twice.
        #expect(flows.filter { $0.server.retried == true }.count == 4, "\(flows.map { $0.server.retried })")
    }

    /// An origin that drops an idle connection just as a request goes out on it (no GOAWAY, no
    /// answer: hypercorn after its keep-alive timeout, at the wrong moment) costs an idempotent
    /// bodiless request nothing: it goes again on a new connection (`server.retried`), as over
    /// HTTP/1.1 (RFC 9110 §9.2.2). A POST gets the 502, since the origin may have acted on it.
    @Test(arguments: [("GET", 200), ("POST", 502)])
    func aRequestOnAConnectionTheOriginDroppedGoesAgainWhenIdempotent(_ method: String, _ status: Int) throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/close-next",
                                    extra: ["--then", "/ok", "--then-method", method])
        #expect(json.responses.map(\.status) == [200, status], "\(json)")
        let flows = proxy.flows(count: 2)
        let second = try #require(flows.first { $0.request?.method == method && $0.request?.url.hasSuffix("/ok") == true })
        #expect(second.server.retried == (method == "GET" ? true : nil), "\(second.server)")
        #expect(second.error?.kind == (method == "GET" ? nil : "upstream_closed"), "\(String(describing: second.error))")
    }

    /// An origin's GOAWAY retires its connection: the next request on the same client connection
    /// goes on a new origin connection and succeeds.
    @Test func originGoAwayRetiresTheConnection() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/goaway", extra: ["--then", "/ok"])
        #expect(json.responses.map(\.body) == ["bye", "ok"], "\(json)")
        let flows = proxy.flows(count: 2)
        #expect(flows.allSatisfy { $0.error == nil })
        #expect(Set(flows.compactMap { $0.h2?.connectionID }).count == 1)
    }

    /// At shutdown an h2 client gets GOAWAY(NO_ERROR) (seen by Python h2) and a stream in
    /// flight finishes within the grace period (curl gets the whole answer). The proxy stops once
    /// both requests have reached it (the `started` of their flows), however long the clients took
    /// to start on a loaded machine.
    @Test func shutdownSendsGoAwayAndFinishesOpenStreams() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let inFlight = StartedFlows()
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas; $0.shutdownGrace = 10 }, extraSinks: [inFlight])
        let goaway = Mutex<H2Client.Output?>(nil)
        let curl = Mutex<Subprocess.Result?>(nil)
        let (proxyPort, proxyURL, root, originPort) = (proxy.port, proxy.proxyURL, proxy.pki.rootPath, origin.port)
        let threads = [
            Thread {
                let output = try? H2Client.run(proxyPort: proxyPort, root: root, port: originPort, alpn: "h2", path: "/slow")
                goaway.withLock { $0 = output }
            },
            Thread {
                let result = try? Subprocess.run("curl", ["-sS", "--http2", "--proxy", proxyURL, "--cacert", root, "--max-time", "40",
                                                          "https://localhost:\(originPort)/slow"], timeout: 50)
                curl.withLock { $0 = result }
            },
        ]
        threads.forEach { $0.start() }
        // The origin answers /slow 2 s after it gets it; the grace (10 s) covers that under load.
        let started = Date().addingTimeInterval(30)
        while inFlight.count(pathSuffix: "/slow") < 2 && Date() < started { usleep(20_000) }
        #expect(inFlight.count(pathSuffix: "/slow") == 2, "both requests reached the proxy before it stopped")
        proxy.server.stop()
        let deadline = Date().addingTimeInterval(30)
        while (goaway.withLock { $0 } == nil || curl.withLock { $0 } == nil) && Date() < deadline { usleep(20_000) }
        #expect(goaway.withLock { $0 }?.goaway == 0, "GOAWAY(NO_ERROR) reached the client")
        let answered = try #require(curl.withLock { $0 })
        #expect(answered.status == 0, "\(answered.output)")
        #expect(answered.stdout == "slow")
    }

    /// `responded` is reported for a response whose body is still on its way (the web UI shows it
    /// running with its status), not for one whose head and whole body came in one read: that
    /// flow goes from started straight to finished, one store step fewer.
    @Test func respondedOnlyWhileTheBodyIsOnItsWay() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let lifecycle = StartedFlows()
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas }, extraSinks: [lifecycle])
        try lifecycle.expectRespondedOnlyWhileTheBodyIsOnItsWay(through: proxy, curlFlags: ["--http2"], url: origin.url)
    }

    /// Rapid reset (CVE-2023-44487): a client that opens and cancels streams in a loop gets a
    /// GOAWAY from DevProxy's session (libnghttp2's reset-rate limit ends the session with
    /// INTERNAL_ERROR), the flow log says why, and the proxy goes on serving others.
    @Test func rapidResetIsCutOffAndOthersAreServed() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let attack = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/echo", extra: ["--rapid-reset", "5000"])
        #expect(attack.goaway == 2, "INTERNAL_ERROR: \(attack)")
        let flows = proxy.flows(count: 1)
        #expect(flows.contains { $0.error?.kind == FlowErrorKind.http2ProtocolError.rawValue })
        // The flow names the flood, where it said "the client broke the HTTP/2 protocol: GOAWAY INTERNAL_ERROR".
        #expect(flows.contains { $0.error?.message.contains("faster than the 1000 at once (then 33 a second) DevProxy "
                                                                + "allows against rapid reset (CVE-2023-44487)") == true },
                "\(flows.compactMap(\.error?.message))")
        let after = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/echo")
        #expect(after.responses.first?.status == 200)
    }

    /// `--sink-reports` answers a pin-failure report on an h2 stream with 204 itself, the body
    /// read and recorded, nothing sent to the origin.
    @Test func sinkReportsAreAnsweredOnH2Streams() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.localRoutes = [.sinkReports { method, url, _ in method == "POST" && url.hasSuffix("/pin-report") }]
        })
        let result = try proxy.curl(["--http2", "-w", "%{http_code} %{http_version}", "-o", "/dev/null",
                                     "--data-binary", "{\"hostname\":\"x\"}", origin.url("/pin-report")])
        #expect(result.stdout == "204 2", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 204)
        #expect(flow.request?.body?.text == "{\"hostname\":\"x\"}")
        #expect(flow.response?.headers.contains { $0.first == "x-devproxy" } == true)
    }

    /// A local route is written once and answers HTTP/1.1 and HTTP/2 alike: it sees the same
    /// method, URL, headers and whole body, and its answer (status, fields, body, error) reaches
    /// each client in its own version, recorded in the flow; the origin is never asked.
    @Test(arguments: ["--http1.1", "--http2"])
    func localRoutesAnswerBothVersions(_ version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.localRoutes = [
                LocalRoute(name: "test-echo", bodyLimit: 64, matches: { $0.path == "/local/echo" }, respond: { request in
                    let text = "\(request.method) \(request.httpVersion) \(request.header("x-probe") ?? "-") "
                    return LocalResponse(status: 201, headers: [("Content-Type", "text/plain")],
                                         body: Array(text.utf8) + request.body.reversed())
                }),
                LocalRoute(name: "test-refusal", matches: { $0.path == "/local/refuse" }, respond: { _ in
                    .refusal(status: 403, kind: .badRequest, "refused by a test route")
                }),
            ]
        })
        let echo = try proxy.curl([version, "-sS", "-H", "X-Probe: p1", "--data-binary", "abc", "-w", "\n%{http_code}",
                                   origin.url("/local/echo?q=1")])
        let expectedVersion = version == "--http2" ? "HTTP/2" : "HTTP/1.1"
        #expect(echo.stdout == "POST \(expectedVersion) p1 cba\n201", "\(echo.output)")
        let tooLong = try proxy.curl([version, "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                                      "--data-binary", String(repeating: "x", count: 65), origin.url("/local/echo")])
        #expect(tooLong.stdout == "413", "\(tooLong.output)")
        let refused = try proxy.curl([version, "-sS", "-w", "\n%{http_code}", origin.url("/local/refuse")])
        #expect(refused.stdout == "403 Forbidden: refused by a test route\n\n403", "\(refused.output)")
        let flows = proxy.flows(count: 3)
        let echoFlow = try #require(flows.first { $0.request?.url.hasSuffix("/local/echo?q=1") == true })
        #expect(echoFlow.response?.status == 201)
        #expect(echoFlow.request?.body?.text == "abc")
        #expect(echoFlow.response?.body?.text == "POST \(expectedVersion) p1 cba")
        #expect(echoFlow.response?.headers.contains { $0.first?.lowercased() == "x-devproxy" } == true)
        #expect(echoFlow.error == nil)
        let refusedFlow = try #require(flows.first { $0.request?.url.hasSuffix("/local/refuse") == true })
        #expect(refusedFlow.error?.kind == FlowErrorKind.badRequest.rawValue)
        #expect(refusedFlow.error?.message == "refused by a test route")
    }

    /// With `--no-http2` an h2-only client gets no ALPN, hangs up, and the flow says why: a
    /// protocol mismatch, never the pinning signal `client_closed_after_handshake`.
    @Test func noHTTP2RecordsAnALPNMismatchNotPinning() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas; $0.http2 = false })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/index.html")
        #expect(json.alpn == nil)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == FlowErrorKind.clientClosedALPNMismatch.rawValue)
        #expect(flow.error?.message.contains("--no-http2") == true)
        let curl = try proxy.curl(["--http2", "-w", "%{http_version}", "-o", "/dev/null", origin.url("/index.html")])
        #expect(curl.stdout == "1.1", "with --no-http2 curl speaks HTTP/1.1 to DevProxy")
    }

    /// origin.py (HTTP/1.1 over TLS, `localhost`) and a proxy that trusts its CA.
    /// The misbehaving h2-only origin (`h2bad.py`), an HTTP/1.1-only one (`origin.py`), and a
    /// proxy that trusts both, with `upstreamTimeout`.
    static func scriptedOriginsAndProxy(upstreamTimeout: TimeInterval) throws -> (HTTP2Origin, OriginServer, ProxyHarness) {
        let h2 = try HTTP2Origin(.misbehaving)
        let h1 = try OriginServer(names: ["localhost"])
        let cas = try Certificate.all(from: SecureFile.read(h2.caPath, what: "ca"))
            + Certificate.all(from: SecureFile.read(h1.caPath, what: "ca"))
        return (h2, h1, try ProxyHarness(configure: { $0.upstreamCAs = cas; $0.upstreamTimeout = upstreamTimeout }))
    }

    static func http1OriginAndProxy() throws -> (OriginServer, ProxyHarness) {
        let origin = try OriginServer(names: ["localhost"])
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        return (origin, try ProxyHarness(configure: { $0.upstreamCAs = cas }))
    }
}

/// The Python h2 client (`Resources/h2client.py`) through a proxy harness.
enum H2Client {
    struct Output: Decodable {
        struct Response: Decodable {
            var status: Int?
            var headers: [[String]]
            var body: String
            var trailers: [[String]]
            var reset: Int?
            /// The 1xx heads before the response, each as its fields.
            var informational: [[[String]]]?
        }
        var alpn: String?
        var responses: [Response]
        var goaway: Int?
    }

    static func run(proxy: ProxyHarness, port: Int, alpn: String, path: String, extra: [String] = []) throws -> Output {
        try run(proxyPort: proxy.port, root: proxy.pki.rootPath, port: port, alpn: alpn, path: path, extra: extra)
    }

    static func run(proxyPort: Int, root: String, port: Int, alpn: String, path: String, extra: [String] = []) throws -> Output {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestSupport/Resources/h2client.py").path
        let result = try Subprocess.run("python3", [script, "\(proxyPort)", root, "localhost", "\(port)", alpn, path] + extra,
                                        timeout: 30)
        guard let data = result.stdout.data(using: .utf8), let output = try? JSONDecoder().decode(Output.self, from: data) else {
            throw TestFailure("h2client.py failed: \(result.output)")
        }
        return output
    }
}
