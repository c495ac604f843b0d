/// A header or trailer section: field lines in the order and letter case they arrived, repeated
/// names kept.
///
/// Lookups compare names ignoring ASCII case and allocate nothing; `==` compares exactly (names'
/// case and order included), because a relay must know whether it changed a section.
public struct HTTPFields: Sendable, Equatable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    private var fields: [HTTPField]

    /// An empty section.
    public init() {
        fields = []
    }

    /// A section holding `fields` in the given order.
    public init(_ fields: [HTTPField]) {
        self.fields = fields
    }

    /// A section from `(name, value)` pairs in the given order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { HTTPField(name: $0.0, value: $0.1) }
    }

    /// A section from a literal; repeated names are kept, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> HTTPField { fields[position] }

    /// The value of the first field named `name` (any case), or nil.
    public subscript(name: String) -> String? {
        fields.first { $0.hasName(name) }?.value
    }

    /// The values of every field named `name` (any case), in order; empty when there is none.
    public func values(_ name: String) -> [String] {
        fields.compactMap { $0.hasName(name) ? $0.value : nil }
    }

    /// Whether at least one field is named `name` (any case).
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.hasName(name) }
    }

    /// Makes room for `capacity` fields in all.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Appends a field line after the existing ones.
    public mutating func append(name: String, value: String) {
        fields.append(HTTPField(name: name, value: value))
    }

    /// Appends a field line after the existing ones.
    public mutating func append(_ field: HTTPField) {
        fields.append(field)
    }

    /// Removes every field named `name` (any case).
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.hasName(name) }
    }

    /// Removes every field for which `shouldRemove` is true.
    public mutating func removeAll(where shouldRemove: (HTTPField) throws -> Bool) rethrows {
        try fields.removeAll(where: shouldRemove)
    }

    /// Sets the first field named `name` to `value` in place and removes the others named so,
    /// or appends the field when there is none.
    public mutating func replaceOrAppend(name: String, value: String) {
        guard let first = fields.firstIndex(where: { $0.hasName(name) }) else {
            append(name: name, value: value)
            return
        }
        fields[first].value = value
        var index = first + 1
        while index < fields.endIndex {
            if fields[index].hasName(name) { fields.remove(at: index) } else { index += 1 }
        }
    }

    /// Calls `visit` with each non-empty comma-separated element (RFC 9110 §5.6.1) of every
    /// field named `name`, SP/HTAB trimmed, until it returns false; false when it did.
    @discardableResult
    public func forEachListElement(_ name: String, _ visit: (Substring) -> Bool) -> Bool {
        for field in fields where field.hasName(name) {
            let utf8 = field.value.utf8
            var start = utf8.startIndex
            while start < utf8.endIndex {
                let end = utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
                var (from, to) = (start, end)
                while from < to, ASCIICase.isWhitespace(utf8[from]) { from = utf8.index(after: from) }
                while from < to, ASCIICase.isWhitespace(utf8[utf8.index(before: to)]) { to = utf8.index(before: to) }
                if from < to, !visit(field.value[from..<to]) { return false }
                start = end == utf8.endIndex ? end : utf8.index(after: end)
            }
        }
        return true
    }

    /// Whether some comma-separated element of a field named `name` is `token`, ignoring ASCII
    /// case (`TE: trailers`, `Connection: close`).
    public func hasListElement(_ name: String, _ token: String) -> Bool {
        !forEachListElement(name) { !ASCIICase.equal(String($0), token) }
    }

    /// The fields as `Name: value` lines, for logs and test failures.
    public var description: String {
        fields.map(\.description).joined(separator: "\n")
    }

    /// Exact comparison: same names in the same letter case, same values, same order.
    public static func == (lhs: HTTPFields, rhs: HTTPFields) -> Bool {
        lhs.fields == rhs.fields
    }
}
