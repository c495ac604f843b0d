/// The one error type of the PinningPolicy module: a configuration the pinning library itself
/// would refuse (TrustKit's `NSException`, NSC's `ParserException`, OkHttp's
/// `IllegalArgumentException`), or a file we cannot read.
public struct PolicyError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is.
    public enum Code: String, Sendable {
        /// The file is not a policy in any format we know, or is not well-formed.
        case unreadable
        /// TrustKit: `TSKPinnedDomains` missing or empty.
        case noPinnedDomains
        /// A domain or pattern the library rejects (TrustKit registry length 0, OkHttp pattern).
        case invalidDomain
        /// includeSubdomains on a public suffix (TrustKit).
        case includeSubdomainsOnSuffix
        /// A pin that does not decode or has the wrong length or algorithm.
        case invalidPin
        /// Fewer distinct pins than required.
        case tooFewPins
        /// An exclude entry with other keys, or without an includeSubdomains parent (TrustKit).
        case invalidExclusion
        /// A value of the wrong type or form (report URI, expiration date, attribute).
        case invalidValue
        /// An element where the schema forbids it, or repeated (Android NSC).
        case invalidStructure
        /// The same domain declared twice (Android NSC).
        case duplicateDomain
    }

    public let code: Code
    /// One human line, in the library's own words where it has some.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
