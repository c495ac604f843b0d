/// The one error type of DevProxy's QA features: a closed `code` and one human line.
public struct QAError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// A file that cannot be read or created.
        case unreadable
        /// A URL, address or option value that does not parse.
        case invalidInput
        /// A proxy, server or report endpoint that misbehaved.
        case network
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
