import Foundation

/// An Info.plist's `NSAppTransportSecurity` dictionary: the global switches, the per-domain
/// exceptions and the pinned domains (iOS 14+), as Apple documents them.
///
/// Sources: Apple developer documentation "NSAppTransportSecurity", "NSExceptionDomains",
/// "NSPinnedDomains", and the article "Identity Pinning: How to configure server certificates
/// for your app" (developer.apple.com/news/?id=g9ejcf8y).
public struct ATSPolicy: Sendable, Equatable {
    /// `NSAllowsArbitraryLoads` (default NO): ATS off for hosts no exception domain names.
    public var allowsArbitraryLoads: Bool
    /// Keys that, when present, make iOS 10+ ignore `NSAllowsArbitraryLoads` (Apple:
    /// NSAllowsArbitraryLoads): `NSAllowsArbitraryLoadsForMedia`, `…InWebContent`, `NSAllowsLocalNetworking`.
    public var overridingKeys: [String]
    public var exceptionDomains: [ATSExceptionDomain]
    public var pinnedDomains: [ATSPinnedDomain]

    public init(allowsArbitraryLoads: Bool = false, overridingKeys: [String] = [], exceptionDomains: [ATSExceptionDomain] = [],
                pinnedDomains: [ATSPinnedDomain] = []) {
        self.allowsArbitraryLoads = allowsArbitraryLoads
        self.overridingKeys = overridingKeys
        self.exceptionDomains = exceptionDomains
        self.pinnedDomains = pinnedDomains
    }

    /// Whether `NSAllowsArbitraryLoads` takes effect (iOS 10+ ignores it beside an overriding key).
    public var arbitraryLoadsInEffect: Bool { allowsArbitraryLoads && overridingKeys.isEmpty }

    /// The exception domain for `host`: the exact name, else the longest `NSIncludesSubdomains`
    /// parent (any depth). Names compare case-insensitively; one trailing dot is ignored.
    public func exceptionDomain(for host: String) -> ATSExceptionDomain? {
        let name = Self.normalise(host)
        if let exact = exceptionDomains.first(where: { Self.normalise($0.name) == name }) { return exact }
        return exceptionDomains
            .filter { $0.includesSubdomains && name.hasSuffix("." + Self.normalise($0.name)) }
            .max { $0.name.count < $1.name.count }
    }

    /// The pinned domain for `host`: the exact name, else a parent with `NSIncludesSubdomains`
    /// exactly one label up ("math.example.org" yes, "advanced.math.example.org" no: Apple,
    /// "Identity Pinning"; Apple's `parseNSPinnedDomains` test also matches a trailing dot).
    public func pinnedDomain(for host: String) -> ATSPinnedDomain? {
        let name = Self.normalise(host)
        if let exact = pinnedDomains.first(where: { Self.normalise($0.name) == name }) { return exact }
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex else { return nil }
        let parent = String(name[name.index(after: dot)...])
        return pinnedDomains.first { $0.includesSubdomains && Self.normalise($0.name) == parent }
    }

    static func normalise(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}

/// One `NSExceptionDomains` entry with Apple's documented defaults for keys it leaves out.
public struct ATSExceptionDomain: Sendable, Equatable {
    public var name: String
    /// `NSIncludesSubdomains`, default NO.
    public var includesSubdomains: Bool
    /// `NSExceptionAllowsInsecureHTTPLoads`, default NO: plain HTTP (and, Apple says, TLS that
    /// fails ATS's certificate checks) is allowed for this domain.
    public var allowsInsecureHTTPLoads: Bool
    /// `NSExceptionMinimumTLSVersion`, default TLSv1.2.
    public var minimumTLSVersion: ATSTLSVersion
    /// `NSExceptionRequiresForwardSecrecy`, default YES (ECDHE cipher suites only).
    public var requiresForwardSecrecy: Bool
    /// `NSRequiresCertificateTransparency`, default NO.
    public var requiresCertificateTransparency: Bool

    public init(name: String, includesSubdomains: Bool = false, allowsInsecureHTTPLoads: Bool = false,
                minimumTLSVersion: ATSTLSVersion = .tls12, requiresForwardSecrecy: Bool = true,
                requiresCertificateTransparency: Bool = false) {
        self.name = name
        self.includesSubdomains = includesSubdomains
        self.allowsInsecureHTTPLoads = allowsInsecureHTTPLoads
        self.minimumTLSVersion = minimumTLSVersion
        self.requiresForwardSecrecy = requiresForwardSecrecy
        self.requiresCertificateTransparency = requiresCertificateTransparency
    }
}

/// One `NSPinnedDomains` entry. A list is nil when its key is absent and empty when the key is
/// present with no valid `SPKI-SHA256-BASE64` entry (Apple's parser keeps such a key: its
/// `NSPinnedDomains_with_invalid_spki` case expects the key found with zero identities).
public struct ATSPinnedDomain: Sendable, Equatable {
    public var name: String
    /// `NSIncludesSubdomains`, default NO; one level of subdomain only.
    public var includesSubdomains: Bool
    /// `NSPinnedCAIdentities`: SPKI SHA-256 of any CA or sub-CA certificate of the chain.
    public var caIdentities: [Pin]?
    /// `NSPinnedLeafIdentities`: SPKI SHA-256 of the leaf only.
    public var leafIdentities: [Pin]?

    public init(name: String, includesSubdomains: Bool = false, caIdentities: [Pin]? = nil, leafIdentities: [Pin]? = nil) {
        self.name = name
        self.includesSubdomains = includesSubdomains
        self.caIdentities = caIdentities
        self.leafIdentities = leafIdentities
    }
}

/// `NSExceptionMinimumTLSVersion` values.
public enum ATSTLSVersion: String, Sendable, CaseIterable, Comparable, Codable {
    case tls10 = "TLSv1.0"
    case tls11 = "TLSv1.1"
    case tls12 = "TLSv1.2"
    case tls13 = "TLSv1.3"

    public static func < (lhs: ATSTLSVersion, rhs: ATSTLSVersion) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
