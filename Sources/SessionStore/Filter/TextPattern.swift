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
            return nil
        } catch {
            return "not a valid regular expression"
        }
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
    /// hold NULs and need not be UTF-8).
    func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch matcher {
        case .literal(let literal):
            return literal.occurs(in: bytes)
        case .regex(let regex, let required):
            // Most rows lack the literal: rule them out before building a string for ICU.
            if let required, !required.occurs(in: bytes) { return false }
            return Self.search(regex, String(decoding: bytes, as: UTF8.self))
        }
    }

    private static func search(_ regex: NSRegularExpression, _ string: String) -> Bool {
        let range = NSRange(location: 0, length: string.utf16.count)
        return regex.firstMatch(in: string, options: [], range: range) != nil
    }
}
