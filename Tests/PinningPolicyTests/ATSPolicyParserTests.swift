import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// `NSAppTransportSecurity` parsing: Apple's own `NSPinnedDomains` parsing cases
/// (`Tests/Fixtures/ats`, from si-20-sectrust-policies-data), exception-domain defaults, the
/// keys that void NSAllowsArbitraryLoads, binary plists, and refusal of what is not a plist.
@Suite struct ATSPolicyParserTests {
    static func fixture(_ name: String) throws -> Data {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }
        return try Data(contentsOf: url.appendingPathComponent("Fixtures/ats/\(name)"))
    }

    struct AppleCase: CustomTestStringConvertible, Sendable {
        let file: String
        let hasLeaf: Bool
        let leafCount: Int
        let hasCA: Bool
        let caCount: Int
        let includesSubdomains: Bool
        var testDescription: String { file }
    }

    static func appleCases() throws -> [AppleCase] {
        let list = try PropertyListSerialization.propertyList(from: try fixture("NSPinnedDomainsParsingTest.plist"), format: nil)
        return ((list as? [[String: Any]]) ?? []).map { test in
            let expected = test["ExpectedProperties"] as? [String: Any] ?? [:]
            return AppleCase(file: test["PlistFileName"] as? String ?? "", hasLeaf: expected["NSPinnedLeafIdentities"] as? Bool ?? false,
                             leafCount: expected["NSPinnedLeafIdentitiesCount"] as? Int ?? 0,
                             hasCA: expected["NSPinnedCAIdentities"] as? Bool ?? false,
                             caCount: expected["NSPinnedCAIdentitiesCount"] as? Int ?? 0,
                             includesSubdomains: expected["NSIncludesSubdomains"] as? Bool ?? false)
        }
    }

    @Test func appleDataHasSixCases() throws {
        #expect(try Self.appleCases().count == 6)
    }

    /// Apple's test checks presence, count != 0 and the subdomain lookup; counts are checked exactly here.
    @Test(arguments: try ATSPolicyParserTests.appleCases())
    func appleParsingCase(_ test: AppleCase) throws {
        let data = try Self.fixture(test.file + ".plist")
        #expect(PolicyLoader.detect(data) == .ats)
        let policy = try PolicyLoader.load(data: data)
        let ats = try #require(policy.ats)
        let domain = ats.pinnedDomain(for: "example.org")
        #expect((domain?.leafIdentities != nil) == test.hasLeaf, "\(test.file)")
        #expect((domain?.leafIdentities?.count ?? 0) == test.leafCount, "\(test.file)")
        #expect((domain?.caIdentities != nil) == test.hasCA, "\(test.file)")
        #expect((domain?.caIdentities?.count ?? 0) == test.caCount, "\(test.file)")
        let sub = ats.pinnedDomain(for: "subdomain.example.org.")
        #expect((sub?.caIdentities != nil) == test.includesSubdomains, "\(test.file)")
    }

    @Test func duplicateLeafIdentitiesAreKeptAsListedButPinnedOnce() throws {
        // NSPinnedDomains_leaf.plist repeats one identity; Apple counts 2 entries, the entry's pins hold it once.
        let policy = try PolicyLoader.load(data: try Self.fixture("NSPinnedDomains_leaf.plist"))
        #expect(policy.ats?.pinnedDomains.first?.leafIdentities?.count == 2)
        #expect(policy.domains.first?.pins.map(\.base64) == ["i9HalScvf6T/skE3/A7QOq5n5cTYs8UHNOEFCnkguSI="])
        #expect(policy.warnings.isEmpty)
    }

    @Test func invalidEntriesAreIgnoredWithWarnings() throws {
        let policy = try PolicyLoader.load(data: try Self.fixture("NSPinnedDomains_with_invalid_spki.plist"))
        #expect(policy.warnings.contains("NSPinnedDomains example.org: NSPinnedLeafIdentities is not an array; no identity is read from it"))
        #expect(policy.warnings.contains { $0.contains("an NSPinnedCAIdentities entry is not a dictionary with SPKI-SHA256-BASE64") })
    }

    @Test func subdomainsAreOneLevelDeep() throws {
        let policy = try PolicyLoader.load(data: try Self.fixture("NSPinnedDomains_ca.plist"))
        let ats = try #require(policy.ats)
        #expect(ats.pinnedDomain(for: "math.example.org")?.name == "example.org")
        #expect(ats.pinnedDomain(for: "EXAMPLE.org.")?.name == "example.org")
        #expect(ats.pinnedDomain(for: "advanced.math.example.org") == nil)
        #expect(policy.entry(for: "history.example.org")?.pattern == "example.org")
    }

    func parse(_ ats: [String: Any]) throws -> PinningPolicy {
        try ATSPolicyParser().parse(try PropertyListSerialization.data(fromPropertyList: ["NSAppTransportSecurity": ats],
                                                                       format: .binary, options: 0))
    }

    @Test func exceptionDomainsTakeApplesDefaultsAndBinaryPlistsParse() throws {
        let policy = try parse(["NSExceptionDomains": [
            "api.example.com": ["NSExceptionMinimumTLSVersion": "TLSv1.3", "NSRequiresCertificateTransparency": true],
            "legacy.example.com": ["NSIncludesSubdomains": true, "NSExceptionRequiresForwardSecrecy": false,
                                   "NSExceptionAllowsInsecureHTTPLoads": true],
        ]])
        let ats = try #require(policy.ats)
        let api = try #require(ats.exceptionDomain(for: "api.example.com"))
        #expect(api.minimumTLSVersion == .tls13 && api.requiresForwardSecrecy && api.requiresCertificateTransparency)
        #expect(!api.includesSubdomains && !api.allowsInsecureHTTPLoads)
        #expect(ats.exceptionDomain(for: "a.b.legacy.example.com")?.name == "legacy.example.com")
        #expect(ats.exceptionDomain(for: "www.api.example.com") == nil)
        #expect(ats.exceptionDomain(for: "legacy.example.com")?.requiresForwardSecrecy == false)
    }

    @Test func arbitraryLoadsIsVoidedByTheNewerKeys() throws {
        let plain = try #require(try parse(["NSAllowsArbitraryLoads": true]).ats)
        #expect(plain.arbitraryLoadsInEffect)
        let voided = try parse(["NSAllowsArbitraryLoads": true, "NSAllowsLocalNetworking": true])
        #expect(voided.ats?.arbitraryLoadsInEffect == false)
        #expect(voided.warnings.contains { $0.hasPrefix("NSAllowsArbitraryLoads is ignored on iOS 10 and later") })
    }

    @Test func exceptionKeysAtTheTopAndBadValuesAreNamed() throws {
        let policy = try parse(["NSExceptionMinimumTLSVersion": "TLSv1.3",
                                "NSExceptionDomains": ["a.dev": ["NSExceptionMinimumTLSVersion": "TLS1.3"]]])
        #expect(policy.warnings.contains("NSExceptionMinimumTLSVersion at the top of NSAppTransportSecurity is ignored: "
                                         + "Apple reads it only inside an NSExceptionDomains entry"))
        #expect(policy.warnings.contains("NSExceptionDomains a.dev: NSExceptionMinimumTLSVersion TLS1.3 is not one of "
                                         + "TLSv1.0, TLSv1.1, TLSv1.2, TLSv1.3; TLSv1.2 applies"))
        #expect(policy.ats?.exceptionDomain(for: "a.dev")?.minimumTLSVersion == .tls12)
    }

    @Test func malformedPlistsAreRefused() throws {
        let truncated = Data("<plist><dict><key>NSAppTransportSecurity</key><dict>".utf8)
        #expect(PolicyLoader.detect(truncated) == .ats)
        #expect(throws: PolicyError.self) { try PolicyLoader.load(data: truncated) }
        let noATS = try PropertyListSerialization.data(fromPropertyList: ["CFBundleName": "x"], format: .xml, options: 0)
        #expect(throws: PolicyError(.unreadable, "no NSAppTransportSecurity key")) { try PolicyLoader.load(data: noATS, kind: .ats) }
    }

    @Test func aTrustKitInfoPlistWithATSStaysTrustKitUnlessAsked() throws {
        let info: [String: Any] = ["TSKConfiguration": ["TSKPinnedDomains": [:]], "NSAppTransportSecurity": ["NSAllowsArbitraryLoads": false]]
        let data = try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0)
        #expect(PolicyLoader.detect(data) == .trustKit)
        #expect(try PolicyLoader.load(data: data, kind: .ats).source == .ats)
    }
}
