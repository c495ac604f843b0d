import DevProxy
import Foundation

/// `devproxy reports [FILE]`: the pin-failure reports DevProxy captured.
enum ReportsCommand {
    static let usage = """
    Pin-failure reports captured by the proxy (reports.jsonl beside the flow log).

      devproxy reports                       ./reports.jsonl
      devproxy reports logs/reports.jsonl --json
    """

    struct JSONReport: Encodable {
        let reports: [ReportRecord]
        let warnings: [String]
    }

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(raw, valued: [], booleans: ["json"])
        guard arguments.positionals.count <= 1 else { throw UsageError("give at most one FILE") }
        let path = arguments.positionals.first ?? "reports.jsonl"
        let contents: JSONLines.Contents<ReportRecord>
        do {
            contents = try JSONLines.read(ReportRecord.self, from: path)
        } catch let error as QAError {
            throw CommandFailure("\(error.reason); run the proxy with reports captured, or give the FILE")
        }
        let warnings = contents.problems.map { "\(path) \($0)" }
        if contents.records.isEmpty, !contents.problems.isEmpty {
            // Not one line a report: the wrong file (a flow log, anything else), not a torn one.
            Output.warnings(warnings, rest: "unreadable line(s)")
            throw CommandFailure("\(path) holds no pin-failure report: none of its lines is one; give the reports.jsonl "
                                 + "the proxy writes beside its flow log")
        }
        if arguments.flag("json") {
            Output.json(JSONReport(reports: contents.records, warnings: warnings))
            return 0
        }
        Output.warnings(warnings, rest: "unreadable line(s)")
        guard !contents.records.isEmpty else {
            Output.line("No pin-failure reports in \(path).")
            return 0
        }
        let header = ["RECEIVED", "HOST", "POLICY", "RESULT", "ENFORCE", "KIND", "SIGNER", "ID"]
        var rows: [[String]] = []
        for record in contents.records {
            rows.append([record.received, record.hostname ?? "?", record.notedHostname ?? "-",
                         record.validationResult.map { "\($0) \(resultName($0))" } ?? "-",
                         record.enforcePinning.map { $0 ? "yes" : "no (report-only)" } ?? "-",
                         record.kind.rawValue + (record.probe.map { " (\($0))" } ?? ""),
                         record.signer.map { $0.qaAlternateRoot == true ? "QA alternate root" : $0.email ?? "root \($0.serial)" }
                            ?? "not this CA", record.id])
        }
        Table.print(header: header, rows: rows)
        Output.line()
        Output.line("\(contents.records.count) report(s). Trace a chain to its engineer: devproxy ca trace REPORT.json")
        return 0
    }

    static func resultName(_ value: Int) -> String {
        switch value {
        case 0: return "success"
        case 1: return "no matching pin"
        case 2: return "invalid chain"
        case 3: return "invalid parameters"
        case 4: return "user-defined anchor"
        case 5: return "cannot hash key"
        default: return "unknown"
        }
    }
}
