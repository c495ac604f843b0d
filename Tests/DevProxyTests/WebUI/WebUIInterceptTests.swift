import DevProxy
import Foundation
import Synchronization
import TestSupport
import Testing
@testable import WebUI

/// Breakpoints through the web UI's API (`/api/intercept`) against a real `Intercepts` board: the
/// test holds requests as the engine would (`hold(_:decide:)`) and reads what the API decided.
@Suite struct WebUIInterceptTests {
    /// The decisions a held request got (one, when all is well).
    final class Decisions: Sendable {
        private let taken = Mutex<[Intercepts.Decision]>([])
        var all: [Intercepts.Decision] { taken.withLock { $0 } }
        func take(_ decision: Intercepts.Decision) { taken.withLock { $0.append(decision) } }
    }

    static func held(_ id: String, method: String = "POST", url: String = "https://api.test/v1/users?x=1",
                     headers: [(String, String)] = [("Host", "api.test"), ("Content-Type", "application/json")],
                     body: [UInt8] = Array("{\"name\":\"ana\"}".utf8)) -> Intercepts.Held {
        Intercepts.Held(id: id, method: method, url: url, httpVersion: "HTTP/1.1",
                        headers: headers.map { Intercepts.HeaderField(name: $0.0, value: $0.1) }, body: body,
                        since: Date().addingTimeInterval(-1.5), filter: "~d api")
    }

    /// A response held as the engine holds one: the origin's status, header fields and body, with
    /// the method and URL of the request that was sent.
    static func heldResponse(_ id: String, method: String = "GET", status: Int = 200,
                             headers: [(String, String)] = [("Content-Type", "application/json"),
                                                            ("Content-Length", "11")],
                             body: [UInt8] = Array("{\"ok\":true}".utf8)) -> Intercepts.Held {
        Intercepts.Held(id: id, method: method, url: "https://api.test/v1/users/7", httpVersion: "HTTP/1.1",
                        status: status, headers: headers.map { Intercepts.HeaderField(name: $0.0, value: $0.1) },
                        body: body, since: Date().addingTimeInterval(-2.4), filter: "~d api & ~s")
    }

    /// Holds `held` on `board`; returns where its decisions go.
    static func hold(_ held: Intercepts.Held, on board: Intercepts) -> Decisions {
        let decisions = Decisions()
        board.hold(held) { decisions.take($0) }
        return decisions
    }

    static let csrf = ["X-DevProxy-CSRF: 1", "Content-Type: application/json"]

    @Test func theBoardListsHeldRequestsOldestFirstAndOneWithItsBody() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        _ = Self.hold(Self.held("run-1"), on: board)
        _ = Self.hold(Self.held("run-2", method: "PUT", body: [0xFF, 0xFE, 0x00, 0x41]), on: board)
        let list = try ui.request("/api/intercept")
        #expect(list.status == 200)
        #expect(list.json["filter"] as? String == "~d api")
        let items = try #require(list.json["held"] as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == ["run-1", "run-2"])
        let first = items[0]
        #expect(first["method"] as? String == "POST" && first["url"] as? String == "https://api.test/v1/users?x=1")
        #expect(first["http_version"] as? String == "HTTP/1.1" && first["body_size"] as? Int == 14)
        #expect((first["headers"] as? [[String]]) == [["Host", "api.test"], ["Content-Type", "application/json"]])
        #expect((first["held_ms"] as? Int ?? 0) >= 1500, "\(first)")
        let since = try #require(first["since"] as? String)
        #expect(since.count == 24 && since.hasSuffix("Z") && since.contains("."), "RFC 3339 with ms, UTC: \(since)")
        #expect(first["body_base64"] == nil, "the list carries no bodies")

        let text = try ui.request("/api/intercept/run-1")
        #expect(text.status == 200)
        #expect(text.json["body_text"] as? String == "{\"name\":\"ana\"}")
        #expect(text.json["body_base64"] as? String == Data("{\"name\":\"ana\"}".utf8).base64EncodedString())
        let binary = try ui.request("/api/intercept/run-2")
        #expect(binary.json["body_base64"] as? String == "//4AQQ==")
        #expect(binary.json["body_text"] == nil, "not UTF-8: no body_text")
        let missing = try ui.request("/api/intercept/run-9")
        #expect(missing.status == 404 && (missing.json["error"] as? String ?? "").contains("run-9"), "\(missing.text)")
    }

    @Test func resumeSendsTheEditedPartsAndNothingElse() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let plain = Self.hold(Self.held("run-1"), on: board)
        let edited = Self.hold(Self.held("run-2"), on: board)
        let binary = Self.hold(Self.held("run-3"), on: board)

        let asItCame = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(asItCame.status == 200 && asItCame.json["resumed"] as? String == "run-1", "\(asItCame.text)")
        #expect(plain.all == [.resume(nil)])

        let edit = """
            {"method": "PATCH", "url": "http://other.test:8080/v2?y=2",
             "headers": [["Host", "other.test:8080"], ["X-Debug", "1 2"]], "body": "{\\"name\\":\\"bea\\"}"}
            """
        let answer = try ui.request("/api/intercept/run-2/resume", method: "POST", headers: Self.csrf, body: edit)
        #expect(answer.status == 200 && answer.json["resumed"] as? String == "run-2", "\(answer.text)")
        #expect(edited.all == [.resume(Intercepts.Edit(
            method: "PATCH", url: "http://other.test:8080/v2?y=2",
            headers: [.init(name: "Host", value: "other.test:8080"), .init(name: "X-Debug", value: "1 2")],
            body: Array("{\"name\":\"bea\"}".utf8)))])

        let bytes = try ui.request("/api/intercept/run-3/resume", method: "POST", headers: Self.csrf,
                                   body: "{\"body_base64\": \"AAEC/w==\"}")
        #expect(bytes.status == 200, "\(bytes.text)")
        #expect(binary.all == [.resume(Intercepts.Edit(body: [0, 1, 2, 255]))])

        // Decided already: 404, and the request is decided once.
        let again = try ui.request("/api/intercept/run-2/resume", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(again.status == 404 && (again.json["error"] as? String ?? "").contains("nothing of flow run-2 is held"))
        #expect(edited.all.count == 1)
        #expect(board.held.isEmpty)
    }

    /// Each edit that cannot go on the wire is a 400 naming the part and why; the request stays held.
    @Test func anEditTheWireCannotCarryIsRefusedAndTheRequestStaysHeld() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let decisions = Self.hold(Self.held("run-1"), on: board)
        let cases: [(String, String)] = [
            ("{\"method\": \"GE T\"}", "method: \"GE T\" is not an HTTP method"),
            ("{\"method\": \"\"}", "method: \"\" is not an HTTP method"),
            ("{\"url\": \"/v1/users\"}", "url: \"/v1/users\" is not an absolute URL"),
            ("{\"url\": \"ftp://api.test/x\"}", "url: the scheme must be http or https, not ftp"),
            ("{\"url\": \"http:///path\"}", "url: \"http:///path\" names no host"),
            ("{\"url\": \"http://api.test/a b\"}", "holds white space or control characters"),
            ("{\"headers\": [[\"Bad Name\", \"x\"]]}", "headers[0]: the name \"Bad Name\" is not a token"),
            ("{\"headers\": [[\"Host\", \"api.test\"], [\"X-A\", \"1\\r\\nX-Injected: 1\"]]}",
             "headers[1]: the value of X-A holds CR"),
            ("{\"headers\": [[\"X-A\", \"1\\nX-Injected: 1\"]]}", "headers[0]: the value of X-A holds LF"),
            ("{\"headers\": [[\"X-A\", \"a\\u0000b\"]]}", "headers[0]: the value of X-A holds NUL"),
            ("{\"headers\": [[\"X-A\"]]}", "headers[0] must be a [name, value] pair"),
            ("{\"body\": \"a\", \"body_base64\": \"YQ==\"}", "give body (text) or body_base64, not both"),
            ("{\"body_base64\": \"not base64!\"}", "body_base64 is not base64"),
            ("[1, 2]", "the body must be a JSON object"),
        ]
        for (body, reason) in cases {
            let answer = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf, body: body)
            #expect(answer.status == 400, "\(body): \(answer.status) \(answer.text)")
            #expect((answer.json["error"] as? String ?? "").contains(reason), "\(body): \(answer.text)")
        }
        // A body over what a held request takes (Intercepts.maxBody), sent from a file.
        let file = ui.directory.file("big.json")
        try Data(("{\"body\": \"" + String(repeating: "a", count: Intercepts.maxBody + 1) + "\"}").utf8)
            .write(to: URL(fileURLWithPath: file))
        let big = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf,
                                 extra: ["--data-binary", "@" + file])
        #expect(big.status == 400 && (big.json["error"] as? String ?? "")
            .contains("body: \(Intercepts.maxBody + 1) bytes is over the 4 MiB"), "\(big.text)")
        #expect(decisions.all.isEmpty)
        #expect(board.held.map(\.id) == ["run-1"])
        // The largest body it takes goes on.
        let most = String(repeating: "b", count: Intercepts.maxBody)
        try Data(("{\"body\": \"" + most + "\"}").utf8).write(to: URL(fileURLWithPath: file))
        let fits = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf,
                                  extra: ["--data-binary", "@" + file])
        #expect(fits.status == 200, "\(fits.text)")
        #expect(decisions.all == [.resume(Intercepts.Edit(body: Array(most.utf8)))])
    }

    @Test func abortAnswersTheClient502AndResumeAllSendsEveryOneOn() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let aborted = Self.hold(Self.held("run-1"), on: board)
        let answer = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(answer.status == 200 && answer.json["aborted"] as? String == "run-1", "\(answer.text)")
        guard case .abort(let reason, let outcome)? = aborted.all.first, aborted.all.count == 1 else {
            Issue.record("not aborted once: \(aborted.all)")
            return
        }
        #expect(outcome == "aborted" && reason.contains("aborted at a breakpoint"))
        let again = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(again.status == 404)

        let all = (2...4).map { Self.hold(Self.held("run-\($0)"), on: board) }
        let resumed = try ui.request("/api/intercept/resume-all", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(resumed.status == 200 && resumed.json["resumed"] as? Int == 3, "\(resumed.text)")
        for decisions in all { #expect(decisions.all == [.resume(nil)]) }
        let none = try ui.request("/api/intercept/resume-all", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(none.json["resumed"] as? Int == 0)
        let wrongMethod = try ui.request("/api/intercept/run-2/resume")
        #expect(wrongMethod.status == 405, "\(wrongMethod.text)")
    }

    /// The filter is evaluated on the request: a term that needs the response is a 400 saying so,
    /// and the filter before it stays.
    @Test func theFilterIsSetClearedAndARefusedOneSaysWhy() throws {
        let board = try Intercepts()
        let ui = try WebUIHarness(intercepts: board)
        #expect(try ui.request("/api/intercept").json["filter"] is NSNull)
        let set = try ui.request("/api/intercept", method: "PUT", headers: Self.csrf, body: "{\"filter\": \"~m POST\"}")
        #expect(set.status == 200 && set.json["filter"] as? String == "~m POST", "\(set.text)")
        #expect(board.filterText == "~m POST" && board.isActive)

        let response = try ui.request("/api/intercept", method: "PUT", headers: Self.csrf,
                                      body: "{\"filter\": \"~b x\"}")
        let reason = response.json["error"] as? String ?? ""
        #expect(response.status == 400 && reason.contains("~b is not known when a breakpoint decides"),
                "\(response.text)")
        #expect(!reason.hasPrefix("--intercept"), "the page set it, not the option: \(reason)")
        let broken = try ui.request("/api/intercept", method: "PUT", headers: Self.csrf, body: "{\"filter\": \"~d (\"}")
        #expect(broken.status == 400 && (broken.json["error"] as? String ?? "").contains("does not parse"),
                "\(broken.text)")
        #expect(board.filterText == "~m POST")

        for clear in ["{\"filter\": null}", "{\"filter\": \"  \"}"] {
            #expect(try ui.request("/api/intercept", method: "PUT", headers: Self.csrf, body: "{\"filter\": \"~d x\"}")
                .status == 200)
            let cleared = try ui.request("/api/intercept", method: "PUT", headers: Self.csrf, body: clear)
            #expect(cleared.status == 200 && cleared.json["filter"] is NSNull, "\(clear): \(cleared.text)")
            #expect(board.filterText == nil && !board.isActive)
        }
        for bad in ["not json", "{}", "{\"filter\": 3}"] {
            let answer = try ui.request("/api/intercept", method: "PUT", headers: Self.csrf, body: bad)
            #expect(answer.status == 400, "\(bad): \(answer.text)")
        }
    }

    /// The token, and the CSRF checks on every change: a request from another site's page
    /// decides nothing.
    @Test func changesNeedTheTokenAndPassTheCSRFChecks() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let decisions = Self.hold(Self.held("run-1"), on: board)
        #expect(try ui.request("/api/intercept", auth: false).status == 401)
        #expect(try ui.request("/api/intercept/run-1/resume", method: "POST", auth: false).status == 401)
        let cookie = "Cookie: devproxy_token_\(ui.port)=\(ui.token)"
        // The cookie without the CSRF header; a cross-site fetch; a foreign Origin.
        let refused = [
            try ui.request("/api/intercept/run-1/abort", method: "POST", headers: [cookie], auth: false),
            try ui.request("/api/intercept/run-1/abort", method: "POST",
                           headers: [cookie, "X-DevProxy-CSRF: 1", "Sec-Fetch-Site: cross-site"], auth: false),
            try ui.request("/api/intercept", method: "PUT", headers: Self.csrf + ["Origin: http://evil.test"],
                           body: "{\"filter\": null}"),
        ]
        for answer in refused { #expect(answer.status == 403, "\(answer.text)") }
        #expect(decisions.all.isEmpty && board.filterText == "~d api")
        let page = try ui.request("/api/intercept/run-1/abort", method: "POST",
                                  headers: [cookie, "X-DevProxy-CSRF: 1", "Sec-Fetch-Site: same-origin"], auth: false)
        #expect(page.status == 200 && decisions.all.count == 1)
    }

    /// A held response is listed and shown as one: `phase` `response`, its `status`, its own header
    /// fields and body, the method and URL of the request that was sent; a held request says
    /// `phase` `request` and has no status.
    @Test func aHeldResponseSaysItsPhaseAndStatus() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        _ = Self.hold(Self.held("run-1"), on: board)
        _ = Self.hold(Self.heldResponse("run-2", status: 201), on: board)
        let list = try ui.request("/api/intercept")
        let items = try #require(list.json["held"] as? [[String: Any]], "\(list.text)")
        #expect(items.map { $0["id"] as? String } == ["run-1", "run-2"])
        #expect(items[0]["phase"] as? String == "request" && items[0]["status"] == nil, "\(items[0])")
        #expect(items[1]["phase"] as? String == "response" && items[1]["status"] as? Int == 201, "\(items[1])")
        #expect(items[1]["method"] as? String == "GET" && items[1]["url"] as? String == "https://api.test/v1/users/7")
        #expect((items[1]["held_ms"] as? Int ?? 0) >= 2400 && items[1]["filter"] as? String == "~d api & ~s")

        let one = try ui.request("/api/intercept/run-2")
        #expect(one.status == 200 && one.json["phase"] as? String == "response" && one.json["status"] as? Int == 201)
        #expect((one.json["headers"] as? [[String]])
                == [["Content-Type", "application/json"], ["Content-Length", "11"]])
        #expect(one.json["body_text"] as? String == "{\"ok\":true}" && one.json["body_size"] as? Int == 11)
    }

    /// A held response resumes with its status, header fields and body edited (what the engine gets
    /// is the edit as sent), or as it came.
    @Test func aHeldResponseResumesWithItsStatusEdited() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let edited = Self.hold(Self.heldResponse("run-1"), on: board)
        let plain = Self.hold(Self.heldResponse("run-2"), on: board)
        let edit = #"{"status": 503, "headers": [["Content-Type", "text/plain"], ["Retry-After", "5"]], "#
            + #""body": "down"}"#
        let answer = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf, body: edit)
        #expect(answer.status == 200 && answer.json["resumed"] as? String == "run-1", "\(answer.text)")
        let expected = Intercepts.Edit(headers: [.init(name: "Content-Type", value: "text/plain"),
                                                 .init(name: "Retry-After", value: "5")],
                                       body: Array("down".utf8), status: 503)
        #expect(edited.all == [.resume(expected)])
        let record = Self.heldResponse("run-1").record(.resume(expected))
        #expect(record.edited == ["status", "headers", "body"] && record.originalStatus == 200, "\(record)")

        let asItCame = try ui.request("/api/intercept/run-2/resume", method: "POST", headers: Self.csrf, body: "{}")
        #expect(asItCame.status == 200, "\(asItCame.text)")
        #expect(plain.all == [.resume(Intercepts.Edit())])
        #expect(board.held.isEmpty)
    }

    /// What cannot go with what is held is a 400 naming the part, and it stays held: a status for a
    /// request, a method or URL for a response (its request was sent), a status that is not a final
    /// response's, a body for a response that carries none.
    @Test func anEditForTheOtherPhaseIsRefusedAndItStaysHeld() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let request = Self.hold(Self.held("run-1"), on: board)
        let response = Self.hold(Self.heldResponse("run-2"), on: board)
        let head = Self.hold(Self.heldResponse("run-3", method: "HEAD", body: []), on: board)
        let empty = Self.hold(Self.heldResponse("run-4", status: 204, headers: [], body: []), on: board)
        let cases: [(String, String, String)] = [
            ("run-1", #"{"status": 404}"#, "status: run-1 is a held request; a status is a response's to edit"),
            ("run-2", #"{"method": "POST"}"#, "method: run-2 is a held response, whose request was sent already"),
            ("run-2", #"{"url": "https://api.test/other"}"#, "url: run-2 is a held response"),
            ("run-2", #"{"status": 99}"#, "status: \"99\" is not a final response's status (200 to 599)"),
            ("run-2", #"{"status": 101}"#, "status: \"101\" is not a final response's status"),
            ("run-2", #"{"status": 600}"#, "status: \"600\" is not a final response's status"),
            ("run-2", #"{"status": 200.5}"#, "is not a final response's status"),
            ("run-2", #"{"status": true}"#, "is not a final response's status"),
            ("run-2", #"{"status": "404"}"#, "status: \"404\" is not a final response's status"),
            ("run-2", #"{"status": "x"}"#, "status: \"x\" is not a final response's status"),
            ("run-2", #"{"status": null}"#, "is not a final response's status"),
            ("run-2", #"{"status": 204}"#, "body: a 204 response carries no body"),
            ("run-2", #"{"status": 304, "body": "x"}"#, "body: a 304 response carries no body"),
            ("run-3", #"{"body": "x"}"#, "body: a response to HEAD carries no body"),
            ("run-4", #"{"body": "x"}"#, "body: a 204 response carries no body"),
        ]
        for (id, body, reason) in cases {
            let answer = try ui.request("/api/intercept/\(id)/resume", method: "POST", headers: Self.csrf, body: body)
            #expect(answer.status == 400, "\(id) \(body): \(answer.status) \(answer.text)")
            #expect((answer.json["error"] as? String ?? "").contains(reason), "\(id) \(body): \(answer.text)")
        }
        #expect(request.all.isEmpty && response.all.isEmpty && head.all.isEmpty && empty.all.isEmpty)
        #expect(board.held.map(\.id) == ["run-1", "run-2", "run-3", "run-4"])
        // A 204 given with its body emptied, a HEAD's status changed: they go on.
        let emptied = try ui.request("/api/intercept/run-2/resume", method: "POST", headers: Self.csrf,
                                     body: #"{"status": 204, "body": ""}"#)
        #expect(emptied.status == 200 && response.all == [.resume(Intercepts.Edit(body: [], status: 204))],
                "\(emptied.text)")
        let status = try ui.request("/api/intercept/run-3/resume", method: "POST", headers: Self.csrf,
                                    body: #"{"status": 404}"#)
        #expect(status.status == 200 && head.all == [.resume(Intercepts.Edit(status: 404))], "\(status.text)")
    }

    /// Abort of a held response: its client gets a 502 saying the origin's response was not delivered.
    @Test func abortOfAHeldResponseSaysItWasNotDelivered() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let decisions = Self.hold(Self.heldResponse("run-1"), on: board)
        let answer = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(answer.status == 200 && answer.json["aborted"] as? String == "run-1", "\(answer.text)")
        guard case .abort(let reason, let outcome)? = decisions.all.first, decisions.all.count == 1 else {
            Issue.record("not aborted once: \(decisions.all)")
            return
        }
        #expect(outcome == "aborted" && reason.contains("the origin's response was not delivered"), "\(reason)")
        #expect(try ui.request("/api/intercept/run-1/abort", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
            .status == 404)
    }

    /// An abort sent for a held request (`{"phase": "request"}`, as the page sends it) whose request
    /// was resumed meanwhile (from another page, a script) and whose response is held now does not
    /// abort that response: 404 saying so, and the response stays held, as resume does. Without a
    /// phase it aborts whatever is held, as before; a phase that is neither is a 400.
    @Test func anAbortForTheRequestLeavesTheResponseHeldSince() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let request = Self.hold(Self.held("run-1"), on: board)
        // Another page resumes the request; the origin answers and the response is held.
        #expect(board.resume("run-1"))
        let response = Self.hold(Self.heldResponse("run-1"), on: board)
        let late = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: Self.csrf,
                                  body: #"{"phase": "request"}"#)
        #expect(late.status == 404, "\(late.text)")
        #expect((late.json["error"] as? String ?? "").contains("the request of flow run-1 is not held: it went on, "
                                                                + "and its response is held now"), "\(late.text)")
        #expect(request.all == [.resume(nil)] && response.all.isEmpty && board.held.map(\.phase) == [.response])
        let bad = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: Self.csrf,
                                 body: #"{"phase": "both"}"#)
        #expect(bad.status == 400 && (bad.json["error"] as? String ?? "").contains("phase must be"), "\(bad.text)")
        let aimed = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: Self.csrf,
                                   body: #"{"phase": "response"}"#)
        #expect(aimed.status == 200 && response.all.count == 1 && board.held.isEmpty, "\(aimed.text)")
        // Without a phase: whatever is held, as before.
        let other = Self.hold(Self.heldResponse("run-2"), on: board)
        #expect(try ui.request("/api/intercept/run-2/abort", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
            .status == 200)
        #expect(other.all.count == 1)
    }

    /// A resume sent for a held request (`{"phase": "request"}`, with or without an edit) whose request
    /// went on meanwhile does not send the response now held on: 404, and it stays held. `phase`
    /// alone is no edit: the response goes on as it came.
    @Test func aResumeForTheRequestLeavesTheResponseHeldSince() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        _ = Self.hold(Self.held("run-1"), on: board)
        #expect(board.resume("run-1"))
        let response = Self.hold(Self.heldResponse("run-1"), on: board)
        for body in [#"{"phase": "request"}"#, #"{"phase": "request", "headers": [["X-A", "1"]]}"#] {
            let late = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf, body: body)
            #expect(late.status == 404 && (late.json["error"] as? String ?? "").contains(
                "the request of flow run-1 is not held: it went on, and its response is held now; nothing was resumed"),
                "\(body): \(late.text)")
        }
        #expect(response.all.isEmpty && board.held.map(\.phase) == [.response])
        let bad = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf,
                                 body: #"{"phase": 1}"#)
        #expect(bad.status == 400 && (bad.json["error"] as? String ?? "").contains("phase must be"), "\(bad.text)")
        let aimed = try ui.request("/api/intercept/run-1/resume", method: "POST", headers: Self.csrf,
                                   body: #"{"phase": "response"}"#)
        #expect(aimed.status == 200 && response.all == [.resume(nil)] && board.held.isEmpty, "\(aimed.text)")
    }

    @Test func withoutAProxyTheRoutesSaySo() throws {
        let ui = try WebUIHarness()
        let routes = [("GET", "/api/intercept"), ("PUT", "/api/intercept"), ("POST", "/api/intercept/x/resume")]
        for (method, path) in routes {
            let answer = try ui.request(path, method: method, headers: ["X-DevProxy-CSRF: 1"], body: "{}")
            #expect(answer.status == 404 && (answer.json["error"] as? String ?? "")
                .hasPrefix("no proxy: breakpoints need devproxy run"), "\(method) \(path): \(answer.text)")
        }
    }

    /// The live stream says when the board changes: `intercept` with the filter, the held ids and
    /// those of them held at their response.
    @Test func theEventStreamSaysWhatIsHeld() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let events = try WebUIHarness.EventStream(ui)
        #expect(events.read(until: "event: hello"))
        _ = Self.hold(Self.held("run-1"), on: board)
        _ = Self.hold(Self.held("run-2"), on: board)
        #expect(events.read(until: "data: {\"filter\":\"~d api\",\"held\":[\"run-1\",\"run-2\"],\"responses\":[]}"),
                "\(events.received)")
        let abort = try ui.request("/api/intercept/run-1/abort", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(abort.status == 200)
        #expect(events.read(until: "\"held\":[\"run-2\"],\"responses\":[]}"), "\(events.received)")
        // run-2's request resumed and its response held: the same id, now among the responses.
        #expect(board.resume("run-2"))
        _ = Self.hold(Self.heldResponse("run-2"), on: board)
        #expect(events.read(until: "\"held\":[\"run-2\"],\"responses\":[\"run-2\"]}"), "\(events.received)")
        let clear = try ui.request("/api/intercept", method: "PUT", headers: Self.csrf, body: "{\"filter\": null}")
        #expect(clear.status == 200)
        #expect(events.read(until: "data: {\"filter\":null,\"held\":[\"run-2\"],\"responses\":[\"run-2\"]}"),
                "\(events.received)")
        #expect(events.received.contains("event: intercept\n"))
        board.resumeAll()
        #expect(events.read(until: "data: {\"filter\":null,\"held\":[],\"responses\":[]}"), "\(events.received)")
    }
}

/// Breakpoints in a real headless Chromium (`Resources/webui_intercept.py`): `devproxy run
/// --intercept`, the Intercept box, a curl request held, marked in the list, edited in the pane and
/// resumed (curl gets the origin's answer to the edited body), the keys `x`, `A` and `a`; a curl
/// response held (HTTP/1.1), its status and body edited in the pane, curl getting them, the flow's
/// facts saying so; a response aborted; one flow held at its request, then at its response. The
/// held mark (‖) is drawn by the fonts a plain Linux has (⏸ was a missing glyph's box there).
@Suite(.serialized) struct WebUIInterceptBrowserTests {
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aHeldRequestIsEditedAndResumedInThePage() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet",
                                         "--intercept", "~u /never-held"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_intercept.py",
                                          timeout: 180)
        let expected: Set = ["intercept-box-shows-filter", "intercept-refused-filter-said", "row-marked-held", "held-mark-drawn",
                             "editor-shows-request", "resumed-edited-body-reaches-origin", "row-no-longer-held",
                             "intercept-facts-shown", "abort-key-502", "resume-all-key", "resume-key-sends-edits",
                             "intercept-cleared", "no-page-errors", "response-row-marked-held",
                             "response-editor-shows-response", "response-resumed-edited-reaches-client",
                             "response-intercept-facts-shown", "response-binary-body-unchanged",
                             "response-gzip-shown-decoded", "respond-directly",
                             "response-abort-key-502", "both-phases-one-row", "response-survives-filter-change"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        _ = proxy.stop()
    }
}

extension WebUIInterceptBrowserTests {
    /// An HTTP/2 stream held (`webui_intercept.py --only h2`): the page shows it as sent (HTTP/2,
    /// header names in lower case, no pseudo-headers), and the body edited there reaches the origin
    /// over HTTP/2. Another stream's response held: its editor shows the status and the header names
    /// as the HTTP/2 client would get them (no `:status`), and the status and body edited there reach
    /// curl over HTTP/2.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aHeldHTTP2StreamIsEditedInThePage() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet",
                                         "--upstream-ca", origin.caPath,
                                         "--intercept", "(~u h2-held & ~q) | (~u h2-response & ~s)"], webUI: true)
        let ui = try #require(proxy.webUI)
        /// curl --http2 through the proxy, started now; its output read once it ends.
        func curl(_ arguments: [String]) throws -> (Process, Pipe) {
            let client = Process()
            client.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            client.arguments = ["-sS", "--max-time", "60", "--http2", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                "--cacert", dir.file("ca/root.pem")] + arguments
            let output = Pipe()
            client.standardOutput = output
            client.standardError = output
            try client.run()
            return (client, output)
        }
        let (client, output) = try curl(["-d", "x=1", origin.url("/echo?h2-held")])
        defer { if client.isRunning { client.terminate() } }
        let (answered, answer) = try curl(["-w", "\n%{http_code} %{http_version}", origin.url("/echo?h2-response")])
        defer { if answered.isRunning { answered.terminate() } }
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", only: "h2",
                                          script: "webui_intercept.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        #expect(WebUIBrowser.passed(result).isSuperset(of: ["h2-editor-shows-stream", "h2-resumed",
                                                            "h2-response-editor-shows-response", "h2-response-resumed",
                                                            "no-page-errors"]),
                "\(result.output)")
        let echoed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        client.waitUntilExit()
        let echo = try JSONSerialization.jsonObject(with: Data(echoed.utf8)) as? [String: Any]
        #expect(echo?["body"] as? String == "x=2&h2=edited" && echo?["http_version"] as? String == "2",
                "\(echoed)")
        let got = String(decoding: answer.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        answered.waitUntilExit()
        #expect(got == "{\"edited\": \"over h2\"}\n202 2", "\(got)")
        _ = proxy.stop()
    }
}
