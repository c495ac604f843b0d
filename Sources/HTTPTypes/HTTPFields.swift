/// A header or trailer section: field lines in the order and letter case they arrived, repeated
/// names kept.
///
/// Lookups compare names ignoring ASCII case and allocate nothing; `==` compares exactly (names'
/// case and order included), because a relay must know whether it changed a section.
public struct HTTPFields: Sendable, Equatable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// The fields as a flow records them (`FieldPairs`: names and values in one flat array), so
    /// that a flow's record shares them (`fieldPairs`) instead of copying every name and value
    /// into a list of its own (callgrind of an h2 stream: ~5,500 instructions and two arrays).
    private var pairs: FieldPairs

    /// An empty section.
    public init() {
        pairs = FieldPairs()
    }

    /// A section holding `fields` in the given order.
    public init(_ fields: [HTTPField]) {
        pairs = FieldPairs()
        pairs.reserveCapacity(fields.count)
        for field in fields { pairs.append(name: field.name, value: field.value) }
    }

    /// A section from `(name, value)` pairs in the given order.
    public init(_ pairs: [(String, String)]) {
        self.pairs = FieldPairs()
        self.pairs.reserveCapacity(pairs.count)
        for (name, value) in pairs { self.pairs.append(name: name, value: value) }
    }

    /// A section holding `pairs`' fields, sharing their storage.
    public init(_ pairs: FieldPairs) {
        self.pairs = pairs
    }

    /// A section from a literal; repeated names are kept, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The fields as a flow records them; shares this section's storage (no copy until one of
    /// the two is changed).
    public var fieldPairs: FieldPairs { pairs }

    public var startIndex: Int { 0 }
    public var endIndex: Int { pairs.endIndex }
    public subscript(position: Int) -> HTTPField {
        HTTPField(name: pairs.name(at: position), value: pairs.value(at: position))
    }

    /// The name of field `index`, read in place.
    public func name(at index: Int) -> String { pairs.name(at: index) }

    /// The value of field `index`, read in place.
    public func value(at index: Int) -> String { pairs.value(at: index) }

    /// Whether field `index` is named `name` (any case).
    private func field(_ index: Int, isNamed name: String) -> Bool {
        ASCIICase.equal(pairs.name(at: index), name)
    }

    /// The value of the first field named `name` (any case), or nil.
    public subscript(name: String) -> String? {
        pairs.first(named: name)
    }

    /// The values of every field named `name` (any case), in order; empty when there is none.
    public func values(_ name: String) -> [String] {
        indices.compactMap { field($0, isNamed: name) ? pairs.value(at: $0) : nil }
    }

    /// Every field named `name` as one list value, joined with ", " (RFC 9110 §5.3: a list
    /// field's lines are one value); nil when there is none. `Content-Encoding: gzip` and
    /// `Content-Encoding: br` on two lines are `gzip, br`.
    public func combined(_ name: String) -> String? {
        let all = values(name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    /// Whether at least one field is named `name` (any case).
    public func contains(_ name: String) -> Bool {
        indices.contains { field($0, isNamed: name) }
    }

    /// Makes room for `capacity` fields in all.
    public mutating func reserveCapacity(_ capacity: Int) {
        pairs.reserveCapacity(capacity)
    }

    /// Appends a field line after the existing ones (consuming, as `FieldPairs.append`).
    public mutating func append(name: consuming String, value: consuming String) {
        pairs.append(name: name, value: value)
    }

    /// Appends a field line after the existing ones.
    public mutating func append(_ field: HTTPField) {
        pairs.append(name: field.name, value: field.value)
    }

    /// Removes every field named `name` (any case).
    public mutating func remove(_ name: String) {
        removeAll { $0.hasName(name) }
    }

    /// Removes every field for which `shouldRemove` is true.
    public mutating func removeAll(where shouldRemove: (HTTPField) throws -> Bool) rethrows {
        var kept = FieldPairs()
        kept.reserveCapacity(count)
        for index in indices {
            let field = self[index]
            if try !shouldRemove(field) { kept.append(name: field.name, value: field.value) }
        }
        pairs = kept
    }

    /// Sets the first field named `name` to `value` in place and removes the others named so,
    /// or appends the field when there is none.
    public mutating func replaceOrAppend(name: String, value: String) {
        guard let first = indices.first(where: { field($0, isNamed: name) }) else {
            append(name: name, value: value)
            return
        }
        var result = FieldPairs()
        result.reserveCapacity(count)
        for index in indices {
            if index == first {
                result.append(name: pairs.name(at: index), value: value)
            } else if !field(index, isNamed: name) {
                result.append(name: pairs.name(at: index), value: pairs.value(at: index))
            }
        }
        pairs = result
    }

    /// Calls `visit` with each non-empty comma-separated element (RFC 9110 §5.6.1) of every
    /// field named `name`, SP/HTAB trimmed, until it returns false; false when it did.
    @discardableResult
    public func forEachListElement(_ name: String, _ visit: (Substring) -> Bool) -> Bool {
        for index in indices where field(index, isNamed: name) {
            let value = pairs.value(at: index)
            let utf8 = value.utf8
            var start = utf8.startIndex
            while start < utf8.endIndex {
                let end = utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
                var (from, to) = (start, end)
                while from < to, ASCIICase.isWhitespace(utf8[from]) { from = utf8.index(after: from) }
                while from < to, ASCIICase.isWhitespace(utf8[utf8.index(before: to)]) { to = utf8.index(before: to) }
                if from < to, !visit(value[from..<to]) { return false }
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
        map(\.description).joined(separator: "\n")
    }

    /// Exact comparison: same names in the same letter case, same values, same order.
    public static func == (lhs: HTTPFields, rhs: HTTPFields) -> Bool {
        lhs.pairs == rhs.pairs
    }
}
