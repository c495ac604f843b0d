/// QA verdicts as JUnit XML, for CI dashboards.
///
/// One `<testsuite name="devproxy qa verdict">`; one `<testcase>` per host and persona
/// (`classname` = host, `name` = persona). A verdict is an observation, not a failure, so a
/// testcase passes and carries its verdict and evidence in `<system-out>` — unless an
/// expectation (`--expect HOST=VERDICT` or `HOST/PERSONA=VERDICT`) names that host and the
/// verdict differs: then it gets a `<failure>`. An expected host with no flow at all fails too.
public enum JUnitReport {
    /// One `--expect` entry.
    public struct Expectation: Sendable, Equatable {
        public let host: String
        /// nil: every persona of the host (other than `team`, unless the verdict is `debuggable`).
        public let persona: String?
        public let verdict: QAVerdict.Verdict

        /// Parses `HOST=VERDICT` or `HOST/PERSONA=VERDICT`.
        ///
        /// - Throws: `QAError(.invalidInput)` naming the valid verdicts.
        public init(parsing text: String) throws {
            guard let equals = text.lastIndex(of: "="),
                  let verdict = QAVerdict.Verdict(rawValue: String(text[text.index(after: equals)...])) else {
                let names = QAVerdict.Verdict.allCases.map(\.rawValue).joined(separator: ", ")
                throw QAError(.invalidInput, "--expect \(text) is not HOST=VERDICT with VERDICT one of \(names)")
            }
            let target = text[..<equals]
            if let slash = target.firstIndex(of: "/") {
                (host, persona) = (target[..<slash].lowercased(), String(target[target.index(after: slash)...]))
            } else {
                (host, persona) = (target.lowercased(), nil)
            }
            self.verdict = verdict
        }

        /// Whether this expectation applies to `verdict`'s host and persona.
        public func applies(to verdict: QAVerdict) -> Bool {
            guard verdict.host == host else { return false }
            if let persona { return verdict.persona == persona }
            // A bare host expects its non-team personas; `debuggable` and `pinset_injectable` are about team.
            let aboutTeam = self.verdict == .debuggable || self.verdict == .pinsetInjectable
            return aboutTeam ? verdict.persona == "team" : verdict.persona != "team"
        }
    }

    /// The failures expectations produce, one line each (empty when all hold).
    public static func mismatches(_ verdicts: [QAVerdict], _ expectations: [Expectation]) -> [String: String] {
        var failures: [String: String] = [:]
        for (index, verdict) in verdicts.enumerated() {
            for expectation in expectations where expectation.applies(to: verdict) && expectation.verdict != verdict.verdict {
                failures["\(index)"] = "expected \(expectation.verdict.rawValue), got \(verdict.verdict.rawValue): \(verdict.note)"
            }
        }
        return failures
    }

    /// Why `expectation` matched no verdict: the host has no flow at all, or none under the
    /// persona it is about (a bare `HOST=VERDICT` is about the non-team personas).
    static func missingMessage(_ expectation: Expectation, _ verdicts: [QAVerdict]) -> String {
        let personas = verdicts.filter { $0.host == expectation.host.lowercased() }
            .map { "\($0.persona ?? "none"): \($0.verdict.rawValue)" }
        let wanted = expectation.persona.map { "under \($0)" } ?? "under a non-team persona"
        guard !personas.isEmpty else { return "expected \(expectation.verdict.rawValue) \(wanted), but no flow for this host" }
        return "expected \(expectation.verdict.rawValue) \(wanted), but the log has this host only as "
            + personas.joined(separator: ", ")
    }

    /// Every failed expectation as one line naming its host, for the console.
    public static func failureLines(_ verdicts: [QAVerdict], _ expectations: [Expectation]) -> [String] {
        let failures = mismatches(verdicts, expectations)
        var lines = verdicts.indices.compactMap { index in
            failures["\(index)"].map { "\(verdicts[index].host) (\(verdicts[index].persona ?? "none")): \($0)" }
        }
        lines += unmatched(verdicts, expectations).map { "\($0.host): \(missingMessage($0, verdicts))" }
        return lines
    }

    /// Expectations whose host no verdict mentions.
    public static func unmatched(_ verdicts: [QAVerdict], _ expectations: [Expectation]) -> [Expectation] {
        expectations.filter { expectation in !verdicts.contains { expectation.applies(to: $0) } }
    }

    /// The XML document.
    public static func xml(_ verdicts: [QAVerdict], expectations: [Expectation] = []) -> String {
        let failures = mismatches(verdicts, expectations)
        let missing = unmatched(verdicts, expectations)
        var cases: [String] = []
        for (index, verdict) in verdicts.enumerated() {
            let name = verdict.persona ?? "none"
            var body = "    <testcase classname=\"\(escape(verdict.host))\" name=\"\(escape(name))\" time=\"0\">\n"
            if let failure = failures["\(index)"] {
                body += "      <failure message=\"\(escape(failure))\" type=\"verdict\"/>\n"
            }
            let evidence = "flows: \(verdict.evidence.flows.joined(separator: ", "))\nreports: "
                + verdict.evidence.reports.joined(separator: ", ")
            body += "      <system-out>\(escape("verdict: \(verdict.verdict.rawValue)\n\(verdict.note)\n\(evidence)"))</system-out>\n"
            body += "    </testcase>\n"
            cases.append(body)
        }
        for expectation in missing {
            let message = missingMessage(expectation, verdicts)
            cases.append("    <testcase classname=\"\(escape(expectation.host))\" name=\"\(escape(expectation.persona ?? "any"))\" time=\"0\">\n"
                         + "      <failure message=\"\(escape(message))\" type=\"verdict\"/>\n    </testcase>\n")
        }
        let failed = failures.count + missing.count
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<testsuites tests=\"\(cases.count)\" failures=\"\(failed)\">\n"
            + "  <testsuite name=\"devproxy qa verdict\" tests=\"\(cases.count)\" failures=\"\(failed)\" errors=\"0\">\n"
            + cases.joined() + "  </testsuite>\n</testsuites>\n"
    }

    /// XML text/attribute escaping (`MarkupText`).
    static func escape(_ text: String) -> String { MarkupText.escape(text) }
}
