/// A `Content-Type` or `Content-Disposition` value's type (lowercased) and its parameters (names
/// lowercased; quoted values unquoted, `\` escapes removed; the first of a name given twice).
public enum MediaType {
    public static func parse(_ value: String) -> (type: String, parameters: [String: String]) {
        var parameters: [String: String] = [:]
        let scalars = Array(value.unicodeScalars)
        var index = 0
        func skipSpace() {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        }
        var type = ""
        while index < scalars.count, scalars[index] != ";" {
            type.unicodeScalars.append(scalars[index])
            index += 1
        }
        while index < scalars.count {
            index += 1   // the ";"
            skipSpace()
            var name = ""
            while index < scalars.count, scalars[index] != "=", scalars[index] != ";" {
                name.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard index < scalars.count, scalars[index] == "=" else { continue }
            index += 1
            skipSpace()
            var parameterValue = ""
            if index < scalars.count, scalars[index] == "\"" {
                index += 1
                while index < scalars.count, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                    parameterValue.unicodeScalars.append(scalars[index])
                    index += 1
                }
                index += 1   // the closing quote
                while index < scalars.count, scalars[index] != ";" { index += 1 }
            } else {
                while index < scalars.count, scalars[index] != ";" {
                    parameterValue.unicodeScalars.append(scalars[index])
                    index += 1
                }
                parameterValue = parameterValue.trimmedOfWhitespace
            }
            let key = name.trimmedOfWhitespace.lowercased()
            if !key.isEmpty, parameters[key] == nil { parameters[key] = parameterValue }
        }
        return (type.trimmedOfWhitespace.lowercased(), parameters)
    }
}

private extension String {
    /// Without leading and trailing whitespace as Foundation's `CharacterSet.whitespaces` has it
    /// (tab and the space separators, Zs), which this module does without.
    var trimmedOfWhitespace: String {
        let isSpace = { (scalar: Unicode.Scalar) in scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(scalars[first...last])
    }
}
