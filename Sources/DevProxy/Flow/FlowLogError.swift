/// Why a flow log or HAR file could not be read or written.
public struct FlowLogError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        case notFound = "not_found"
        case notReadable = "not_readable"
        case notWritable = "not_writable"
        case io
    }

    public let code: Code
    /// One sentence for a person, naming the file and what to do.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
