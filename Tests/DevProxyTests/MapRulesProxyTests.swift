import CertAuthority
@testable import DevProxy
import Foundation
import SessionStore
import Testing
import TestSupport

/// `--map-remote` and `--map-local` through the proxy with real clients (curl over HTTP/1.1 and
/// HTTP/2, plain proxying and CONNECT interception): the request reaches the other origin with
/// its Host, or is answered from a file without dialling anything, and the flow says so.
@Suite(.serialized) struct MapRulesProxyTests {
    /// A plain HTTP origin that answers every request with JSON naming itself, the Host it got
    /// and the target; its name is its argument.
    static let namedOrigin = """
    import http.server, json, sys
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            body = json.dumps({"origin": sys.argv[1], "host": self.headers.get("Host"), "path": self.path}).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        do_POST = do_GET
        def log_message(self, *a): pass
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// The `host` header (any case) of an h2origin.py `/echo` answer.
    private func echoedHost(_ echo: [String: Any]) -> String? {
        (echo["headers"] as? [[String]])?.first { $0.first?.lowercased() == "host" }?.last
    }

    @Test func mapRemoteSendsAPlainRequestToAnotherOriginWithItsHost() throws {
        let a = try BackgroundServer(script: Self.namedOrigin, arguments: ["a"])
        let b = try BackgroundServer(script: Self.namedOrigin, arguments: ["b"])
        let rule = #"|http://localhost:\#(a.port)/v1/(.*)|http://127.0.0.1:\#(b.port)/v2/\1"#
        let proxy = try ProxyHarness(configure: { $0.mapRules = try! MapRules(remote: [rule], local: []) })
        let asked = "http://localhost:\(a.port)/v1/users?id=7"
        let result = try proxy.curl(["--http1.1", asked])
        #expect(result.status == 0, "\(result.output)")
        let answer = try json(result.stdout)
        #expect(answer["origin"] as? String == "b")
        #expect(answer["host"] as? String == "127.0.0.1:\(b.port)")
        #expect(answer["path"] as? String == "/v2/users?id=7")
        let flow = try #require(proxy.flows(count: 1).first)
        let sent = "http://127.0.0.1:\(b.port)/v2/users?id=7"
        #expect(flow.mapped == Flow.Mapping(rule: "map-remote", from: asked, to: sent, by: [rule]))
        #expect(flow.request?.url == sent && flow.server.port == b.port)
        #expect(flow.request?.clientHost == "localhost:\(a.port)")
        #expect(flow.response?.status == 200)
    }

    /// A request mapped to an origin that is not there (the local build not started): the console's
    /// red line says where it came from, as a successful mapped flow's line does. It showed only the
    /// URL it was sent to, the app's own URL nowhere.
    @Test func aFailedMappedRequestsLineSaysWhereItCameFrom() throws {
        let a = try BackgroundServer(script: Self.namedOrigin, arguments: ["a"])
        let nothing = try HTTP2Origin.freePort()
        let rule = #"|http://localhost:\#(a.port)/|http://127.0.0.1:\#(nothing)/"#
        let proxy = try ProxyHarness(configure: { $0.mapRules = try! MapRules(remote: [rule], local: []) })
        let asked = "http://localhost:\(a.port)/v1/user"
        let result = try proxy.curl(["-i", asked])
        #expect(result.stdout.contains(" 502"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_refused", "\(String(describing: flow.error))")
        let line = ConsoleFlowPrinter.line(for: flow)
        #expect(line.contains("✗ GET http://127.0.0.1:\(nothing)/v1/user ") && line.hasSuffix(" (mapped from \(asked))"),
                "\(line)")
    }

    @Test func aFilterThatDoesNotMatchLeavesTheRequestAlone() throws {
        let a = try BackgroundServer(script: Self.namedOrigin, arguments: ["a"])
        let b = try BackgroundServer(script: Self.namedOrigin, arguments: ["b"])
        let rule = "|~m POST|localhost:\(a.port)|127.0.0.1:\(b.port)"
        let proxy = try ProxyHarness(configure: { $0.mapRules = try! MapRules(remote: [rule], local: []) })
        let get = try proxy.curl(["--http1.1", "http://localhost:\(a.port)/x"])
        #expect(try json(get.stdout)["origin"] as? String == "a", "\(get.output)")
        let post = try proxy.curl(["--http1.1", "-d", "k=v", "http://localhost:\(a.port)/x"])
        #expect(try json(post.stdout)["origin"] as? String == "b", "\(post.output)")
        let flows = proxy.flows(count: 2)
        #expect(flows.first { $0.request?.method == "GET" }?.mapped == nil)
        #expect(flows.first { $0.request?.method == "POST" }?.mapped?.to == "http://127.0.0.1:\(b.port)/x")
    }

    /// Inside CONNECT, from an HTTP/1.1 or an HTTP/2 client, to another origin that speaks only
    /// HTTP/1.1 or HTTP/2 as well: the request gets there with its new Host and path, an HTTP/2
    /// client's over HTTP/2 where the origin speaks it.
    @Test(arguments: [("--http1.1", HTTP2Origin.Kind.hypercornHTTP1), ("--http2", .hypercornHTTP1),
                      ("--http1.1", .hypercornBoth), ("--http2", .hypercornBoth)])
    func mapRemoteInsideAnInterceptedConnection(_ version: String, _ kind: HTTP2Origin.Kind) throws {
        let a = try HTTP2Origin(.hypercornBoth)
        let b = try HTTP2Origin(kind)
        let cas = try [a.caPath, b.caPath].flatMap { try Certificate.all(from: SecureFile.read($0, what: "ca")) }
        let rule = "|https://localhost:\(a.port)/api/|https://localhost:\(b.port)/"
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: [rule], local: [])
        })
        let result = try proxy.curl([version, a.url("/api/echo?q=1")])
        #expect(result.status == 0, "\(result.output)")
        let echo = try json(result.stdout)
        #expect(echo["path"] as? String == "/echo" && echo["query"] as? String == "q=1")
        #expect(echoedHost(echo) == "localhost:\(b.port)", "\(echo)")
        #expect(echo["http_version"] as? String == (version == "--http2" && kind == .hypercornBoth ? "2" : "1.1"))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.from == a.url("/api/echo?q=1") && flow.mapped?.to == b.url("/echo?q=1"))
        #expect(flow.request?.url == b.url("/echo?q=1") && flow.server.port == b.port)
        #expect((flow.h2 != nil) == (version == "--http2"))
        #expect(flow.response?.status == 200)
    }

    /// gRPC (grpcio on both ends) mapped from a TLS server to another one without TLS (h2 by prior
    /// knowledge, as a local dev server speaks it): every kind of call works, and goes to the second.
    @Test func gRPCCallsAreMappedToAnotherServer() throws {
        let a = try GRPCProxyTests.EchoServer()
        let b = try GRPCProxyTests.EchoServer(insecure: true)
        let cas = try Certificate.all(from: SecureFile.read(a.caPath, what: "ca"))
        let rule = "|https://localhost:\(a.port)/|http://localhost:\(b.port)/"
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: [rule], local: [])
        })
        let result = try Subprocess.run("python3", [GRPCProxyTests.script, "client", proxy.pki.rootPath, "\(a.port)"],
                                        environment: ["https_proxy": proxy.proxyURL, "no_proxy": "", "no_grpc_proxy": ""],
                                        timeout: 90)
        let calls = try JSONDecoder().decode(GRPCProxyTests.Results.self, from: Data(result.stdout.utf8))
        #expect(calls.unary.ok == true && calls.unary.trailer == "t1", "\(result.output)")
        #expect(calls.fail.error == "NOT_FOUND" && calls.bidi.answers == 5 && calls.server_stream.sizes_ok == true
                && calls.client_stream.ok == true && calls.gzip.ok == true && calls.invalid.rich == true,
                "\(result.output)")
        let flows = proxy.flows(count: 7).filter { $0.grpc != nil }
        #expect(flows.count == 7 && flows.allSatisfy { $0.server.port == b.port && $0.mapped?.by == [rule] }, "\(flows.map(\.server))")
    }

    /// One HTTP/2 connection of Python httpx, its streams going three ways at once: to its own
    /// origin, mapped to another HTTP/2 origin, and answered from a file.
    @Test func oneHTTP2ConnectionsStreamsGoWhereTheirRulesSay() throws {
        let a = try HTTP2Origin(.hypercornBoth)
        let b = try HTTP2Origin(.hypercornBoth)
        let dir = TemporaryDirectory()
        let file = dir.write("mock.json", #"{"mock":1}"#)
        let cas = try [a.caPath, b.caPath].flatMap { try Certificate.all(from: SecureFile.read($0, what: "ca")) }
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: ["|localhost:\(a.port)/b/|localhost:\(b.port)/"], local: ["|/mock$|\(file)"])
        })
        let script = """
            import concurrent.futures, httpx, json, sys
            with httpx.Client(http2=True, proxy="\(proxy.proxyURL)", verify="\(proxy.pki.rootPath)", timeout=15) as c:
                c.get("\(a.url("/warm"))")
                paths = ["/echo", "/b/echo", "/mock"] * 3
                with concurrent.futures.ThreadPoolExecutor(9) as pool:
                    answers = list(pool.map(lambda p: c.get("\(a.url(""))" + p), paths))
                sys.stdout.write(json.dumps([[r.http_version, r.text] for r in answers]))
            """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 60)
        let answers = try #require(try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String]],
                                   "\(result.output)")
        #expect(answers.count == 9 && answers.allSatisfy { $0.first == "HTTP/2" }, "\(answers)")
        for (index, answer) in answers.enumerated() {
            switch index % 3 {
            case 0: #expect(try echoedHost(json(answer[1])) == "localhost:\(a.port)", "\(answer)")
            case 1: #expect(try echoedHost(json(answer[1])) == "localhost:\(b.port)", "\(answer)")
            default: #expect(answer[1] == #"{"mock":1}"#)
            }
        }
        let flows = proxy.flows(count: 10)
        #expect(Set(flows.compactMap { $0.h2?.connectionID }).count == 1)
        #expect(flows.filter { $0.server.port == b.port && $0.mapped?.rule == "map-remote" }.count == 3)
        #expect(flows.filter { $0.mapped?.rule == "map-local" }.count == 3)
    }

    /// Within its own origin (another path), an HTTP/2 stream goes on over HTTP/2.
    @Test func anHTTP2StreamMappedWithinItsOriginStaysOnHTTP2() throws {
        let a = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(a.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: ["|/old/|/"], local: [])
        })
        let result = try proxy.curl(["--http2", a.url("/old/echo")])
        let echo = try json(result.stdout)
        #expect(echo["http_version"] as? String == "2" && echo["path"] as? String == "/echo", "\(echo)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.to == a.url("/echo") && flow.request?.url == a.url("/echo"))
    }

    @Test func mapLocalAnswersFromAFileWithoutDiallingTheOrigin() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("user.json", #"{"name":"ana"}"#)
        let proxy = try ProxyHarness(configure: {
            $0.mapRules = try! MapRules(remote: [], local: ["|~m GET|nothing\\.invalid/api/user|\(file)"])
        })
        let result = try proxy.curl(["--http1.1", "-i", "http://nothing.invalid/api/user?id=1"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.hasPrefix("HTTP/1.1 200"), "\(result.stdout)")
        #expect(result.stdout.lowercased().contains("content-type: application/json\r\n"))
        #expect(result.stdout.hasSuffix(#"{"name":"ana"}"#))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped == Flow.Mapping(rule: "map-local", from: "http://nothing.invalid/api/user?id=1", to: file,
                                            by: ["|~m GET|nothing\\.invalid/api/user|\(file)"]))
        #expect(flow.server.address == nil && flow.error == nil && flow.response?.status == 200)
    }

    @Test func mapLocalServesADirectoryAndSaysWhichFileIsMissing() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("site/css"), withIntermediateDirectories: true)
        dir.write("site/css/app.css", "body{color:red}")
        dir.write("site/index.html", "<p>home</p>")
        dir.write("secret.txt", "secret")
        let site = dir.file("site")
        let proxy = try ProxyHarness(configure: { $0.mapRules = try! MapRules(remote: [], local: ["|static.invalid/assets|\(site)"]) })
        let css = try proxy.curl(["--http1.1", "-i", "http://static.invalid/assets/css/app.css?v=2"])
        #expect(css.stdout.lowercased().contains("content-type: text/css"), "\(css.output)")
        #expect(css.stdout.hasSuffix("body{color:red}"))
        let home = try proxy.curl(["--http1.1", "http://static.invalid/assets/"])
        #expect(home.stdout == "<p>home</p>", "\(home.output)")
        let missing = try proxy.curl(["--http1.1", "-i", "http://static.invalid/assets/app.js"])
        #expect(missing.stdout.hasPrefix("HTTP/1.1 404"), "\(missing.output)")
        #expect(missing.stdout.contains("--map-local found none of the files this request maps to: \(site)/app.js, "
                                        + "\(site)/app.js/index.html"), "\(missing.stdout)")
        let outside = try proxy.curl(["--http1.1", "--path-as-is", "http://static.invalid/assets/../secret.txt"])
        #expect(!outside.stdout.contains("secret\n") && outside.stdout.contains("403"), "\(outside.output)")
        let flows = proxy.flows(count: 4)
        let miss = try #require(flows.first { $0.request?.url == "http://static.invalid/assets/app.js" })
        #expect(miss.mapped?.missing == ["\(site)/app.js", "\(site)/app.js/index.html"])
        #expect(miss.response?.status == 404)
    }

    @Test func mapLocalAnswersAnHTTP2Client() throws {
        let a = try HTTP2Origin(.hypercornBoth)
        let dir = TemporaryDirectory()
        let file = dir.write("mock.json", #"{"mock":true}"#)
        let cas = try Certificate.all(from: SecureFile.read(a.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: [], local: ["|/echo|\(file)"])
        })
        let result = try proxy.curl(["--http2", "-i", a.url("/echo")])
        #expect(result.stdout.contains("\r\nHTTP/2 200"), "\(result.output)")
        #expect(result.stdout.contains("content-type: application/json"))
        #expect(result.stdout.hasSuffix(#"{"mock":true}"#))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.h2 != nil && flow.mapped?.rule == "map-local" && flow.mapped?.to == file)
    }

    /// `GET /api/flows` of a real `devproxy run`: a flow `--map-local` answered and one
    /// `--map-remote` sent on carry `mapped` (the rule), one no rule touched has none, and
    /// `~mapped` selects the two.
    @Test func theAPIsSummariesNameTheRuleAndMappedSelectsThem() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("user.json", #"{"name":"ana"}"#)
        let origin = try BackgroundServer(script: Self.namedOrigin, arguments: ["a"])
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet",
                                         "--map-local", "|/mock/user|\(file)", "--map-remote", "|/old/|/new/"],
                                        webUI: true)
        defer { _ = proxy.stop() }
        let (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        for path in ["/mock/user", "/old/x", "/plain"] {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "http://127.0.0.1:\(origin.port)\(path)"])
            #expect(result.status == 0, "\(result.output)")
        }
        func summaries(_ query: String, count: Int) throws -> [String: [String: Any]] {
            var byPath: [String: [String: Any]] = [:]
            let deadline = Date().addingTimeInterval(15)
            repeat {
                let result = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(token)",
                                                         base + "/api/flows?limit=50" + query])
                let list = try json(result.stdout)["flows"] as? [[String: Any]] ?? []
                let paths = list.map { (URL(string: $0["url"] as? String ?? "")?.path ?? "", $0) }
                byPath = Dictionary(paths) { first, _ in first }
                if list.count >= count, list.allSatisfy({ $0["phase"] as? String == "finished" }) { break }
                usleep(100_000)
            } while Date() < deadline
            return byPath
        }
        let all = try summaries("", count: 3)
        #expect(all["/mock/user"]?["mapped"] as? String == "map-local", "\(all)")
        #expect(all["/new/x"]?["mapped"] as? String == "map-remote", "\(all)")
        let plain = try #require(all["/plain"], "\(all)")
        #expect(plain["mapped"] == nil || plain["mapped"] is NSNull, "\(plain)")
        let mapped = try summaries("&filter=%7Emapped", count: 2)
        #expect(Set(mapped.keys) == ["/mock/user", "/new/x"], "\(mapped.keys)")
        let unmapped = try summaries("&filter=%21%7Emapped", count: 1)
        #expect(Set(unmapped.keys) == ["/plain"], "\(unmapped.keys)")
    }

    /// The web UI (`Resources/webui_mapped.py`): the session store's record of a flow a rule
    /// touched holds `mapped`, and the Connection tab names the rule, the file or the URL the client
    /// asked for, and the option; the list marks its row ✱, the tooltip naming the rule.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theWebUISaysWhatARuleDid() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("user.json", #"{"name":"ana"}"#)
        let origin = try BackgroundServer(script: Self.namedOrigin, arguments: ["a"])
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet",
                                         "--map-local", "|/mock/user|\(file)", "--map-remote", "|/old/|/new/",
                                         "--modify-headers", "|~s ~u /seen|X-Seen|yes",
                                         "--modify-body", #"|~u /edited|"origin"|"proxied""#], webUI: true)
        let ui = try #require(proxy.webUI)
        for path in ["/mock/user", "/old/x", "/seen", "/edited", "/plain"] {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "http://127.0.0.1:\(origin.port)\(path)"])
            #expect(result.status == 0, "\(result.output)")
        }
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_mapped.py",
                                          timeout: 120)
        let expected: Set = ["map-local-stored", "map-local-shown", "map-remote-stored", "map-remote-shown",
                             "modify-headers-stored", "modify-headers-shown", "modify-body-stored", "modify-body-shown",
                             "map-local-marker", "map-remote-marker", "modify-headers-marker", "modify-body-marker",
                             "marker-drawn", "plain-no-marker", "three-markers-whole", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        _ = proxy.stop()
    }

    @Test func badRulesStopTheStartWithOneLine() throws {
        let dir = TemporaryDirectory()
        let cases = [
            (["--map-remote", "|only"], "error: --map-remote |only is not a rule: give --map-remote "
                + "|FLOW-FILTER|URL-REGEX|REPLACEMENT or |URL-REGEX|REPLACEMENT (the first character is the separator)\n"),
            (["--map-remote", "|~c 200|a|b"], "error: --map-remote |~c 200|a|b: the filter's ~c is not known before the "
                + "request is sent (a map rule decides then); use ~d, ~u, ~m, ~h, ~hq, ~t, ~tq, ~src, ~dst, ~proc, ~q, ~http, "
                + "~grpc, "
                + "~all, !, "
                + "& and |\n"),
            (["--map-local", "|/x|\(dir.file("none"))"], "error: --map-local |/x|\(dir.file("none")): \(dir.file("none")) "
                + "does not exist; give a file or a directory\n"),
        ]
        for (arguments, expected) in cases {
            let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0",
                                                                  "--no-web", "--session", "off"] + arguments, timeout: 20)
            #expect(result.status == 2, "\(result.output)")
            #expect(result.stderr == expected, "\(result.stderr)")
        }
    }

    /// A config file's rules read their LOCAL-PATH against the file's directory, as its other paths.
    @Test func aConfigFilesRulesReadTheirPathsFromItsDirectory() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("team"), withIntermediateDirectories: true)
        dir.write("team/mock.json", #"{"from":"config"}"#)
        let config = dir.write("team/devproxy.json", #"{"map_local": ["|/hello|mock.json"], "map_remote": "|nothing.invalid|also.invalid"}"#)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--config", config, "--no-web", "--session", "off",
                                         "--quiet", "--log", dir.file("flows.jsonl")], directory: NSTemporaryDirectory())
        let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "http://nothing.invalid/hello"])
        #expect(result.stdout == #"{"from":"config"}"#, "\(result.output)")
        #expect(proxy.stop().status == 0)
        let flow = try #require(try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.first)
        #expect(flow.mapped?.rule == "map-local" && flow.mapped?.from == "http://nothing.invalid/hello")
        #expect(flow.mapped?.to == dir.file("team/mock.json"))
        #expect(flow.mapped?.by == ["|nothing.invalid|also.invalid", "|/hello|\(dir.file("team/mock.json"))"])
    }
}
