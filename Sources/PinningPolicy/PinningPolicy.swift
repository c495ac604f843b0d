import Foundation

/// A parsed pinning policy of one app: its entries and the library rules that apply to them.
public struct PinningPolicy: Sendable, Equatable {
    /// The library the policy was written for.
    public var source: PolicySource
    /// The entries. TrustKit and NSC names are unique; OkHttp may repeat patterns.
    public var domains: [PinnedDomain]
    /// TrustKit `TSKSwizzleNetworkDelegates` (default NO); nil for other sources.
    public var swizzleNetworkDelegates: Bool?
    /// TrustKit (macOS only) `TSKIgnorePinningForUserDefinedTrustAnchors` (default YES).
    public var ignorePinningForUserDefinedTrustAnchors: Bool
    /// Android: the trust anchors of hosts no `<domain>` matches (base-config or platform default).
    public var baseTrustAnchors: [TrustAnchorReference]
    /// Android: base-config `cleartextTrafficPermitted`, when set.
    public var baseCleartextTrafficPermitted: Bool?
    /// Android: the `<debug-overrides>` anchors as written (applied only for debuggable builds).
    public var debugOverrideAnchors: [TrustAnchorReference]
    /// Things the parser noticed that the library accepts silently (an unparseable TrustKit
    /// expiration, a missing public-suffix list, a non-literal OkHttp argument).
    public var warnings: [String]
    /// Kind `custom`: what the hand-written pinner hashes and looks at; nil for other sources.
    public var customPinner: CustomPinner?
    /// Kind `ats`: the whole `NSAppTransportSecurity` dictionary; nil for other sources.
    public var ats: ATSPolicy?

    /// A policy with neutral defaults for every field not given.
    public init(
        source: PolicySource,
        domains: [PinnedDomain],
        swizzleNetworkDelegates: Bool? = nil,
        ignorePinningForUserDefinedTrustAnchors: Bool = true,
        baseTrustAnchors: [TrustAnchorReference] = [],
        baseCleartextTrafficPermitted: Bool? = nil,
        debugOverrideAnchors: [TrustAnchorReference] = [],
        warnings: [String] = [],
        customPinner: CustomPinner? = nil,
        ats: ATSPolicy? = nil
    ) {
        self.source = source
        self.domains = domains
        self.swizzleNetworkDelegates = swizzleNetworkDelegates
        self.ignorePinningForUserDefinedTrustAnchors = ignorePinningForUserDefinedTrustAnchors
        self.baseTrustAnchors = baseTrustAnchors
        self.baseCleartextTrafficPermitted = baseCleartextTrafficPermitted
        self.debugOverrideAnchors = debugOverrideAnchors
        self.warnings = warnings
        self.customPinner = customPinner
        self.ats = ats
    }

    /// The entry with exactly this pattern, if any (no host matching).
    public subscript(pattern pattern: String) -> PinnedDomain? {
        domains.first { $0.pattern == pattern }
    }
}
