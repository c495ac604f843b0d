import Foundation

/// Reads OkHttp `CertificatePinner` configurations: a text file of `pattern sha256/… …` lines,
/// or Kotlin/Java source containing `CertificatePinner.Builder().add("pattern", "sha256/…", …)`
/// calls (chained, spanning lines).
public struct OkHttpPinnerParser: Sendable {
    /// A parser; it has no settings.
    public init() {}

    /// Parses either form; source is recognised by `CertificatePinner.Builder(` (a comment that
    /// merely names CertificatePinner stays a pin list).
    ///
    /// - Throws: `PolicyError` where OkHttp's builder would throw `IllegalArgumentException`.
    public func parse(_ text: String) throws -> PinningPolicy {
        text.contains("CertificatePinner.Builder(") ? try parseSource(text) : try parseLines(text)
    }

    /// `pattern pin [pin …]` per line; `#` starts a comment; commas count as spaces.
    public func parseLines(_ text: String) throws -> PinningPolicy {
        var builder = Builder()
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: { $0.isWhitespace || $0 == "," }).map(String.init)
            guard let pattern = fields.first else { continue }
            try builder.add(pattern, fields.dropFirst())
        }
        return builder.policy
    }

    /// Every `add(…)` call inside a `CertificatePinner.Builder()` … `.build()` expression: chained
    /// (`.add(…)`), on the builder in a variable (`builder.add(…)`), or bare in a Kotlin scope
    /// function (`.apply { add(…) }`).
    public func parseSource(_ text: String) throws -> PinningPolicy {
        var builder = Builder()
        var cursor = text.startIndex
        while let start = text.range(of: "CertificatePinner.Builder()", range: cursor..<text.endIndex) {
            let end = text.range(of: ".build()", range: start.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
            var scan = start.upperBound
            // An unbalanced `.add(` can run past `.build()`: stop there rather than search a reversed range.
            while scan < end, let add = SourceArguments.nextAddCall(in: text, range: scan..<end) {
                let (arguments, after) = SourceArguments.split(text, from: add.upperBound)
                let literals = arguments.map(SourceArguments.stringLiteral)
                if let pattern = literals.first ?? nil {
                    try builder.add(pattern, literals.dropFirst().compactMap { $0 },
                                    unreadPins: literals.contains(where: { $0 == nil }))
                    if literals.contains(where: { $0 == nil }) {
                        builder.warnings.append("\(pattern): some arguments of .add(…) are not string literals and were skipped")
                    }
                } else {
                    builder.warnings.append("an .add(…) call whose pattern is not a string literal was skipped")
                }
                scan = after
            }
            cursor = max(end, scan)
        }
        return builder.policy
    }

    /// Accumulates pins per pattern in file order, as `CertificatePinner.Builder` does.
    private struct Builder {
        var domains: [PinnedDomain] = []
        var warnings: [String] = []

        /// `Builder.add(pattern, vararg pins)`.
        ///
        /// With no pin at all OkHttp constructs no `Pin`, so the call pins nothing and its pattern
        /// is not even validated: the host stays unpinned. Pins given as expressions DevProxy
        /// cannot read (`unreadPins`) still pin the pattern, with pins unknown.
        mutating func add<S: Collection>(_ pattern: String, _ pins: S, unreadPins: Bool = false) throws
            where S.Element == String {
            guard !pins.isEmpty || unreadPins else {
                warnings.append("\(pattern): no pin is given, so OkHttp pins nothing for it (.add(pattern) with no pins adds none)")
                return
            }
            let parsed = try OkHttpPattern(pattern)
            var list: [Pin] = []
            for text in pins {
                let pin = try Self.pin(text)
                if !list.contains(pin) { list.append(pin) }
            }
            if let index = domains.firstIndex(where: { $0.pattern == parsed.description }) {
                domains[index].pins += list.filter { !domains[index].pins.contains($0) }
            } else {
                domains.append(PinnedDomain(pattern: parsed.description, includeSubdomains: parsed.wildcard != .none,
                                            pins: list, source: .okHttp))
            }
        }

        var policy: PinningPolicy {
            // OkHttp accepts a pinner with no pins, which pins nothing: said, not called a valid policy silently.
            let none = domains.isEmpty ? ["no pins found: this pins no host (a pinner whose .add(…) calls use "
                                          + "constants, or a list of comments only?)"] : []
            return PinningPolicy(source: .okHttp, domains: domains, warnings: warnings + none)
        }

        /// `sha256/…` or `sha1/…`; the digest length is deliberately not checked (OkHttp does not).
        static func pin(_ text: String) throws -> Pin {
            let algorithm: Pin.Algorithm
            let encoded: Substring
            if text.hasPrefix("sha256/") {
                (algorithm, encoded) = (.sha256, text.dropFirst(7))
            } else if text.hasPrefix("sha1/") {
                (algorithm, encoded) = (.sha1, text.dropFirst(5))
            } else {
                throw PolicyError(.invalidPin, "pins must start with 'sha256/' or 'sha1/': \(text)")
            }
            guard let digest = LenientBase64.okio(String(encoded)) else {
                throw PolicyError(.invalidPin, "Invalid pin hash: \(text)")
            }
            return Pin(algorithm, digest: digest)
        }
    }
}

/// Splitting Kotlin/Java call arguments without a real parser.
enum SourceArguments {
    /// The next `add(` in `range` that is a call of `add` itself, not of a name ending in it
    /// (`readd(`, `my_add(`): the character before it is not part of an identifier.
    static func nextAddCall(in text: String, range: Range<String.Index>) -> Range<String.Index>? {
        var from = range.lowerBound
        while let found = text.range(of: "add(", range: from..<range.upperBound) {
            guard found.lowerBound > text.startIndex else { return found }
            let before = text[text.index(before: found.lowerBound)]
            if !(before.isLetter || before.isNumber || before == "_") { return found }
            from = found.upperBound
        }
        return nil
    }

    /// The top-level comma-separated arguments of a call whose `(` ends just before `start`,
    /// and the index after the matching `)`. Strings and nested parentheses are respected.
    static func split(_ text: String, from start: String.Index) -> ([String], String.Index) {
        var arguments: [String] = []
        var current = ""
        var depth = 0
        var inString = false
        var index = start
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if inString {
                current.append(character)
                if character == "\\", index < text.endIndex {
                    current.append(text[index])
                    index = text.index(after: index)
                } else if character == "\"" {
                    inString = false
                }
                continue
            }
            switch character {
            case "\"": inString = true; current.append(character)
            case "(": depth += 1; current.append(character)
            case ")" where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                return (arguments.filter { !$0.isEmpty }, index)
            case ")": depth -= 1; current.append(character)
            case "," where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
            default: current.append(character)
            }
        }
        return (arguments, index)
    }

    /// The value of a plain `"…"` literal (common escapes only), or nil for any other expression.
    static func stringLiteral(_ argument: String) -> String? {
        guard argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\""),
              !argument.dropFirst().dropLast().contains("$") else { return nil }
        var value = ""
        var escaped = false
        for character in argument.dropFirst().dropLast() {
            if escaped {
                value.append(character == "n" ? "\n" : character == "t" ? "\t" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                value.append(character)
            }
        }
        return value
    }
}
