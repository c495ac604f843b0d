import Foundation

/// Which persona each host gets: `PATTERN=NAME` rules, first match wins, `team` by default.
///
/// Patterns are `GlobPattern`s: `*.example.com=unpinned`, `api.*.example.com=expired`, `*=untrusted`.
public struct PersonaRules: Sendable, Equatable {
    /// One `PATTERN=NAME` rule.
    public struct Rule: Sendable, Equatable {
        public let pattern: GlobPattern
        public let persona: Persona

        public init(pattern: GlobPattern, persona: Persona) {
            self.pattern = pattern
            self.persona = persona
        }
    }

    public let rules: [Rule]
    /// The persona of hosts no rule matches. Default: `team`.
    public let fallback: Persona

    public init(rules: [Rule] = [], fallback: Persona = .team) {
        self.rules = rules
        self.fallback = fallback
    }

    /// Parses `PATTERN=NAME` strings in order (as given to `--persona`).
    ///
    /// - Throws: `CAError(.invalidInput)` naming the bad rule and the valid persona names.
    public init(parsing specifications: [String], fallback: Persona = .team) throws {
        var rules: [Rule] = []
        for specification in specifications {
            guard let equals = specification.lastIndex(of: "=") else {
                throw CAError(.invalidInput, "persona rule \"\(specification)\" is not PATTERN=NAME (e.g. *.example.com=unpinned)")
            }
            let pattern = String(specification[..<equals]).trimmingCharacters(in: .whitespaces)
            let name = String(specification[specification.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
            guard !pattern.isEmpty else { throw CAError(.invalidInput, "persona rule \"\(specification)\" has an empty pattern") }
            guard let persona = Persona(rawValue: name.lowercased()) else {
                throw CAError(.invalidInput, "unknown persona \"\(name)\" in \"\(specification)\"; choose one of \(Persona.choices)")
            }
            rules.append(Rule(pattern: GlobPattern(pattern), persona: persona))
        }
        self.init(rules: rules, fallback: fallback)
    }

    /// The persona for `host`: the first matching rule's, else `fallback`.
    public func persona(for host: String) -> Persona {
        rules.first { $0.pattern.matches(host) }?.persona ?? fallback
    }
}
