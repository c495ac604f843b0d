/// Why a filter expression does not parse, and where: `expected an expression after '&' at column 7`.
public struct FilterSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based, in characters (Unicode scalars) of the expression.
    public var column: Int
    /// What is wrong, without the position.
    public var reason: String

    public init(column: Int, reason: String) {
        self.column = column
        self.reason = reason
    }

    public var description: String { "\(reason) at column \(column)" }
}
