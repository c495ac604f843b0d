import Foundation

/// Parses an Android `network_security_config.xml` as `XmlConfigSource` does and flattens it to
/// one `PinnedDomain` per `<domain>`, each carrying its config's effective (inherited) settings.
///
/// Inheritance (`NetworkSecurityConfig.Builder`): nested `domain-config` → enclosing
/// `domain-config` → `base-config` → platform default. Pin-sets are inherited only by nested
/// configs, since `base-config` cannot hold one.
public struct AndroidNSCParser: Sendable {
    /// The device time zone: `<pin-set expiration>` is midnight local time
    /// (`SimpleDateFormat` with the default time zone). Default: the current zone.
    public var timeZone: TimeZone
    /// Whether the app is `android:debuggable`, which makes `<debug-overrides>` apply. Default: false.
    public var debuggable: Bool
    /// The app's `targetSdkVersion`: at 23 or below the platform default also trusts user CAs.
    /// Default: 24, the first level with Network Security Config.
    public var targetSdkVersion: Int

    /// A parser with the defaults stated on each property unless overridden.
    public init(timeZone: TimeZone = .current, debuggable: Bool = false, targetSdkVersion: Int = 24) {
        self.timeZone = timeZone
        self.debuggable = debuggable
        self.targetSdkVersion = targetSdkVersion
    }

    /// Settings that flow from a config to the configs nested in it.
    private struct Inherited {
        var pins: [Pin]?
        var expiration: Date?
        var trustAnchors: [TrustAnchorReference]
        var cleartext: Bool?
        /// TrustKit-Android's `<trustkit-config>` settings, each inherited on its own when unset
        /// (`DomainPinningPolicy.Builder.build`).
        var enforcePinning: Bool?
        var reportURIs: [String]?
        var disablesDefaultReportURI: Bool?
    }

    /// Parses and validates the XML.
    ///
    /// - Throws: `PolicyError` where `XmlConfigSource` would throw its `ParserException`.
    public func parse(_ data: Data) throws -> PinningPolicy {
        let root = try XMLElementTree.parse(data)
        guard root.name == "network-security-config" else {
            throw PolicyError(.invalidStructure, "the root element is <\(root.name)>, not <network-security-config>")
        }
        let bases = root.children(named: "base-config")
        let debugs = root.children(named: "debug-overrides")
        guard bases.count <= 1 else { throw PolicyError(.invalidStructure, "Only one base-config allowed") }
        guard debugs.count <= 1 else { throw PolicyError(.invalidStructure, "Only one debug-overrides allowed") }

        var platform = [TrustAnchorReference(.system, overridesPins: false)]
        if targetSdkVersion <= 23 { platform.append(TrustAnchorReference(.user, overridesPins: false)) }

        var warnings: [String] = []
        var debugAnchors: [TrustAnchorReference] = []
        if let element = debugs.first {
            if debuggable {
                try forbid(["domain", "pin-set", "domain-config"], in: element, context: "debug-overrides")
                debugAnchors = try anchorsOf(element, context: "debug-overrides", overrideDefault: true, warnings: &warnings) ?? []
            } else {
                // A release build skips the element unread (`XmlUtils.skipCurrentTag`), so what it
                // holds cannot make the file invalid there; its anchors are kept as written.
                var unread: [String] = []
                debugAnchors = (try? anchorsOf(element, context: "debug-overrides", overrideDefault: true, warnings: &unread)) ?? []
            }
        }
        var base = Inherited(pins: nil, expiration: nil, trustAnchors: platform, cleartext: nil)
        // A `<trustkit-config>` anywhere says the app runs TrustKit-Android on this file: every
        // `<domain-config>` is then also one of its policies, report-only unless it enforces.
        let trustKitAndroid = root.contains(named: "trustkit-config")
        if let element = bases.first {
            try forbid(["domain", "pin-set", "domain-config"], in: element, context: "base-config")
            if let anchors = try anchorsOf(element, context: "base-config", overrideDefault: false, warnings: &warnings) {
                base.trustAnchors = anchors
            }
            base.cleartext = boolAttribute("cleartextTrafficPermitted", of: element, default: true, warnings: &warnings)
        }
        if debuggable { base.trustAnchors = merged(base.trustAnchors, debugAnchors) }

        var domains: [PinnedDomain] = []
        var seen = Set<String>()
        for element in root.children(named: "domain-config") {
            try collect(element, inheriting: base, debugAnchors: debugAnchors, trustKitAndroid: trustKitAndroid,
                        into: &domains, seen: &seen, warnings: &warnings)
        }
        return PinningPolicy(source: .androidNSC, domains: domains, baseTrustAnchors: base.trustAnchors,
                             baseCleartextTrafficPermitted: base.cleartext, debugOverrideAnchors: debugAnchors,
                             warnings: warnings)
    }

    /// Adds the `<domain>`s of one `<domain-config>` and recurses into nested ones.
    private func collect(_ element: XMLElementTree, inheriting parent: Inherited, debugAnchors: [TrustAnchorReference],
                         trustKitAndroid: Bool, into domains: inout [PinnedDomain], seen: inout Set<String>,
                         warnings: inout [String]) throws {
        let names = element.children(named: "domain")
        guard !names.isEmpty else { throw PolicyError(.invalidStructure, "No domain elements in domain-config") }
        var settings = parent
        if let anchors = try anchorsOf(element, context: "domain-config", overrideDefault: false, warnings: &warnings) {
            settings.trustAnchors = debuggable ? merged(anchors, debugAnchors) : anchors
        }
        let pinSets = element.children(named: "pin-set")
        guard pinSets.count <= 1 else { throw PolicyError(.invalidStructure, "Multiple pin-set elements not allowed") }
        if let pinSet = pinSets.first {
            (settings.pins, settings.expiration) = try parsePinSet(pinSet)
        }
        if let cleartext = boolAttribute("cleartextTrafficPermitted", of: element, default: true, warnings: &warnings) {
            settings.cleartext = cleartext
        }
        if let trustKit = element.children(named: "trustkit-config").first {
            // `TrustKitConfigurationParser.readTrustkitConfig`: Boolean.parseBoolean of the value.
            if let value = trustKit.attributes["enforcePinning"] { settings.enforcePinning = Self.javaBoolean(value) }
            if let value = trustKit.attributes["disableDefaultReportUri"] {
                settings.disablesDefaultReportURI = Self.javaBoolean(value)
            }
            settings.reportURIs = trustKit.children(named: "report-uri").map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
        }

        for name in names {
            let domain = name.text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            guard !domain.isEmpty else { throw PolicyError(.invalidStructure, "Empty domain name") }
            guard seen.insert(domain).inserted else {
                throw PolicyError(.duplicateDomain, "\(domain) has already been specified")
            }
            domains.append(PinnedDomain(
                pattern: domain,
                includeSubdomains: boolAttribute("includeSubdomains", of: name, default: false, warnings: &warnings) ?? false,
                pins: settings.pins ?? [],
                expiration: settings.expiration,
                trustAnchors: settings.trustAnchors,
                cleartextTrafficPermitted: settings.cleartext,
                source: .androidNSC
            ))
            if trustKitAndroid {
                domains[domains.count - 1].trustKitAndroid = true
                domains[domains.count - 1].enforce = settings.enforcePinning ?? false
                domains[domains.count - 1].reportURIs = settings.reportURIs ?? []
                domains[domains.count - 1].disablesDefaultReportURI = settings.disablesDefaultReportURI ?? false
            }
        }
        for nested in element.children(named: "domain-config") {
            try collect(nested, inheriting: settings, debugAnchors: debugAnchors, trustKitAndroid: trustKitAndroid,
                        into: &domains, seen: &seen, warnings: &warnings)
        }
    }

    /// 00:00 in `timeZone` of a pin-set's `expiration`, read as Android reads it (AOSP
    /// `XmlConfigSource.parsePinSet`: `SimpleDateFormat("yyyy-MM-dd")`, not lenient,
    /// `parse(String)`): digits, `-`, digits, `-`, digits (white space before each allowed), the year as
    /// many digits as given, month and day in range; what follows the day is ignored
    /// (`2027-06-30T00:00:00Z` is 30 June 2027). Any other separator (`2027/06/30`) is refused:
    /// the app's every secure connection then fails. nil for what Android refuses.
    static func expirationDay(_ text: String, timeZone: TimeZone) -> Date? {
        var bytes = text.utf8[...]
        func number() -> Int? {
            // SimpleDateFormat skips white space before a number (` 2027- 06-30` parses).
            bytes = bytes.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
            let digits = bytes.prefix { (0x30...0x39).contains($0) }
            guard !digits.isEmpty, digits.count <= 9 else { return nil }
            bytes = bytes.dropFirst(digits.count)
            return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        func dash() -> Bool {
            guard bytes.first == UInt8(ascii: "-") else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(), dash(), let month = number(), dash(), let day = number(),
              year >= 1, (1...12).contains(month), day >= 1 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components),
              calendar.component(.day, from: date) == day, calendar.component(.month, from: date) == month else { return nil }
        return date
    }

    /// `<pin-set expiration="yyyy-MM-dd">` with its `<pin digest="SHA-256">` children.
    private func parsePinSet(_ element: XMLElementTree) throws -> ([Pin], Date?) {
        var expiration: Date?
        if let text = element.attributes["expiration"] {
            guard let date = Self.expirationDay(text, timeZone: timeZone) else {
                throw PolicyError(.invalidValue, "Invalid expiration date: \(text)")
            }
            expiration = date
        }
        var pins: [Pin] = []
        for pin in element.children(named: "pin") {
            let digest = pin.attributes["digest"] ?? ""
            guard digest.caseInsensitiveCompare("SHA-256") == .orderedSame else {
                throw PolicyError(.invalidPin, "Unsupported pin digest algorithm: \(digest)")
            }
            let text = pin.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = LenientBase64.android(text) else {
                throw PolicyError(.invalidPin, "Invalid pin digest: \(text)")
            }
            guard bytes.count == 32 else {
                throw PolicyError(.invalidPin, "digest length \(bytes.count) does not match expected length for SHA-256 of 32")
            }
            let parsed = Pin(.sha256, digest: bytes)
            if !pins.contains(parsed) { pins.append(parsed) }
        }
        return (pins, expiration)
    }

    /// The `<certificates>` of an element's `<trust-anchors>`, or nil when it has none.
    private func anchorsOf(_ element: XMLElementTree, context: String, overrideDefault: Bool,
                           warnings: inout [String]) throws -> [TrustAnchorReference]? {
        let blocks = element.children(named: "trust-anchors")
        guard blocks.count <= 1 else {
            throw PolicyError(.invalidStructure, "Multiple trust-anchors elements not allowed in \(context)")
        }
        guard let block = blocks.first else { return nil }
        return try block.children(named: "certificates").map { certificates in
            guard let source = certificates.attributes["src"], !source.isEmpty else {
                throw PolicyError(.invalidStructure, "certificates element missing src attribute")
            }
            // `parseCertificatesEntry`: a resource reference, or exactly one of these words.
            guard source.hasPrefix("@") || ["system", "user", "wfa"].contains(source) else {
                throw PolicyError(.invalidValue, "Unknown certificates src. Should be one of system|user|@resourceVal: \(source)")
            }
            let overrides = boolAttribute("overridePins", of: certificates, default: overrideDefault, warnings: &warnings) ?? overrideDefault
            return TrustAnchorReference(.init(source: source), overridesPins: overrides)
        }
    }

    /// Throws when `element` has a child the schema forbids there (`parseConfigEntry`).
    private func forbid(_ names: [String], in element: XMLElementTree, context: String) throws {
        for child in element.children where names.contains(child.name) {
            if child.name == "domain-config" {
                throw PolicyError(.invalidStructure, "Nested domain-config not allowed in \(context)")
            }
            throw PolicyError(.invalidStructure, "<\(child.name)> is not allowed in \(context)")
        }
    }

    /// A boolean attribute as the device reads it; absent is nil. Never an error.
    ///
    /// aapt2 compiles an attribute without a namespace by trying, on the trimmed text,
    /// `true`/`TRUE`/`True` (or the `false` forms), a reference, a color, an integer, a float,
    /// and otherwise keeps the text (`ResourceUtils::TryParseItemForAttribute`,
    /// `link/XmlReferenceLinker.cpp`); `XmlBlock.Parser.getAttributeBooleanValue` then reads an
    /// integer type (boolean, integer, color) as "not zero" and anything else (text such as
    /// `yes`, `tRuE`, a reference `@bool/x`, a float) as `fallback`.
    private func boolAttribute(_ name: String, of element: XMLElementTree, default fallback: Bool,
                               warnings: inout [String]) -> Bool? {
        guard let value = element.attributes[name] else { return nil }
        let text = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if ["true", "TRUE", "True"].contains(text) { return true }
        if ["false", "FALSE", "False"].contains(text) { return false }
        if let nonZero = Self.compiledNumberIsNonZero(text) {
            warnings.append("\(name)=\"\(value)\" is compiled as a number, which Android reads as \(nonZero); write \(nonZero)")
            return nonZero
        }
        warnings.append("\(name)=\"\(value)\" is not true or false: aapt2 keeps it as text and Android reads the "
                        + "default, \(fallback)")
        return fallback
    }

    /// Java's `Boolean.parseBoolean` of an attribute as aapt2 left it: `true` in any case.
    static func javaBoolean(_ value: String) -> Bool {
        value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "true"
    }

    /// Whether the number aapt2 stores for `text` is not zero, when `text` compiles as a color or
    /// an integer (`TryParseColor`, `ResTable::stringToInt`: decimal, or `0x` hex, 32 bits); nil
    /// when it compiles as neither.
    static func compiledNumberIsNonZero(_ text: String) -> Bool? {
        if text.hasPrefix("#") {
            let digits = text.dropFirst()
            guard [3, 4, 6, 8].contains(digits.count), let value = UInt32(digits, radix: 16) else { return nil }
            // #rgb and #rrggbb get an alpha of 0xff: never zero.
            return digits.count == 3 || digits.count == 6 || value != 0
        }
        if text.lowercased().hasPrefix("0x") {
            return UInt32(text.dropFirst(2), radix: 16).map { $0 != 0 }
        }
        guard let value = Int64(text), value >= Int64(Int32.min), value <= Int64(UInt32.max) else { return nil }
        return value != 0
    }

    /// `extra` appended to `anchors`, skipping ones already present.
    private func merged(_ anchors: [TrustAnchorReference], _ extra: [TrustAnchorReference]) -> [TrustAnchorReference] {
        anchors + extra.filter { !anchors.contains($0) }
    }
}
