import CertAuthority

/// QA personas as a `LeafSource`: per host, the first matching `--persona PATTERN=NAME` rule
/// decides what the client sees (the team leaf by default), and the flow records which.
public struct PersonaLeafSource: LeafSource {
    public let rules: PersonaRules
    public let certificates: PersonaCertificates

    public init(rules: PersonaRules, certificates: PersonaCertificates) {
        self.rules = rules
        self.certificates = certificates
    }

    public func presentation(for host: LeafName) throws -> Presentation {
        let persona = rules.persona(for: host.text)
        if persona == .team { return try certificates.team.presentation(for: host) }
        guard let leaf = try certificates.leaf(for: persona, host: host.text) else {
            return .passthrough(reason: "persona passthrough", persona: persona.rawValue)
        }
        return .intercept(leaf, persona: persona.rawValue)
    }
}
