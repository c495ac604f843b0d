import CertAuthority
import Foundation

/// Parses and validates a TrustKit (iOS/macOS) configuration as `parseTrustKitConfiguration`
/// does (`TrustKit/parse_configuration.m`), raising what TrustKit would raise at start-up.
///
/// Accepts an app's Info.plist (XML or binary) holding `TSKConfiguration`, a plist of the
/// configuration dictionary itself, the same dictionary as JSON, or the Swift or Objective-C
/// source that passes it to `initSharedInstance(withConfiguration:)` as a literal
/// (`TrustKitSourceReader`).
public struct TrustKitPolicyParser: Sendable {
    /// Raw key strings of TrustKit's constants (`TrustKit/TSKTrustKitConfig.m`).
    public enum Key {
        public static let configuration = "TSKConfiguration"
        public static let swizzleNetworkDelegates = "TSKSwizzleNetworkDelegates"
        public static let pinnedDomains = "TSKPinnedDomains"
        public static let ignorePinningForUserDefinedTrustAnchors = "TSKIgnorePinningForUserDefinedTrustAnchors"
        public static let publicKeyHashes = "TSKPublicKeyHashes"
        public static let enforcePinning = "TSKEnforcePinning"
        public static let includeSubdomains = "TSKIncludeSubdomains"
        // The raw string really lacks the T: `kTSKExcludeSubdomainFromParentPolicy` is
        // @"kSKExcludeSubdomainFromParentPolicy" in TSKTrustKitConfig.m.
        public static let excludeSubdomainFromParentPolicy = "kSKExcludeSubdomainFromParentPolicy"
        public static let reportUris = "TSKReportUris"
        public static let disableDefaultReportUri = "TSKDisableDefaultReportUri"
        public static let expirationDate = "TSKExpirationDate"
    }

    /// How hosts are matched and names validated.
    public let matcher: TrustKitDomainMatcher

    /// A parser validating names against `matcher`'s public suffix list.
    public init(matcher: TrustKitDomainMatcher = TrustKitDomainMatcher()) {
        self.matcher = matcher
    }

    /// Parses a plist (XML or binary) or JSON document.
    ///
    /// - Throws: `PolicyError` with TrustKit's message for anything TrustKit rejects.
    public func parse(_ data: Data) throws -> PinningPolicy {
        let root: Any
        let first = data.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d) }
        if first == UInt8(ascii: "{") {
            do {
                root = try JSONDocument.object([UInt8](data))
            } catch {
                throw PolicyError(.unreadable, "the TrustKit configuration is \(error.reason)")
            }
        } else {
            do {
                root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch {
                // Swift or Objective-C source that builds the configuration as a literal.
                if let configuration = try TrustKitSourceReader.configuration(in: String(decoding: data, as: UTF8.self)) {
                    return try parse(configuration: configuration)
                }
                let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
                throw PolicyError(.unreadable, "the TrustKit configuration is neither a property list, JSON nor Swift or "
                                  + "Objective-C source with a kTSKPinnedDomains literal: \(detail)")
            }
        }
        guard let dictionary = root as? [String: Any] else {
            throw PolicyError(.unreadable, "the TrustKit configuration's root is not a dictionary")
        }
        let configuration = dictionary[Key.configuration] as? [String: Any] ?? dictionary
        return try parse(configuration: configuration)
    }

    /// Validates a configuration dictionary (the value of `TSKConfiguration`).
    ///
    /// - Throws: `PolicyError` for the first entry TrustKit would reject.
    public func parse(configuration: [String: Any]) throws -> PinningPolicy {
        var warnings: [String] = []
        if matcher.suffixList == nil {
            warnings.append("no public suffix list (\(PublicSuffixList.defaultPath)): domain names were not "
                            + "validated as TrustKit would; install the publicsuffix package")
        }
        guard let pinned = configuration[Key.pinnedDomains] as? [String: Any], !pinned.isEmpty else {
            throw PolicyError(.noPinnedDomains, "TrustKit was initialized with no pinned domains. The configuration "
                              + "format has changed: ensure your domain pinning policies are under the "
                              + "TSKPinnedDomains key within TSKConfiguration.")
        }
        var domains: [PinnedDomain] = []
        // NSDictionary order is unspecified; sorting makes the first reported error stable.
        for name in pinned.keys.sorted() {
            guard let entry = pinned[name] as? [String: Any] else {
                throw PolicyError(.invalidValue, "the pinning policy for domain \(name) is not a dictionary")
            }
            domains.append(try parseDomain(name, entry, warnings: &warnings))
        }
        for excluded in domains where excluded.excludedFromParent {
            // TrustKit looks up "a" + name so that the exact entry itself cannot be found.
            guard matcher.lookup("a" + excluded.pattern, in: domains) != nil else {
                throw PolicyError(.invalidExclusion, "TrustKit was initialized with TSKExcludeSubdomainFromParentPolicy "
                                  + "for domain \(excluded.pattern) but could not find a policy for a parent domain")
            }
        }
        return PinningPolicy(
            source: .trustKit,
            domains: domains,
            swizzleNetworkDelegates: configuration[Key.swizzleNetworkDelegates].flatMap(ObjCValue.bool) ?? false,
            ignorePinningForUserDefinedTrustAnchors:
                configuration[Key.ignorePinningForUserDefinedTrustAnchors].flatMap(ObjCValue.bool) ?? true,
            warnings: warnings
        )
    }

    /// One `TSKPinnedDomains` entry, checked in TrustKit's order.
    private func parseDomain(_ name: String, _ entry: [String: Any], warnings: inout [String]) throws -> PinnedDomain {
        let registry = matcher.registryLength(of: name)
        guard registry > 0 else {
            throw PolicyError(.invalidDomain, "TrustKit was initialized with an invalid domain \(name)")
        }
        if let exclude = entry[Key.excludeSubdomainFromParentPolicy], ObjCValue.bool(exclude) == true {
            guard entry.count == 1 else {
                throw PolicyError(.invalidExclusion, "TrustKit was initialized with TSKExcludeSubdomainFromParentPolicy "
                                  + "for domain \(name) but detected additional configuration keys")
            }
            return PinnedDomain(pattern: name, excludedFromParent: true, source: .trustKit)
        }
        let includeSubdomains = entry[Key.includeSubdomains].flatMap(ObjCValue.bool) ?? false
        if includeSubdomains, registry == name.utf16.count {
            throw PolicyError(.includeSubdomainsOnSuffix,
                              "TrustKit was initialized with includeSubdomains for a domain suffix \(name)")
        }
        var expiration: Date?
        if let raw = entry[Key.expirationDate] {
            expiration = try parseExpiration(raw, of: name, warnings: &warnings)
        }
        let enforce = entry[Key.enforcePinning].flatMap(ObjCValue.bool) ?? true
        let disableDefault = entry[Key.disableDefaultReportUri].flatMap(ObjCValue.bool) ?? false
        var reportURIs: [String] = []
        if let raw = entry[Key.reportUris] {
            for value in try enumerated(raw, Key.reportUris, of: name) {
                guard let text = value as? String, URL(string: text) != nil else {
                    throw PolicyError(.invalidValue,
                                      "TrustKit was initialized with an invalid value for TSKReportUris for domain \(name)")
                }
                reportURIs.append(text)
            }
        }
        var pins: [Pin] = []
        let rawPins = try entry[Key.publicKeyHashes].map { try enumerated($0, Key.publicKeyHashes, of: name) } ?? []
        for value in rawPins {
            // initWithBase64EncodedString:options:0 is strict: padding required, no whitespace.
            guard let text = value as? String, let pin = Pin(sha256Base64: text), pin.digest.count == 32 else {
                throw PolicyError(.invalidPin, "TrustKit was initialized with an invalid Pin \(value) for domain \(name)")
            }
            if !pins.contains(pin) { pins.append(pin) }
        }
        let required = enforce ? 2 : 1
        guard pins.count >= required else {
            throw PolicyError(.tooFewPins, "TrustKit was initialized with less than \(required) pins (ie. no backup "
                              + "pins) for domain \(name). This might brick your App; please review the Getting "
                              + "Started guide in ./docs/getting-started.md")
        }
        return PinnedDomain(pattern: name, includeSubdomains: includeSubdomains, pins: pins, enforce: enforce,
                            expiration: expiration, reportURIs: reportURIs, disablesDefaultReportURI: disableDefault,
                            source: .trustKit)
    }

    /// `TSKExpirationDate` as `[dateFormatter dateFromString:value]` reads it: 00:00 UTC of a
    /// `yyyy-MM-dd` string, nil (never expires, with a warning) for any other string.
    ///
    /// - Throws: `PolicyError(.invalidValue)` for a date, number, boolean, array or dictionary:
    ///   TrustKit passes the value on unchecked and Foundation's formatter sends it `-length`,
    ///   which none of them has, so the app crashes at start-up ("unrecognized selector").
    private func parseExpiration(_ raw: Any, of name: String, warnings: inout [String]) throws -> Date? {
        if let text = raw as? String {
            guard let date = TrustKitDate.expiration(text) else {
                // TrustKit assigns the nil date, which removes the key: the pins never expire.
                warnings.append("\(name): TSKExpirationDate \(text) does not parse as yyyy-MM-dd; TrustKit treats "
                                + "the pins as never expiring")
                return nil
            }
            return date
        }
        if raw is Data {
            // NSData has -length, so the formatter gets further than with a date; what it does
            // with data in place of a string is not known.
            warnings.append("\(name): TSKExpirationDate is data, not a yyyy-MM-dd string; what TrustKit does "
                            + "with it is not known (predicted: never expiring); write a string")
            return nil
        }
        let kind = raw is Date ? "a date"
            : raw is [Any] ? "an array" : raw is [String: Any] ? "a dictionary" : "a number"
        throw PolicyError(.invalidValue, "TrustKit was initialized with TSKExpirationDate for domain \(name) as "
                          + "\(kind), not a yyyy-MM-dd string: TrustKit hands it to NSDateFormatter as a string and "
                          + "the app crashes at start-up; write a string")
    }

    /// What TrustKit's `for (NSString *value in list)` visits: an array's elements, a
    /// dictionary's keys (fast enumeration of an NSDictionary yields its keys).
    ///
    /// - Throws: `PolicyError(.invalidValue)` for anything else (a lone string, a number): it has
    ///   no fast enumeration, so TrustKit's loop raises "unrecognized selector" and the app crashes
    ///   at start-up.
    private func enumerated(_ value: Any, _ key: String, of name: String) throws -> [Any] {
        if let array = value as? [Any] { return array }
        if let dictionary = value as? [String: Any] { return Array(dictionary.keys.sorted()) }
        let kind = value is String ? "a string" : value is Date ? "a date" : value is Data ? "data" : "a number"
        throw PolicyError(.invalidValue, "TrustKit was initialized with \(key) for domain \(name) as \(kind), not an array: "
                          + "TrustKit enumerates it and the app crashes at start-up; write an array")
    }
}
