import Foundation

/// TrustKit's host → policy lookup (`getPinningConfigurationKeyForDomain` and `isSubdomain` in
/// `TrustKit/configuration_utils.m`), reproduced quirk for quirk.
///
/// An exact entry always wins, even if expired, excluded or without includeSubdomains; otherwise
/// the includeSubdomains entry with the longest matching label wins. Comparison is
/// case-sensitive and a trailing dot defeats it, as in TrustKit.
public struct TrustKitDomainMatcher: Sendable {
    /// The registry lookup; nil falls back to "the last label is the registry".
    public let suffixList: PublicSuffixList?

    /// A matcher over `suffixList` (default: the system list, if it could be read).
    public init(suffixList: PublicSuffixList? = try? PublicSuffixList.system.get()) {
        self.suffixList = suffixList
    }

    /// `GetRegistryLength(host)`, or the last label's length when no list is available.
    public func registryLength(of host: String) -> Int {
        if let suffixList { return suffixList.registryLength(of: host) }
        guard let last = host.split(separator: ".").last, last.contains(where: \.isLetter) else { return 0 }
        return last.utf8.count
    }

    /// The entry TrustKit would apply to `host`, or nil when the host is not pinned.
    public func lookup(_ host: String, in domains: [PinnedDomain]) -> PinnedDomain? {
        if let exact = domains.first(where: { $0.pattern == host }) { return exact }
        var best = 0
        var noted: PinnedDomain?
        for domain in domains where domain.includeSubdomains {
            let score = subdomainMatchLength(domain: domain.pattern, host: host)
            if score > best {
                best = score
                noted = domain
            }
        }
        return noted
    }

    /// TrustKit's `isSubdomain`: the length of `"." + domain-label` when `host` is a subdomain of
    /// `domain`, else 0.
    ///
    /// It splits the host's label part on the domain's label part (NSString
    /// `componentsSeparatedByString:`) and requires the last piece to be empty, which is not
    /// quite `hasSuffix` (with `a.a.com`, `x.a.a.a.com` does not match).
    public func subdomainMatchLength(domain: String, host: String) -> Int {
        // NSString lengths are UTF-16 code units; both names are ASCII when they got this far.
        let domainUnits = Array(domain.utf16), hostUnits = Array(host.utf16)
        guard hostUnits.count > domainUnits.count else { return 0 }
        let domainRegistry = registryLength(of: domain), hostRegistry = registryLength(of: host)
        guard domainRegistry == hostRegistry, domainRegistry > 0 else { return 0 }
        guard domainUnits.suffix(domainRegistry) == hostUnits.suffix(hostRegistry) else { return 0 }
        let domainLabelCount = domainUnits.count - domainRegistry - 1
        let hostLabelCount = hostUnits.count - hostRegistry - 1
        guard domainLabelCount > 0, hostLabelCount > 0 else { return 0 }
        let label = "." + String(decoding: domainUnits.prefix(domainLabelCount), as: UTF16.self)
        let hostLabel = String(decoding: hostUnits.prefix(hostLabelCount), as: UTF16.self)
        let parts = hostLabel.components(separatedBy: label)
        return parts.last == "" ? label.utf16.count : 0
    }
}
