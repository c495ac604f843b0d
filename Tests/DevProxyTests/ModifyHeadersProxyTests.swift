import CertAuthority
@testable import DevProxy
import Foundation
import SessionStore
import Testing
import TestSupport

/// `--modify-headers` through the proxy with curl over HTTP/1.1 (plain proxying) and HTTP/2
/// (CONNECT interception): the origin gets the headers the rules set and not the ones they
/// removed, and the flow's `mapped` says which and by which option.
@Suite(.serialized) struct ModifyHeadersProxyTests {
    /// A plain HTTP origin that answers every request with its header fields as JSON
    /// (`{"headers": [[name, value], …]}`).
    static let headerEcho = """
    import http.server, json
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            body = json.dumps({"headers": [[k, v] for k, v in self.headers.items()]}).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        do_POST = do_GET
        def log_message(self, *a): pass
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    /// The values of every header `name` (any case) the origin echoed.
    private func echoed(_ text: String, _ name: String) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        let headers = try #require(object["headers"] as? [[String]], "\(text)")
        return headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap(\.last)
    }

    /// The rules of both tests below: set (replacing the client's), remove, a filter that does not
    /// match, a value read from a file, and a value `--redact` masks in the record.
    private func rules(token: String) -> [String] {
        ["#~d localhost | ~d 127.0.0.1#X-Env#staging", "|User-Agent|", "|~m POST|X-Post-Only|yes", "|X-Token|@\(token)",
         "#X-Secret#s3cr3t"]
    }

    private func expectModified(_ stdout: String, flow: Flow?, url: String) throws {
        #expect(try echoed(stdout, "X-Env") == ["staging"], "\(stdout)")
        #expect(try echoed(stdout, "User-Agent") == [])
        #expect(try echoed(stdout, "X-Post-Only") == [])
        #expect(try echoed(stdout, "X-Token") == ["from-file"])
        #expect(try echoed(stdout, "X-Secret") == ["s3cr3t"])
        #expect(try echoed(stdout, "X-Kept") == ["yes"])
        let flow = try #require(flow)
        let mapped = try #require(flow.mapped)
        #expect(mapped.rule == "modify-headers" && mapped.from == url && mapped.to == url && mapped.by == [])
        let expected = ["set X-Env", "removed User-Agent", "set X-Token", "set X-Secret"]
        #expect(mapped.headers?.filter { !$0.isOnResponse }.map { "\($0.action) \($0.name)" } == expected)
        // None of these rules says ~q: as mitmproxy, each applies to the response too; the origin
        // sends no User-Agent, so removing it there changes nothing and is not recorded.
        #expect(mapped.headers?.filter(\.isOnResponse).map { "\($0.action) \($0.name)" }
                == ["set X-Env", "set X-Token", "set X-Secret"])
        #expect(mapped.headers?.last?.by == "#X-Secret#[redacted]")
        #expect(flow.request?.headers.first(named: "x-env") == "staging")
        #expect(flow.request?.headers.first(named: "user-agent") == nil)
    }

    @Test func anHTTP1RequestGetsTheHeadersTheRulesSay() throws {
        let dir = TemporaryDirectory()
        let token = dir.write("token.txt", "from-file\n")
        let origin = try BackgroundServer(script: Self.headerEcho, arguments: [])
        let proxy = try ProxyHarness(configure: { [rules = rules(token: token)] in
            $0.redactHeaders = ["X-Secret"]
            $0.mapRules = try! MapRules(remote: [], local: [], headers: rules, redact: ["X-Secret"])
        })
        let url = "http://127.0.0.1:\(origin.port)/h"
        let result = try proxy.curl(["--http1.1", "-H", "X-Env: prod", "-H", "X-Kept: yes", url])
        #expect(result.status == 0, "\(result.output)")
        try expectModified(result.stdout, flow: proxy.flows(count: 1).first, url: url)
    }

    @Test func anHTTP2StreamGetsTheHeadersTheRulesSay() throws {
        let dir = TemporaryDirectory()
        let token = dir.write("token.txt", "from-file\n")
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { [rules = rules(token: token)] in
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: [], local: [], headers: rules, redact: ["X-Secret"])
        })
        let url = origin.url("/echo")
        let result = try proxy.curl(["--http2", "-H", "X-Env: prod", "-H", "X-Kept: yes", url])
        #expect(result.status == 0, "\(result.output)")
        let flow = proxy.flows(count: 1).first
        #expect(flow?.h2 != nil)
        try expectModified(result.stdout, flow: flow, url: url)
    }

    /// A map-remote rule and a modify-headers rule on one request: both apply, the record is the
    /// map-remote one with the headers beside it, and the header rule's filter sees the new URL.
    @Test func headerRulesSeeTheURLMapRemoteMade() throws {
        let rules = try MapRules(remote: ["|/old/|/new/"], local: [], headers: ["|~u /new/|X-Mapped|1"])
        let request = LocalRequest(method: "GET", url: "http://example.com/old/x", httpVersion: "HTTP/1.1", headers: [])
        let outcome = try #require(rules.apply(to: request))
        #expect(outcome.record.rule == "map-remote" && outcome.record.to == "http://example.com/new/x")
        let change = Flow.HeaderChange(name: "X-Mapped", action: "set", by: "|~u /new/|X-Mapped|1")
        #expect(outcome.record.headers == [change])
        #expect(outcome.edits?.added.map(\.value) == ["1"] && outcome.edits?.removed == ["x-mapped"])
        var flow = FlowSamples.get
        flow.mapped = Flow.Mapping(rule: "modify-headers", from: "http://a/", to: "http://a/", by: [],
                                   headers: [Flow.HeaderChange(name: "X-Env", action: "set", by: "|X-Env|1"),
                                             Flow.HeaderChange(name: "Cookie", action: "removed", by: "|Cookie|")])
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (headers: set X-Env, removed Cookie)"))
    }

    /// mitmproxy's own example, `/~q/Host/example.org`: the origin gets `Host: example.org`
    /// (`:authority` over HTTP/2) while the connection, the flow's URL and the answer are the
    /// URL's, as an edited Host in the web UI's resend goes. DevProxy refused it at start.
    @Test(arguments: ["--http1.1", "--http2", "h2-only"])
    func aHostRuleSendsItsHostWhileTheConnectionGoesToTheURL(_ client: String) throws {
        let origin = try HTTP2Origin(client == "--http2" ? .hypercornBoth : .hypercornHTTP1)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let rules = try MapRules(remote: [], local: [], headers: ["/~q/Host/example.org"])
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = rules
        })
        let body: String
        if client == "h2-only" {
            // An HTTP/2 client of an HTTP/1.1-only origin: `:authority` becomes the Host it is sent.
            let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/echo")
            #expect(json.alpn == "h2", "\(json)")
            body = json.responses.first?.body ?? ""
        } else {
            let result = try proxy.curl([client, origin.url("/echo")])
            #expect(result.status == 0, "\(result.output)")
            body = result.stdout
        }
        #expect(try echoed(body, "Host") == ["example.org"], "\(body)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == origin.url("/echo") && flow.response?.status == 200, "\(flow)")
        #expect(flow.mapped?.headers == [Flow.HeaderChange(name: "Host", action: "set", by: "/~q/Host/example.org")])
    }

    @Test func badRulesStopTheStartWithOneLine() throws {
        let dir = TemporaryDirectory()
        let usage = "give --modify-headers |FLOW-FILTER|NAME|VALUE or |NAME|VALUE (the first character is the "
            + "separator; an empty VALUE removes the header)"
        let hostUsage = "give Host a host[:port] inline (a request cannot go without its Host; the connection still "
            + "goes to the URL's host: --map-remote sends a request to another one)"
        let cases = [
            (["--modify-headers", "|only"], "error: --modify-headers |only is not a rule: \(usage)\n"),
            (["--modify-headers", "|~bs secret|Server|"], "error: --modify-headers |~bs secret|Server|: the filter's "
                + "~bs is not known when the rule runs (on the request's head, then on the response's, before the "
                + "bodies); use ~d, ~u, ~m, ~h, ~hq, ~hs, ~t, ~tq, ~ts, ~src, ~dst, ~proc, ~q, ~s, ~c, ~http, ~grpc, "
                + "~all, !, "
                + "& and |\n"),
            (["--modify-headers", "|Bad Name|x"], "error: --modify-headers |Bad Name|x: \"Bad Name\" is not a header "
                + "name (letters, digits and !#$%&'*+-.^_`|~)\n"),
            (["--modify-headers", "|Content-Length|5"], "error: --modify-headers |Content-Length|5: DevProxy writes "
                + "Content-Length itself and a rule may not change it\n"),
            (["--modify-headers", "|~q|Host|"], "error: --modify-headers |~q|Host|: \(hostUsage)\n"),
            (["--modify-headers", "|Host|user@example.org"],
             "error: --modify-headers |Host|user@example.org: \(hostUsage)\n"),
            (["--modify-headers", "|X-Token|@\(dir.file("none"))"],
             "error: --modify-headers |X-Token|@\(dir.file("none")): \(dir.file("none")) is not a file to read "
                + "the value from\n"),
        ]
        for (arguments, expected) in cases {
            let start = ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0", "--no-web", "--session", "off"]
            let result = try Subprocess.run(Subprocess.devproxy, start + arguments, timeout: 20)
            #expect(result.status == 2, "\(result.output)")
            #expect(result.stderr == expected, "\(result.stderr)")
        }
    }

    /// A config file's `modify_headers` reads an `@FILE` value against the file's directory, and the
    /// flow log carries what the rule did.
    @Test func aConfigFilesRuleReadsItsValueFileFromItsDirectory() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("team"), withIntermediateDirectories: true)
        dir.write("team/token.txt", "Bearer team\n")
        let config = dir.write("team/devproxy.json", #"{"modify_headers": ["|Authorization|@token.txt"]}"#)
        let origin = try BackgroundServer(script: Self.headerEcho, arguments: [])
        let arguments = ["--ca-dir", dir.file("ca"), "--config", config, "--no-web", "--session", "off", "--quiet",
                         "--log", dir.file("flows.jsonl")]
        let proxy = try DevProxyProcess(arguments, directory: NSTemporaryDirectory())
        let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                 "http://127.0.0.1:\(origin.port)/"])
        #expect(try echoed(result.stdout, "Authorization") == ["Bearer team"], "\(result.output)")
        #expect(proxy.stop().status == 0)
        let flow = try #require(try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.first)
        let option = "|Authorization|@\(dir.file("team/token.txt"))"
        #expect(flow.mapped?.headers == [Flow.HeaderChange(name: "Authorization", action: "set", by: option),
                                         Flow.HeaderChange(name: "Authorization", action: "set", by: option,
                                                           on: "response")])
    }
}

/// `--block-list` through the proxy with curl over HTTP/1.1 and HTTP/2: a matching request is
/// answered with the rule's status and never reaches the origin; 444 closes without an answer.
@Suite(.serialized) struct BlockListProxyTests {
    @Test(arguments: ["--http1.1", "--http2"])
    func aMatchingRequestIsAnsweredWithTheStatusAndNeverSent(_ version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = try! MapRules(remote: [], local: [], block: ["|~u /ads/|403", "|~u /track|444"])
        })
        let blocked = try proxy.curl([version, "-i", origin.url("/ads/banner")])
        #expect(blocked.status == 0, "\(blocked.output)")
        let statusLine = version == "--http2" ? "\r\nHTTP/2 403" : "\r\nHTTP/1.1 403"
        #expect(blocked.stdout.contains(statusLine), "\(blocked.output)")
        #expect(blocked.stdout.contains("blocked by DevProxy's --block-list |~u /ads/|403"))
        let closed = try proxy.curl([version, origin.url("/track")])
        #expect(closed.status != 0 && closed.stdout.isEmpty, "\(closed.output)")
        let passed = try proxy.curl([version, origin.url("/echo")])
        #expect(passed.status == 0 && passed.stdout.contains("\"path\""), "\(passed.output)")
        let flows = proxy.flows(count: 3)
        let ads = try #require(flows.first { $0.request?.url == origin.url("/ads/banner") })
        #expect(ads.mapped == Flow.Mapping(rule: "block-list", from: origin.url("/ads/banner"),
                                           to: origin.url("/ads/banner"), by: ["|~u /ads/|403"]))
        #expect(ads.response?.status == 403 && ads.server.address == nil)
        let track = try #require(flows.first { $0.request?.url == origin.url("/track") })
        #expect(track.mapped?.rule == "block-list" && track.mapped?.by == ["|~u /track|444"])
        #expect(track.error?.message.contains("closed without an answer (444)") == true,
                "\(String(describing: track.error))")
        #expect(flows.first { $0.request?.url == origin.url("/echo") }?.mapped == nil)
        var line = FlowSamples.get
        line.mapped = ads.mapped
        #expect(ConsoleFlowPrinter.line(for: line).hasSuffix(" (blocked by --block-list |~u /ads/|403)"))
    }

    @Test func badRulesStopTheStartWithOneLine() throws {
        let dir = TemporaryDirectory()
        let cases = [
            (["--block-list", "|403"], "error: --block-list |403 is not a rule: give --block-list "
                + "|FLOW-FILTER|STATUS-CODE (the first character is the separator; 444 closes the connection without "
                + "an answer)\n"),
            (["--block-list", "|~d ads|99"], "error: --block-list |~d ads|99: \"99\" is not a status code to answer "
                + "with (200–599, or 444 to close the connection without an answer)\n"),
        ]
        for (arguments, expected) in cases {
            let start = ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0", "--no-web", "--session", "off"]
            let result = try Subprocess.run(Subprocess.devproxy, start + arguments, timeout: 20)
            #expect(result.status == 2, "\(result.output)")
            #expect(result.stderr == expected, "\(result.stderr)")
        }
    }
}
