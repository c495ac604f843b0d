import Foundation
import Testing
import TestSupport

/// What `POST /api/flows/ID/replay` and `POST /api/replay` say when the proxy refuses the request
/// before it becomes the replay's flow: 422 with the proxy's status and reason, each said once.
/// DevProxy's error bodies start with the status (`400 Bad Request: …`), and the answer put the
/// status line before that body: `HTTP/1.1 400 Bad Request: 400 Bad Request: request target …`.
@Suite struct ReplayRefusalTests {
    static let prefix = "the proxy refused the request before sending it: "

    /// The answer's `error`, checked to name the status once, then the proxy's reason.
    static func expectRefusal(_ answer: WebUIHarness.Answer, status: String, reason: String) {
        let message = answer.json["error"] as? String ?? ""
        #expect(answer.status == 422, "\(answer.status) \(answer.text)")
        #expect(message.hasPrefix(prefix + "HTTP/1.1 \(status): \(reason)"), "\(message)")
        #expect(message.components(separatedBy: status).count == 2, "the status is said once: \(message)")
    }

    @Test("A flow whose URL the proxy refuses is answered 422 with its status and reason once")
    func aRefusedReplaySaysItsStatusOnce() throws {
        let ui = try WebUIHarness(withProxy: true)
        // An RFC 6874 zone id with nothing after its %25: the proxy answers 400 saying so.
        ui.add(#"{"id":"zoneless-1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","#
               + #""client":"127.0.0.1:1","mode":"http","server":{"host":"fe80::1","port":80},"#
               + #""request":{"method":"GET","url":"http://[fe80::1%25]/x","http_version":"HTTP/1.1","#
               + #""headers":[["Host","[fe80::1%25]"]]},"#
               + #""response":{"status":200,"reason":"OK","http_version":"HTTP/1.1","headers":[]},"#
               + #""timings":{"connect":1,"tls":-1,"send":1,"wait":1,"receive":1}}"#)
        Self.expectRefusal(try ui.request("/api/flows/zoneless-1/replay", method: "POST"), status: "400 Bad Request",
                           reason: "request target has an invalid IPv6 zone id")
    }

    @Test("An edited resend the proxy refuses is answered 422 with its status and reason once")
    func aRefusedResendSaysItsStatusOnce() throws {
        let ui = try WebUIHarness(withProxy: true)
        let origin = try OriginServer(tls: false)
        let huge = String(repeating: "a", count: 70_000)
        let url = origin.url("/x", tls: false)
        let body = #"{"method":"GET","url":"\#(url)","headers":[["X-Huge","\#(huge)"]]}"#
        let answer = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                                    body: body)
        Self.expectRefusal(answer, status: "431 Request Header Fields Too Large", reason: "")
    }
}
