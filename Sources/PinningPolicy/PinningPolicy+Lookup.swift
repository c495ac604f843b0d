import Foundation

extension PinningPolicy {
    /// The entries whose pins apply to `host`, by the policy's own library rules.
    ///
    /// - TrustKit: at most one (`TrustKitDomainMatcher.lookup`): exact entry, else the longest
    ///   includeSubdomains parent; case-sensitive.
    /// - Android NSC: at most one (`ApplicationConfig.getConfigForHostname`): host lower-cased,
    ///   one trailing dot removed, exact `<domain>` first, else the longest includeSubdomains
    ///   domain; a leading dot matches nothing (NSC throws).
    /// - OkHttp: every matching pattern; their pins are pooled.
    /// - ATS: the `NSPinnedDomains` entry (`ATSPolicy.pinnedDomain(for:)`).
    /// - custom: the first of `hosts` that covers it (`CustomPinner.matches`).
    public func entries(for host: String, matcher: TrustKitDomainMatcher = TrustKitDomainMatcher()) -> [PinnedDomain] {
        switch source {
        case .trustKit:
            return matcher.lookup(host, in: domains).map { [$0] } ?? []
        case .androidNSC:
            return androidEntry(for: host).map { [$0] } ?? []
        case .okHttp:
            return domains.filter { (try? OkHttpPattern($0.pattern))?.matches(host) == true }
        case .ats:
            guard let name = ats?.pinnedDomain(for: host)?.name else { return [] }
            return domains.filter { $0.pattern == name }
        case .custom:
            return domains.first { CustomPinner.matches($0.pattern, host) }.map { [$0] } ?? []
        }
    }

    /// The single entry for `host` (the first of `entries(for:)`), or nil when not pinned.
    public func entry(for host: String, matcher: TrustKitDomainMatcher = TrustKitDomainMatcher()) -> PinnedDomain? {
        entries(for: host, matcher: matcher).first
    }

    /// Android's most specific `<domain>` for `host`.
    private func androidEntry(for host: String) -> PinnedDomain? {
        var name = host.lowercased()
        guard !name.hasPrefix(".") else { return nil }
        if name.hasSuffix(".") { name.removeLast() }
        if let exact = domains.first(where: { $0.pattern == name }) { return exact }
        return domains
            .filter { $0.includeSubdomains && name.hasSuffix("." + $0.pattern) }
            .max { $0.pattern.count < $1.pattern.count }
    }
}
