/// Compiled patterns by their text, for one connection and one matching mode.
///
/// Used only on the connection's thread (under the reader's lock), so it needs no lock of its own.
final class PatternCache {
    private let lines: Bool
    private var patterns: [String: TextPattern] = [:]

    init(lines: Bool) { self.lines = lines }

    /// The compiled `pattern`, compiling it on first use.
    func pattern(_ text: String) throws -> TextPattern {
        if let pattern = patterns[text] { return pattern }
        let pattern = try TextPattern(text, lines: lines)
        // Patterns come from filters typed by people: a handful per session. Bound it anyway.
        if patterns.count >= 256 { patterns.removeAll() }
        patterns[text] = pattern
        return pattern
    }
}
