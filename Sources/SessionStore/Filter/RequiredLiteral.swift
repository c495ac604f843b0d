/// The longest run of plain characters every match of a regular expression must contain, found
/// without understanding the whole syntax: a cheap case-folded substring prefilter before ICU runs.
///
/// Conservative: a pattern with `|` has none (either side may match); groups and classes are
/// skipped; a character followed by `?`, `*` or `{` is optional and ends the run. ASCII only.
enum RequiredLiteral {
    /// At least this long, or the prefilter costs more than it saves.
    static let minimumLength = 3

    /// The literal, lower case, or nil when there is no useful one.
    static func of(_ pattern: String) -> String? {
        let scalars = Array(pattern.unicodeScalars)
        guard scalars.allSatisfy(\.isASCII), !scalars.contains("|") else { return nil }
        var best = ""
        var run = ""
        func endRun() {
            if run.count > best.count { best = run }
            run = ""
        }
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            var literal: Unicode.Scalar?
            var width = 1
            switch scalar {
            case "\\":
                guard index + 1 < scalars.count else { return nil }
                let next = scalars[index + 1]
                width = 2
                // `\.` is a dot; `\d`, `\b`, `\1` are classes, anchors or references.
                if !next.properties.isAlphabetic && !("0"..."9").contains(next) { literal = next }
            case "(", "[":
                endRun()
                guard let close = closing(scalars, from: index) else { return nil }
                index = close + 1
                continue
            case ".", "^", "$", ")", "]", "+":
                break
            case "?", "*", "{":
                // The character before was optional after all (normally caught below; this is
                // a quantifier after a group or class, or a lazy `+?`).
                endRun()
                if scalar == "{" {
                    // `{2,3}` is the quantifier's syntax, not text.
                    guard let close = scalars[index...].firstIndex(of: "}") else { return nil }
                    index = close + 1
                    continue
                }
            default:
                literal = scalar
            }
            if let literal {
                let next = index + width < scalars.count ? scalars[index + width] : nil
                if let next, "?*{".unicodeScalars.contains(next) {
                    endRun()
                } else {
                    run.unicodeScalars.append(literal)
                    if next == "+" { endRun() }
                }
            } else {
                endRun()
            }
            index += width
        }
        endRun()
        return best.count >= minimumLength ? best.lowercased() : nil
    }

    /// The index of the `)` or `]` closing the group or class opened at `start`, escapes skipped.
    private static func closing(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        let isClass = scalars[start] == "["
        var depth = 0
        var index = start
        while index < scalars.count {
            switch scalars[index] {
            case "\\": index += 1
            case "[" where isClass && index == start: depth += 1
            case "]" where isClass: return index
            case "(" where !isClass: depth += 1
            case ")" where !isClass:
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            index += 1
        }
        return nil
    }
}
