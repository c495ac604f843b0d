import Foundation
import Testing
@testable import PinningPolicy

/// TrustKit configurations as apps write them in code: Swift and Objective-C dictionary literals
/// handed to `initSharedInstance(withConfiguration:)`, read as TrustKit reads the dictionary.
/// DevProxy read only plists and JSON, and said of an AppDelegate that it was "neither a property
/// list nor JSON", so the most common TrustKit set-up could not be checked at all.
@Suite struct TrustKitSourceReaderTests {
    static let pinA = "TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY="
    static let pinB = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

    /// `pins snippet --format trustkit` (Swift) reads back as the plist form of the same snippet does.
    @Test func theSwiftSnippetReadsAsItsPlist() throws {
        let snippet = PinSnippet(domain: "api.acme.dev", includeSubdomains: true,
                                 pins: [.init(base64: Self.pinA, comment: "team root"), .init(base64: Self.pinB, comment: "backup")],
                                 reportURIs: ["https://reports.acme.dev/report"], reportOnly: true, expiration: "2030-06-01")
        let swift = try PolicyLoader.load(data: Data(snippet.render(.trustKit).utf8))
        let plist = try PolicyLoader.load(data: Data(snippet.render(.trustKitPlist).utf8))
        #expect(swift.source == .trustKit)
        #expect(swift.domains == plist.domains)
        #expect(swift.swizzleNetworkDelegates == false && plist.swizzleNetworkDelegates == true)
    }

    @Test func objectiveCLiteralWithCommentsAndBoxedValues() throws {
        let source = """
            // AppDelegate.m
            NSDictionary *trustKitConfig = @{
                kTSKSwizzleNetworkDelegates: @NO,
                kTSKPinnedDomains: @{
                    @"api.example.com": @{
                        kTSKPublicKeyHashes: @[ @"\(Self.pinA)", /* backup */ @"\(Self.pinB)" ],
                        kTSKEnforcePinning: @(NO),
                        kTSKIncludeSubdomains: @YES,
                        kTSKReportUris: @[ @"https://r.example.com/log_report" ],
                    },
                    @"static.api.example.com": @{ kTSKExcludeSubdomainFromParentPolicy: @YES },
                },
            };
            [TrustKit initSharedInstanceWithConfiguration:trustKitConfig];
            """
        let policy = try PolicyLoader.load(data: Data(source.utf8))
        let entry = try #require(policy[pattern: "api.example.com"])
        #expect(entry.pins.map(\.base64) == [Self.pinA, Self.pinB])
        #expect(!entry.enforce && entry.includeSubdomains && entry.reportURIs == ["https://r.example.com/log_report"])
        #expect(policy[pattern: "static.api.example.com"]?.excludedFromParent == true)
        #expect(policy.swizzleNetworkDelegates == false)
    }

    /// Keys spelled as their raw strings, an empty dictionary elsewhere, and TrustKit's own
    /// start-up checks applied to what was read.
    @Test func rawStringKeysAndTrustKitsOwnChecks() throws {
        let source = """
            let unrelated: [String: Any] = [:]
            TrustKit.initSharedInstance(withConfiguration: ["TSKPinnedDomains": [
                "api.example.com": ["TSKPublicKeyHashes": ["\(Self.pinA)"]],
            ]])
            """
        #expect { try PolicyLoader.load(data: Data(source.utf8)) } throws: { ($0 as? PolicyError)?.code == .tooFewPins }
    }

    /// A value that is not a literal cannot be known: the error names it rather than guessing.
    @Test(arguments: [
        ("kTSKPublicKeyHashes: [Pins.primary, Pins.backup]", "Pins.primary"),
        ("kTSKPublicKeyHashes: [\"\\(primary)\", \"\(TrustKitSourceReaderTests.pinB)\"]", "\"\\(primary)\""),
    ])
    func aValueThatIsNotALiteralIsNamed(_ hashes: String, _ named: String) {
        let source = "let config: [String: Any] = [kTSKPinnedDomains: [\"api.example.com\": [\(hashes)]]]"
        #expect { try PolicyLoader.load(data: Data(source.utf8)) } throws: { error in
            (error as? PolicyError)?.code == .unreadable && "\(error)".contains("`\(named)")
        }
    }

    /// Broken and hostile source is an error, never a trap: deep nesting is bounded (it would
    /// exhaust the stack), and unterminated strings, comments and a lone `@` end the reading.
    @Test(arguments: [
        "x = [kTSKPinnedDomains: " + String(repeating: "[", count: 100_000),
        "x = [kTSKPinnedDomains: @(" + String(repeating: "@(", count: 100_000),
        "x = [kTSKPinnedDomains: [\"api.example.com", "x = @{kTSKPinnedDomains: @", "x = [kTSKPinnedDomains: /* open",
        "x = [kTSKPinnedDomains: -]", "x = [kTSKPinnedDomains: [\"a.com\": [kTSKPublicKeyHashes: [\"x\" \"y\"]]]",
        "kTSKPinnedDomains: [:]",
    ])
    func brokenSourceIsAnErrorNotATrap(_ source: String) {
        #expect(throws: PolicyError.self) { try TrustKitPolicyParser().parse(Data(source.utf8)) }
    }
}
