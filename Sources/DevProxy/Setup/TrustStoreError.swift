/// Why a trust store could not be read or changed.
public struct TrustStoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, for callers that branch on it.
    public enum Code: Sendable, Equatable {
        /// The program the store needs (`certutil`, `keytool`, …) is not installed.
        case toolMissing
        /// The program ran and failed; the reason holds its last line.
        case toolFailed
        /// Changing the store needs root (or write access this user lacks).
        case needsPrivileges
        /// The store is not where it was looked for.
        case notFound
        /// A file of the store could not be read or written.
        case fileError
    }

    public let code: Code
    /// One sentence saying what failed and what to do about it.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
