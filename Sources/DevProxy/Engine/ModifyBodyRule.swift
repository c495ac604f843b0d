import Foundation

/// `--modify-body |FLOW-FILTER|REGEX|REPLACEMENT`, mitmproxy's modify_body: every match of REGEX
/// in a response body the filter passes (every one without a filter) is replaced, as Python's
/// `re.sub` replaces matches on bytes with `re.DOTALL` (`\1`, `\g<name>` and `\\` in
/// REPLACEMENT). The body is matched decoded (gzip, deflate, br, zstd) and re-encoded in the same
/// coding. `@FILE` as the replacement reads the file each time, its bytes put in as they are.
/// The filter is asked of the request before it is sent (`~q` passes, response terms do not) and
/// of the flow once the response's head is here (`MapRequestFilter`, `allowingResponse`), as
/// mitmproxy runs the addon in its request and response hooks: a rule without a filter changes
/// both bodies.
public struct ModifyBodyRule: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe once made
    /// The option as given, for the flow's `mapped.body[].by`.
    public let option: String
    let filter: MapRequestFilter?
    /// The regex over the body's bytes, each byte one character (U+0000–U+00FF), as Python's
    /// bytes patterns read; the pattern's own UTF-8 bytes are read the same way.
    private let regex: NSRegularExpression
    private let replacement: Replacement

    private enum Replacement {
        case pieces([MapRemoteRule.Piece])
        case file(String)
    }

    /// Parses `|FLOW-FILTER|REGEX|REPLACEMENT` or `|REGEX|REPLACEMENT`.
    /// - Parameter directory: what a relative `@FILE` is read against.
    /// - Throws: `ConfigurationError` naming the option and what is wrong.
    public init(parsing option: String, directory: String = FileManager.default.currentDirectoryPath) throws {
        let usage = "give --modify-body |FLOW-FILTER|REGEX|REPLACEMENT or |REGEX|REPLACEMENT (the first character is "
            + "the separator; @FILE as the replacement reads it from a file)"
        let (filterText, pattern, target) = try MapRules.split(option, name: "--modify-body", usage: usage)
        let label = "--modify-body \(option)"
        guard !pattern.isEmpty else { throw ConfigurationError("\(label): the regex is empty; \(usage)") }
        filter = try filterText.map { try MapRequestFilter(parsing: $0, option: label, allowingResponse: true) }
        let bytePattern = Self.latin1(pattern)
        do {
            regex = try NSRegularExpression(pattern: bytePattern.replacingOccurrences(of: "(?P<", with: "(?<"),
                                            options: [.dotMatchesLineSeparators])
        } catch {
            throw ConfigurationError("\(label): \(pattern) is not a valid regular expression")
        }
        if target.hasPrefix("@") {
            let path = NSString(string: String(target.dropFirst())).expandingTildeInPath
            let file = path.hasPrefix("/") ? path : (directory as NSString).appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard !path.isEmpty, FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory),
                  !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: file) else {
                throw ConfigurationError("\(label): \(file) is not a file to read the replacement from")
            }
            replacement = .file(file)
        } else {
            replacement = .pieces(try MapRemoteRule.pieces(Self.latin1(target), groups: regex.numberOfCaptureGroups,
                                                           pattern: bytePattern, option: label))
        }
        self.option = option
    }

    /// `body` with every match replaced, and how many there were; nil when the `@FILE` cannot be
    /// read now (the rule is skipped, as mitmproxy skips it).
    func apply(to body: [UInt8]) -> (bytes: [UInt8], replacements: Int)? {
        let pieces: [MapRemoteRule.Piece]
        switch replacement {
        case .pieces(let list): pieces = list
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            pieces = [.text(Self.latin1([UInt8](data)))]
        }
        let text = Self.latin1(body) as NSString
        let matches = regex.matches(in: text as String, range: NSRange(location: 0, length: text.length))
        guard !matches.isEmpty else { return (body, 0) }
        var result = ""
        var last = 0
        for match in matches {
            result += text.substring(with: NSRange(location: last, length: match.range.location - last))
            for piece in pieces {
                switch piece {
                case .text(let literal): result += literal
                case .group(let index): result += Self.substring(text, match.range(at: index))
                case .named(let name): result += Self.substring(text, match.range(withName: name))
                }
            }
            last = match.range.location + match.range.length
        }
        result += text.substring(from: last)
        return (result.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }, matches.count)
    }

    private static func substring(_ text: NSString, _ range: NSRange) -> String {
        range.location == NSNotFound ? "" : text.substring(with: range)
    }

    /// Each byte as the character of the same number (ISO 8859-1), so a regex reads bytes.
    static func latin1(_ bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    /// `text`'s UTF-8 bytes read as ISO 8859-1 (what a bytes pattern of it matches).
    static func latin1(_ text: String) -> String {
        latin1(Array(text.utf8))
    }
}
