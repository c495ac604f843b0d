/// A message's fields as a flow records them: ordered `[name, value]` pairs, the form the flow log
/// writes (`[["Host", "example.com"], ["Accept", "*/*"]]`).
///
/// The names and values are kept in one flat array (name, value, name, value, …) rather than as an
/// array of two-element arrays, which made one heap object per field: ~12 a proxied h2 stream, each
/// allocated, reference counted and freed (callgrind of the h2 keep-alive cell: ~6,700
/// instructions a stream, docs/performance.md, Run 43). Reading it as a collection still gives
/// `[name, value]` arrays (made as they are read), so code that is not on the request path reads
/// and builds it as it read `[[String]]`; the request path uses `name(at:)`, `value(at:)` and
/// `append(name:value:)`.
///
/// An entry that is not a pair when one is built from arrays (imported or hand-written) is made
/// one: a lone name gets an empty value, parts past the second are dropped, an empty entry is
/// skipped.
public struct FieldPairs: Sendable, Hashable {
    /// Names and values in turn: name 0, value 0, name 1, value 1, …
    public private(set) var flat: [String]

    public init() { flat = [] }

    /// Fields from `[name, value]` arrays (see the type's note for entries that are not pairs).
    public init(_ pairs: some Sequence<[String]>) {
        flat = Self.flattened(pairs)
    }

    /// Names and values in turn, of `[name, value]` arrays.
    private static func flattened(_ pairs: some Sequence<[String]>) -> [String] {
        var flat: [String] = []
        flat.reserveCapacity(2 * pairs.underestimatedCount)
        for pair in pairs {
            guard let name = pair.first else { continue }
            flat.append(name)
            flat.append(pair.count > 1 ? pair[1] : "")
        }
        return flat
    }

    /// Room for `count` fields.
    public mutating func reserveCapacity(_ count: Int) { flat.reserveCapacity(2 * count) }

    /// The name of field `index`.
    public func name(at index: Int) -> String { flat[2 * index] }

    /// The value of field `index`.
    public func value(at index: Int) -> String { flat[2 * index + 1] }

    /// Consuming: a caller's own strings move in (a borrowed one was retained to be stored, and
    /// released again by the caller).
    public mutating func append(name: consuming String, value: consuming String) {
        flat.append(name)
        flat.append(value)
    }

    /// Appends `[name, value]` (see the type's note for an entry that is not a pair).
    public mutating func append(_ pair: [String]) {
        flat.append(contentsOf: Self.flattened(CollectionOfOne(pair)))
    }

    /// The value of the first field named `name`, ignoring ASCII case.
    public func first(named name: String) -> String? {
        var index = 0
        while index < flat.count {
            if ASCIICase.equal(flat[index], name) { return flat[index + 1] }
            index += 2
        }
        return nil
    }

    /// The fields as `[name, value]` arrays.
    public var arrays: [[String]] { Array(self) }
}

extension FieldPairs: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { flat.count / 2 }

    /// Field `position` as `[name, value]`.
    public subscript(position: Int) -> [String] {
        get { [flat[2 * position], flat[2 * position + 1]] }
        set {
            flat[2 * position] = newValue.first ?? ""
            flat[2 * position + 1] = newValue.count > 1 ? newValue[1] : ""
        }
    }

    public mutating func replaceSubrange<C: Collection<[String]>>(_ subrange: Range<Int>, with newElements: C) {
        flat.replaceSubrange(2 * subrange.lowerBound..<2 * subrange.upperBound, with: Self.flattened(newElements))
    }
}

extension FieldPairs: ExpressibleByArrayLiteral {
    /// `[]` makes nothing (the store's records write it for every flow).
    public init(arrayLiteral elements: [String]...) { flat = elements.isEmpty ? [] : Self.flattened(elements) }
}

extension FieldPairs: Codable {
    /// Decodes `[[name, value], …]`; an entry that is not a pair is made one (the type's note).
    public init(from decoder: any Decoder) throws {
        flat = Self.flattened(try [[String]](from: decoder))
    }

    /// Encodes `[[name, value], …]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for index in indices { try container.encode([name(at: index), value(at: index)]) }
    }
}

extension FieldPairs: CustomStringConvertible {
    public var description: String { arrays.description }
}
