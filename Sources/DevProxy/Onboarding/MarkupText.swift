/// Text made safe to place in HTML or XML content and attribute values (the onboarding page, the
/// iOS profile's XML plist, JUnit reports).
enum MarkupText {
    /// Replaces `& < > " '` with character references, so no text can open a tag, close an
    /// attribute or start an entity (the five characters the HTML spec's serialisation escapes;
    /// `&#39;` is read by HTML and XML alike). Control characters that XML 1.0 cannot carry become
    /// spaces; newlines and tabs stay.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\n", "\t": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20: result += " "
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
