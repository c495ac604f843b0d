import Foundation

/// A small JSON writer for the API's hot answers (pages of summaries, event batches), where
/// `JSONSerialization` on dictionaries would cost more than the query.
struct JSONText {
    private(set) var text = ""

    init(capacity: Int = 1024) { text.reserveCapacity(capacity) }

    mutating func raw(_ fragment: String) { text += fragment }

    /// A quoted, escaped string (RFC 8259 §7), or `null`.
    mutating func string(_ value: String?) {
        guard let value else {
            text += "null"
            return
        }
        text += Self.quoted(value)
    }

    mutating func number(_ value: Int?) { text += value.map(String.init) ?? "null" }

    mutating func number(_ value: Double?) {
        guard let value, value.isFinite else {
            text += "null"
            return
        }
        text += value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    mutating func bool(_ value: Bool) { text += value ? "true" : "false" }

    /// `"value"` with `"`, `\` and control characters escaped; `<`, `>` and `&` too, so JSON
    /// never carries markup-looking text even if something renders it wrongly.
    static func quoted(_ value: String) -> String {
        // Most values (ids, URLs, hosts, types) need no escape: one pass over the bytes, one copy.
        // 0xE2 starts U+2028 and U+2029 (and other scalars, which take the long way).
        let plain = !value.utf8.contains { byte in
            byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x3C || byte == 0x3E || byte == 0x26 || byte == 0xE2
        }
        if plain { return "\"" + value + "\"" }
        var result = "\""
        result.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "<": result += "\\u003c"
            case ">": result += "\\u003e"
            case "&": result += "\\u0026"
            case "\u{2028}": result += "\\u2028"
            case "\u{2029}": result += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
