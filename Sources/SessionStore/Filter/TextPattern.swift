import Foundation

/// A filter's regular expression, compiled once and matched case-insensitively, as mitmproxy's
/// filters are.
///
/// A pattern with no regular-expression syntax but `.` (`login`, `api.example.com`,
/// `example\.com`) is searched for as bytes, ASCII case folded, `.` standing for any one
/// character, without building a string per row: that is most filters typed by hand, and it
/// keeps `~b` over 100k bodies fast.
/// Everything else goes to `NSRegularExpression` (ICU syntax, close to Python's), after a
/// prefilter on the literal every match must contain (`RequiredLiteral`), when there is one.
final class TextPattern {
    private enum Matcher {
        /// Lower-case ASCII bytes.
        case literal(CaseFoldedLiteral)
        /// With the lower-case literal every match contains, when there is one.
        case regex(NSRegularExpression, required: CaseFoldedLiteral?)
    }

    private let matcher: Matcher

    /// Compiles `pattern`.
    /// - Parameter lines: `^` and `$` match at line breaks (header blocks are one line per field).
    /// - Throws: `NSRegularExpression`'s error for a pattern ICU rejects.
    init(_ pattern: String, lines: Bool = false) throws {
        if let literal = Self.literal(pattern) {
            matcher = .literal(literal)
        } else {
            guard !Self.hasNestedRepetition(pattern) else {
                throw CocoaError(.formatting, userInfo: [NSLocalizedDescriptionKey: "nested repetition"])
            }
            var options: NSRegularExpression.Options = [.caseInsensitive]
            if lines { options.insert(.anchorsMatchLines) }
            let regex = try NSRegularExpression(pattern: pattern, options: options)
            matcher = .regex(regex, required: RequiredLiteral.of(pattern).map { CaseFoldedLiteral($0) })
        }
    }

    /// Whether `pattern` compiles; the reason when it does not.
    static func validate(_ pattern: String) -> String? {
        if literal(pattern) != nil { return nil }
        do {
            _ = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
        } catch {
            return "not a valid regular expression"
        }
        if hasNestedRepetition(pattern) {
            return "a repetition inside a repetition (such as (a+)+), which ICU can take years to try against one "
                + "long line: repeat once (a+)"
        }
        return nil
    }

    /// Whether `pattern` repeats without bound a group that itself repeats without bound
    /// (`(a+)+`, `(\w*)*`, `(x+y)*`, `(?:a{2,})+`): ICU backtracks through every way of splitting
    /// the input between the two, which is exponential in the input's length, and
    /// `NSRegularExpression` has no time limit. `~u "(a+)+b"` against one 64-character URL held
    /// the web UI's queries (the store's lock) for good. Character classes and escapes are not
    /// repetitions; a bounded one (`?`, `{2,5}`) is not counted.
    static func hasNestedRepetition(_ pattern: String) -> Bool {
        let scalars = Array(pattern.unicodeScalars)
        // Per open group: whether an unbounded repetition occurred inside it.
        var groups: [Bool] = []
        var index = 0
        func unboundedQuantifier(at position: Int) -> Bool {
            guard position < scalars.count else { return false }
            switch scalars[position] {
            case "*", "+":
                return true
            case "{":
                var end = position + 1
                while end < scalars.count, scalars[end] != "}" { end += 1 }
                guard end < scalars.count else { return false }
                let body = String(String.UnicodeScalarView(scalars[(position + 1)..<end]))
                return body.hasSuffix(",") && Int(body.dropLast()) != nil
            default:
                return false
            }
        }
        while index < scalars.count {
            let scalar = scalars[index]
            var atomEnd = index + 1
            var isGroupClose = false
            switch scalar {
            case "\\":
                atomEnd = min(index + 2, scalars.count)
            case "[":
                // A class runs to the first `]` that is not its first character or escaped.
                var end = index + 1
                if end < scalars.count, scalars[end] == "^" { end += 1 }
                if end < scalars.count, scalars[end] == "]" { end += 1 }
                while end < scalars.count, scalars[end] != "]" { end += scalars[end] == "\\" ? 2 : 1 }
                atomEnd = min(end + 1, scalars.count)
            case "(":
                groups.append(false)
                index += 1
                continue
            case ")":
                isGroupClose = true
            default:
                break
            }
            let repeatsInside = isGroupClose ? (groups.popLast() ?? false) : false
            if unboundedQuantifier(at: atomEnd) {
                if repeatsInside { return true }
                if !groups.isEmpty { groups[groups.count - 1] = true }
            } else if repeatsInside, !groups.isEmpty {
                // `((a+)b)+`: the inner repetition still sits inside the outer group.
                groups[groups.count - 1] = true
            }
            index = atomEnd
        }
        return false
    }

    /// `pattern` as plain text when its only syntax is `.` (any one character), or nil. ASCII
    /// only: other letters need Unicode case folding. `api.example.com`, the filter typed most,
    /// is one of these; so are `login` and `example\.com`.
    static func literal(_ pattern: String) -> CaseFoldedLiteral? {
        var bytes: [UInt8] = []
        var wildcards: [Bool] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            guard scalar.isASCII else { return nil }
            if escaped {
                // `\d`, `\b`, `\n` are classes or escapes; `\.` or `\/` is the character itself.
                if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) { return nil }
                bytes.append(UInt8(scalar.value))
                wildcards.append(false)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if "^$*+?()[]{}|".unicodeScalars.contains(scalar) {
                return nil
            } else {
                bytes.append(UInt8(scalar.value))
                wildcards.append(scalar == ".")
            }
        }
        return escaped ? nil : CaseFoldedLiteral(bytes: bytes, wildcards: wildcards)
    }

    /// Whether the pattern occurs in `bytes`: UTF-8 text, or a blob (a binary body, which may
    /// hold NULs and need not be UTF-8). Nil when a regular expression was still searching at
    /// `deadline` and was stopped.
    ///
    /// The nested-repetition check refuses the worst patterns, but not all that ICU backtracks on
    /// without end: `(a|aa)*b` against 80 `a`s (exponential), `id.*name.*zzz` against a 1 MiB
    /// minified JSON (polynomial). ICU reports progress while it searches (`.reportProgress`), so
    /// the search stops there once the deadline has passed.
    func matches(_ bytes: UnsafeRawBufferPointer, until deadline: ContinuousClock.Instant) -> Bool? {
        switch matcher {
        case .literal(let literal):
            return literal.occurs(in: bytes)
        case .regex(let regex, let required):
            // Most rows lack the literal: rule them out before building a string for ICU.
            if let required, !required.occurs(in: bytes) { return false }
            return Self.search(regex, String(decoding: bytes, as: UTF8.self), until: deadline)
        }
    }

    private static func search(_ regex: NSRegularExpression, _ string: String,
                               until deadline: ContinuousClock.Instant) -> Bool? {
        let range = NSRange(location: 0, length: string.utf16.count)
        var found: Bool? = false
        regex.enumerateMatches(in: string, options: [.reportProgress], range: range) { result, _, stop in
            if result != nil {
                found = true
                stop.pointee = true
            } else if ContinuousClock.now > deadline {
                found = nil
                stop.pointee = true
            }
        }
        return found
    }
}
