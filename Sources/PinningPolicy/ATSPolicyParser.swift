import Foundation

/// Reads `NSAppTransportSecurity` from an Info.plist (XML or binary) as the OS does: values of
/// the wrong type are ignored (and noted as warnings), a file that is not a property list is
/// refused.
public struct ATSPolicyParser: Sendable {
    static let globalKeys: Set<String> = ["NSAllowsArbitraryLoads", "NSAllowsArbitraryLoadsForMedia",
                                          "NSAllowsArbitraryLoadsInWebContent", "NSAllowsLocalNetworking",
                                          "NSExceptionDomains", "NSPinnedDomains"]
    static let overridingKeys = ["NSAllowsArbitraryLoadsForMedia", "NSAllowsArbitraryLoadsInWebContent",
                                 "NSAllowsLocalNetworking"]
    static let exceptionKeys: Set<String> = ["NSIncludesSubdomains", "NSExceptionAllowsInsecureHTTPLoads",
                                             "NSExceptionMinimumTLSVersion", "NSExceptionRequiresForwardSecrecy",
                                             "NSRequiresCertificateTransparency"]

    public init() {}

    /// - Throws: `PolicyError(.unreadable)` when the data is not a property list or has no
    ///   `NSAppTransportSecurity` dictionary.
    public func parse(_ data: Data) throws -> PinningPolicy {
        let root: Any
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw PolicyError(.unreadable, "not a property list (\(Self.describe(error)))")
        }
        guard let info = root as? [String: Any] else {
            throw PolicyError(.unreadable, "the property list is not a dictionary")
        }
        guard let ats = info["NSAppTransportSecurity"] as? [String: Any] else {
            throw PolicyError(.unreadable, info["NSAppTransportSecurity"] == nil ? "no NSAppTransportSecurity key"
                              : "NSAppTransportSecurity is not a dictionary")
        }
        return try parse(ats: ats)
    }

    /// Parses the `NSAppTransportSecurity` dictionary itself.
    public func parse(ats: [String: Any]) throws -> PinningPolicy {
        var warnings: [String] = []
        for key in ats.keys.sorted() where !Self.globalKeys.contains(key) {
            warnings.append(Self.exceptionKeys.contains(key)
                ? "\(key) at the top of NSAppTransportSecurity is ignored: Apple reads it only inside an "
                    + "NSExceptionDomains entry"
                : "unknown NSAppTransportSecurity key \(key) is ignored")
        }
        let arbitrary = bool(ats, "NSAllowsArbitraryLoads", in: "NSAppTransportSecurity", &warnings) ?? false
        var policy = ATSPolicy(allowsArbitraryLoads: arbitrary)
        policy.overridingKeys = Self.overridingKeys.filter { ats[$0] != nil }
        if policy.allowsArbitraryLoads, !policy.overridingKeys.isEmpty {
            let keys = policy.overridingKeys.joined(separator: ", ")
            warnings.append("NSAllowsArbitraryLoads is ignored on iOS 10 and later because \(keys) "
                            + "is present (Apple: NSAllowsArbitraryLoads)")
        }
        for (name, value) in dictionary(ats, "NSExceptionDomains", &warnings).sorted(by: { $0.key < $1.key }) {
            guard let entry = value as? [String: Any] else {
                warnings.append("NSExceptionDomains \(name) is not a dictionary; ignored")
                continue
            }
            let context = "NSExceptionDomains \(name)"
            var domain = ATSExceptionDomain(name: name)
            domain.includesSubdomains = bool(entry, "NSIncludesSubdomains", in: context, &warnings) ?? false
            func flag(_ key: String) -> Bool? { bool(entry, key, in: context, &warnings) }
            domain.allowsInsecureHTTPLoads = flag("NSExceptionAllowsInsecureHTTPLoads") ?? false
            domain.requiresForwardSecrecy = flag("NSExceptionRequiresForwardSecrecy") ?? true
            domain.requiresCertificateTransparency = flag("NSRequiresCertificateTransparency") ?? false
            if let text = entry["NSExceptionMinimumTLSVersion"] {
                if let text = text as? String, let version = ATSTLSVersion(rawValue: text) {
                    domain.minimumTLSVersion = version
                } else {
                    warnings.append("\(context): NSExceptionMinimumTLSVersion \(text) is not one of "
                                    + ATSTLSVersion.allCases.map(\.rawValue).joined(separator: ", ") + "; TLSv1.2 applies")
                }
            }
            for key in entry.keys.sorted() where !Self.exceptionKeys.contains(key) && !key.hasPrefix("NSThirdParty") {
                warnings.append("\(context): unknown key \(key) is ignored")
            }
            policy.exceptionDomains.append(domain)
        }
        for (name, value) in dictionary(ats, "NSPinnedDomains", &warnings).sorted(by: { $0.key < $1.key }) {
            guard let entry = value as? [String: Any] else {
                warnings.append("NSPinnedDomains \(name) is not a dictionary; ignored")
                continue
            }
            let context = "NSPinnedDomains \(name)"
            var domain = ATSPinnedDomain(name: name)
            domain.includesSubdomains = bool(entry, "NSIncludesSubdomains", in: context, &warnings) ?? false
            domain.caIdentities = identities(entry, "NSPinnedCAIdentities", in: context, &warnings)
            domain.leafIdentities = identities(entry, "NSPinnedLeafIdentities", in: context, &warnings)
            if domain.caIdentities == nil, domain.leafIdentities == nil {
                warnings.append("\(context) has neither NSPinnedCAIdentities nor NSPinnedLeafIdentities: nothing is pinned")
            }
            policy.pinnedDomains.append(domain)
        }
        let domains = policy.pinnedDomains.map { entry in
            PinnedDomain(pattern: entry.name, includeSubdomains: entry.includesSubdomains,
                         pins: Self.unique((entry.caIdentities ?? []) + (entry.leafIdentities ?? [])), source: .ats)
        }
        return PinningPolicy(source: .ats, domains: domains, warnings: warnings, ats: policy)
    }

    /// A pinned-identity list as Apple's `parseNSPinnedDomains` reads it: present (possibly
    /// empty) whenever the key is, keeping only dictionaries whose `SPKI-SHA256-BASE64` decodes.
    private func identities(_ entry: [String: Any], _ key: String, in context: String,
                            _ warnings: inout [String]) -> [Pin]? {
        guard let value = entry[key] else { return nil }
        guard let list = value as? [Any] else {
            warnings.append("\(context): \(key) is not an array; no identity is read from it")
            return []
        }
        var pins: [Pin] = []
        for item in list {
            guard let text = (item as? [String: Any])?["SPKI-SHA256-BASE64"] as? String else {
                warnings.append("\(context): an \(key) entry is not a dictionary with SPKI-SHA256-BASE64; ignored")
                continue
            }
            guard let pin = Pin(sha256Base64: text), pin.digest.count == 32 else {
                warnings.append("\(context): \(key) \(text) is not the base64 of a SHA-256 digest; ignored")
                continue
            }
            // Kept as listed, duplicates included: Apple's parser counts NSPinnedDomains_leaf's two equal entries as 2.
            pins.append(pin)
        }
        if pins.isEmpty { warnings.append("\(context): \(key) holds no valid identity") }
        return pins
    }

    private func bool(_ dictionary: [String: Any], _ key: String, in context: String,
                      _ warnings: inout [String]) -> Bool? {
        guard let value = dictionary[key] else { return nil }
        if let flag = ObjCValue.bool(value) { return flag }
        warnings.append("\(context): \(key) is not a boolean; ignored")
        return nil
    }

    private func dictionary(_ ats: [String: Any], _ key: String, _ warnings: inout [String]) -> [String: Any] {
        guard let value = ats[key] else { return [:] }
        guard let dictionary = value as? [String: Any] else {
            warnings.append("\(key) is not a dictionary; ignored")
            return [:]
        }
        return dictionary
    }

    private static func unique(_ pins: [Pin]) -> [Pin] {
        var seen: [Pin] = []
        for pin in pins where !seen.contains(pin) { seen.append(pin) }
        return seen
    }

    private static func describe(_ error: Error) -> String {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
        return text.replacingOccurrences(of: "\n", with: " ")
    }
}
