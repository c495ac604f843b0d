import DevProxy
import Foundation
import Testing
import TestSupport

/// `QAVerdict.judge` and `devproxy qa verdict`: each verdict from a synthetic flow log, the
/// JSON shape, JUnit well-formedness, `--expect` failures, and torn lines as warnings.
@Suite struct QAVerdictTests {
    let dir = TemporaryDirectory()

    /// A log exercising every verdict.
    func flows() -> [[String: Any]] {
        [
            SyntheticFlows.object(id: "t1", host: "api.acme.dev", persona: "team"),
            SyntheticFlows.object(id: "e1", host: "api.acme.dev", persona: "unpinned", method: nil, error: "client_rejected_certificate"),
            SyntheticFlows.object(id: "e2", host: "okhttp.acme.dev", persona: "unpinned", method: nil, error: "client_closed_after_handshake"),
            SyntheticFlows.object(id: "r1", host: "metrics.acme.dev", persona: "unpinned"),
            SyntheticFlows.object(id: "n1", host: "cdn.acme.dev", persona: "unpinned"),
            SyntheticFlows.object(id: "n2", host: "cdn.acme.dev", persona: "unpinned"),
            SyntheticFlows.object(id: "i1", host: "quiet.acme.dev", persona: "expired", method: nil, error: "client_timeout"),
        ]
    }

    func report(id: String, host: String, flow: String = "x", enforce: Bool? = nil) -> String {
        "{\"id\":\"\(id)\",\"flow_id\":\"\(flow)\",\"received\":\"t\",\"url\":\"u\",\"kind\":\"trustkit\",\"hostname\":\"\(host)\","
            + (enforce.map { "\"enforce-pinning\":\($0)," } ?? "") + "\"signer\":null}"
    }

    @Test func eachVerdictFromItsEvidence() throws {
        let flows = try flows().map { try JSONDecoder().decode(Flow.self, from: JSONSerialization.data(withJSONObject: $0)) }
        let reports = JSONLines.decode(ReportRecord.self, Data(report(id: "rep1", host: "metrics.acme.dev").utf8)).records
        let verdicts = QAVerdict.judge(flows: flows, reports: reports)
        func find(_ host: String, _ persona: String) -> QAVerdict? { verdicts.first { $0.host == host && $0.persona == persona } }
        #expect(find("api.acme.dev", "team")?.verdict == .debuggable)
        #expect(find("api.acme.dev", "unpinned")?.verdict == .enforced)
        #expect(find("api.acme.dev", "unpinned")?.evidence.flows == ["e1"])
        #expect(find("okhttp.acme.dev", "unpinned")?.verdict == .enforced)
        #expect(find("metrics.acme.dev", "unpinned")?.verdict == .reportOnly)
        #expect(find("metrics.acme.dev", "unpinned")?.evidence.reports == ["rep1"])
        #expect(find("cdn.acme.dev", "unpinned")?.verdict == .notPinned)
        #expect(find("cdn.acme.dev", "unpinned")?.evidence.flows == ["n1", "n2"])
        #expect(find("quiet.acme.dev", "expired")?.verdict == .inconclusive)
        let only = QAVerdict.judge(flows: flows, reports: [], hosts: ["cdn.acme.dev", "absent.acme.dev"])
        #expect(only.map(\.host) == ["cdn.acme.dev", "absent.acme.dev"])
        #expect(only.last?.persona == nil && only.last?.verdict == .inconclusive)
    }

    /// Requests sent in clear text are their own `cleartext` group and verdict, never the team
    /// persona's "decrypted": an app that retries over http after its pin check refused the
    /// unpinned chain is not `enforced`.
    @Test func cleartextRequestsAreTheirOwnVerdict() throws {
        let flows = [
            try SyntheticFlows.flow(id: "e1", host: "api.acme.dev", persona: "unpinned", method: nil,
                                    error: "client_rejected_certificate"),
            try SyntheticFlows.flow(id: "c1", host: "api.acme.dev", persona: nil, url: "http://api.acme.dev/x", mode: "http"),
            try SyntheticFlows.flow(id: "w1", host: "ws.acme.dev", persona: nil, url: "http://ws.acme.dev/chat", mode: "websocket"),
            try SyntheticFlows.flow(id: "w2", host: "wss.acme.dev", persona: "unpinned", url: "https://wss.acme.dev/chat",
                                    mode: "websocket"),
        ]
        let verdicts = QAVerdict.judge(flows: flows, reports: [])
        func find(_ host: String, _ persona: String) -> QAVerdict? { verdicts.first { $0.host == host && $0.persona == persona } }
        #expect(find("api.acme.dev", "cleartext")?.verdict == .cleartext)
        #expect(find("api.acme.dev", "cleartext")?.evidence.flows == ["c1"])
        #expect(find("api.acme.dev", "unpinned")?.verdict == .enforced)
        #expect(find("api.acme.dev", "team") == nil, "\(verdicts)")
        #expect(find("ws.acme.dev", "cleartext")?.verdict == .cleartext)
        #expect(find("wss.acme.dev", "unpinned")?.verdict == .notPinned)
        // `--expect HOST=enforced` applies to every non-team group: the clear-text retry fails it.
        let expectation = try JUnitReport.Expectation(parsing: "api.acme.dev=enforced")
        let failing = verdicts.filter { expectation.applies(to: $0) && $0.verdict != expectation.verdict }
        #expect(failing.map(\.persona) == ["cleartext"])
    }

    /// `pin-check`'s own tunnel (its CONNECT's User-Agent) and its synthetic report are not the
    /// app's: a host only pin-check touched stays without a verdict, and a report it posted does
    /// not turn an app that does not pin into `report-only`.
    @Test func pinChecksOwnProbeAndReportAreLeftOut() throws {
        var probe = try SyntheticFlows.flow(id: "p1", host: "a.acme.dev", persona: "unpinned", method: nil,
                                            error: "client_closed_after_handshake")
        probe.probe = "pin-check"
        var posted = SyntheticFlows.object(id: "p2", host: "b.acme.dev", persona: "unpinned", method: "POST")
        var request = posted["request"] as? [String: Any] ?? [:]
        request["headers"] = [["Host", "b.acme.dev"], ["User-Agent", "devproxy-pin-check"]]
        posted["request"] = request
        let flows = [probe, try JSONDecoder().decode(Flow.self, from: JSONSerialization.data(withJSONObject: posted)),
                     try SyntheticFlows.flow(id: "n1", host: "b.acme.dev", persona: "unpinned")]
        var report = try #require(JSONLines.decode(ReportRecord.self, Data(self.report(id: "rep1", host: "b.acme.dev").utf8))
            .records.first)
        report.probe = "pin-check"
        // As `reports.jsonl` keeps it.
        report = try JSONDecoder().decode(ReportRecord.self, from: JSONEncoder().encode(report))
        #expect(report.probe == "pin-check")
        let verdicts = QAVerdict.judge(flows: flows, reports: [report])
        #expect(!verdicts.contains { $0.host == "a.acme.dev" }, "\(verdicts)")
        let b = try #require(verdicts.first { $0.host == "b.acme.dev" })
        #expect(b.verdict == .notPinned && b.evidence.flows == ["n1"] && b.evidence.reports.isEmpty, "\(b)")
    }

    /// A report is the reporter's request, not the app's: TrustKit posting to the app's own API
    /// host while the app's connections were refused is `enforced`, with the report as evidence.
    @Test func aReportPostedToThePinnedHostIsNotTheAppsRequest() throws {
        let flows = [
            try SyntheticFlows.flow(id: "e1", host: "api.acme.dev", persona: "unpinned", method: nil,
                                    error: "client_rejected_certificate"),
            try SyntheticFlows.flow(id: "rp", host: "api.acme.dev", persona: "unpinned", method: "POST"),
        ]
        var report = try #require(JSONLines.decode(ReportRecord.self, Data(self.report(id: "rep1", host: "api.acme.dev").utf8))
            .records.first)
        report.flowID = "rp"
        let verdict = try #require(QAVerdict.judge(flows: flows, reports: [report]).first)
        #expect(verdict.verdict == .enforced && verdict.evidence.flows == ["e1"] && verdict.evidence.reports == ["rep1"],
                "\(verdict)")
    }

    /// Evidence that disagrees is said, not dropped: refusals beside requests that went through
    /// are `mixed` (an OkHttp client with a CertificatePinner refused while the app's other client
    /// got through; a TrustKit report saying the pinner enforced), and the team persona's
    /// `debuggable` names the connections that refused the team chain. Under a persona every
    /// client must reject, a request that went through is `accepts-invalid-certificate` and a
    /// refusal `validates` (it was `not-pinned` and `enforced`, so `--expect HOST=enforced` passed
    /// without pins ever being tested).
    @Test func disagreeingEvidenceAndInvalidCertificatesHaveVerdictsOfTheirOwn() throws {
        let flows = try [
            SyntheticFlows.flow(id: "m1", host: "mixed.acme.dev", persona: "unpinned", method: nil,
                                error: "client_closed_after_handshake"),
            SyntheticFlows.flow(id: "m2", host: "mixed.acme.dev", persona: "unpinned"),
            SyntheticFlows.flow(id: "k1", host: "tk.acme.dev", persona: "unpinned"),
            SyntheticFlows.flow(id: "d1", host: "api.acme.dev", persona: "team"),
            SyntheticFlows.flow(id: "d2", host: "api.acme.dev", persona: "team", method: nil, error: "client_rejected_certificate"),
            SyntheticFlows.flow(id: "s1", host: "lax.acme.dev", persona: "self-signed"),
            SyntheticFlows.flow(id: "x1", host: "strict.acme.dev", persona: "expired", method: nil,
                                error: "client_rejected_certificate"),
        ]
        let reports = JSONLines.decode(ReportRecord.self, Data(report(id: "rep1", host: "tk.acme.dev", flow: "k0",
                                                                      enforce: true).utf8)).records
        let verdicts = QAVerdict.judge(flows: flows, reports: reports)
        func find(_ host: String) -> QAVerdict? { verdicts.first { $0.host == host } }
        #expect(find("mixed.acme.dev")?.verdict.rawValue == "mixed")
        #expect(find("mixed.acme.dev")?.evidence.flows == ["m1", "m2"])
        #expect(find("mixed.acme.dev")?.note.hasPrefix("1 connection(s) refused the unpinned certificate, but 1 request(s) "
                                                       + "went through") == true, "\(String(describing: find("mixed.acme.dev")))")
        #expect(find("tk.acme.dev")?.verdict.rawValue == "mixed" && find("tk.acme.dev")?.evidence.reports == ["rep1"])
        #expect(find("api.acme.dev")?.verdict == .debuggable && find("api.acme.dev")?.evidence.flows == ["d1", "d2"])
        #expect(find("api.acme.dev")?.note.contains("1 connection(s) refused it") == true)
        #expect(find("lax.acme.dev")?.verdict.rawValue == "accepts-invalid-certificate")
        #expect(find("lax.acme.dev")?.verdict.rawValue == "accepts-invalid-certificate")
        #expect(find("strict.acme.dev")?.verdict.rawValue == "validates")
    }

    /// A TrustKit app that refused the unpinned chain and reported `validation-result` 2 did not
    /// trust the chain (the QA alternate root is missing on the device): TrustKit never looked at
    /// a pin, so the refusal is `inconclusive`, not `enforced` as it was. A report of result 1 (no
    /// matching pin), or none (OkHttp, Android), keeps `enforced`.
    @Test(arguments: [
        ("chain not trusted", [2], QAVerdict.Verdict.inconclusive), ("no matching pin", [1], .enforced),
        ("both seen", [2, 1], .enforced), ("no report", [], .enforced),
    ])
    func aRefusalTrustKitReportsAsAnUntrustedChainIsNoPinEvidence(_ label: String, _ results: [Int], _ expected: QAVerdict.Verdict) throws {
        let flows = try [SyntheticFlows.flow(id: "e1", host: "api.acme.dev", persona: "unpinned", method: nil,
                                             error: "client_rejected_certificate")]
        let lines = results.enumerated().map { index, result in
            "{\"id\":\"rep\(index)\",\"flow_id\":\"k\(index)\",\"received\":\"t\",\"url\":\"u\",\"kind\":\"trustkit\","
                + "\"hostname\":\"api.acme.dev\",\"enforce-pinning\":true,\"validation-result\":\(result),\"signer\":null}"
        }
        let reports = JSONLines.decode(ReportRecord.self, Data(lines.joined(separator: "\n").utf8)).records
        #expect(reports.count == results.count)
        let verdict = try #require(QAVerdict.judge(flows: flows, reports: reports).first)
        #expect(verdict.verdict == expected, "\(label): \(verdict.note)")
        #expect(verdict.evidence.flows == ["e1"], "\(label)")
        if expected == .inconclusive {
            #expect(verdict.note.contains("did not trust the chain (validation-result 2)") && verdict.evidence.reports == ["rep0"],
                    "\(label): \(verdict)")
        }
    }

    /// A host whose only flows are reports' own requests (a report posted in clear text to its
    /// collector) gets no verdict row: it read "cleartext inconclusive", noise about the reporter.
    @Test func aCollectorThatOnlyReceivedReportsIsNotJudged() throws {
        let flows = try [
            SyntheticFlows.flow(id: "a1", host: "api.acme.dev", persona: "unpinned"),
            SyntheticFlows.flow(id: "p1", host: "reports.acme.dev", persona: nil, method: "POST",
                                url: "http://reports.acme.dev/log_report", mode: "http"),
        ]
        let reports = JSONLines.decode(ReportRecord.self, Data(report(id: "rep1", host: "api.acme.dev", flow: "p1").utf8)).records
        let verdicts = QAVerdict.judge(flows: flows, reports: reports)
        #expect(verdicts.map(\.host) == ["api.acme.dev"], "\(verdicts)")
        #expect(verdicts.first?.verdict == .reportOnly)
        // Asked about by name, it is still answered.
        #expect(QAVerdict.judge(flows: flows, reports: reports, hosts: ["reports.acme.dev"]).count == 1)
    }

    /// reports.jsonl beside the log gathers every run's reports: one whose flow is not in this
    /// log is another run's and does not count (an earlier build's report made a build with its
    /// pinning removed `report-only`).
    @Test func aReportFromAnotherRunDoesNotCount() throws {
        let log = dir.write("flows.jsonl", try SyntheticFlows.log(flows()))
        dir.write("reports.jsonl", report(id: "old", host: "cdn.acme.dev", flow: "run1-7") + "\n")
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--host", "cdn.acme.dev"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("not-pinned") && !result.stdout.contains("report-only"), "\(result.stdout)")
        #expect(result.stderr.contains("warning: 1 report(s) in \(dir.file("reports.jsonl")) came with flows that are not "
                                       + "in \(log) (another run's): left out"), "\(result.stderr)")
    }

    @Test func commandPrintsJSONAndWellFormedJUnit() throws {
        let log = dir.write("flows.jsonl", try SyntheticFlows.log(flows()) + "{\"id\": \"torn")
        dir.write("reports.jsonl", report(id: "rep1", host: "metrics.acme.dev", flow: "n1") + "\n")
        let junit = dir.file("qa.xml")
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--json", "--junit", junit,
                                                              "--expect", "api.acme.dev=enforced", "--expect", "cdn.acme.dev=enforced"])
        #expect(result.status == 1, "cdn.acme.dev is not-pinned, so its expectation fails: \(result.output)")
        #expect(result.stderr.contains("warning: \(log) line 8: torn record at the end of the file"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Array(object.keys) == ["verdicts"])
        let verdicts = try #require(object["verdicts"] as? [[String: Any]])
        #expect(verdicts.count == 6)
        let metrics = try #require(verdicts.first { $0["host"] as? String == "metrics.acme.dev" })
        #expect(metrics["verdict"] as? String == "report-only")
        #expect((metrics["evidence"] as? [String: Any])?["reports"] as? [String] == ["rep1"])
        let check = """
        import sys, xml.etree.ElementTree as ET
        root = ET.parse(sys.argv[1]).getroot()
        suites = root.findall('testsuite'); cases = root.findall('.//testcase')
        failed = [c.get('classname') for c in cases if c.find('failure') is not None]
        print(len(suites), len(cases), ','.join(failed), root.find('.//testcase[@classname="metrics.acme.dev"]/system-out').text.split(chr(10))[0])
        """
        let parsed = try Subprocess.run("python3", ["-c", check, junit])
        #expect(parsed.status == 0, "\(parsed.output)")
        #expect(parsed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1 6 cdn.acme.dev verdict: report-only")
    }

    /// A failed `--expect` names its host and why: the console said only "1 expectation(s)
    /// failed", and JUnit said "no flow for this host" of a host whose only flows were the team's.
    @Test func failedExpectationsNameTheirHostAndWhy() throws {
        let log = dir.write("flows.jsonl", try SyntheticFlows.log(flows()))
        let junit = dir.file("qa.xml")
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--junit", junit, "--reports",
                                                              dir.write("none.jsonl", ""),
                                                              "--expect", "cdn.acme.dev=enforced", "--expect", "team.acme.dev=enforced",
                                                              "--expect", "quiet.acme.dev/team=debuggable"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAILED cdn.acme.dev (unpinned): expected enforced, got not-pinned"), "\(result.stdout)")
        #expect(result.stdout.contains("FAILED team.acme.dev: expected enforced under a non-team persona, but no flow for this host"),
                "\(result.stdout)")
        #expect(result.stdout.contains("FAILED quiet.acme.dev: expected debuggable under team, but the log has this host only as "
                                       + "expired: inconclusive"), "\(result.stdout)")
        #expect(dir.read("qa.xml").contains("but the log has this host only as expired: inconclusive"))
    }

    @Test func humanOutputAndMissingLog() throws {
        let log = dir.write("flows.jsonl", try SyntheticFlows.log(flows()))
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--host", "api.acme.dev"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("api.acme.dev  team          debuggable"))
        #expect(result.stdout.contains("api.acme.dev  unpinned      enforced"))
        let missing = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", dir.file("nope.jsonl")])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("error: cannot read"))
        let usage = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict"])
        #expect(usage.status == 2)
    }

    /// The wrong file given as --log (no line of it a flow) passed a QA run: "No flows", exit 0,
    /// after a warning for every line. Now at most ten warnings and one error, exit 1.
    @Test func aLogWithNoFlowFailsTheVerdict() throws {
        let path = dir.write("notes.txt", (1...30).map { "not a flow \($0)" }.joined(separator: "\n") + "\n")
        try expectRefusedAfterTenWarnings(["qa", "verdict", "--log", path],
                                          more: "warning: 20 more unreadable line(s) in \(path)",
                                          error: "error: \(path) holds no flow: none of its lines is a flow record; give the "
                                              + "flow log devproxy wrote with --log")
        let empty = dir.write("empty.jsonl", "")
        let none = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", empty])
        #expect(none.status == 0 && none.stdout.hasPrefix("No flows in \(empty)."), "an empty log is not the wrong file")
    }

    /// `devproxy reports` on a file none of whose lines is a report said "No pin-failure reports",
    /// exit 0 (and --json an empty list), after a warning for every line.
    @Test func reportsOfAFileWithNoReportIsAnError() throws {
        let path = dir.write("flows.jsonl", (1...15).map { "{\"line\": \($0)}" }.joined(separator: "\n") + "\n")
        try expectRefusedAfterTenWarnings(["reports", path], more: "warning: 5 more unreadable line(s)",
                                          error: "error: \(path) holds no pin-failure report: none of its lines is one; "
                                              + "give the reports.jsonl the proxy writes beside its flow log")
    }

    /// `arguments`, and with `--json`, exit 1 with nothing on stdout and on stderr ten warnings,
    /// `more` (how many were left out), then `error`.
    func expectRefusedAfterTenWarnings(_ arguments: [String], more: String, error: String) throws {
        for extra in [[], ["--json"]] {
            let result = try Subprocess.run(Subprocess.devproxy, arguments + extra)
            #expect(result.status == 1, "\(result.output)")
            #expect(result.stdout.isEmpty)
            let lines = result.stderr.split(separator: "\n").map(String.init)
            try #require(lines.count == 12, "\(result.stderr)")
            #expect(lines[10] == more)
            #expect(lines.last == error)
        }
    }

    @Test func reportsCommandListsHostResultAndSigner() throws {
        let line = "{\"id\":\"rpt-1\",\"flow_id\":\"f\",\"received\":\"2026-05-01T10:00:00.100Z\",\"url\":\"https://r/p\","
            + "\"kind\":\"trustkit\",\"hostname\":\"api.acme.dev\",\"validation-result\":1,\"enforce-pinning\":false,"
            + "\"signer\":{\"serial\":\"ab\",\"email\":\"ana@acme.dev\"}}"
        let file = dir.write("reports.jsonl", line + "\n")
        let result = try Subprocess.run(Subprocess.devproxy, ["reports", file])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("api.acme.dev") && result.stdout.contains("1 no matching pin"))
        #expect(result.stdout.contains("no (report-only)") && result.stdout.contains("ana@acme.dev"))
        // What came from the network is printed, never acted on by the terminal.
        let hostile = line.replacingOccurrences(of: "\"api.acme.dev\"", with: "\"api.acme.dev\\u001b]0;PWNED\\u0007\\u001b[2J\"")
        let escaped = try Subprocess.run(Subprocess.devproxy, ["reports", dir.write("hostile.jsonl", hostile + "\n")])
        #expect(escaped.status == 0 && !escaped.stdout.contains("\u{1B}") && !escaped.stdout.contains("\u{07}"),
                "\(escaped.stdout.debugDescription)")
        #expect(escaped.stdout.contains("api.acme.dev\\x1B]0;PWNED\\x07\\x1B[2J"), "\(escaped.stdout)")
        let json = try Subprocess.run(Subprocess.devproxy, ["reports", file, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["reports"] as? [Any])?.count == 1)
    }
}
