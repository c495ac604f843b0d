import Foundation

/// What QA concludes about one host under one persona, with the flows and reports behind it.
public struct QAVerdict: Codable, Sendable, Equatable {
    public enum Verdict: String, Codable, Sendable, CaseIterable {
        /// Under a non-team persona the client rejected the certificate (or closed right after
        /// the handshake, as OkHttp does) and no request was decrypted.
        case enforced
        /// Requests went through under a non-team persona, and a pin-failure report arrived.
        case reportOnly = "report-only"
        /// Requests went through under a non-team persona, and no report arrived.
        case notPinned = "not-pinned"
        /// Under `team`, requests went through: DevProxy can decrypt this host.
        case debuggable
        /// Under `tls12` / `no-forward-secrecy`, the client refused the handshake DevProxy offered
        /// (the app's ATS settings, or its own TLS floor, enforce it).
        case refused
        /// Under `tls12` / `no-forward-secrecy`, requests went through: the app accepts that TLS.
        case accepted
        /// Under `team`, the app fetched its remote pin set through DevProxy, got the set
        /// `--pinset-rewrite` added the team root to, and then accepted the team chain on a host
        /// those pins cover: whoever intercepts the pin-set fetch can replace the app's pins.
        case pinsetInjectable = "pinset_injectable"
        /// Nothing decisive was seen.
        case inconclusive
    }

    public struct Evidence: Codable, Sendable, Equatable {
        public var flows: [String]
        public var reports: [String]
    }

    public var host: String
    /// nil for a `--host` that no flow mentions.
    public var persona: String?
    public var verdict: Verdict
    public var evidence: Evidence
    /// One line for humans: why this verdict.
    public var note: String

    /// Judges every (host, persona) seen in `flows`, or only `hosts` when given (a host with no
    /// flows gets one `inconclusive` verdict with a nil persona). Sorted by host, then persona.
    ///
    /// - Parameters:
    ///   - flows: the flow log's records; a flow's persona is `team` when unset.
    ///   - reports: captured pin-failure reports; matched to hosts by their `hostname`.
    public static func judge(flows: [Flow], reports: [ReportRecord], hosts: [String] = []) -> [QAVerdict] {
        var groups: [String: [String: [Flow]]] = [:]
        for flow in flows {
            let host = (flow.tls?.client?.sni ?? flow.server.host).lowercased()
            groups[host, default: [:]][flow.persona ?? "team", default: []].append(flow)
        }
        let wanted = hosts.isEmpty ? groups.keys.sorted() : hosts.map { $0.lowercased() }
        var verdicts: [QAVerdict] = []
        for host in wanted {
            guard let personas = groups[host] else {
                verdicts.append(QAVerdict(host: host, persona: nil, verdict: .inconclusive,
                                          evidence: Evidence(flows: [], reports: []), note: "no flow for this host in the log"))
                continue
            }
            let hostReports = reports.filter { $0.hostname?.lowercased() == host }
            for persona in personas.keys.sorted() {
                let verdict = judge(host: host, persona: persona, flows: personas[persona] ?? [], reports: hostReports)
                let group = personas[persona] ?? []
                verdicts.append(injectedPinSet(host: host, verdict: verdict, flows: group, all: flows) ?? verdict)
            }
        }
        return verdicts
    }

    /// Personas that change what TLS is offered, and what they offer (for notes).
    static let tlsPersonas = ["tls12": "at most TLS 1.2", "no-forward-secrecy": "TLS 1.2 with RSA key exchange only"]

    /// The verdict for one host under one persona.
    static func judge(host: String, persona: String, flows: [Flow], reports: [ReportRecord]) -> QAVerdict {
        let rejectionKinds: Set<String> = [FlowErrorKind.clientRejectedCertificate.rawValue,
                                           FlowErrorKind.clientClosedAfterHandshake.rawValue]
        let decrypted = flows.filter { $0.request != nil && $0.mode != .tunnel }
        let rejected = flows.filter { rejectionKinds.contains($0.error?.kind ?? "") }
        func verdict(_ verdict: Verdict, _ evidence: [Flow], _ note: String, reports: [ReportRecord] = []) -> QAVerdict {
            QAVerdict(host: host, persona: persona, verdict: verdict,
                      evidence: Evidence(flows: evidence.map(\.id), reports: reports.map(\.id)), note: note)
        }
        if persona == "team" {
            if !decrypted.isEmpty {
                return verdict(.debuggable, decrypted, "\(decrypted.count) request(s) decrypted with the team certificate")
            }
            if !rejected.isEmpty {
                return verdict(.inconclusive, rejected, "the client rejected even the team certificate: is the team root "
                               + "installed on the device and among the app's pins?")
            }
            if let tunnel = flows.first(where: { $0.mode == .tunnel }), flows.allSatisfy({ $0.mode == .tunnel }) {
                return verdict(.inconclusive, flows, "not decrypted: DevProxy passed it through ("
                               + "\(tunnel.tunnel?.reason ?? "a passthrough rule")), so it did not test it")
            }
            return verdict(.inconclusive, flows, "no request decrypted under the team persona")
        }
        if persona == "passthrough" {
            return verdict(.inconclusive, flows, "passed through undecrypted, as --persona …=passthrough asks: nothing to judge")
        }
        if let offer = tlsPersonas[persona] {
            let refusedTLS = flows.filter { $0.error?.kind == FlowErrorKind.clientHandshakeFailed.rawValue }
            if !decrypted.isEmpty {
                return verdict(.accepted, decrypted, "\(decrypted.count) request(s) went through while DevProxy offered \(offer): "
                               + "the app does not enforce it (check NSExceptionMinimumTLSVersion / NSExceptionRequiresForwardSecrecy)")
            }
            if !refusedTLS.isEmpty {
                return verdict(.refused, refusedTLS, "the client refused the handshake when DevProxy offered \(offer)")
            }
            return verdict(.inconclusive, flows, "no request and no refused handshake seen under \(persona)")
        }
        if !decrypted.isEmpty {
            if !reports.isEmpty {
                return verdict(.reportOnly, decrypted, "requests went through under \(persona) and the app "
                               + "sent \(reports.count) pin-failure report(s)", reports: reports)
            }
            return verdict(.notPinned, decrypted, "requests went through under \(persona) and no pin-failure report arrived")
        }
        if !rejected.isEmpty {
            return verdict(.enforced, rejected, "the client refused the \(persona) certificate and sent no request",
                           reports: reports)
        }
        return verdict(.inconclusive, flows, "no request and no rejection seen under \(persona)")
    }
}
