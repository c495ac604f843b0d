/// One token of a filter expression, with the column it starts at (1-based).
struct FilterToken: Equatable {
    enum Kind: Equatable {
        case open, close, not, and, or
        /// `~name`, lower-cased, without the `~`.
        case filter(String)
        /// A bare word or a quoted string (quotes removed, `\"` and `\\` unescaped).
        case text(String, quoted: Bool)
        case end
    }

    var kind: Kind
    var column: Int

    /// How the token reads in an error message.
    var spelling: String {
        switch kind {
        case .open: return "'('"
        case .close: return "')'"
        case .not: return "'!'"
        case .and: return "'&'"
        case .or: return "'|'"
        case .filter(let name): return "'~\(name)'"
        case .text(let text, _): return "'\(text)'"
        case .end: return "the end"
        }
    }
}

/// Splits a filter expression into tokens, as mitmproxy's grammar does: a bare word runs to
/// whitespace or one of `( ) ~ ' "`, so `~u a|b` is the regular expression `a|b`; a word cannot
/// start with `!`, `&` or `|`, which are operators there.
enum FilterLexer {
    /// - Throws: `FilterSyntaxError` for an unterminated quote or a `~` without a name.
    static func tokens(_ text: String) throws(FilterSyntaxError) -> [FilterToken] {
        let scalars = Array(text.unicodeScalars)
        var tokens: [FilterToken] = []
        var index = 0
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace }
        while index < scalars.count {
            let scalar = scalars[index]
            let column = index + 1
            if isSpace(scalar) {
                index += 1
                continue
            }
            switch scalar {
            case "(": tokens.append(FilterToken(kind: .open, column: column)); index += 1
            case ")": tokens.append(FilterToken(kind: .close, column: column)); index += 1
            case "!": tokens.append(FilterToken(kind: .not, column: column)); index += 1
            case "&": tokens.append(FilterToken(kind: .and, column: column)); index += 1
            case "|": tokens.append(FilterToken(kind: .or, column: column)); index += 1
            case "~":
                var end = index + 1
                while end < scalars.count, scalars[end].properties.isAlphabetic { end += 1 }
                guard end > index + 1 else {
                    throw FilterSyntaxError(column: column, reason: "expected a filter name after '~'")
                }
                let name = String(String.UnicodeScalarView(scalars[(index + 1)..<end])).lowercased()
                tokens.append(FilterToken(kind: .filter(name), column: column))
                index = end
            case "\"", "'":
                var value = String.UnicodeScalarView()
                var end = index + 1
                var closed = false
                while end < scalars.count {
                    let next = scalars[end]
                    if next == scalar { closed = true; break }
                    // Only the quote and the backslash are unescaped: `\d` stays a regex class.
                    if next == "\\", end + 1 < scalars.count, scalars[end + 1] == scalar || scalars[end + 1] == "\\" {
                        value.append(scalars[end + 1])
                        end += 2
                        continue
                    }
                    value.append(next)
                    end += 1
                }
                guard closed else {
                    throw FilterSyntaxError(column: column, reason: "unterminated string (no closing \(scalar))")
                }
                tokens.append(FilterToken(kind: .text(String(value), quoted: true), column: column))
                index = end + 1
            default:
                var end = index
                while end < scalars.count, !isSpace(scalars[end]), !"()~'\"".unicodeScalars.contains(scalars[end]) {
                    end += 1
                }
                let word = String(String.UnicodeScalarView(scalars[index..<end]))
                tokens.append(FilterToken(kind: .text(word, quoted: false), column: column))
                index = end
            }
        }
        tokens.append(FilterToken(kind: .end, column: scalars.count + 1))
        return tokens
    }
}
