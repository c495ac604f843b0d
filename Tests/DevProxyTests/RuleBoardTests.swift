@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The web UI's Rules view (`RuleBoard`, `/api/rules`): map rules added, switched and deleted
/// while `devproxy run` runs reach the next request on a connection already open, HTTP/1.1 and
/// HTTP/2, through real clients (httpx, curl) to a real origin (hypercorn). Before, the rules were
/// fixed at start: a mock for one endpoint meant a restart, and the app's connections with it.
@Suite(.serialized) struct RuleBoardTests {
    /// On one httpx keep-alive connection: the origin answers; a mock added through the API
    /// answers the next request (the origin's echo is not in it); switched off, the origin answers
    /// again; a block-list rule added blocks; a `--block-list` from the command line, switched
    /// off, stops blocking; a bad rule is refused 400 with the option parser's reason, a flag
    /// rule cannot be deleted (409), a write without the token or CSRF header is refused. The
    /// console says each change and the flows record the mock in `mapped`.
    @Test(arguments: [false, true])
    func rulesChangedInTheWebUIReachAnOpenConnection(http2: Bool) throws {
        let dir = TemporaryDirectory()
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--upstream-ca",
                                         origin.caPath, "--log", dir.file("flows.jsonl"), "--quiet",
                                         "--block-list", "|~u flagged|404"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        var stopped = false
        defer { if !stopped { _ = proxy.stop() } }
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        let script = """
            import httpx, json, sys, urllib.request, urllib.error
            def api(method, path, body=None, auth=True):
                headers = {"Content-Type": "application/json"}
                if auth: headers["Authorization"] = "Bearer \(token)"
                request = urllib.request.Request("\(base)/api/rules" + path, method=method, headers=headers,
                    data=None if body is None else json.dumps(body).encode())
                try:
                    with urllib.request.urlopen(request, timeout=10) as r: return [r.status, json.load(r)]
                except urllib.error.HTTPError as e: return [e.code, json.load(e)]
            out = {"answers": [], "api": {}}
            with httpx.Client(http2=\(http2 ? "True" : "False"), proxy="http://127.0.0.1:\(proxy.port)",
                              verify="\(dir.file("ca/root.pem"))", timeout=30) as c:
                def get(q):
                    r = c.get("\(origin.url("/echo"))?" + q)
                    out["answers"].append([r.status_code, r.text, r.headers.get("content-type", ""), r.http_version])
                get("n=1")
                out["api"]["list"] = api("GET", "")
                out["api"]["unauthorized"] = api("POST", "", {"kind": "block-list", "text": "|~u n=|418"}, auth=False)
                added = api("POST", "", {"kind": "mock", "text": "|~u mocked|/echo",
                                         "answer": {"status": 201, "content_type": "application/json",
                                                    "body": "{\\"mocked\\": true}"}})
                out["api"]["mock"] = added
                get("n=2&mocked")
                out["api"]["off"] = api("PUT", "/%d" % added[1]["id"], {"enabled": False})
                get("n=3&mocked")
                out["api"]["bad"] = api("POST", "", {"kind": "map-remote", "text": "|~d api|https://(a/|https://b/"})
                out["api"]["badkind"] = api("POST", "", {"kind": "map-everything", "text": "|a|b"})
                blocked = api("POST", "", {"kind": "block-list", "text": "|~u blocked|403"})
                get("n=4&blocked")
                get("n=5&flagged")
                flag = out["api"]["list"][1]["rules"][0]
                out["api"]["flagdelete"] = api("DELETE", "/%d" % flag["id"])
                out["api"]["flagoff"] = api("PUT", "/%d" % flag["id"], {"enabled": False})
                get("n=6&flagged")
                out["api"]["deleted"] = api("DELETE", "/%d" % blocked[1]["id"])
                get("n=7&blocked")
                out["api"]["final"] = api("GET", "")
            sys.stdout.write(json.dumps(out))
            """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 60)
        let out = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                               "\(result.output)")
        let answers = try #require(out["answers"] as? [[Any]], "\(result.output)")
        let api = try #require(out["api"] as? [String: [Any]], "\(result.output)")
        try #require(answers.count == 7, "\(result.output)")
        let statuses = answers.map { $0[0] as? Int ?? 0 }
        let bodies = answers.map { $0[1] as? String ?? "" }
        #expect(statuses == [200, 201, 200, 403, 404, 200, 200], "\(result.output)")
        #expect(answers.allSatisfy { $0[3] as? String == (http2 ? "HTTP/2" : "HTTP/1.1") }, "\(result.output)")
        // The mock answered, not the origin (whose echo names the path it was asked for).
        #expect(bodies[1] == "{\"mocked\": true}" && answers[1][2] as? String == "application/json", "\(bodies)")
        #expect(bodies[2].contains("/echo") && bodies[2] != bodies[1], "\(bodies)")
        #expect(bodies[3].contains("--block-list |~u blocked|403"), "\(bodies)")
        #expect(bodies[4].contains("--block-list |~u flagged|404"), "\(bodies)")
        #expect(bodies[5].contains("/echo") && bodies[6].contains("/echo"), "\(bodies)")

        let listed = ((api["list"]?[1] as? [String: Any])?["rules"] as? [[String: Any]]) ?? []
        #expect(listed.count == 1 && listed.first?["origin"] as? String == "flag"
                && listed.first?["kind"] as? String == "block-list"
                && listed.first?["text"] as? String == "|~u flagged|404"
                && listed.first?["enabled"] as? Bool == true, "\(listed)")
        #expect(api["unauthorized"]?[0] as? Int == 401, "\(api["unauthorized"] ?? [])")
        let mock = api["mock"]?[1] as? [String: Any]
        #expect(api["mock"]?[0] as? Int == 201 && mock?["origin"] as? String == "web"
                && mock?["kind"] as? String == "mock"
                && (mock?["answer"] as? [String: Any])?["status"] as? Int == 201, "\(api["mock"] ?? [])")
        #expect((api["off"]?[1] as? [String: Any])?["enabled"] as? Bool == false, "\(api["off"] ?? [])")
        #expect(api["bad"]?[0] as? Int == 400, "\(api["bad"] ?? [])")
        let reason = (api["bad"]?[1] as? [String: Any])?["error"] as? String ?? ""
        #expect(reason == "--map-remote |~d api|https://(a/|https://b/: https://(a/ is not a valid regular expression",
                "\(reason)")
        #expect(api["badkind"]?[0] as? Int == 400, "\(api["badkind"] ?? [])")
        #expect(api["flagdelete"]?[0] as? Int == 409, "\(api["flagdelete"] ?? [])")
        #expect(api["deleted"]?[0] as? Int == 200, "\(api["deleted"] ?? [])")
        let final = ((api["final"]?[1] as? [String: Any])?["rules"] as? [[String: Any]]) ?? []
        #expect(final.map { $0["kind"] as? String ?? "" } == ["block-list", "mock"], "\(final)")
        #expect(final.map { $0["enabled"] as? Bool ?? true } == [false, false], "\(final)")

        let console = proxy.stop()
        stopped = true
        for line in ["rule added (web UI): mock |~u mocked|/echo", "rule off (web UI): mock |~u mocked|/echo",
                     "rule added (web UI): block-list |~u blocked|403", "rule off (web UI): block-list |~u flagged|404",
                     "rule deleted (web UI): block-list |~u blocked|403"] {
            #expect(console.stdout.contains(line), "\(line) in \(console.stdout)")
        }
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        let mocked = flows.first { $0.request?.url.contains("n=2") == true }
        #expect(mocked?.mapped?.rule == "mock" && mocked?.mapped?.by == ["|~u mocked|/echo"]
                && mocked?.mapped?.to == "mock 201 application/json", "\(String(describing: mocked?.mapped))")
        // One connection carried all seven.
        #expect(Set(flows.map(\.client)).count == 1, "\(flows.map(\.client))")
    }

    /// curl (HTTP/1.1 and --http2) through `devproxy run`: a map-local rule added with curl to
    /// `/api/rules` serves its file to the next curl; switched off, the origin answers.
    @Test(arguments: ["--http1.1", "--http2"])
    func aMapLocalRuleAddedWithCurlServesItsFile(version: String) throws {
        let dir = TemporaryDirectory()
        let origin = try HTTP2Origin(.hypercornBoth)
        try Data("local answer\n".utf8).write(to: URL(fileURLWithPath: dir.file("local.txt")))
        let config = dir.write("devproxy.json", "{\"block_list\": [\"|~u from-config|410\"]}")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--upstream-ca",
                                         origin.caPath, "--quiet", "--config", config],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        func fetch() throws -> String {
            try Subprocess.run("curl", ["-sS", version, "--cacert", dir.file("ca/root.pem"), "-x",
                                        "http://127.0.0.1:\(proxy.port)", origin.url("/echo")], timeout: 30).stdout
        }
        func api(_ method: String, _ path: String, _ body: String) throws -> String {
            try Subprocess.run("curl", ["-sS", "-X", method, "-H", "Authorization: Bearer \(token)", "-H",
                                        "Content-Type: application/json", "--data", body, "\(base)/api/rules\(path)"],
                               timeout: 30).stdout
        }
        #expect(try fetch().contains("/echo"))
        let rule = "|/echo|\(dir.file("local.txt"))"
        let added = try api("POST", "", String(decoding: try JSONSerialization.data(withJSONObject: [
            "kind": "map-local", "text": rule]), as: UTF8.self))
        let addedObject = try JSONSerialization.jsonObject(with: Data(added.utf8)) as? [String: Any]
        let id = try #require(addedObject?["id"] as? Int,
                              "\(added)")
        #expect(try fetch() == "local answer\n")
        _ = try api("PUT", "/\(id)", "{\"enabled\": false}")
        #expect(try fetch().contains("/echo"))
        let listed = try Subprocess.run("curl", ["-sS", "-H", "Authorization: Bearer \(token)", "\(base)/api/rules"],
                                        timeout: 30).stdout
        let listedObject = try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any]
        let rules = listedObject?["rules"] as? [[String: Any]]
        #expect(rules?.map { "\($0["origin"] ?? "") \($0["kind"] ?? "") \($0["text"] ?? "")" }
                == ["config block-list |~u from-config|410", "web map-local \(rule)"], "\(listed)")
        // A file that is not there: the parser's reason, and nothing added.
        let missing = try api("POST", "", "{\"kind\": \"map-local\", \"text\": \"|/echo|\(dir.file("none.txt"))\"}")
        #expect(missing.contains("--map-local |/echo|\(dir.file("none.txt")): \(dir.file("none.txt")) does not exist"),
                "\(missing)")
    }

    /// The Rules view in Chromium (`Resources/webui_rules.py`): a bad rule shows the server's
    /// reason, a mock typed in the page answers a request through the proxy, switched off the
    /// origin answers, a second mock answers once moved above the first, deleted they leave the
    /// list. There was no such view.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theRulesViewAddsAMockThatAnswers() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_rules.py", timeout: 90)
        #expect(result.status == 0, "\(result.output)")
        #expect(WebUIBrowser.passed(result).isSuperset(of: [
            "rules-view-opens", "bad-rule-shows-the-reason", "mock-fields-shown", "mock-listed", "mock-answers",
            "mock-switched-off", "first-mock-wins-until-moved", "mock-deleted", "no-page-errors"]), "\(result.output)")
    }

    /// `devproxy web FILE` shows a saved session: no proxy runs behind it, so `/api/rules` is 409.
    @Test func aSavedSessionHasNoRulesToChange() throws {
        let dir = TemporaryDirectory()
        let log = dir.write("flows.jsonl", WebUIFlowsAPITests.line(id: "w1", host: "a.test") + "\n")
        let viewer = try DevProxyViewer(log)
        let result = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-w", "%{http_code}", "-H",
                                                 "Authorization: Bearer \(viewer.token)", viewer.base + "/api/rules"])
        #expect(result.stdout.hasSuffix("409") && result.stdout.contains("no proxy runs behind it"), "\(result.stdout)")
    }

    /// A board with no rule switched on hands the engine an empty `MapRules` (its fast path), and
    /// one switched on, then off, goes back to it.
    @Test func anEmptyBoardIsEmpty() throws {
        let board = try RuleBoard(start: [])
        #expect(board.rules.isEmpty)
        let rule = try board.add(.blockList, text: "|~d example.com|403")
        #expect(board.rules.block.count == 1)
        board.set(rule.id, enabled: false)
        #expect(board.rules.isEmpty)
        #expect(throws: ConfigurationError.self) { try board.add(.mock, text: "|/x", answer: .init(status: 99)) }
        #expect(board.list.count == 1)
    }

    /// A mock's flow says so on the console (it said `(mapped from URL)`, as for a map-remote).
    @Test func theConsoleLineSaysAMockAnswered() {
        var flow = FlowSamples.get
        flow.mapped = Flow.Mapping(rule: "mock", from: "https://a.test/x", to: "mock 200 application/json", by: ["|/x"])
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (mock |/x)"))
    }

    /// Rules of one kind apply in the board's order, which a move changes; an edit keeps a rule's
    /// place and switch; a rule from the flags is switched, never edited or deleted.
    @Test func movesAndEditsKeepTheOrderTheEngineApplies() throws {
        let board = try RuleBoard(start: [(.mapRemote, "|/a|https://first.test/", .flag)])
        let second = try board.add(.mapRemote, text: "|/a|https://second.test/")
        #expect(board.rules.remote.map(\.option) == ["|/a|https://first.test/", "|/a|https://second.test/"])
        board.move(second.id, to: 0)
        #expect(board.rules.remote.map(\.option) == ["|/a|https://second.test/", "|/a|https://first.test/"])
        board.set(second.id, enabled: false)
        let edited = try #require(try board.edit(second.id, text: "|/b|https://third.test/", answer: nil))
        #expect(!edited.enabled && board.list.map(\.text) == ["|/b|https://third.test/", "|/a|https://first.test/"])
        #expect(board.rules.remote.map(\.option) == ["|/a|https://first.test/"])
        #expect(throws: ConfigurationError.self) { try board.edit(1, text: "|/c|https://x.test/", answer: nil) }
        #expect(throws: ConfigurationError.self) { try board.remove(1) }
        #expect(throws: ConfigurationError.self) { try board.edit(second.id, text: "|(|https://x.test/", answer: nil) }
        #expect(board.list.map(\.text) == ["|/b|https://third.test/", "|/a|https://first.test/"])
    }
}
