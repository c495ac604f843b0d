/// The field lines of a header or trailer section, in the order and letter case they arrived.
///
/// Lookups compare names ignoring ASCII case (RFC 9110 §5.1); `==` compares exactly, names'
/// case and order included, because a proxy that relays headers must know whether it changed them.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// One field line.
    public typealias Field = (name: String, value: String)

    private var fields: [Field]

    /// Creates an empty header section.
    public init() {
        fields = []
    }

    /// Creates a header section holding `fields` in the given order.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Creates a header section from a literal; repeated names are kept, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of field lines.
    public var count: Int { fields.count }

    /// Whether there are no field lines.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field named `name`, or nil.
    public subscript(name: String) -> String? {
        for index in fields.indices where fields[index].name.equalsCaseInsensitive(name) { return fields[index].value }
        return nil
    }

    /// The values of every field named `name`, in order; empty when there is none.
    public func values(_ name: String) -> [String] {
        fields.compactMap { $0.name.equalsCaseInsensitive(name) ? $0.value : nil }
    }

    /// Whether at least one field is named `name`.
    public func contains(_ name: String) -> Bool {
        containsName { $0.equalsCaseInsensitive(name) }
    }

    /// Whether any field's name satisfies `test`, read in place (iterating the fields copies each,
    /// a reference count for its name and value).
    func containsName(where test: (String) -> Bool) -> Bool {
        for index in fields.indices where test(fields[index].name) { return true }
        return false
    }

    /// Calls `body` with the value of each field named `name`, read in place.
    func forEachValue(named name: String, _ body: (_ name: String, _ value: String) -> Void) {
        for index in fields.indices where fields[index].name.equalsCaseInsensitive(name) {
            body(fields[index].name, fields[index].value)
        }
    }

    /// Makes room for `capacity` fields in all, so adding up to that many does not reallocate.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Appends a field line after the existing ones.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Puts a field line before the existing ones.
    public mutating func addFirst(name: String, value: String) {
        fields.insert((name: name, value: value), at: 0)
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsCaseInsensitive(name) }
    }

    /// Removes every field for which `shouldRemove` is true.
    public mutating func removeAll(where shouldRemove: (Field) throws -> Bool) rethrows {
        try fields.removeAll(where: shouldRemove)
    }

    /// Sets the first field named `name` to `value` in place and removes the others,
    /// or appends the field when there is none.
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let first = fields.firstIndex(where: { $0.name.equalsCaseInsensitive(name) }) else {
            add(name: name, value: value)
            return
        }
        fields[first].value = value
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if fields[index].name.equalsCaseInsensitive(name) {
                fields.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    /// The comma-separated elements of every field named `name` (RFC 9110 §5.6.1), trimmed, empty ones dropped.
    public func listElements(_ name: String) -> [Substring] {
        var elements: [Substring] = []
        for field in fields where field.name.equalsCaseInsensitive(name) {
            elements += Self.commaSeparated(field.value).filter { !$0.isEmpty }
        }
        return elements
    }

    /// Whether some comma-separated element of a field named `name` is `token`, ignoring ASCII
    /// case (`Connection: close`, `Expect: 100-continue`).
    ///
    /// The persistence and expectation checks run on every message; this asks without building
    /// the element list or lower-cased copies.
    public func hasListElement(_ name: String, _ token: String) -> Bool {
        token.withUTF8Bytes { token in
            // By index: iterating copies each field out, a reference count for its name and value.
            for index in fields.indices where fields[index].name.equalsCaseInsensitive(name) {
                if !Self.forEachListElement(of: fields[index].value, { !ASCII.equalsCaseInsensitive($0, token) }) {
                    return true
                }
            }
            return false
        }
    }

    /// Calls `visit` with each non-empty comma-separated element of `value`, SP/HTAB trimmed,
    /// until it returns false; false when it did.
    ///
    /// On the bytes, without building Substrings: the hop-by-hop and persistence checks run
    /// this on every message.
    @discardableResult
    static func forEachListElement(of value: String, _ visit: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        value.withUTF8Bytes { utf8 in
            var start = 0
            while start < utf8.count {
                var end = start
                while end < utf8.count && utf8[end] != ASCII.comma { end += 1 }
                var (from, to) = (start, end)
                while from < to, ASCII.isWhitespace(utf8[from]) { from += 1 }
                while from < to, ASCII.isWhitespace(utf8[to - 1]) { to -= 1 }
                if from < to, !visit(UnsafeBufferPointer(rebasing: utf8[from..<to])) { return false }
                start = end + 1
            }
            return true
        }
    }

    /// Every comma-separated element of `value`, SP/HTAB trimmed, empty ones kept (a
    /// Content-Length of `1,,1` is invalid, not `1`).
    ///
    /// Split on the bytes, not on Characters: this runs several times per message
    /// (Connection, Transfer-Encoding, Expect, Content-Length), and String's split and trim
    /// run grapheme breaking over every value.
    static func commaSeparated(_ value: String) -> [Substring] {
        let utf8 = value.utf8
        var elements: [Substring] = []
        var start = utf8.startIndex
        while true {
            let end = utf8[start...].firstIndex(of: ASCII.comma) ?? utf8.endIndex
            var (from, to) = (start, end)
            while from < to, ASCII.isWhitespace(utf8[from]) { from = utf8.index(after: from) }
            while from < to, ASCII.isWhitespace(utf8[utf8.index(before: to)]) { to = utf8.index(before: to) }
            elements.append(value[from..<to])
            guard end < utf8.endIndex else { return elements }
            start = utf8.index(after: end)
        }
    }

    /// Iterates field lines in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// The fields as `Name: value` lines, for logs and test failures.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Exact comparison: same names in the same letter case, same values, same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

extension Substring {
    /// This substring without leading and trailing characters from `characters`.
    func trimmingCharacters(in characters: String) -> Substring {
        var result = self
        while let first = result.first, characters.contains(first) { result.removeFirst() }
        while let last = result.last, characters.contains(last) { result.removeLast() }
        return result
    }
}
