import Foundation

extension QAVerdict {
    /// `pinset_injectable` for a `debuggable` host, when the log shows the three steps: the app
    /// fetched its pin set through DevProxy, the set `--pinset-rewrite` rewrote was served (2xx,
    /// `pinset.rewritten`), and a request to a host those pins cover was decrypted with the team
    /// chain after that response ended.
    ///
    /// A pin set names no hosts (`hashes`, `expiresAt`, `minAppVersion`), so the hosts it covers
    /// are taken to be the pin-set host's domain: its own name, its parent domain (the name
    /// without its first label, when that leaves at least two labels) and every name below it.
    /// - Returns: nil when the verdict stays as judged.
    static func injectedPinSet(host: String, verdict: QAVerdict, flows: [Flow], all: [Flow]) -> QAVerdict? {
        guard verdict.verdict == .debuggable else { return nil }
        let served = all.filter { flow in
            flow.pinset?.rewritten == true && flow.error == nil && (200..<300).contains(flow.response?.status ?? 0)
        }
        for pinSet in served.sorted(by: { $0.ended < $1.ended }) {
            let pinSetHost = (pinSet.tls?.client?.sni ?? pinSet.server.host).lowercased()
            guard covers(pinSetHost: pinSetHost, host: host) else { continue }
            let accepted = flows.filter { flow in
                flow.id != pinSet.id && flow.request != nil && flow.mode != .tunnel && flow.started >= pinSet.ended
            }
            guard !accepted.isEmpty else { continue }
            let url = pinSet.request?.url ?? pinSetHost
            let added = pinSet.pinset?.added?.joined(separator: ", ") ?? "the team root's pin"
            let evidence = Evidence(flows: [pinSet.id] + accepted.map(\.id), reports: verdict.evidence.reports)
            let note = "the app fetched its pin set (\(url)) through DevProxy, was served it with \(added) added, "
                + "then accepted the team chain in \(accepted.count) request(s): whoever intercepts the pin-set "
                + "fetch can replace the app's pins (sign the set, or pin its fetch to bundled pins)"
            return QAVerdict(host: host, persona: verdict.persona, verdict: .pinsetInjectable, evidence: evidence,
                             note: note)
        }
        return nil
    }

    /// Whether a pin set fetched from `pinSetHost` covers `host` (see `injectedPinSet`).
    static func covers(pinSetHost: String, host: String) -> Bool {
        let labels = pinSetHost.split(separator: ".")
        let domain = labels.count >= 3 ? labels.dropFirst().joined(separator: ".") : pinSetHost
        return host == pinSetHost || host == domain || host.hasSuffix("." + domain)
    }
}
