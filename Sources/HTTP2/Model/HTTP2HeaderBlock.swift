/// A header block: the pseudo-header fields apart from the regular ones, each list in wire order.
///
/// Pseudo-header fields come first on the wire (RFC 9113 §8.3); keeping them apart means a
/// caller cannot put one after a regular field, and can read `:method` or `:status` directly.
public struct HTTP2HeaderBlock: Hashable, Sendable {
    /// `:method`, `:scheme`, `:authority`, `:path`, `:protocol` or `:status` fields.
    public var pseudo: [HTTP2Field] {
        didSet { pseudoChecked = false }
    }
    /// The regular fields, duplicates and order kept.
    public var fields: [HTTP2Field] {
        didSet { fieldsChecked = false }
    }
    /// `fields` passed every check sending makes (`forwarded()` found them fit to relay as they
    /// are), so `checkedBlockForSending` does not scan them again; any change to them clears it.
    /// Not part of the block's value (`==`, hashing).
    public internal(set) var fieldsChecked = false
    /// The same for `pseudo`: set on a head received from a peer, whose pseudo-header fields
    /// libnghttp2 checked (its HTTP messaging rules are stricter than sending's: `:path` and
    /// `:authority` by character class, `:method` a token, no whitespace at a value's ends), and
    /// kept by `forwarded()`; any change to them (`setPseudo`) clears it.
    public internal(set) var pseudoChecked = false

    public static func == (lhs: HTTP2HeaderBlock, rhs: HTTP2HeaderBlock) -> Bool {
        lhs.pseudo == rhs.pseudo && lhs.fields == rhs.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pseudo)
        hasher.combine(fields)
    }

    /// A block from its two parts.
    public init(pseudo: [HTTP2Field] = [], fields: [HTTP2Field] = []) {
        self.pseudo = pseudo
        self.fields = fields
    }

    /// A block from a flat list, pseudo-header fields (names starting with `:`) moved first.
    public init(_ all: [HTTP2Field]) {
        self.init(pseudo: all.filter(\.isPseudo), fields: all.filter { !$0.isPseudo })
    }

    /// A request head (RFC 9113 §8.3.1). For `CONNECT`, pass no scheme and no path.
    public static func request(method: String, scheme: String?, authority: String?, path: String?,
                               fields: [HTTP2Field] = []) -> HTTP2HeaderBlock {
        var pseudo = [HTTP2Field(":method", method)]
        if let scheme { pseudo.append(HTTP2Field(":scheme", scheme)) }
        if let authority { pseudo.append(HTTP2Field(":authority", authority)) }
        if let path { pseudo.append(HTTP2Field(":path", path)) }
        return HTTP2HeaderBlock(pseudo: pseudo, fields: fields)
    }

    /// A response head (RFC 9113 §8.3.2), final or informational.
    public static func response(status: Int, fields: [HTTP2Field] = []) -> HTTP2HeaderBlock {
        HTTP2HeaderBlock(pseudo: [HTTP2Field(":status", String(status))], fields: fields)
    }

    /// The value of the pseudo-header field `name` (with its colon, e.g. `":path"`), if present.
    public subscript(pseudo name: String) -> String? { Self.firstValue(name, in: pseudo) }

    /// The value of the first regular field named `name` (lowercase: received names are), if any.
    /// Names are compared as bytes; only the value found becomes a String.
    public func firstValue(_ name: String) -> String? { Self.firstValue(name, in: fields) }

    private static func firstValue(_ name: String, in list: [HTTP2Field]) -> String? {
        var name = name
        return name.withUTF8 { wanted in list.first { $0.hasName(wanted) }?.valueString }
    }

    public var method: String? { self[pseudo: ":method"] }
    public var scheme: String? { self[pseudo: ":scheme"] }
    public var authority: String? { self[pseudo: ":authority"] }
    public var path: String? { self[pseudo: ":path"] }
    /// `:status` as a number, if present and numeric.
    public var status: Int? { self[pseudo: ":status"].flatMap { Int($0) } }

    /// The values of every regular field named `name` (compared ignoring ASCII case), in order.
    public func values(_ name: String) -> [String] {
        let wanted = Array(name.lowercased().utf8)
        return fields.filter { $0.name == wanted }.map(\.valueString)
    }

    /// Every field, pseudo-header fields first: the order they go on the wire.
    public var all: [HTTP2Field] { pseudo + fields }

    /// Sets the pseudo-header field `name` (with its colon) to `value`: the first one present is
    /// replaced in place and any repeat removed, else it is added after the others.
    public mutating func setPseudo(_ name: String, _ value: String) {
        let wanted = Array(name.utf8)
        let replacement = HTTP2Field(name, value)
        guard let first = pseudo.firstIndex(where: { $0.name == wanted }) else {
            pseudo.append(replacement)
            return
        }
        pseudo[first] = replacement
        pseudo = pseudo.enumerated().filter { $0.offset <= first || $0.element.name != wanted }.map(\.element)
    }
}
