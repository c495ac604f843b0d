import Foundation

/// `--modify-headers |FLOW-FILTER|NAME|VALUE`, mitmproxy's modify_headers on requests: on a
/// request the filter passes (every request without one), every header NAME is removed and, when
/// VALUE is not empty, NAME: VALUE added. `@FILE` as the value reads the file at each request (one
/// trailing newline dropped), as mitmproxy reads it. DevProxy applies the rules to requests only.
public struct ModifyHeadersRule: Sendable {
    /// The option as given, an inline value masked when `--redact` names the header.
    public let shown: String
    let filter: MapRequestFilter?
    /// The header's name as given (what is added), and lower-cased (what is removed).
    let name: String
    let lowercased: String
    /// The value to set: text, or the file to read it from; nil: remove only.
    private let value: Value?

    private enum Value: Sendable {
        case text(String)
        case file(String)
    }

    /// Headers a rule may not set or remove: the message's framing and routing, which DevProxy
    /// writes itself (`--map-remote` sends a request elsewhere).
    private static let refused: Set<String> = ["host", "content-length", "transfer-encoding", "connection",
                                               "keep-alive", "upgrade", "te", "proxy-connection"]

    /// Parses `|FLOW-FILTER|NAME|VALUE` or `|NAME|VALUE` (an empty VALUE removes the header).
    /// - Parameter redact: `--redact`'s header names; an inline value of one is masked in `shown`.
    /// - Throws: `ConfigurationError` naming the option and what is wrong.
    public init(parsing option: String, redact: [String] = [],
                directory: String = FileManager.default.currentDirectoryPath) throws {
        let usage = "give --modify-headers |FLOW-FILTER|NAME|VALUE or |NAME|VALUE (the first character is the "
            + "separator; an empty VALUE removes the header)"
        let (filterText, name, valueText) = try MapRules.split(option, name: "--modify-headers", usage: usage)
        let label = "--modify-headers \(option)"
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
            throw ConfigurationError("\(label): \"\(name)\" is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
        }
        guard !Self.refused.contains(name.lowercased()) else {
            let hint = name.lowercased() == "host" ? " (--map-remote sends a request to another host)" : ""
            throw ConfigurationError("\(label): DevProxy writes \(name) itself and a rule may not change it\(hint)")
        }
        filter = try filterText.map { try MapRequestFilter(parsing: $0, option: label) }
        self.name = name
        lowercased = name.lowercased()
        if valueText.hasPrefix("@") {
            let path = NSString(string: String(valueText.dropFirst())).expandingTildeInPath
            let file = path.hasPrefix("/") ? path : (directory as NSString).appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard !path.isEmpty, FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory),
                  !isDirectory.boolValue else {
                throw ConfigurationError("\(label): \(file) is not a file to read the value from")
            }
            guard Self.read(file) != nil else {
                throw ConfigurationError("\(label): \(file) does not hold one line of header value (up to 64 KiB, "
                                         + "no control characters but tab)")
            }
            value = .file(file)
        } else if valueText.isEmpty {
            value = nil
        } else {
            guard Self.isFieldValue(valueText) else {
                throw ConfigurationError("\(label): the value holds a control character, which a header may not")
            }
            value = .text(valueText)
        }
        let masked = !valueText.isEmpty && !valueText.hasPrefix("@")
            && redact.contains { $0.lowercased() == name.lowercased() }
        shown = masked ? String(option.dropLast(valueText.count)) + "[redacted]" : option
    }

    /// The value to set now (a file read afresh); nil for a rule that only removes, or a file
    /// that no longer holds a header value (the header is removed then, as mitmproxy does).
    func currentValue() -> String? {
        switch value {
        case nil: return nil
        case .text(let text)?: return text
        case .file(let path)?: return Self.read(path)
        }
    }

    /// `path`'s text without one trailing newline; nil when it is unreadable, over 64 KiB, or
    /// holds a control character (a header value cannot).
    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 64 << 10,
              var text = String(data: data, encoding: .utf8) else { return nil }
        if text.hasSuffix("\r\n") { text.removeLast() } else if text.hasSuffix("\n") { text.removeLast() }
        return isFieldValue(text) ? text : nil
    }

    private static func isFieldValue(_ text: String) -> Bool {
        !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// What `--modify-headers` does to one request: the names removed (lower case) and the fields
/// added, in the order of the rules.
struct HeaderEdits: Sendable {
    var removed: Set<String> = []
    var added: [(name: String, value: String)] = []
}
