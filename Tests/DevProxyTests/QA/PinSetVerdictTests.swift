import DevProxy
import Foundation
import Testing
import TestSupport

/// `pinset_injectable` from a scripted sequence of flows: the pin-set fetch, the rewritten set
/// served, then the team chain accepted on a covered host; each step missing keeps `debuggable`.
@Suite struct PinSetVerdictTests {
    /// A flow at `second` seconds past 10:00:00 (started and ended 100 ms apart).
    static func flow(_ id: String, host: String, second: Int, path: String = "/", pinset: [String: Any]? = nil,
                     status: Int = 200) throws -> [String: Any] {
        var object = SyntheticFlows.object(id: id, host: host, persona: nil, url: "https://\(host)\(path)")
        object["started"] = String(format: "2026-05-01T10:00:%02d.000Z", second)
        object["ended"] = String(format: "2026-05-01T10:00:%02d.100Z", second)
        if let pinset { object["pinset"] = pinset }
        if var response = object["response"] as? [String: Any] {
            response["status"] = status
            object["response"] = response
        }
        return object
    }

    static var rewritten: [String: Any] { ["rewritten": true, "added": ["ROOTPIN="], "hashes": ["A=", "ROOTPIN="]] }

    func judge(_ objects: [[String: Any]]) throws -> [String: QAVerdict] {
        let flows = try objects.map { try JSONDecoder().decode(Flow.self,
                                                               from: JSONSerialization.data(withJSONObject: $0)) }
        return Dictionary(uniqueKeysWithValues: QAVerdict.judge(flows: flows, reports: []).map { ($0.host, $0) })
    }

    @Test func rewrittenSetThenTeamChainIsInjectable() throws {
        let verdicts = try judge([
            try Self.flow("p1", host: "api.acme.dev", second: 1, path: "/.well-known/pins.json",
                          pinset: Self.rewritten),
            try Self.flow("a1", host: "api.acme.dev", second: 2, path: "/v1/me"),
            try Self.flow("c1", host: "cdn.acme.dev", second: 3),
            try Self.flow("o1", host: "other.example.org", second: 4),
        ])
        #expect(verdicts["api.acme.dev"]?.verdict == .pinsetInjectable)
        #expect(verdicts["api.acme.dev"]?.evidence.flows == ["p1", "a1"])
        #expect(verdicts["api.acme.dev"]?.note.contains("whoever intercepts the pin-set fetch") == true)
        #expect(verdicts["cdn.acme.dev"]?.verdict == .pinsetInjectable, "a sibling under acme.dev is covered")
        #expect(verdicts["other.example.org"]?.verdict == .debuggable, "another domain is not covered")
    }

    @Test func eachMissingStepKeepsDebuggable() throws {
        // The set was not rewritten (not JSON), so the app kept its own pins.
        let notRewritten = try judge([
            try Self.flow("p1", host: "api.acme.dev", second: 1, path: "/.well-known/pins.json",
                          pinset: ["rewritten": false, "note": "not rewritten: the response is not a JSON object"]),
            try Self.flow("a1", host: "api.acme.dev", second: 2),
        ])
        #expect(notRewritten["api.acme.dev"]?.verdict == .debuggable)
        // Rewritten but not served (an error status).
        let failed = try judge([
            try Self.flow("p1", host: "api.acme.dev", second: 1, path: "/.well-known/pins.json",
                          pinset: Self.rewritten, status: 503),
            try Self.flow("a1", host: "api.acme.dev", second: 2),
        ])
        #expect(failed["api.acme.dev"]?.verdict == .debuggable)
        // The team chain was accepted only before the set arrived.
        let before = try judge([
            try Self.flow("a1", host: "cdn.acme.dev", second: 1),
            try Self.flow("p1", host: "api.acme.dev", second: 2, path: "/.well-known/pins.json",
                          pinset: Self.rewritten),
        ])
        #expect(before["cdn.acme.dev"]?.verdict == .debuggable)
        // The pin-set fetch alone is not acceptance of the team chain elsewhere.
        #expect(before["api.acme.dev"]?.verdict == .debuggable)
    }

    @Test func commandReportsAndExpectsIt() throws {
        let directory = TemporaryDirectory()
        let log = directory.write("flows.jsonl", try SyntheticFlows.log([
            try Self.flow("p1", host: "api.acme.dev", second: 1, path: "/.well-known/pins.json",
                          pinset: Self.rewritten),
            try Self.flow("a1", host: "api.acme.dev", second: 2),
        ]))
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--json",
                                                              "--expect", "api.acme.dev=pinset_injectable"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("\"pinset_injectable\""), "\(result.stdout)")
    }
}
