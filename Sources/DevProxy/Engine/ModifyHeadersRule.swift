import Foundation

/// `--modify-headers |FLOW-FILTER|NAME|VALUE`, mitmproxy's modify_headers: on a request, and then
/// on its response's head, that the filter passes (every one without a filter), every header NAME
/// is removed and, when VALUE is not empty, NAME: VALUE added. The filter is asked of the flow as
/// it stands (`MapRequestFilter`, `allowingResponse`): `~q` passes the request alone, `~s`, `~c`,
/// `~hs` and `~ts` the response alone. `@FILE` as the value reads the file each time (one trailing
/// newline dropped), as mitmproxy reads it. Interim (1xx) responses are left as they came.
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

    /// Headers a rule may not set or remove: the message's framing and its connection's, which
    /// DevProxy writes itself (and HTTP/2 forbids, RFC 9113 §8.2.2). `Host` may be set, not
    /// removed: it is sent in place of the URL's (`:authority` over HTTP/2) while the connection
    /// still goes to the URL's host, as an edited Host in the web UI's resend goes.
    private static let refused: Set<String> = ["content-length", "transfer-encoding", "connection",
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
            throw ConfigurationError("\(label): DevProxy writes \(name) itself and a rule may not change it")
        }
        if name.lowercased() == "host" {
            guard !valueText.isEmpty, !valueText.hasPrefix("@"), Self.isAuthority(valueText) else {
                throw ConfigurationError("\(label): give Host a host[:port] inline (a request cannot go without "
                                         + "its Host; the connection still goes to the URL's host: --map-remote "
                                         + "sends a request to another one)")
            }
        }
        filter = try filterText.map { try MapRequestFilter(parsing: $0, option: label, allowingResponse: true) }
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

    /// Whether `text` reads as an authority's host and port (RFC 3986 §3.2.2: a name, an IPv4
    /// or a bracketed IPv6 literal): no user information, path, query, space or control character.
    private static func isAuthority(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "-._~%!$&'()*+,;=:[]".utf8.contains(byte)
            }
        }
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

/// What `--modify-headers` does to one request or response head: the names removed (lower case)
/// and the fields added, in the order of the rules.
struct HeaderEdits: Sendable {
    var removed: Set<String> = []
    var added: [(name: String, value: String)] = []

    /// What the `matching` rules do to a head whose fields are `fields`, as mitmproxy's
    /// modify_headers does it (every rule's header removed, then the values added), and the changes
    /// the flow records (`side`: `"response"` for a response's, nil for a request's). Nil when
    /// nothing changes: removing a header the head does not carry is not recorded, so the flow is
    /// not marked as changed and its line does not claim the header was there
    /// (`|~s|Strict-Transport-Security|` on every response).
    static func of(_ matching: [ModifyHeadersRule], on fields: [(name: String, value: String)],
                   side: String? = nil) -> (HeaderEdits, [Flow.HeaderChange])? {
        var edits = HeaderEdits()
        var changes: [Flow.HeaderChange] = []
        for rule in matching {
            edits.removed.insert(rule.lowercased)
            let value = rule.currentValue()
            if let value { edits.added.append((rule.name, value)) }
            guard value != nil || fields.contains(where: { $0.name.lowercased() == rule.lowercased }) else { continue }
            changes.append(Flow.HeaderChange(name: rule.name, action: value == nil ? "removed" : "set", by: rule.shown,
                                             on: side))
        }
        return changes.isEmpty ? nil : (edits, changes)
    }

    /// The `Host` a rule set on a request (the last, when several did): sent in place of the
    /// URL's, the connection still going to the URL's host.
    var host: String? {
        added.last { $0.name.lowercased() == "host" }?.value
    }
}
