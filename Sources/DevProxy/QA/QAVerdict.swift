import Foundation
import PinningPolicy

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
        /// The app sent requests to the host in clear text (`http://`, a plain `ws://`): no TLS,
        /// so no persona and no pin applied to them, and anyone on the network reads and changes
        /// them (the flows are grouped under the persona name `cleartext`). An app that retries
        /// over http after a pin failure shows here.
        case cleartext
        /// Nothing decisive was seen.
        case inconclusive
        /// Under a non-team persona some connections refused the certificate (or a report said the
        /// app's pinner enforced) while other requests to the host went through: part of the app
        /// pins the host and part does not (an SDK with its own HTTP client, a WebView).
        case mixed
        /// Under `untrusted`, `expired`, `wrong-host` or `self-signed`, requests went through: the
        /// app accepts a certificate every client must reject, so it validates nothing, pinned or not.
        case acceptsInvalidCertificate = "accepts-invalid-certificate"
        /// Under `untrusted`, `expired`, `wrong-host` or `self-signed`, the client refused the
        /// certificate: ordinary certificate validation, which says nothing of pinning.
        case validates
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
    ///   - flows: the flow log's records; a flow's persona is `team` when unset, `cleartext` for
    ///     one sent without TLS. `pin-check`'s own connections and reports (`isProbe`) are not the
    ///     app's and are left out.
    ///   - reports: captured pin-failure reports; matched to hosts by their `hostname`.
    public static func judge(flows: [Flow], reports: [ReportRecord], hosts: [String] = []) -> [QAVerdict] {
        let reports = reports.filter { $0.probe == nil }
        let reportFlows = Set(reports.map(\.flowID))
        var groups: [String: [String: [Flow]]] = [:]
        for flow in flows {
            guard let (host, persona) = group(of: flow) else { continue }
            groups[host, default: [:]][persona, default: []].append(flow)
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
                // A group of nothing but reports' own requests (a report posted to a collector)
                // is the reporter's, not the app's: it made an "inconclusive" row of noise.
                if hosts.isEmpty, personas[persona]?.allSatisfy({ reportFlows.contains($0.id) }) == true { continue }
                let verdict = judge(host: host, persona: persona, flows: personas[persona] ?? [], reports: hostReports,
                                    reportFlows: reportFlows)
                let group = personas[persona] ?? []
                verdicts.append(injectedPinSet(host: host, verdict: verdict, flows: group, all: flows) ?? verdict)
            }
        }
        return verdicts
    }

    /// The host and persona a flow is judged under (the persona `team` when unset, `cleartext`
    /// for one sent without TLS); nil for `pin-check`'s own probes, which are not judged.
    public static func group(of flow: Flow) -> (host: String, persona: String)? {
        guard !isProbe(flow) else { return nil }
        return ((flow.tls?.client?.sni ?? flow.server.host).lowercased(),
                isCleartext(flow) ? cleartextGroup : flow.persona ?? "team")
    }

    /// The group name of flows sent in clear text (no persona applies to them).
    public static let cleartextGroup = "cleartext"

    /// The `User-Agent` of `devproxy pin-check`'s own connections through the proxy: its CONNECT
    /// for the chain probe and its report POSTs (`ProxyTunnel`, `ReportPoster`).
    public static let probeUserAgent = "devproxy-pin-check"

    /// Whether `flow` is DevProxy's own probe, not the app's: a tunnel `pin-check` opened
    /// (`probe`), or a request with its `User-Agent`.
    static func isProbe(_ flow: Flow) -> Bool {
        flow.probe != nil || flow.request?.headers.first { $0.first?.lowercased() == "user-agent" }?.last == probeUserAgent
    }

    /// Whether `flow` went without TLS between the app and DevProxy: plain `http://` proxying (or a
    /// plain listener), and a WebSocket upgraded from such a request.
    static func isCleartext(_ flow: Flow) -> Bool {
        switch flow.mode {
        case .http: true
        case .websocket: flow.request?.url.hasPrefix("http://") == true || flow.request?.url.hasPrefix("ws://") == true
        case .https, .tunnel: false
        }
    }

    /// Personas whose certificate every client must reject, pinned or not.
    static let invalidCertificatePersonas: Set<String> = ["untrusted", "expired", "wrong-host", "self-signed"]

    /// A note's tail naming the connections that refused while others went through (empty for none).
    static func refusedToo(_ rejected: [Flow]) -> String {
        rejected.isEmpty ? "" : "; \(rejected.count) connection(s) refused it (a part of the app DevProxy does not see into)"
    }

    /// Personas that change what TLS is offered, and what they offer (for notes).
    static let tlsPersonas = ["tls12": "at most TLS 1.2", "no-forward-secrecy": "TLS 1.2 with RSA key exchange only"]

    /// The verdict for one host under one persona.
    /// - Parameter reportFlows: the flows that carried captured reports (all hosts'; by default
    ///   `reports`'): a report is the reporter's request, not the app's (TrustKit posts its report
    ///   to the app's own API host while the app's requests are refused).
    static func judge(host: String, persona: String, flows: [Flow], reports: [ReportRecord],
                      reportFlows: Set<String>? = nil) -> QAVerdict {
        let rejectionKinds: Set<String> = [FlowErrorKind.clientRejectedCertificate.rawValue,
                                           FlowErrorKind.clientClosedAfterHandshake.rawValue]
        let reportFlows = reportFlows ?? Set(reports.map(\.flowID))
        let decrypted = flows.filter { $0.request != nil && $0.mode != .tunnel && !reportFlows.contains($0.id) }
        let rejected = flows.filter { rejectionKinds.contains($0.error?.kind ?? "") }
        func verdict(_ verdict: Verdict, _ evidence: [Flow], _ note: String, reports: [ReportRecord] = []) -> QAVerdict {
            QAVerdict(host: host, persona: persona, verdict: verdict,
                      evidence: Evidence(flows: evidence.map(\.id), reports: reports.map(\.id)), note: note)
        }
        if persona == cleartextGroup {
            if !decrypted.isEmpty {
                return verdict(.cleartext, decrypted, "\(decrypted.count) request(s) went out in clear text (http://): "
                               + "anyone on the network reads and changes them, and no pin applies to them")
            }
            return verdict(.inconclusive, flows, "no request sent in clear text reached the origin's side")
        }
        if persona == "team" {
            if !decrypted.isEmpty {
                return verdict(.debuggable, decrypted + rejected, "\(decrypted.count) request(s) decrypted with the team "
                               + "certificate" + refusedToo(rejected))
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
        if invalidCertificatePersonas.contains(persona) {
            if !decrypted.isEmpty {
                return verdict(.acceptsInvalidCertificate, decrypted, "\(decrypted.count) request(s) went through with the "
                               + "\(persona) certificate, which every client must reject: the app does not validate "
                               + "certificates at all" + refusedToo(rejected))
            }
            if !rejected.isEmpty {
                return verdict(.validates, rejected, "the client refused the \(persona) certificate: ordinary certificate "
                               + "validation, not pinning (--persona HOST=unpinned tests the pins)", reports: reports)
            }
            return verdict(.inconclusive, flows, "no request and no rejection seen under \(persona)")
        }
        // A report whose app says its pinner enforces (TrustKit's enforce-pinning) is a refusal too.
        let enforcing = reports.filter { $0.enforcePinning == true }
        if !decrypted.isEmpty {
            if !rejected.isEmpty || !enforcing.isEmpty {
                let refusals = rejected.isEmpty ? "the app's pinner enforces (\(enforcing.count) report(s) with "
                    + "enforce-pinning true)" : "\(rejected.count) connection(s) refused the \(persona) certificate"
                return verdict(.mixed, rejected + decrypted, "\(refusals), but \(decrypted.count) request(s) went through: "
                               + "part of the app pins this host and part does not", reports: reports)
            }
            if !reports.isEmpty {
                return verdict(.reportOnly, decrypted, "requests went through under \(persona) and the app "
                               + "sent \(reports.count) pin-failure report(s)", reports: reports)
            }
            return verdict(.notPinned, decrypted, "requests went through under \(persona) and no pin-failure report arrived")
        }
        if !rejected.isEmpty {
            // TrustKit's report says why it blocked: validation-result 2 is a chain the device did
            // not trust (TSKTrustEvaluationFailedInvalidCertificateChain), decided before any pin
            // was looked at. Such a refusal says nothing of the pins.
            let untrusted = reports.filter { $0.validationResult == TrustEvaluationResult.failedInvalidCertificateChain.rawValue }
            if !untrusted.isEmpty, untrusted.count == reports.count {
                return verdict(.inconclusive, rejected, "the client refused the \(persona) certificate, but its "
                               + "\(untrusted.count) pin-failure report(s) say the device did not trust the chain "
                               + "(validation-result 2), so no pin was looked at: trust \(rootOf(persona)) on the device "
                               + "and test again", reports: untrusted)
            }
            return verdict(.enforced, rejected, "the client refused the \(persona) certificate and sent no request",
                           reports: reports)
        }
        return verdict(.inconclusive, flows, "no request and no rejection seen under \(persona)")
    }

    /// The root a persona's chain ends at, for notes.
    private static func rootOf(_ persona: String) -> String {
        persona == "unpinned" ? "the QA alternate root (devproxy qa init)" : "the root of the \(persona) persona"
    }
}
