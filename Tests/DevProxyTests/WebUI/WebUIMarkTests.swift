import Foundation
import SessionStore
import TestSupport
import Testing
@testable import WebUI

/// `PUT /api/flows/ID/mark`: a flow's mark and comment through the API, in the list, the detail,
/// the filters, the live stream, `clear`, a HAR export and import, and a saved session opened
/// with `devproxy web FILE`.
@Suite struct WebUIMarkTests {
    static let json = ["X-DevProxy-CSRF: 1", "Content-Type: application/json"]

    private func mark(_ ui: WebUIHarness, _ id: String, _ body: String,
                      headers: [String] = Self.json) throws -> WebUIHarness.Answer {
        try ui.request("/api/flows/\(id)/mark", method: "PUT", headers: headers, body: body)
    }

    private func rows(_ ui: WebUIHarness, filter: String? = nil) throws -> [String: [String: Any]] {
        let query = filter.map { "?filter=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
            ?? ""
        let list = try ui.request("/api/flows" + query)
        #expect(list.status == 200, "\(list.text)")
        let flows = list.json["flows"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: flows.map { ($0["id"] as? String ?? "", $0) })
    }

    @Test func aFlowIsMarkedCommentedAndShownSoInTheListAndTheDetail() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "a", host: "api.acme.test", path: "/login"))
        ui.add(WebUIFlowsAPITests.line(id: "b", host: "cdn.acme.test"))
        let marked = try mark(ui, "a", #"{"mark":"red"}"#)
        #expect(marked.status == 200, "\(marked.text)")
        #expect(marked.json["id"] as? String == "a" && marked.json["mark"] as? String == "red")
        #expect(marked.json["comment"] == nil)
        // The comment alone keeps the mark; captured-looking text is kept as text.
        let commented = try mark(ui, "a", #"{"comment":"<b>token</b> leaks \"here\""}"#)
        #expect(commented.json["mark"] as? String == "red")
        #expect(commented.json["comment"] as? String == #"<b>token</b> leaks "here""#)
        var list = try rows(ui)
        #expect(list["a"]?["mark"] as? String == "red")
        #expect(list["a"]?["comment"] as? String == #"<b>token</b> leaks "here""#)
        #expect(list["b"]?.keys.contains("mark") == false && list["b"]?.keys.contains("comment") == false)
        let detail = try ui.request("/api/flows/a")
        #expect(detail.json["mark"] as? String == "red")
        #expect(detail.json["comment"] as? String == #"<b>token</b> leaks "here""#)
        #expect((detail.json["request"] as? [String: Any])?["url"] as? String == "https://api.acme.test/login")
        let preview = try ui.request("/api/flows/a?preview=100")
        #expect(preview.json["mark"] as? String == "red" && preview.json["id"] as? String == "a")
        #expect(try ui.request("/api/flows/b").json.keys.contains("mark") == false)
        // null removes a part; both removed leave the flow as it was.
        #expect(try mark(ui, "a", #"{"mark":null}"#).json["comment"] as? String != nil)
        #expect(try mark(ui, "a", #"{"mark":"green","comment":null}"#).json["mark"] as? String == "green")
        list = try rows(ui)
        #expect(list["a"]?["mark"] as? String == "green" && list["a"]?["comment"] == nil)
        let none = try mark(ui, "a", #"{"mark":null,"comment":""}"#)
        #expect(none.status == 200 && none.json["mark"] == nil && none.json["comment"] == nil)
    }

    @Test func badMarksAreRefusedWithOneLine() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "a", host: "api.acme.test"))
        let cases: [(String, String, Int, String)] = [
            ("nope", #"{"mark":"red"}"#, 404, "no flow nope in this session"),
            ("a", #"{"mark":"pink"}"#, 400,
             "mark must be red, orange, yellow, green, blue or purple, or null for none; not pink"),
            ("a", #"{"mark":1}"#, 400, "mark must be red, orange, yellow, green, blue or purple, or null for none"),
            ("a", #"{"comment":7}"#, 400, "comment must be text, or null for none"),
            ("a", #"{"colour":"red"}"#, 400, "unknown key colour: give mark, comment or both"),
            ("a", "red", 400, #"the body must be a JSON object: {"mark": "red" or null, "comment": "text" or null}"#),
            ("a", #"{"comment":"\#(String(repeating: "x", count: 2001))"}"#, 400,
             "a comment is at most 2000 characters, not 2001"),
        ]
        for (id, body, status, reason) in cases {
            let answer = try mark(ui, id, body)
            #expect(answer.status == status, "\(body.prefix(40))")
            #expect(answer.json["error"] as? String == reason, "\(body.prefix(40))")
        }
        #expect(try rows(ui)["a"]?["mark"] == nil, "nothing was set")
        let longest = try mark(ui, "a", #"{"comment":"\#(String(repeating: "é", count: 2000))"}"#)
        #expect(longest.status == 200)
        // A change of state: another site's page cannot mark (CSRF), nor a request without the token.
        let crossSite = try mark(ui, "a", #"{"mark":"red"}"#, headers: Self.json + ["Sec-Fetch-Site: cross-site"])
        #expect(crossSite.status == 403)
        let noToken = try ui.request("/api/flows/a/mark", method: "PUT", headers: Self.json, body: #"{"mark":"red"}"#,
                                     auth: false)
        #expect(noToken.status == 401)
        #expect(try ui.request("/api/flows/a/mark").status == 405)
        #expect(try rows(ui)["a"]?["mark"] == nil)
    }

    @Test func theFiltersFindMarkedAndCommentedFlows() throws {
        let ui = try WebUIHarness()
        for id in ["a", "b", "c"] { ui.add(WebUIFlowsAPITests.line(id: id, host: "\(id).test")) }
        _ = try mark(ui, "a", #"{"mark":"red","comment":"Why is this slow?"}"#)
        _ = try mark(ui, "b", #"{"mark":"purple"}"#)
        _ = try mark(ui, "c", #"{"comment":"fine"}"#)
        #expect(Set(try rows(ui, filter: "~marked").keys) == ["a", "b"])
        #expect(Set(try rows(ui, filter: "~mark purple").keys) == ["b"])
        #expect(Set(try rows(ui, filter: "~comment slow").keys) == ["a"])
        #expect(Set(try rows(ui, filter: "!~marked").keys) == ["c"])
        let bad = try ui.request("/api/flows?filter=" + "~mark%20pink")
        #expect(bad.status == 400)
        #expect(bad.json["error"] as? String
                == "'~mark' needs a colour (red, orange, yellow, green, blue or purple), not 'pink' at column 7")
    }

    /// Another page sees the mark without reloading: the live stream carries the summary with it,
    /// and a flow marked while it runs keeps its mark in the event of its end; a filtered stream
    /// (`~marked`) adds it then.
    @Test func theLiveStreamTellsOtherPages() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "done", host: "a.test"))
        let events = try WebUIHarness.EventStream(ui)
        let marked = try WebUIHarness.EventStream(ui, query: "?filter=%7Emarked")
        #expect(events.read(until: "event: hello"))
        _ = try mark(ui, "done", #"{"mark":"blue","comment":"look"}"#)
        #expect(events.read(until: #""mark":"blue","comment":"look"}"#), "\(events.received)")
        #expect(marked.read(until: #""id":"done""#), "\(marked.received)")
        ui.store.started(FlowRecord(summary: FlowSummary(id: "running", started: "2026-03-01T12:00:00.000Z",
                                                         host: "b.test", mode: "https", method: "GET",
                                                         url: "https://b.test/")))
        ui.store.flush()
        #expect(events.read(until: #""id":"running""#))
        _ = try mark(ui, "running", #"{"mark":"yellow"}"#)
        #expect(events.read(until: #""mark":"yellow""#))
        ui.add(WebUIFlowsAPITests.line(id: "running", host: "b.test", status: 201))
        #expect(events.read(until: #""status":201"#))
        let last = events.received.components(separatedBy: "\n").last { $0.contains(#""status":201"#) } ?? ""
        #expect(last.contains(#""mark":"yellow""#), "\(last)")
    }

    @Test func clearDropsTheMarks() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "a", host: "a.test"))
        _ = try mark(ui, "a", #"{"mark":"red"}"#)
        #expect(try ui.request("/api/clear", method: "POST", headers: ["X-DevProxy-CSRF: 1"]).status == 200)
        ui.add(WebUIFlowsAPITests.line(id: "a", host: "a.test"))
        #expect(try rows(ui)["a"]?["mark"] == nil)
        #expect(try rows(ui, filter: "~marked").isEmpty)
    }

    /// A HAR export writes the comment as the entry's `comment` (HAR 1.2) and the mark as
    /// `_mark`; `devproxy web` of that HAR shows them again.
    @Test func aHARCarriesTheMarksOutAndBackIn() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "a", host: "a.test"))
        ui.add(WebUIFlowsAPITests.line(id: "b", host: "b.test"))
        ui.add(WebUIFlowsAPITests.line(id: "c", host: "c.test"))
        _ = try mark(ui, "a", #"{"mark":"orange","comment":"first\nsecond line"}"#)
        _ = try mark(ui, "b", #"{"comment":"only a comment"}"#)
        let har = try ui.request("/api/export/har")
        #expect(har.status == 200)
        let entries = try #require(((try JSONSerialization.jsonObject(with: Data(har.body)) as? [String: Any])?["log"]
                                    as? [String: Any])?["entries"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: entries.map { ($0["_flowId"] as? String ?? "", $0) })
        #expect(byID["a"]?["comment"] as? String == "first\nsecond line" && byID["a"]?["_mark"] as? String == "orange")
        #expect(byID["b"]?["comment"] as? String == "only a comment" && byID["b"]?["_mark"] == nil)
        #expect(byID["c"]?.keys.contains("comment") == false && byID["c"]?.keys.contains("_mark") == false)
        let one = try ui.request("/api/flows/a/export?format=har")
        #expect(one.text.contains(#""_mark" : "orange""#), "\(one.text.prefix(300))")
        let file = ui.directory.write("marked.har", har.text)
        let viewer = try DevProxyViewer(file)
        let list = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(viewer.token)",
                                               viewer.base + "/api/flows?filter=~marked%20%7C%20~comment%20."])
        let flows = ((try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])?["flows"]
                     as? [[String: Any]]) ?? []
        let back = Dictionary(uniqueKeysWithValues: flows.map { ($0["id"] as? String ?? "", $0) })
        #expect(Set(back.keys) == ["a", "b"], "\(list.output)")
        #expect(back["a"]?["mark"] as? String == "orange" && back["a"]?["comment"] as? String == "first\nsecond line")
        #expect(back["b"]?["comment"] as? String == "only a comment" && back["b"]?["mark"] == nil)
    }

    /// Another tool's HAR (HAR 1.2's entry `comment`, as Charles and Proxyman write one) is read as
    /// the flow's comment; an unknown `_mark` is none, a comment past 2,000 characters is cut.
    @Test func anotherToolsHARCommentIsRead() throws {
        let dir = TemporaryDirectory()
        func entry(_ url: String, _ extra: String) -> String {
            #"{"startedDateTime":"2026-03-01T12:00:00.000Z","time":1,"request":{"method":"GET","url":"\#(url)","#
                + #""httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"#
                + #""headersSize":-1,"bodySize":0},"#
                + #""response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"#
                + #""content":{"size":0,"mimeType":"text/plain"},"redirectURL":"","headersSize":-1,"bodySize":0},"#
                + #""cache":{},"timings":{"send":0,"wait":1,"receive":0}\#(extra)}"#
        }
        let long = String(repeating: "y", count: 2100)
        let har = dir.write("charles.har", #"{"log":{"version":"1.2","creator":{"name":"Charles Proxy","version":"5"},"#
                            + #""entries":["# + [entry("https://x.test/1", #","comment":"login fails here""#),
                                                 entry("https://x.test/2", #","_mark":"pink","comment":"\#(long)""#),
                                                 entry("https://x.test/3", #","comment":"""#)].joined(separator: ",")
                            + "]}}")
        let viewer = try DevProxyViewer(har)
        let list = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(viewer.token)",
                                               viewer.base + "/api/flows"])
        let flows = ((try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])?["flows"]
                     as? [[String: Any]]) ?? []
        let byURL = Dictionary(uniqueKeysWithValues: flows.map { ($0["url"] as? String ?? "", $0) })
        #expect(byURL["https://x.test/1"]?["comment"] as? String == "login fails here", "\(list.output.prefix(500))")
        #expect((byURL["https://x.test/2"]?["comment"] as? String)?.count == 2000)
        #expect(byURL["https://x.test/2"]?["mark"] == nil)
        #expect(byURL["https://x.test/3"]?.keys.contains("comment") == false)
    }

    /// `devproxy web session.sqlite`: a saved session opened read-only is marked in its file (the
    /// review is where marks help), and a second opening shows them.
    @Test func aSavedSessionIsMarkedInItsFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("saved.sqlite")
        let store = try SessionStore(path: path)
        store.finished(flowLogLine: Array(WebUIFlowsAPITests.line(id: "s1", host: "saved.test").utf8))
        store.close()
        func call(_ viewer: DevProxyViewer, _ arguments: [String]) throws -> [String: Any] {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "10",
                                                     "-H", "Authorization: Bearer \(viewer.token)"] + arguments)
            return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        }
        do {
            let viewer = try DevProxyViewer(path)
            let info = try call(viewer, [viewer.base + "/api/info"])
            #expect(info["read_only"] as? Bool == true && info["can_mark"] as? Bool == true)
            let marked = try call(viewer, ["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary",
                                           #"{"mark":"green","comment":"reviewed"}"#,
                                           viewer.base + "/api/flows/s1/mark"])
            #expect(marked["mark"] as? String == "green", "\(marked)")
        }
        let again = try DevProxyViewer(path)
        let flows = try call(again, [again.base + "/api/flows?filter=~marked"])["flows"] as? [[String: Any]] ?? []
        #expect(flows.count == 1 && flows.first?["comment"] as? String == "reviewed", "\(flows)")
    }

    /// A saved session on a read-only file system opens and reads as before, and a mark is
    /// refused with the one line that says why and what to do (409), the page told by /api/info.
    @Test(.enabled(if: geteuid() == 0, "needs root (a read-only tmpfs)"))
    func aSessionThatCannotBeWrittenSaysWhyItCannotBeMarked() throws {
        let disk = try SmallDisk()
        let path = disk.path + "/saved.sqlite"
        do {
            // Released before the remount: its writer's connection is closed with the object.
            let store = try SessionStore(path: path)
            store.finished(flowLogLine: Array(WebUIFlowsAPITests.line(id: "s1", host: "saved.test").utf8))
            store.close()
        }
        // "mount point is busy" for a moment is possible while the suite runs in parallel (CI on
        // 11113a7 saw it once, never alone): a child another test spawns just then holds the disk.
        var remounted = try Subprocess.run("mount", ["-o", "remount,ro", disk.path])
        for _ in 0..<50 where remounted.status != 0 && remounted.output.contains("busy") {
            usleep(100_000)
            remounted = try Subprocess.run("mount", ["-o", "remount,ro", disk.path])
        }
        #expect(remounted.status == 0, "\(remounted.output)")
        let viewer = try DevProxyViewer(path)
        func call(_ arguments: [String]) throws -> (status: String, json: [String: Any]) {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-w", "\n%{http_code}",
                                                     "-H", "Authorization: Bearer \(viewer.token)"] + arguments)
            let parts = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let json = (try? JSONSerialization.jsonObject(with: Data(parts.dropLast().joined(separator: "\n").utf8)))
            return (String(parts.last ?? ""), json as? [String: Any] ?? [:])
        }
        let info = try call([viewer.base + "/api/info"]).json
        let reason = "\(path) is not writable, so marks and comments cannot be saved in it: copy it somewhere writable "
            + "and open the copy"
        #expect(info["can_mark"] as? Bool == false && info["mark_refusal"] as? String == reason, "\(info)")
        let refused = try call(["-X", "PUT", "--data-binary", #"{"mark":"red"}"#, viewer.base + "/api/flows/s1/mark"])
        #expect(refused.status == "409" && refused.json["error"] as? String == reason, "\(refused)")
        let list = try call([viewer.base + "/api/flows"]).json["flows"] as? [[String: Any]] ?? []
        #expect(list.count == 1 && list.first?["mark"] == nil)
        // The page (`webui_marks.py --only refused`): the swatches and the box disabled, the reason their tooltip.
        guard WebUIBrowser.missing == nil else { return }
        let page = try WebUIBrowser.run(ui: "\(viewer.base)/?token=\(viewer.token)", proxy: "http://127.0.0.1:9",
                                        only: "refused", script: "webui_marks.py", timeout: 90)
        #expect(page.status == 0, "\(page.output)")
        #expect(WebUIBrowser.passed(page).isSuperset(of: ["refused-disabled-with-reason", "refused-m-says-why",
                                                          "no-page-errors"]), "\(page.output)")
    }
}

/// The page (`Resources/webui_marks.py`, Chromium) over a saved session opened with `devproxy web FILE`.
@Suite struct WebUIMarkBrowserTests {
    /// `m` marks the selected flow red and takes the mark away again, a swatch colours it, a comment
    /// is saved on Enter and on leaving the box (Escape puts it back), the row shows the colour as a
    /// stripe and says it in words (markup in a comment stays text), a second page sees it all
    /// live, `~marked` and `~comment` filter the list, and a reload still shows them.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func flowsAreMarkedAndCommentedInThePage() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("review.sqlite")
        do {
            let store = try SessionStore(path: path)
            for (id, host) in [("alpha", "alpha.test"), ("beta", "beta.test"), ("gamma", "gamma.test")] {
                store.finished(flowLogLine: Array(WebUIFlowsAPITests.line(id: id, host: host).utf8))
            }
            store.close()
        }
        let viewer = try DevProxyViewer(path)
        let result = try WebUIBrowser.run(ui: "\(viewer.base)/?token=\(viewer.token)", proxy: "http://127.0.0.1:9",
                                          script: "webui_marks.py", timeout: 120)
        let expected: Set = ["m-marks-red", "other-page-sees-mark", "swatch-marks-blue", "m-toggles-off",
                             "comment-saved-on-enter", "other-page-sees-comment", "escape-cancels",
                             "comment-saved-on-blur",
                             "filter-marked", "filter-comment", "filter-help-names-them", "reload-keeps-them",
                             "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }
}
