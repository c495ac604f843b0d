import Foundation

/// Text bound for a terminal with every character a terminal would act on, rather than show,
/// written as an escape (`\x1B`, `\x9B`, `\u202E`): C0 controls but newline and tab, DEL, C1
/// controls (U+009B is CSI to a terminal that takes 8-bit controls) and the bidirectional
/// overrides and isolates (which reorder what follows, as "Trojan Source" does). Much of what
/// DevProxy prints came from the network (a request's URL, an origin's GOAWAY text, a report's
/// host name): printed as it came, an ESC in it set the window title or cleared the screen, as
/// `cat` of such a file does.
public enum TerminalText {
    /// `text` with each such character escaped; the same string when it has none.
    public static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isActive) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isActive(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            result += scalar.value < 0x100 ? String(format: "\\x%02X", scalar.value) : String(format: "\\u%04X", scalar.value)
        }
        return result
    }

    /// Whether a terminal acts on `scalar` rather than showing it.
    static func isActive(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
