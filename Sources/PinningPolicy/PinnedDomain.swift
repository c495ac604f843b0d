import Foundation

/// One entry of a pinning policy: the hosts it covers and what it requires of them.
///
/// A common shape for TrustKit domain policies, Android `<domain>`s (one entry per `<domain>`,
/// carrying its `<domain-config>`'s effective, inherited settings) and OkHttp pins grouped by
/// pattern. Fields a library does not have keep their neutral value.
public struct PinnedDomain: Sendable, Equatable {
    /// The domain name (TrustKit key, NSC `<domain>` text) or OkHttp pattern (`*.example.com`).
    public var pattern: String
    /// Whether subdomains are covered (TrustKit `TSKIncludeSubdomains`, NSC `includeSubdomains`).
    /// For OkHttp it is true for `*.` and `**.` patterns, which have their own matching rules.
    public var includeSubdomains: Bool
    /// The pins, in file order, duplicates removed. Empty means "no pinning" (NSC) or an exclude
    /// entry (TrustKit).
    public var pins: [Pin]
    /// False for report-only (TrustKit `TSKEnforcePinning NO`, TrustKit-Android's
    /// `enforcePinning`, false by default); NSC itself and OkHttp always enforce.
    public var enforce: Bool
    /// After this instant the pins are ignored (TrustKit: strict `<`; NSC: `now > expiration`).
    public var expiration: Date?
    /// TrustKit `TSKReportUris`, in order (TrustKit-Android: the `<report-uri>`s).
    public var reportURIs: [String]
    /// TrustKit `TSKDisableDefaultReportUri`.
    public var disablesDefaultReportURI: Bool
    /// TrustKit `kSKExcludeSubdomainFromParentPolicy = YES`: this exact name is not pinned.
    public var excludedFromParent: Bool
    /// Android: the effective trust anchors of this domain's config (own, inherited or default).
    public var trustAnchors: [TrustAnchorReference]
    /// Android: the effective `cleartextTrafficPermitted`, when the file or its parents set it.
    public var cleartextTrafficPermitted: Bool?
    /// Android: the file holds a `<trustkit-config>`, so the app runs TrustKit-Android on it, which
    /// turns this domain's pin failures into reports and blocks only when `enforce`.
    public var trustKitAndroid: Bool = false

    /// What a TrustKit-Android entry that does not enforce lets through, in the words of the lint
    /// and of each host's prediction alike: its `PinningTrustManager` swallows the platform's
    /// "Pin verification failed" only for connections given its SSLSocketFactory or trust
    /// manager, and from API 24 the platform's own trust manager enforces the <pin-set> on all others.
    public static let trustKitAndroidReportOnlyReach = "report-only through TrustKit-Android's socket factory; "
        + "from Android 7 the platform's Network Security Config still blocks a pin mismatch on every other connection"
    /// The library this entry follows.
    public var source: PolicySource

    /// An entry with neutral defaults for every field not given.
    public init(
        pattern: String,
        includeSubdomains: Bool = false,
        pins: [Pin] = [],
        enforce: Bool = true,
        expiration: Date? = nil,
        reportURIs: [String] = [],
        disablesDefaultReportURI: Bool = false,
        excludedFromParent: Bool = false,
        trustAnchors: [TrustAnchorReference] = [],
        cleartextTrafficPermitted: Bool? = nil,
        source: PolicySource
    ) {
        self.pattern = pattern
        self.includeSubdomains = includeSubdomains
        self.pins = pins
        self.enforce = enforce
        self.expiration = expiration
        self.reportURIs = reportURIs
        self.disablesDefaultReportURI = disablesDefaultReportURI
        self.excludedFromParent = excludedFromParent
        self.trustAnchors = trustAnchors
        self.cleartextTrafficPermitted = cleartextTrafficPermitted
        self.source = source
    }

    /// True when the pins no longer apply at `date`, using the library's own comparison.
    public func isExpired(at date: Date) -> Bool {
        guard let expiration else { return false }
        switch source {
        // TrustKit: `expirationDate < now`; NSC: `now_ms > expiration_ms` — the same strictness.
        case .trustKit, .androidNSC, .okHttp, .custom, .ats: return expiration < date
        }
    }
}
