/// Text made safe to place in HTML or XML content and attribute values.
enum HTMLText {
    /// Replaces `& < > " '` with character references, so no text can open a tag, close an
    /// attribute or start an entity (the five characters the HTML spec's serialisation escapes).
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
