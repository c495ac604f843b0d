/// One field line of a header or trailer section: a name and a value, as text.
///
/// Version-neutral: an HTTP/1.1 field line and a regular HTTP/2 field both map to one. Names keep
/// the letter case they arrived in (HTTP/2 sends lower case); lookups ignore ASCII case.
public struct HTTPField: Sendable, Hashable, CustomStringConvertible {
    /// The field name, e.g. `Content-Type` or `content-type`.
    public var name: String
    /// The field value, without the optional whitespace around it.
    public var value: String

    /// A field from its name and value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether this field is named `name`, ignoring ASCII case (RFC 9110 §5.1), without
    /// allocating: the bytes of both names are compared in place.
    public func hasName(_ name: String) -> Bool {
        ASCIICase.equal(self.name, name)
    }

    public var description: String { "\(name): \(value)" }
}
