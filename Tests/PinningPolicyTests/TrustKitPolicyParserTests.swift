import Foundation
import Testing
@testable import PinningPolicy

/// TrustKit's configuration-parsing tests (`config_parsing` in the vectors), plus input formats.
@Suite struct TrustKitPolicyParserTests {
    let parser = TrustKitPolicyParser()

    @Test func vectorFileHasAllParsingCases() throws {
        #expect(try VectorCase.trustKit("config_parsing").count == 19)
    }

    @Test(arguments: try VectorCase.trustKit("config_parsing"))
    func configParsing(_ vector: VectorCase) throws {
        let config = try #require(vector.body["config"] as? [String: Any])
        let expect = try #require(vector.body["expect"] as? String)
        let outcome = Result { try parser.parse(configuration: config) }
        switch (expect, outcome) {
        case ("reject", .success):
            Issue.record("\(vector.name): TrustKit rejects this configuration, we accepted it")
        case ("accept", .failure(let error)):
            Issue.record("\(vector.name): TrustKit accepts this configuration, we rejected it: \(error)")
        case ("accept", .success(let policy)):
            for (host, expected) in vector.body["lookup"] as? [String: Any] ?? [:] {
                let noted = policy.entry(for: host, matcher: parser.matcher)?.pattern
                #expect(noted == expected as? String, "lookup \(host)")
            }
            if let parsed = vector.body["parsed"] as? [String: Any] {
                if parsed["TSKExpirationDate"] != nil {
                    let entry = try #require(policy.domains.first)
                    #expect(entry.expiration == ISO8601DateFormatter().date(from: "2015-01-01T00:00:00Z"))
                }
                if let count = parsed["pin_count"] as? Int { #expect(policy.domains.first?.pins.count == count) }
                if let swizzle = parsed["TSKSwizzleNetworkDelegates"] as? Bool {
                    #expect(policy.swizzleNetworkDelegates == swizzle)
                }
            }
        default:
            break
        }
    }

    @Test func readsInfoPlistJSONAndBarePlistAlike() throws {
        let domain: [String: Any] = [
            "TSKPublicKeyHashes": ["TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
            "TSKIncludeSubdomains": true, "TSKEnforcePinning": false, "TSKReportUris": ["https://r.example/report"],
            "TSKExpirationDate": "2030-06-01",
        ]
        let configuration: [String: Any] = ["TSKSwizzleNetworkDelegates": true, "TSKPinnedDomains": ["good.com": domain]]
        let infoPlist = try PropertyListSerialization.data(fromPropertyList: ["CFBundleIdentifier": "x", "TSKConfiguration": configuration],
                                                           format: .xml, options: 0)
        let barePlist = try PropertyListSerialization.data(fromPropertyList: configuration, format: .binary, options: 0)
        let json = try JSONSerialization.data(withJSONObject: configuration)
        for data in [infoPlist, barePlist, json] {
            let policy = try PolicyLoader.load(data: data)
            #expect(policy.source == .trustKit)
            let entry = try #require(policy.domains.first)
            #expect(entry.pattern == "good.com" && entry.includeSubdomains && !entry.enforce)
            #expect(entry.reportURIs == ["https://r.example/report"])
            #expect(entry.expiration == ISO8601DateFormatter().date(from: "2030-06-01T00:00:00Z"))
            #expect(policy.swizzleNetworkDelegates == true)
        }
    }

    @Test func onePinIsEnoughWhenNotEnforcing() throws {
        let config: [String: Any] = ["TSKPinnedDomains": ["good.com": [
            "TSKEnforcePinning": false, "TSKPublicKeyHashes": ["TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY="]]]]
        #expect(try parser.parse(configuration: config).domains.first?.pins.count == 1)
    }

    @Test(arguments: [
        ("unpadded", "TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY"),
        ("31 bytes", "TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6Q=="),
        ("whitespace", "TQEtdMbmwFgYUifM4LDF+xgEtd0z69mP Gmkp014d6ZY="),
    ])
    func rejectsPinsNSDataWouldNotDecodeTo32Bytes(_ label: String, _ pin: String) {
        let config: [String: Any] = ["TSKPinnedDomains": ["good.com": [
            "TSKPublicKeyHashes": [pin, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]]]]
        #expect(throws: PolicyError.self, "\(label)") { try parser.parse(configuration: config) }
    }

    @Test(arguments: ["localhost", "192.168.0.1", "example.local", "a.test"])
    func rejectsNamesWithoutARegistry(_ name: String) {
        let config: [String: Any] = ["TSKPinnedDomains": [name: [
            "TSKPublicKeyHashes": ["TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]]]]
        #expect { try parser.parse(configuration: config) } throws: { ($0 as? PolicyError)?.code == .invalidDomain }
    }

    @Test func unparseableExpirationMeansNeverExpiresWithAWarning() throws {
        let config: [String: Any] = ["TSKPinnedDomains": ["good.com": ["TSKExpirationDate": "01/01/2015",
            "TSKPublicKeyHashes": ["TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]]]]
        let policy = try parser.parse(configuration: config)
        #expect(policy.domains.first?.expiration == nil)
        #expect(policy.warnings.contains { $0.contains("never expiring") })
    }

    /// TrustKit hands the `TSKExpirationDate` value to `-[NSDateFormatter dateFromString:]`
    /// unchecked, and Foundation sends it `-length`: a plist `<date>` (or a number) has none, so
    /// the app crashes at start-up with "unrecognized selector". DevProxy read the `<date>` as
    /// never expiring, with a warning, and predicted the pins enforced.
    @Test func anExpirationThatIsNotAStringCrashesTheApp() throws {
        let pins = "<array><string>TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY=</string>"
            + "<string>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</string></array>"
        let values = [("a date", "<date>2030-06-01T00:00:00Z</date>"), ("a number", "<integer>20300601</integer>")]
        for (label, value) in values {
            let plist = """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>TSKConfiguration</key><dict><key>TSKPinnedDomains</key><dict>
                <key>good.com</key><dict><key>TSKExpirationDate</key>\(value)<key>TSKPublicKeyHashes</key>\(pins)</dict>
                </dict></dict></dict></plist>
                """
            #expect(throws: PolicyError.self, "\(label)") { try PolicyLoader.load(data: Data(plist.utf8)) }
            do {
                _ = try PolicyLoader.load(data: Data(plist.utf8))
            } catch let error as PolicyError {
                #expect(error.code == .invalidValue, "\(label)")
                let expected = "TSKExpirationDate for domain good.com as \(label), not a yyyy-MM-dd string"
                #expect("\(error)".contains(expected), "\(label): \(error)")
                #expect("\(error)".contains("crashes at start-up"), "\(label): \(error)")
            }
        }
    }

    /// TrustKit walks `TSKPublicKeyHashes` and `TSKReportUris` with `for (NSString *x in list)`:
    /// an array gives its elements, a dictionary its keys, and anything else (a lone string)
    /// has no fast enumeration, so the app crashes at start-up. DevProxy read a lone string as a
    /// one-element list and called a report-only policy valid.
    @Test func listsAreWhatFastEnumerationVisits() {
        let pin = "TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY="
        let cases: [(String, [String: Any], Int?)] = [
            ("pins as one string", ["TSKEnforcePinning": false, "TSKPublicKeyHashes": pin], nil),
            ("report URI as one string", ["TSKEnforcePinning": false, "TSKReportUris": "https://r.example/report",
                                          "TSKPublicKeyHashes": [pin]], nil),
            ("pins as a dictionary's keys", ["TSKPublicKeyHashes": [pin: true, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=": true]], 2),
        ]
        for (label, entry, pins) in cases {
            let outcome = Result { try parser.parse(configuration: ["TSKPinnedDomains": ["good.com": entry]]) }
            switch (outcome, pins) {
            case (.success(let policy), let count?):
                #expect(policy.domains.first?.pins.count == count, "\(label)")
            case (.failure(let error), nil):
                #expect((error as? PolicyError)?.code == .invalidValue && "\(error)".contains("not an array"), "\(label): \(error)")
            default:
                Issue.record("\(label): \(outcome)")
            }
        }
    }
}
