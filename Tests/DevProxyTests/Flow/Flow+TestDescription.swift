import DevProxy
import Testing

/// Parameterised tests name a flow by its id rather than dumping the whole record.
extension Flow: CustomTestStringConvertible {
    public var testDescription: String { "flow \(id) (\(mode.rawValue))" }
}
