import Foundation

/// Reads a TrustKit configuration written in code, the way most apps hand it to
/// `TrustKit.initSharedInstance(withConfiguration:)`: a Swift dictionary literal
/// (`[kTSKPinnedDomains: ["api.example.com": [kTSKPublicKeyHashes: ["…", "…"]]]]`) or an
/// Objective-C one (`@{ kTSKPinnedDomains: @{ @"api.example.com": @{ … } } }`).
///
/// The `kTSK…` constants become their raw key strings (`TrustKit/TSKTrustKitConfig.m`); string,
/// boolean and number literals become plist values. Anything else (a constant of the app's own,
/// an interpolated string) cannot be known from the text and is an error naming it, so no
/// decision is predicted from guessed values.
struct TrustKitSourceReader {
    /// The raw key string of each `kTSK…` constant (`TSKTrustKitConfig.m`). The exclusion key's
    /// string really lacks the T.
    static let constants: [String: String] = [
        "kTSKSwizzleNetworkDelegates": "TSKSwizzleNetworkDelegates", "kTSKPinnedDomains": "TSKPinnedDomains",
        "kTSKIgnorePinningForUserDefinedTrustAnchors": "TSKIgnorePinningForUserDefinedTrustAnchors",
        "kTSKPublicKeyHashes": "TSKPublicKeyHashes", "kTSKEnforcePinning": "TSKEnforcePinning",
        "kTSKIncludeSubdomains": "TSKIncludeSubdomains", "kTSKExcludeSubdomainFromParentPolicy": "kSKExcludeSubdomainFromParentPolicy",
        "kTSKReportUris": "TSKReportUris", "kTSKDisableDefaultReportUri": "TSKDisableDefaultReportUri",
        "kTSKExpirationDate": "TSKExpirationDate", "kTSKPublicKeyAlgorithms": "TSKPublicKeyAlgorithms",
    ]

    /// A value DevProxy cannot know from the text, kept to be named in the error.
    struct Unreadable: Error { let expression: String }

    private let text: [Character]
    private var position = 0
    /// How many collections are open; a configuration is three deep, so 32 is plenty, and a
    /// bound keeps hostile input from exhausting the stack.
    private var depth = 0
    private static let maximumDepth = 32

    /// The configuration dictionary holding `kTSKPinnedDomains` in `source`, or nil when there is none.
    ///
    /// - Throws: `PolicyError(.unreadable)` for a literal that does not parse or a value that is not one.
    static func configuration(in source: String) throws -> [String: Any]? {
        var reader = TrustKitSourceReader(text: Array(source))
        guard let opener = reader.openerEnclosingPinnedDomains() else { return nil }
        reader.position = opener
        do {
            guard let dictionary = try reader.value() as? [String: Any] else {
                throw PolicyError(.unreadable, "the TrustKit configuration in this source is not a dictionary literal")
            }
            return dictionary
        } catch let error as Unreadable {
            throw PolicyError(.unreadable, "the TrustKit configuration in this source uses `\(error.expression)`, which "
                              + "DevProxy cannot read from the text; give the configuration as a plist or JSON (or use literals)")
        }
    }

    private init(text: [Character]) { self.text = text }

    /// The `[` or `@{` that opens the literal whose key is `kTSKPinnedDomains`.
    private mutating func openerEnclosingPinnedDomains() -> Int? {
        var openers: [Int] = []
        while position < text.count {
            skipTrivia()
            guard position < text.count else { break }
            let character = text[position]
            if character == "\"" {
                // Some apps spell the keys as their raw strings.
                let literal = try? string()
                skipTrivia()
                if literal == "TSKPinnedDomains", position < text.count, text[position] == ":" { return openers.last }
            } else if character == "[" || character == "{" || character == "(" {
                openers.append(position > 0 && text[position - 1] == "@" ? position - 1 : position)
                position += 1
            } else if character == "]" || character == "}" || character == ")" {
                _ = openers.popLast()
                position += 1
            } else if character.isLetter || character == "_" {
                let name = identifier()
                skipTrivia()
                if name == "kTSKPinnedDomains", position < text.count, text[position] == ":" { return openers.last }
            } else {
                position += 1
            }
        }
        return nil
    }

    /// One literal value at `position`.
    private mutating func value() throws -> Any {
        skipTrivia()
        guard position < text.count else { throw Unreadable(expression: "the end of the text") }
        let start = position
        if text[position] == "@" {
            position += 1
            guard position < text.count else { throw Unreadable(expression: "@") }
            switch text[position] {
            case "{": return try collection(closing: "}", start: start)
            case "[": return try collection(closing: "]", start: start)
            case "\"": return try string()
            case "(":
                depth += 1
                defer { depth -= 1 }
                guard depth <= Self.maximumDepth else { throw Unreadable(expression: excerpt(from: start)) }
                position += 1
                let boxed = try value()
                skipTrivia()
                guard position < text.count, text[position] == ")" else { throw Unreadable(expression: excerpt(from: start)) }
                position += 1
                return boxed
            default: break
            }
        }
        switch text[position] {
        case "[": return try collection(closing: "]", start: start)
        case "\"": return try string()
        case let character where character.isNumber || character == "-":
            var digits = String(character)
            position += 1
            while position < text.count, text[position].isNumber || text[position] == "." {
                digits.append(text[position])
                position += 1
            }
            guard let number = Double(digits) else { throw Unreadable(expression: digits) }
            // A whole number past Int's range (`4444…4`, 60 digits) stays a Double: converting it trapped.
            if number == number.rounded(), let whole = Int(exactly: number) { return NSNumber(value: whole) }
            return NSNumber(value: number)
        case let character where character.isLetter || character == "_":
            let name = identifier()
            switch name {
            case "true", "YES": return true
            case "false", "NO": return false
            default:
                guard let key = Self.constants[name] else { throw Unreadable(expression: name) }
                return key
            }
        default:
            throw Unreadable(expression: excerpt(from: start))
        }
    }

    /// A Swift `[…]` (array or dictionary, `[:]` empty) or Objective-C `@[…]`/`@{…}` after its opener.
    private mutating func collection(closing: Character, start: Int) throws -> Any {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw Unreadable(expression: "collections nested deeper than \(Self.maximumDepth)") }
        position += 1
        var elements: [Any] = []
        var dictionary: [String: Any] = [:]
        var isDictionary = closing == "}"
        skipTrivia()
        if closing == "]", position + 1 < text.count, text[position] == ":", text[position + 1] == "]" {
            position += 2
            return dictionary
        }
        while true {
            skipTrivia()
            guard position < text.count else { throw Unreadable(expression: excerpt(from: start)) }
            if text[position] == closing {
                position += 1
                return isDictionary ? dictionary : elements
            }
            let item = try value()
            skipTrivia()
            if position < text.count, text[position] == ":" {
                position += 1
                guard let key = item as? String else { throw Unreadable(expression: excerpt(from: start)) }
                isDictionary = true
                dictionary[key] = try value()
            } else {
                guard !isDictionary else { throw Unreadable(expression: excerpt(from: start)) }
                elements.append(item)
            }
            skipTrivia()
            if position < text.count, text[position] == "," { position += 1 }
        }
    }

    /// A `"…"` literal; an interpolation (`\(…)`) cannot be known from the text.
    private mutating func string() throws -> String {
        let start = position
        position += 1
        var value = ""
        while position < text.count, text[position] != "\"" {
            if text[position] == "\\", position + 1 < text.count {
                position += 1
                switch text[position] {
                case "(": throw Unreadable(expression: excerpt(from: start))
                case "n": value.append("\n")
                case "t": value.append("\t")
                default: value.append(text[position])
                }
            } else {
                value.append(text[position])
            }
            position += 1
        }
        position += 1
        return value
    }

    /// A name, with its dots (`TrustKitKeys.primary`).
    private mutating func identifier() -> String {
        var name = ""
        while position < text.count, text[position].isLetter || text[position].isNumber || text[position] == "_"
                || text[position] == "." {
            name.append(text[position])
            position += 1
        }
        return name
    }

    /// Skips white space and `//` and `/* */` comments.
    private mutating func skipTrivia() {
        while position < text.count {
            if text[position].isWhitespace {
                position += 1
            } else if text[position] == "/", position + 1 < text.count, text[position + 1] == "/" {
                while position < text.count, !text[position].isNewline { position += 1 }
            } else if text[position] == "/", position + 1 < text.count, text[position + 1] == "*" {
                position += 2
                while position + 1 < text.count, !(text[position] == "*" && text[position + 1] == "/") { position += 1 }
                position += 2
            } else {
                return
            }
        }
    }

    /// Up to 40 characters from `start`, for an error.
    private func excerpt(from start: Int) -> String {
        String(text[start..<min(text.count, start + 40)]).split(separator: "\n").first.map(String.init) ?? ""
    }
}
