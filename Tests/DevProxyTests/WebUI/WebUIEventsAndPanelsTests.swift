import CertAuthority
import Foundation
import SessionStore
import TestSupport
import Testing
@testable import WebUI

/// The event stream's batching and resumption, and the CA and pinning panels.
@Suite struct WebUIEventsAndPanelsTests {
    static func summary(_ index: Int) -> FlowRecord {
        FlowRecord(summary: FlowSummary(id: "burst-\(index)", started: "2026-03-01T12:00:00.000Z", host: "burst.test",
                                        mode: "https", method: "GET", url: "https://burst.test/\(index)"))
    }

    /// Stopping the UI twice (a repeat's test stopping it, then the harness) returns: the second
    /// stop waited forever for the live events' flusher, which the first had already ended.
    @Test(.backstop) func stoppingTwiceReturns() throws {
        let ui = try WebUIHarness()
        ui.web.stop()
        let done = DispatchSemaphore(value: 0)
        Thread { ui.web.stop(); done.signal() }.start()
        #expect(done.wait(timeout: .now() + 10) == .success, "the second stop() did not return within 10 s")
    }

    @Test func aBurstOfFlowsArrivesInAFewBatchedMessages() throws {
        let ui = try WebUIHarness()
        let events = try WebUIHarness.EventStream(ui)
        #expect(events.read(until: "event: hello"))
        let start = Date()
        for index in 1...3000 { ui.store.started(Self.summary(index)) }
        ui.store.flush()
        #expect(events.read(until: "\"id\":\"burst-3000\""))
        let elapsed = Date().timeIntervalSince(start)
        let messages = events.received.components(separatedBy: "event: flows\n").count - 1
        // At most one message per 100 ms tick (plus the one in progress), however many flows came.
        #expect(messages >= 1)
        #expect(Double(messages) <= elapsed * 10 + 2, "\(messages) messages in \(elapsed) s")
        for index in [1, 1500, 3000] { #expect(events.received.contains("\"id\":\"burst-\(index)\"")) }
        #expect(events.received.contains("\"phase\":\"started\""))
    }

    @Test func aReconnectGetsWhatItMissedOrAReset() throws {
        let ui = try WebUIHarness()
        let first = try WebUIHarness.EventStream(ui)
        #expect(first.read(until: "event: hello"))
        ui.store.started(Self.summary(1))
        ui.store.flush()
        #expect(first.read(until: "burst-1\""))
        ui.store.started(Self.summary(2))
        ui.store.flush()
        #expect(first.read(until: "burst-2\""))
        // Resuming after message 1: message 2 (the second flow) comes again, the first does not.
        let resumed = try WebUIHarness.EventStream(ui, lastEventID: 1)
        #expect(resumed.read(until: "burst-2\""))
        #expect(!resumed.received.contains("burst-1\""))
        let stale = try WebUIHarness.EventStream(ui, lastEventID: -100)
        #expect(stale.read(until: "event: reset"))
    }

    /// With no stream open (and none lately), the hub builds no messages: a page that resumes from
    /// before a batch it missed gets `reset` (it fetches its list again), then every later batch.
    @Test func withNoStreamOpenNothingIsBuiltAndAResumeGetsAReset() throws {
        let ui = try WebUIHarness()
        ui.store.started(Self.summary(1))
        ui.store.flush()
        let resumed = try WebUIHarness.EventStream(ui, query: "?last_event_id=0")
        #expect(resumed.read(until: "event: reset"), "\(resumed.received)")
        ui.store.started(Self.summary(2))
        ui.store.flush()
        #expect(resumed.read(until: "burst-2\""))
        #expect(!resumed.received.contains("burst-1\""))
    }

    /// Under `?filter=~c 404`, a flow that starts pending is named `unmatched`, and arrives among
    /// the flows once its 404 is stored; a stream without a filter carries no `unmatched`.
    @Test func aFilteredStreamSaysWhichFlowsOfABatchMatchNow() throws {
        let ui = try WebUIHarness()
        let filtered = try WebUIHarness.EventStream(ui, query: "?filter=%7Ec%20404")
        let plain = try WebUIHarness.EventStream(ui)
        #expect(filtered.read(until: "event: hello"))
        #expect(plain.read(until: "event: hello"))
        var pending = Self.summary(1)
        pending.summary.status = nil
        ui.store.started(pending)
        ui.store.flush()
        #expect(filtered.read(until: "\"unmatched\":[\"burst-1\"]"), "\(filtered.received)")
        #expect(filtered.received.contains("data: {\"flows\":[],\"unmatched\""))
        var answered = pending
        answered.summary.status = 404
        ui.store.responded(answered)
        ui.store.flush()
        #expect(filtered.read(until: "\"status\":404"), "\(filtered.received)")
        let last = filtered.received.components(separatedBy: "event: flows\n").last ?? ""
        #expect(last.contains("\"flows\":[{\"id\":\"burst-1\"") && last.contains("\"unmatched\":[]"), "\(last)")
        #expect(plain.read(until: "\"status\":404"))
        #expect(!plain.received.contains("unmatched"))
    }

    @Test func aFilteredStreamRefusesAnInvalidFilterAndResumesFromTheQuery() throws {
        let ui = try WebUIHarness()
        let invalid = try ui.request("/api/events?filter=%7Ec%20404%20%26")
        #expect(invalid.status == 400)
        #expect((invalid.json["column"] as? Int) != nil)
        let first = try WebUIHarness.EventStream(ui)
        #expect(first.read(until: "event: hello"))
        ui.store.started(Self.summary(1))
        ui.store.flush()
        #expect(first.read(until: "burst-1\""))
        // A page that changes its filter reopens the stream from the last message it saw.
        let resumed = try WebUIHarness.EventStream(ui, query: "?filter=burst&last_event_id=0")
        #expect(resumed.read(until: "burst-1\""))
        #expect(resumed.received.contains("\"unmatched\":[]"))
    }

    @Test func theCAPanelNamesTheSignerAndTheRoot() throws {
        let pki = try PKIFixture()
        let ui = try WebUIHarness(authority: WebUI.Authority(signer: pki.intermediate, root: pki.root,
                                                            renewCommand: "devproxy ca issue --email ana@acme.dev"))
        let json = try ui.request("/api/ca").json
        let signer = try #require(json["signer"] as? [String: Any])
        #expect(signer["kind"] as? String == "intermediate")
        #expect(signer["email"] as? String == "ana@acme.dev")
        #expect(signer["serial"] as? String == pki.intermediate.serialHex)
        #expect((signer["expires_in_seconds"] as? Int ?? 0) > 0)
        let root = try #require(json["root"] as? [String: Any])
        #expect(root["pin"] as? String == pki.root.pin)
        #expect(root["sha256"] as? String == pki.root.sha256Fingerprint)
        #expect(json["renew"] as? String == "devproxy ca issue --email ana@acme.dev")
    }

    @Test func thePinningPanelJudgesHostsAndPersonasLikeQAVerdict() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "t1", host: "open.test", persona: "unpinned"))
        // A client that rejects the certificate sends no request: the flow has only the error.
        ui.add(#"{"id":"t2","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:00.010Z","#
               + #""client":"127.0.0.1:1","mode":"https","persona":"unpinned","#
               + #""server":{"host":"pinned.test","port":443},"#
               + #""error":{"kind":"client_rejected_certificate","message":"unknown_ca","alert":"unknown_ca"},"#
               + #""timings":{"connect":-1,"tls":-1,"send":-1,"wait":-1,"receive":-1}}"#)
        ui.add(WebUIFlowsAPITests.line(id: "t3", host: "pinned.test"))
        let verdicts = try ui.request("/api/pinning").json["verdicts"] as? [[String: Any]] ?? []
        func verdict(_ host: String, _ persona: String) -> [String: Any]? {
            verdicts.first { $0["host"] as? String == host && $0["persona"] as? String == persona }
        }
        #expect(verdict("open.test", "unpinned")?["verdict"] as? String == "not-pinned")
        #expect(verdict("pinned.test", "unpinned")?["verdict"] as? String == "enforced")
        #expect(verdict("pinned.test", "unpinned")?["flows"] as? [String] == ["t2"])
        #expect(verdict("pinned.test", "team")?["verdict"] as? String == "debuggable")
        // `~verdict` finds the flows of the groups judged so: it read a column no flow had, and
        // matched nothing, while the panel showed the verdicts.
        func ids(_ filter: String) throws -> [String] {
            let query = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let flows = try ui.request("/api/flows?order=oldest&filter=\(query)").json["flows"] as? [[String: Any]] ?? []
            return flows.compactMap { $0["id"] as? String }
        }
        #expect(try ids("~verdict debuggable") == ["t3"])
        #expect(try ids("~verdict ENFORCED") == ["t2"])
        #expect(try ids("~verdict not-pinned | ~verdict enforced") == ["t1", "t2"])
        #expect(try ids("!~verdict debuggable") == ["t1", "t2"])
        #expect(try ids("~verdict report-only").isEmpty)
    }
}
