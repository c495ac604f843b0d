@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// Mocks made from recorded flows (`/api/rules`' `body_base64`, `PUT` of a mock's answer, the
/// live `rules` event, the flow pane's Mock… and the Rules view's Edit), through real clients
/// (httpx, curl, Chromium) and `devproxy run`. Before, a mock's body was text only (an image or a
/// protobuf could not be mocked), a page learnt of a rule changed elsewhere only on reload, and a
/// mock could not be made from a flow nor edited in the page.
@Suite(.serialized) struct WebUIMockRulesTests {
    /// Through httpx on one keep-alive connection (HTTPS, CONNECT; HTTP/1.1 and HTTP/2): a mock whose body is given as
    /// `body_base64` (bytes that are not UTF-8) answers those exact bytes with their length, and
    /// `GET` gives them back as base64; `body` and `body_base64` together, bad base64 and a body
    /// over 1 MiB are refused 400 with one line (exactly 1 MiB is taken); a `PUT` of the answer
    /// reaches the next request on the same connection; a stream on `/api/events` is told
    /// `rules` after each change.
    @Test(arguments: [false, true])
    func aBinaryMockSendsItsBytesAndAnEditReachesAnOpenConnection(http2: Bool) throws {
        let dir = TemporaryDirectory()
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--upstream-ca",
                                         origin.caPath, "--log", dir.file("flows.jsonl"), "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        var stopped = false
        defer { if !stopped { _ = proxy.stop() } }
        let (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        let script = """
            import base64, hashlib, httpx, json, os, sys, threading, time, urllib.request, urllib.error
            def api(method, path, body=None):
                request = urllib.request.Request("\(base)/api/rules" + path, method=method,
                    headers={"Content-Type": "application/json", "Authorization": "Bearer \(token)"},
                    data=None if body is None else json.dumps(body).encode())
                try:
                    with urllib.request.urlopen(request, timeout=10) as r: return [r.status, json.load(r)]
                except urllib.error.HTTPError as e: return [e.code, json.load(e)]
            events = []
            def listen():
                request = urllib.request.Request("\(base)/api/events", headers={"Authorization": "Bearer \(token)"})
                with urllib.request.urlopen(request, timeout=30) as stream:
                    for line in stream:
                        events.append(line.decode().strip())
            threading.Thread(target=listen, daemon=True).start()
            time.sleep(0.5)
            def rules_events(): return sum(1 for line in events if line == "event: rules")
            def wait_events(n):
                deadline = time.time() + 5
                while rules_events() < n and time.time() < deadline: time.sleep(0.05)
                return rules_events()
            raw = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0x00, 0xC3]) + os.urandom(70000)
            out = {"answers": [], "api": {}, "events": []}
            with httpx.Client(http2=\(http2 ? "True" : "False"), proxy="http://127.0.0.1:\(proxy.port)",
                              verify="\(dir.file("ca/root.pem"))", timeout=30) as c:
                def get(q):
                    r = c.get("\(origin.url("/echo"))?" + q)
                    out["answers"].append([r.status_code, hashlib.sha256(r.content).hexdigest(),
                                           r.headers.get("content-length"), r.headers.get("content-type", ""),
                                           r.headers.get("x-devproxy", ""), r.text if len(r.content) < 100 else "",
                                           r.http_version])
                get("n=1")
                added = api("POST", "", {"kind": "mock", "text": "|~m GET|/echo\\\\?n=[0-9]+&bin",
                    "answer": {"status": 200, "content_type": "image/png",
                               "body_base64": base64.b64encode(raw).decode()}})
                out["api"]["added"] = added
                out["events"].append(wait_events(1))
                get("n=2&bin")
                got = api("GET", "/%d" % added[1]["id"])
                out["api"]["back"] = got[1]["answer"].get("body_base64") == base64.b64encode(raw).decode() \\
                    and "body" not in got[1]["answer"]
                out["api"]["both"] = api("POST", "", {"kind": "mock", "text": "|/x",
                    "answer": {"body": "a", "body_base64": "YQ=="}})
                out["api"]["bad"] = api("POST", "", {"kind": "mock", "text": "|/x", "answer": {"body_base64": "YQ$="}})
                out["api"]["over"] = api("POST", "", {"kind": "mock", "text": "|/x",
                    "answer": {"body_base64": base64.b64encode(b"a" * (1048576 + 1)).decode()}})
                limit = api("POST", "", {"kind": "mock", "text": "|/limit",
                    "answer": {"body_base64": base64.b64encode(b"a" * 1048576).decode()}})
                out["api"]["limit"] = [limit[0], len(limit[1].get("answer", {}).get("body", ""))]
                edited = api("PUT", "/%d" % added[1]["id"], {"answer": {"status": 503, "content_type": "text/plain",
                                                                       "body": "edited"}})
                out["api"]["edited"] = edited
                out["events"].append(wait_events(2))
                get("n=3&bin")
            out["sha"] = hashlib.sha256(raw).hexdigest()
            out["size"] = len(raw)
            sys.stdout.write(json.dumps(out))
            """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 90)
        let out = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                               "\(result.output)")
        let answers = try #require(out["answers"] as? [[Any]], "\(result.output)")
        let api = try #require(out["api"] as? [String: Any], "\(result.output)")
        try #require(answers.count == 3, "\(result.output)")
        // The origin, then the mock's exact bytes with their length, then the edit, on one connection.
        #expect(answers[0][0] as? Int == 200 && answers[0][4] as? String == ""
                && answers[0][1] as? String != out["sha"] as? String, "\(answers[0])")
        #expect(answers[1][0] as? Int == 200 && answers[1][1] as? String == out["sha"] as? String
                && answers[1][2] as? String == "\(out["size"] as? Int ?? -1)"
                && answers[1][3] as? String == "image/png"
                && answers[1][4] as? String == "answered by DevProxy (mock rule)", "\(answers[1])")
        #expect(answers[2][0] as? Int == 503 && answers[2][5] as? String == "edited"
                && answers[2][2] as? String == "6", "\(answers[2])")
        #expect(answers.allSatisfy { $0[6] as? String == (http2 ? "HTTP/2" : "HTTP/1.1") }, "\(answers)")
        #expect(api["back"] as? Bool == true, "\(api)")
        #expect((api["added"] as? [Any])?.first as? Int == 201, "\(api)")
        #expect((api["edited"] as? [Any])?.first as? Int == 200, "\(api)")
        #expect((api["limit"] as? [Int]) == [201, 1 << 20], "\(api["limit"] ?? "")")
        let refusals = ["both": "answer has body and body_base64: give one of them",
                        "bad": "answer.body_base64 is not base64",
                        "over": "answer.body_base64 decodes to 1048577 bytes, over 1 MiB"]
        for (name, words) in refusals {
            let answer = api[name] as? [Any]
            let reason = (answer?.last as? [String: Any])?["error"] as? String ?? ""
            #expect(answer?.first as? Int == 400 && reason.hasPrefix(words) && !reason.contains("\n"),
                    "\(name): \(answer ?? [])")
        }
        // Told once the mock was added, and again after the 1 MiB mock and the edit.
        #expect((out["events"] as? [Int] ?? []).first ?? 0 >= 1, "\(out["events"] ?? "")")
        #expect((out["events"] as? [Int] ?? []).last ?? 0 >= 2, "\(out["events"] ?? "")")

        let console = proxy.stop()
        stopped = true
        #expect(console.stdout.contains("rule edited (web UI): mock |~m GET|/echo\\?n=[0-9]+&bin"), "\(console.stdout)")
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        #expect(flows.count == 3 && Set(flows.map(\.client)).count == 1, "\(flows.map(\.client))")
        #expect(flows.last?.mapped?.to == "mock 503 text/plain", "\(String(describing: flows.last?.mapped))")
    }

    /// The board keeps a mock's bytes as given: not UTF-8 they stay bytes, and `body` reads and
    /// sets text as before.
    @Test func aMockAnswerHoldsBytes() throws {
        var answer = RuleBoard.Answer(status: 200, contentType: "image/png", bytes: [0x89, 0x50, 0xFF, 0x00])
        #expect(answer.text == nil && answer.bytes == [0x89, 0x50, 0xFF, 0x00])
        answer.body = "héllo"
        #expect(answer.text == "héllo" && answer.bytes == Array("héllo".utf8))
        let board = try RuleBoard(start: [])
        let rule = try board.add(.mock, text: "|/bin", answer: .init(bytes: [0xFF, 0xFE]))
        #expect(board.list.first?.answer?.bytes == [0xFF, 0xFE] && rule.answer?.contentType == "application/json")
        let told = Mutex<[String]>([])
        let observer = board.observe { change in told.withLock { $0.append(change.description) } }
        _ = try board.edit(rule.id, text: "|/bin2", answer: nil)
        board.unobserve(observer)
        board.set(rule.id, enabled: false)
        #expect(told.withLock { $0 } == ["rule edited (web UI): mock |/bin2"])
        #expect(board.list.first?.answer?.bytes == [0xFF, 0xFE])
    }

    /// The flow pane's Mock… and the Rules view's Edit in Chromium (`Resources/webui_mock_rules.py`):
    /// a gzip JSON flow's Mock… fills the form (method, URL regex, status, type, the decoded body),
    /// the edited body answers curl with the mock header; Edit to 503 answers 503; a second page
    /// sees the rule appear and change without reload; a PNG flow's mock answers its exact bytes; a
    /// body over 1 MiB is left to type; a flow that ended without a response fills status 200; once
    /// added, the form's heading is "Add a rule" again (it still said "Add a mock from the flow"); a
    /// response with Access-Control-Allow-Origin has a note that the mock will not send it; a long
    /// poll still running (its head came, its body has not) has Mock…, which fills its status and
    /// type and whose saved mock answers the next request at once; one still waiting for its head
    /// fills status 200 and says so; a running event stream's mock takes its events so far.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func mockFromAFlowAndEditInThePage() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet",
                                         "--block-list", "|~u never-asked-for|404"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_mock_rules.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        #expect(WebUIBrowser.passed(result).isSuperset(of: [
            "mock-form-filled", "mock-answers-curl", "flag-rule-switch-only", "second-page-sees-it",
            "edit-cancel-leaves-it", "edit-to-503", "second-page-sees-the-edit", "binary-form", "binary-exact-bytes",
            "big-body-left-to-type", "no-response-fills-what-it-has", "mock-form-heading-after-add",
            "mock-note-says-cors-is-not-sent", "mock-flow-marked-mapped", "running-flow-mock-form",
            "running-flow-mock-answers", "waiting-flow-mock-form", "stream-mock-takes-body-so-far",
            "no-page-errors"]), "\(result.output)")
    }
}
