import CertAuthority
@testable import DevProxy
import Foundation
import TestSupport
import Testing
@testable import WebUI

/// "Repeat…" (`POST /api/flows/ID/repeat`): a captured request sent N times, C at once, each a
/// replay of it, with progress and a summary, as Charles's and Proxyman's "Repeat Advanced".
@Suite struct RepeatTests {
    /// Beside `devproxy run --web`, `Resources/webui_repeat_api.py` drives the API against an origin
    /// that counts what it gets, the most it holds at once, and answers 429 after the first 8.
    @Test func aRepeatSendsExactlyNAtMostCAtOnceAndSumsUpWhatCameBack() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_repeat_api.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        let expected: Set = ["original-captured", "repeat-starts-at-once", "origin-saw-exactly-20",
                             "never-more-than-5-at-once", "summary-counts-statuses", "summary-has-timings",
                             "flows-marked-replay-of", "delay-spaces-the-sends", "cancel-stops-early",
                             "bad-parameters-400-with-reason", "not-json-400", "unknown-flow-404", "unknown-repeat-404"]
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }

    /// Each repetition of a flow the client made over HTTP/2 goes over HTTP/2, as its replay does.
    @Test func anHTTP2FlowRepeatsOverHTTP2() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let ui = try WebUIHarness(withProxy: true) { $0.upstreamCAs = [try! Certificate.all(
            from: try! SecureFile.read(origin.caPath, what: "ca"))[0]] }
        let proxy = try #require(ui.proxy)
        let url = origin.url("/repeated-h2")
        let sent = try proxy.curl(["--http2", "-o", "/dev/null", "-w", "%{http_version}", url])
        #expect(sent.stdout == "2", "\(sent.output)")
        let original = try #require(try WebUIProxyTests.flow(ui, url: url))
        let originalID = try #require(original["id"] as? String)
        let started = try ui.request("/api/flows/\(originalID)/repeat", method: "POST",
                                     body: #"{"count": 4, "concurrency": 2}"#)
        #expect(started.status == 202, "\(started.text)")
        let summary = try Self.finished(ui, try #require(started.json["id"] as? String))
        #expect(summary["state"] as? String == "done" && summary["statuses"] as? [String: Int] == ["200": 4],
                "\(summary)")
        let flows = try #require(summary["flows"] as? [String])
        #expect(flows.count == 4)
        for id in flows {
            let flow = try ui.request("/api/flows/\(id)").json
            #expect((flow["request"] as? [String: Any])?["http_version"] as? String == "HTTP/2", "\(flow)")
            #expect(flow["replay_of"] as? String == originalID)
        }
    }

    /// DevProxy stopping (the UI's `stop()`, here when the harness is released, while its proxy
    /// still runs) ends a repeat: no lane sends after it.
    @Test func stoppingTheUIEndsItsRepeats() throws {
        let origin = try OriginServer(tls: true)
        let run: RepeatRun
        do {
            let ui = try WebUIHarness(withProxy: true) { $0.upstreamCAs = [try! Certificate.all(
                from: try! SecureFile.read(origin.caPath, what: "ca"))[0]] }
            let url = origin.url("/report")
            _ = try #require(ui.proxy).curl(["-o", "/dev/null", "-X", "POST", "-d", "x", url])
            let original = try #require(try WebUIProxyTests.flow(ui, url: url))
            let originalID = try #require(original["id"] as? String)
            let started = try ui.request("/api/flows/\(originalID)/repeat", method: "POST",
                                         body: #"{"count": 1000, "concurrency": 2, "delay_ms": 100}"#)
            let id = try #require(started.json["id"] as? String, "\(started.text)")
            run = try #require(ui.web.repeats.run(id: id))
            usleep(500_000)
            #expect(run.isRunning)
        }
        #expect(!run.isRunning)
        let hits = WebUIProxyTests.hits(origin).count
        usleep(600_000)
        #expect(WebUIProxyTests.hits(origin).count == hits)
        #expect(hits > 1 && hits < 100, "\(hits) hits")
        #expect(run.json["state"] as? String == "cancelled")
    }

    /// The repeat's state once it no longer runs (10 s at most).
    static func finished(_ ui: WebUIHarness, _ id: String) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let state = try ui.request("/api/repeats/\(id)").json
            if ["done", "cancelled"].contains(state["state"] as? String) || Date() > deadline { return state }
            usleep(100_000)
        }
    }
}

/// "Repeat…" in the page (`Resources/webui_repeat.py`, Chromium): the dialog starts a repeat, shows
/// its progress and summary (statuses, times), opens a repetition, refuses out-of-limit counts with
/// the server's reason, and its Cancel stops a long one early.
@Suite struct RepeatPageTests {
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theDialogRepeatsAndSumsUp() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_repeat.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        let expected: Set = ["out-of-limits-refused-with-reason", "origin-saw-12-at-most-3-at-once",
                             "summary-shows-statuses", "summary-shows-times", "first-repetition-opens-as-a-replay",
                             "cancel-stops-early", "no-page-errors"]
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }
}
