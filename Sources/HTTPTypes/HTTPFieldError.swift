/// A field that cannot cross to another hop.
public struct HTTPFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name of the offending field, as it arrived.
    public let name: String

    /// A value holding CR, LF or NUL.
    public init(unsafeValueOf name: String) {
        self.name = name
    }

    public var description: String {
        "the value of \(name) holds CR, LF or NUL, which HTTP forbids in a field value"
    }
}
