import CertAuthority
import DevProxy
import Foundation

/// `devproxy qa …`: the QA alternate root, and verdicts from flow logs.
enum QACommand {
    static let usage = """
    QA for pinned apps: does the app enforce its pins, only report, or not pin at all?

      devproxy qa init                                  create the QA alternate root (for the unpinned persona)
      devproxy qa verdict --log flows.jsonl             one verdict per host and persona
      devproxy qa verdict --log flows.jsonl --host api.acme.dev --json
      devproxy qa verdict --log flows.jsonl --junit qa.xml --expect api.acme.dev=enforced

    Verdicts: enforced, report-only, not-pinned, debuggable (team persona decrypted), inconclusive;
    under the tls12 and no-forward-secrecy personas: refused (the app refused that TLS) or accepted;
    pinset_injectable (team: the app took a pin set `run --pinset-rewrite` rewrote, then the team chain);
    cleartext (requests sent in plain http: their own group, no persona applies). pin-check's own
    connections and reports (User-Agent devproxy-pin-check) are left out.
    Reports are read from reports.jsonl beside the log unless --reports FILE is given.
    JUnit: a testcase per host/persona, passing with the verdict in system-out; --expect HOST=VERDICT
    (or HOST/PERSONA=VERDICT) turns a different verdict into a failure.
    Exit codes: 0 done (and every --expect held), 1 an --expect failed or an error, 2 usage.
    """

    static let initUsage = """
    devproxy qa init: create the QA alternate root, which signs the `unpinned` persona's leaves.

      devproxy qa init                                  in the CA directory, beside the team root
      devproxy qa init --ca-dir /secure/acme-ca

    Options: --ca-dir DIR (default: $DEVPROXY_HOME, else ./ca if present, else $XDG_DATA_HOME/devproxy).
    Install its certificate on test devices beside the team root; apps must NOT pin it.
    Then: devproxy run --persona 'api.acme.dev=unpinned' --log flows.jsonl, and devproxy qa verdict --log flows.jsonl
    """

    static let verdictUsage = """
    devproxy qa verdict: one verdict per host and persona, from a flow log and its pin-failure reports.

      devproxy qa verdict --log flows.jsonl                              a table: host, persona, verdict, note
      devproxy qa verdict --log flows.jsonl --host api.acme.dev --json
      devproxy qa verdict --log flows.jsonl --junit qa.xml --expect api.acme.dev=enforced
      devproxy qa verdict --log flows.jsonl --expect api.acme.dev/unpinned=enforced --reports reports.jsonl

    Options: --log FILE (required)  --reports FILE (default: reports.jsonl beside the log)  --host HOST
             (repeatable)  --junit FILE  --expect HOST[/PERSONA]=VERDICT (repeatable)  --json
    Verdicts (devproxy qa --help says what each means):
      \(QAVerdict.Verdict.allCases.map(\.rawValue).joined(separator: ", "))
    Exit codes: 0 done (and every --expect held), 1 an --expect failed or an error, 2 usage.
    """

    /// Each subcommand's own page (`devproxy qa verdict --help`).
    static let subcommandUsage: [String: String] = ["init": initUsage, "verdict": verdictUsage]

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        guard let sub = raw.first, sub != "--help", sub != "-h" else {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        if let page = subcommandUsage[sub], raw.dropFirst().first == "--help" || raw.dropFirst().first == "-h" {
            Output.line(page)
            return 0
        }
        switch sub {
        case "init": return try initialize(raw.dropFirst())
        case "verdict": return try verdict(raw.dropFirst())
        default: throw UsageError("unknown command `qa \(sub)`; see `devproxy qa --help`")
        }
    }

    private static func initialize(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir"], booleans: [])
        let store = CACommand.store(arguments)
        let alternate = QAAlternateRoot(store: store)
        let root = try alternate.create()
        Output.line("Created the QA alternate root in \(store.directory), valid until \(Output.date(root.notAfter)).")
        Output.line()
        Output.line("  certificate  \(alternate.certificatePath)")
        Output.line("  key          \(alternate.keyPath) (0600)")
        Output.line("  SPKI pin     \(root.pin)   (apps must NOT pin this)")
        Output.line()
        Output.line("Install it on test devices beside the team root, so the unpinned persona is trusted but unpinned:")
        Output.line("  openssl x509 -in \(alternate.certificatePath) -outform DER -out qa-alternate-root.crt")
        Output.line("  Android: Settings > Security > Encryption & credentials > Install a certificate > CA certificate")
        Output.line("  iOS: AirDrop or mail the .crt, install the profile, then enable full trust in")
        Output.line("       Settings > General > About > Certificate Trust Settings")
        Output.line()
        Output.line("Next: run the proxy with personas, e.g. --persona 'api.acme.dev=unpinned', then")
        Output.line("  devproxy qa verdict --log flows.jsonl")
        return 0
    }

    struct JSONReport: Encodable {
        let verdicts: [QAVerdict]
    }

    private static func verdict(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["log", "reports", "host", "junit", "expect"], booleans: ["json"])
        guard let log = arguments.value("log") else { throw UsageError("--log FLOWS.jsonl is required") }
        let expectations = try arguments.values("expect").map { text in
            do { return try JUnitReport.Expectation(parsing: text) } catch let error as QAError { throw UsageError(error.reason) }
        }
        // The flow log has one reader (the one `devproxy har` uses), so both commands read the
        // same records and report the same bad lines.
        let flows: (flows: [Flow], problems: [(line: Int, reason: String)])
        do {
            flows = try FlowLogReader.read(path: log)
        } catch let error as FlowLogError {
            throw CommandFailure(error.code == .notFound ? "cannot read \(log): no such file" : error.reason)
        }
        // The wrong file must not pass a QA run as "no flows".
        try HARCommand.checkFlowLog(flows, path: log, rest: "unreadable line(s) in \(log)")
        let explicitReports = arguments.value("reports")
        let reportsPath = explicitReports ?? PathName.join(PathName.directory(of: log), "reports.jsonl")
        var reports: [ReportRecord] = []
        if explicitReports != nil || FileManager.default.fileExists(atPath: reportsPath) {
            do {
                let contents = try JSONLines.read(ReportRecord.self, from: reportsPath)
                reports = contents.records
                Output.warnings(contents.problems.map { "\(reportsPath) \($0)" }, rest: "unreadable line(s) in \(reportsPath)")
            } catch let error as QAError {
                throw CommandFailure(error.reason)
            }
        }
        // A report counts only beside the flow that carried it: reports.jsonl gathers every run's
        // that logged in this directory, and a report from an earlier build made a build with its
        // pinning removed "report-only".
        let logged = Set(flows.flows.map(\.id))
        let otherRuns = reports.count
        reports = reports.filter { logged.contains($0.flowID) }
        if reports.count < otherRuns {
            Output.warning("\(otherRuns - reports.count) report(s) in \(reportsPath) came with flows that are not in \(log) "
                           + "(another run's): left out")
        }
        let verdicts = QAVerdict.judge(flows: flows.flows, reports: reports, hosts: arguments.values("host"))
        if let junit = arguments.value("junit") {
            do {
                try SecureFile.write(Array(JUnitReport.xml(verdicts, expectations: expectations).utf8), to: junit, mode: SecureFile.publicMode)
            } catch let error as CAError {
                throw CommandFailure(error.reason)
            }
        }
        let failures = JUnitReport.mismatches(verdicts, expectations).count + JUnitReport.unmatched(verdicts, expectations).count
        if arguments.flag("json") {
            Output.json(JSONReport(verdicts: verdicts))
            return failures == 0 ? 0 : 1
        }
        if verdicts.isEmpty {
            Output.line("No flows in \(log).")
        }
        let width = max(12, verdicts.map { $0.host.count }.max() ?? 0)
        // `no-forward-secrecy` read `no-forward-s` in a 12-column persona field.
        let personaWidth = max(12, verdicts.map { ($0.persona ?? "-").count }.max() ?? 0)
        let verdictWidth = max(12, verdicts.map { $0.verdict.rawValue.count }.max() ?? 0)
        for verdict in verdicts {
            Output.line("\(verdict.host.padding(toLength: width, withPad: " ", startingAt: 0))  "
                        + "\((verdict.persona ?? "-").padding(toLength: personaWidth, withPad: " ", startingAt: 0))  "
                        + "\(verdict.verdict.rawValue.padding(toLength: verdictWidth, withPad: " ", startingAt: 0))  \(verdict.note)")
            let evidence = verdict.evidence.flows.prefix(5).joined(separator: ", ")
                + (verdict.evidence.flows.count > 5 ? ", … (\(verdict.evidence.flows.count))" : "")
            if !evidence.isEmpty || !verdict.evidence.reports.isEmpty {
                Output.line(String(repeating: " ", count: width + 2) + "flows: \(evidence.isEmpty ? "-" : evidence)"
                            + (verdict.evidence.reports.isEmpty ? "" : "; reports: \(verdict.evidence.reports.joined(separator: ", "))"))
            }
        }
        if failures > 0 {
            Output.line()
            for line in JUnitReport.failureLines(verdicts, expectations) { Output.line("FAILED \(line)") }
        }
        if let junit = arguments.value("junit") {
            Output.line()
            Output.line("Wrote JUnit XML to \(junit)\(failures > 0 ? " (\(failures) expectation(s) failed)" : "").")
        } else if failures > 0 {
            Output.line()
            Output.line("\(failures) expectation(s) failed.")
        }
        return failures == 0 ? 0 : 1
    }
}
