import CertAuthority

/// TrustKit's `TSKTrustEvaluationResult` (`TSKTrustDecision.h`), the number in reports'
/// `validation-result`. Also used for the equivalent NSC and OkHttp outcomes.
public enum TrustEvaluationResult: Int, Sendable, Codable {
    case success = 0
    case failedNoMatchingPin = 1
    case failedInvalidCertificateChain = 2
    case errorInvalidParameters = 3
    /// macOS only; the value is reserved on every platform.
    case failedUserDefinedTrustAnchor = 4
    case errorCouldNotGenerateSpkiHash = 5
}

/// TrustKit's `TSKTrustDecision`.
public enum TrustDecision: Int, Sendable, Codable {
    case shouldAllowConnection = 0
    case shouldBlockConnection = 1
    /// The pinning library steps aside; the platform's default validation decides.
    case domainNotPinned = 2
}

/// What a pinned client decides for one connection, and why.
public struct PinEvaluation: Sendable {
    /// The library whose rules were applied.
    public var source: PolicySource
    /// nil when pin validation was not reached (not pinned, expired, excluded, overridden).
    public var validationResult: TrustEvaluationResult?
    public var decision: TrustDecision
    /// The matched policy key (`noted-hostname`); for OkHttp the first matching pattern.
    public var notedHostname: String?
    /// The policy entry that applied, if any (OkHttp: the first of the matching ones).
    public var entry: PinnedDomain?
    /// The chain pins were checked against (the verified path, leaf first); empty when unverified.
    public var evaluatedChain: [Certificate]
    /// The certificate whose key matched a pin.
    public var matchedCertificate: Certificate?
    /// The pin it matched.
    public var matchedPin: Pin?
    /// One line for humans.
    public var reason: String
    /// Where a TrustKit app would send a pin-failure report; empty when it sends none.
    public var reportURIs: [String]
    /// Whether the connection goes ahead: allowed, or not pinned and the chain is trusted.
    public var connects: Bool

    /// Whether a TrustKit app sends a report for this evaluation.
    public var sendsReport: Bool { !reportURIs.isEmpty }
}

/// Facts about the client that a policy file alone does not say.
public struct EvaluationContext: Sendable {
    /// Android: the trust source that holds the chain's anchor. Default `.user`, where a debugging
    /// proxy's CA lives after "Install certificate".
    public var androidAnchorStore: TrustAnchorReference.Store
    /// TrustKit: host matching and registry lookups. Default: the system public suffix list.
    public var trustKitMatcher: TrustKitDomainMatcher
    /// Android: the certificates of `<certificates src="@raw/name"/>` resources that were read,
    /// by `src`. A resource not here is taken not to hold the chain's anchor; `PolicyCheck`
    /// predicts both ways and says when the verdict depends on it. Default none.
    public var androidResources: [String: AndroidRawResource] = [:]
    /// Android: whether the app's resources were looked for (a res directory was given), so a
    /// resource missing from `androidResources` was not found rather than not looked for.
    public var androidResourcesLookedFor = false

    /// A context with the defaults stated on each property unless overridden.
    public init(androidAnchorStore: TrustAnchorReference.Store = .user,
                trustKitMatcher: TrustKitDomainMatcher = TrustKitDomainMatcher()) {
        self.androidAnchorStore = androidAnchorStore
        self.trustKitMatcher = trustKitMatcher
    }
}
