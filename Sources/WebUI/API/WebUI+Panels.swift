import CertAuthority
import DevProxy
import Foundation
import SessionStore

/// `GET /api/ca` and `GET /api/pinning`: the two panels no other proxy UI has.
extension WebUI {
    /// How many recent flows the pinning panel judges.
    static let pinningWindow = 5_000

    func certificateAuthority() -> WebResponse {
        var object: [String: Any] = ["signer": NSNull(), "root": NSNull(), "renew": NSNull()]
        if let signer = authority?.signer {
            object["signer"] = [
                "kind": signer.isSelfSigned ? "root" : "intermediate",
                "email": signer.email ?? NSNull(),
                "serial": signer.serialHex,
                "subject": signer.subject,
                "not_after": ISO8601.string(signer.notAfter),
                "expires_in_seconds": Int(signer.notAfter.timeIntervalSinceNow),
            ] as [String: Any]
        }
        if let root = authority?.root {
            object["root"] = ["subject": root.subject, "sha256": root.sha256Fingerprint, "pin": root.pin,
                              "not_after": ISO8601.string(root.notAfter)]
        }
        if let renew = authority?.renewCommand { object["renew"] = renew }
        return .json(object: object)
    }

    /// The flows the pinning verdicts are judged over (the latest `pinningWindow`, oldest first)
    /// and the reports that came with them.
    private func pinningInputs() throws -> (flows: [Flow], reports: [ReportRecord]) {
        let ids = try store.flows(limit: Self.pinningWindow).flows.map(\.id)
        let lines = try ids.reversed().compactMap { try store.flowJSON(id: $0) }.joined(separator: "\n")
        let flows = FlowLogReader.parse(Array(lines.utf8)).flows
        var reports: [ReportRecord] = []
        if let path = proxy?.reportsPath, FileManager.default.fileExists(atPath: path) {
            let known = Set(ids)
            let all = (try? JSONLines.read(ReportRecord.self, from: path))?.records ?? []
            reports = all.filter { known.contains($0.flowID) }
        }
        return (flows, reports)
    }

    /// `filter` with its `~verdict NAME` terms resolved to the flows of the host × persona groups
    /// judged NAME, as the pinning panel judges them: the term read a `verdict` column no flow
    /// ever had, and matched nothing.
    func resolvingVerdicts(_ filter: FilterExpression?) throws -> FilterExpression? {
        guard let filter, filter.namesVerdict else { return filter }
        let (flows, reports) = try pinningInputs()
        let verdicts = QAVerdict.judge(flows: flows, reports: reports)
        var judged: [String: String] = [:]
        for verdict in verdicts { judged[verdict.host + "\u{0}" + (verdict.persona ?? "")] = verdict.verdict.rawValue }
        var members: [String: [String]] = [:]
        for flow in flows {
            guard let (host, persona) = QAVerdict.group(of: flow), let name = judged[host + "\u{0}" + persona] else { continue }
            members[name, default: []].append(flow.id)
        }
        return filter.resolvingVerdicts { members[$0.lowercased()] ?? [] }
    }

    func pinning() throws -> WebResponse {
        let (flows, reports) = try pinningInputs()
        let verdicts = QAVerdict.judge(flows: flows, reports: reports)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let verdictObjects = verdicts.map { verdict -> [String: Any] in
            ["host": verdict.host, "persona": verdict.persona ?? NSNull(), "verdict": verdict.verdict.rawValue,
             "note": verdict.note, "flows": verdict.evidence.flows, "reports": verdict.evidence.reports]
        }
        let reportObjects = try reports.map { report -> Any in
            try JSONSerialization.jsonObject(with: encoder.encode(report))
        }
        return .json(object: ["verdicts": verdictObjects, "reports": reportObjects])
    }
}
