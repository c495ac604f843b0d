import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// 43 base64 characters: a 32-byte digest without its `=`.
private let pin43 = "TQEtdMbmwFgYUifM4LDF+xgEtd0z69mPGmkp014d6ZY"

/// Every AOSP Network Security Config test file under `Tests/Fixtures/android-nsc/`, with the outcome
/// its `SOURCES.md` (from AOSP's `XmlConfigTests.java`) states, evaluated with the GoodRootCA chain
/// standing in for android.com's (none of the files pins its key).
@Suite struct AndroidNSCParserTests {
    /// What the README and AOSP's tests say about each file. `connects` is per host; the anchor
    /// store is the source trusting the chain's root.
    struct Expectation: Sendable {
        let anchorStore: TrustAnchorReference.Store
        let connects: [String: Bool]
    }

    static let expectations: [String: Expectation] = [
        // pinned, pin must match: our chain's keys are not pinned → fails.
        "pins1.xml": Expectation(anchorStore: .system, connects: ["android.com": false, "www.android.com": true]),
        // expired 2015-01-01 → pins ignored.
        "expired_pin.xml": Expectation(anchorStore: .system, connects: ["android.com": true]),
        // system anchors have overridePins="true" → a wrong pin still connects.
        "override_pins.xml": Expectation(anchorStore: .system, connects: ["android.com": true]),
        // the pinned domain fails, others connect.
        "bad_pin.xml": Expectation(anchorStore: .system, connects: ["android.com": false, "google.com": true]),
        // the nested developer.android.com config adds pins; android.com and its other subdomains have none.
        "nested_domains.xml": Expectation(anchorStore: .system, connects: [
            "developer.android.com": false, "android.com": true, "www.android.com": true]),
        // no pins anywhere.
        "nested_domains_override.xml": Expectation(anchorStore: .system, connects: [
            "android.com": true, "developer.android.com": true]),
        // android.com trusts only @raw/ca_certs_pem (non-debuggable build): a system-rooted chain fails.
        "debug_domain.xml": Expectation(anchorStore: .system, connects: ["android.com": false, "google.com": true]),
    ]

    static func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: Vectors.root.appendingPathComponent("android-nsc").path)
            .filter { $0.hasSuffix(".xml") }.sorted()
    }

    @Test func everyVectorFileHasAnExpectation() throws {
        let files = try Self.files()
        #expect(files.count == 7)
        #expect(Set(files) == Set(Self.expectations.keys))
    }

    @Test(arguments: try files())
    func vectorOutcome(_ file: String) throws {
        let expectation = try #require(Self.expectations[file])
        let policy = try PolicyLoader.load(data: try Vectors.data("android-nsc/" + file), timeZone: TimeZone(identifier: "UTC")!)
        #expect(policy.source == .androidNSC)
        let date = Date()
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: date)
            .verify(chain: [try Vectors.fixture("leaf")], host: nil)
        for (host, connects) in expectation.connects {
            let evaluation = PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: date,
                                                       context: EvaluationContext(androidAnchorStore: expectation.anchorStore))
            #expect(evaluation.connects == connects, "\(file) \(host): \(evaluation.reason)")
        }
    }

    @Test func nestedConfigInheritsAnchorsAndPins() throws {
        let policy = try AndroidNSCParser().parse(try Vectors.data("android-nsc/nested_domains.xml"))
        let developer = try #require(policy.entry(for: "developer.android.com"))
        #expect(developer.pins.map(\.base64) == ["zCTnfLwLKbS9S2sbp+uFz4KZOocFvXxkV06Ce9O5M2w="])
        #expect(developer.trustAnchors == [TrustAnchorReference(.system, overridesPins: false)])
        #expect(policy.entry(for: "android.com")?.pins.isEmpty == true)
        #expect(policy.entry(for: "foo.developer.android.com")?.pattern == "android.com")
        #expect(policy.baseCleartextTrafficPermitted == false)
    }

    @Test func nestedCleartextOverride() throws {
        let policy = try AndroidNSCParser().parse(try Vectors.data("android-nsc/nested_domains_override.xml"))
        #expect(policy.entry(for: "android.com")?.cleartextTrafficPermitted == true)
        #expect(policy.entry(for: "www.android.com")?.cleartextTrafficPermitted == true)
        #expect(policy.entry(for: "developer.android.com")?.cleartextTrafficPermitted == false)
    }

    @Test func debugOverridesApplyOnlyWhenDebuggable() throws {
        let data = try Vectors.data("android-nsc/debug_domain.xml")
        let release = try AndroidNSCParser(debuggable: false).parse(data)
        let debug = try AndroidNSCParser(debuggable: true).parse(data)
        let debugCA = TrustAnchorReference(.resource("@raw/test_debug_ca"), overridesPins: true)
        #expect(release.entry(for: "android.com")?.trustAnchors == [TrustAnchorReference(.resource("@raw/ca_certs_pem"), overridesPins: false)])
        #expect(debug.entry(for: "android.com")?.trustAnchors.contains(debugCA) == true)
        #expect(debug.baseTrustAnchors.contains(debugCA))
    }

    @Test func expirationIsDeviceLocalMidnight() throws {
        let policy = try AndroidNSCParser(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
            .parse(try Vectors.data("android-nsc/expired_pin.xml"))
        #expect(policy.domains.first?.expiration == ISO8601DateFormatter().date(from: "2014-12-31T15:00:00Z"))
    }

    /// `expiration` as Android's `SimpleDateFormat("yyyy-MM-dd")` (not lenient, `parse(String)`)
    /// reads it, checked against java.text.SimpleDateFormat on this machine's JDK: other
    /// separators are refused (DevProxy read `2027/06/30` as a date, and Android's app then
    /// failed every secure connection), text after the day is ignored (DevProxy refused
    /// `2027-06-30T00:00:00Z`, which Android reads as 30 June), single digits and a short year
    /// pass, out-of-range months and days do not.
    @Test func expirationParsesAsAndroidParsesIt() {
        let utc = TimeZone(identifier: "UTC")!
        let day = { (text: String) in AndroidNSCParser.expirationDay(text, timeZone: utc).map { ISO8601DateFormatter().string(from: $0) } }
        #expect(day("2027-06-30") == "2027-06-30T00:00:00Z")
        #expect(day("2027-06-30T00:00:00Z") == "2027-06-30T00:00:00Z")
        #expect(day("2027-6-3") == "2027-06-03T00:00:00Z")
        #expect(day("2024-02-29") == "2024-02-29T00:00:00Z")
        #expect(day(" 2027- 06-\t30") == "2027-06-30T00:00:00Z")
        for refused in ["2027/06/30", "2020.01.01", "2020 01 01", "2015-13-45", "2023-02-29", "2027-06-31", "2027 -06-30", "+2027-06-30",
                        "2027-06", "", "0-01-01", "2027-00-10", "2027-06-00"] {
            #expect(day(refused) == nil, "\(refused)")
        }
    }

    @Test(arguments: [
        ("<domain-config><domain>a.com</domain></domain-config><domain-config><domain>A.com</domain></domain-config>", PolicyError.Code.duplicateDomain),
        ("<domain-config><pin-set/></domain-config>", .invalidStructure),
        ("<base-config><pin-set/></base-config>", .invalidStructure),
        ("<domain-config><domain>a.com</domain><pin-set><pin digest=\"SHA-1\">AAAA</pin></pin-set></domain-config>", .invalidPin),
        ("<domain-config><domain>a.com</domain><pin-set><pin digest=\"SHA-256\">AAAA</pin></pin-set></domain-config>", .invalidPin),
        ("<domain-config><domain>a.com</domain><pin-set expiration=\"2015-13-45\"/></domain-config>", .invalidValue),
        // `parseConfigEntry`: "Nested domain-config not allowed in base-config" (DevProxy ignored it).
        ("<base-config><domain-config><domain>a.com</domain></domain-config></base-config>", .invalidStructure),
        // `parseCertificatesEntry`: "Unknown certificates src" for anything but system, user, wfa or
        // a resource reference (DevProxy read `User` and `raw/team_ca` as resources).
        ("<base-config><trust-anchors><certificates src=\"User\"/></trust-anchors></base-config>", .invalidValue),
        ("<domain-config><domain>a.com</domain><trust-anchors><certificates src=\"raw/team_ca\"/></trust-anchors></domain-config>",
         .invalidValue),
    ])
    func rejectsWhatXmlConfigSourceRejects(_ body: String, _ code: PolicyError.Code) {
        let xml = "<network-security-config>\(body)</network-security-config>"
        #expect { try AndroidNSCParser().parse(Data(xml.utf8)) } throws: { ($0 as? PolicyError)?.code == code }
    }

    /// A release build skips `<debug-overrides>` unread (`XmlUtils.skipCurrentTag`), so what it holds
    /// cannot break the file there; a debuggable build parses it and refuses what `parseConfigEntry`
    /// refuses. DevProxy refused both builds, predicting a crash for a release build that runs.
    @Test(arguments: [
        "<pin-set/>", "<domain>a.com</domain>", "<domain-config><domain>b.com</domain></domain-config>",
        "<trust-anchors><certificates src=\"nonsense\"/></trust-anchors>",
        "<trust-anchors><certificates src=\"user\"/></trust-anchors><trust-anchors/>",
    ])
    func debugOverridesAreReadOnlyInDebuggableBuilds(_ body: String) throws {
        let xml = "<network-security-config><debug-overrides>\(body)</debug-overrides>"
            + "<domain-config><domain>a.example</domain></domain-config></network-security-config>"
        let release = try AndroidNSCParser(debuggable: false).parse(Data(xml.utf8))
        #expect(release.entry(for: "a.example")?.trustAnchors == [TrustAnchorReference(.system, overridesPins: false)])
        #expect(throws: PolicyError.self) { try AndroidNSCParser(debuggable: true).parse(Data(xml.utf8)) }
    }

    /// `<pin>` text decoded by `android.util.Base64.decode(…, DEFAULT)`'s state machine: bytes
    /// outside the alphabet are skipped, padding is optional but must be whole and end the text.
    /// DevProxy stopped at the first `=`, so `…==` after 43 characters and two pins pasted into
    /// one `<pin>` were accepted, where Android throws "bad base-64" and the app's every secure
    /// connection fails.
    @Test(arguments: [
        ("43 characters and =", "\(pin43)=", true), ("no padding", pin43, true), ("white space inside", " \(pin43)\n = ", true),
        ("non-alphabet bytes skipped", "\(pin43.prefix(20))*\(pin43.dropFirst(20))=", true),
        ("too much padding", "\(pin43)==", false), ("two pins in one", "\(pin43)=\(pin43)=", false),
        ("= inside", "\(pin43.prefix(20))=\(pin43.dropFirst(20))", false), ("= first", "=\(pin43)", false),
    ])
    func pinTextDecodesAsAndroidBase64DecodesIt(_ label: String, _ text: String, _ accepted: Bool) {
        let xml = "<network-security-config><domain-config><domain>a.example</domain><pin-set>"
            + "<pin digest=\"SHA-256\">\(text)</pin></pin-set></domain-config></network-security-config>"
        let outcome = Result { try AndroidNSCParser().parse(Data(xml.utf8)) }
        switch outcome {
        case .success(let policy): #expect(accepted && policy.domains.first?.pins.first?.digest.count == 32, "\(label)")
        case .failure(let error): #expect(!accepted && (error as? PolicyError)?.code == .invalidPin, "\(label): \(error)")
        }
    }

    /// A boolean attribute reads as the device reads it: aapt2 compiles `true`/`TRUE`/`True` (and the
    /// false forms), colors and integers to numbers and keeps anything else as text, and
    /// `getAttributeBooleanValue` reads a number as "not zero" and text as the default. DevProxy
    /// refused `yes`, `1` or `@bool/x` ("Invalid value", the app predicted to crash) and read
    /// `tRuE` as true.
    @Test(arguments: [
        ("true", true), ("True", true), ("TRUE", true), (" true ", true), ("false", false), ("False", false),
        ("tRuE", false), ("yes", false), ("1", true), ("0", false), ("-1", true), ("0x10", true), ("0x0", false),
        ("#000", true), ("#0000", false), ("@bool/include_subdomains", false), ("1.5", false), ("", false),
    ])
    func booleanAttributesReadAsTheDeviceReadsThem(_ value: String, _ expected: Bool) throws {
        let xml = "<network-security-config><domain-config><domain includeSubdomains=\"\(value)\">example.com</domain>"
            + "<pin-set><pin digest=\"SHA-256\">\(String(repeating: "A", count: 43))=</pin></pin-set>"
            + "</domain-config></network-security-config>"
        let policy = try AndroidNSCParser().parse(Data(xml.utf8))
        #expect(policy.domains.first?.includeSubdomains == expected, "includeSubdomains=\"\(value)\"")
        #expect((policy.entry(for: "api.example.com") != nil) == expected, "includeSubdomains=\"\(value)\"")
        let spelled = ["true", "True", "TRUE", " true ", "false", "False"].contains(value)
        #expect(policy.warnings.isEmpty == spelled, "\(value): \(policy.warnings)")
    }

    /// Text in `overridePins` and `cleartextTrafficPermitted` gives their defaults: overriding inside
    /// `<debug-overrides>` and not elsewhere, and cleartext permitted.
    @Test func textInABooleanAttributeGivesItsDefault() throws {
        let xml = """
            <network-security-config><base-config cleartextTrafficPermitted="no"><trust-anchors>
            <certificates src="system" overridePins="yes"/></trust-anchors></base-config>
            <debug-overrides><trust-anchors><certificates src="user" overridePins="yes"/></trust-anchors></debug-overrides>
            </network-security-config>
            """
        let policy = try AndroidNSCParser(debuggable: true).parse(Data(xml.utf8))
        #expect(policy.baseTrustAnchors == [TrustAnchorReference(.system, overridesPins: false), TrustAnchorReference(.user, overridesPins: true)])
        #expect(policy.baseCleartextTrafficPermitted == true)
        #expect(policy.warnings.count == 3, "\(policy.warnings)")
    }

    /// A `<trustkit-config>` in the file means the app runs TrustKit-Android on it, whose
    /// `PinningTrustManager` reports the platform's "Pin verification failed" and throws it only
    /// when `enforcePinning` (default false, inherited by nested configs). DevProxy ignored the
    /// element and predicted `block` for a connection TrustKit-Android lets through and reports.
    @Test(arguments: [
        ("plain NSC", "", "", TrustDecision.shouldBlockConnection, [String]()),
        ("trustkit-config, enforcePinning unset", "<trustkit-config/>", "", .shouldAllowConnection,
         [PinningEvaluator.trustKitDefaultReportURI]),
        ("enforcing, own report URI only", "<trustkit-config enforcePinning=\"true\" disableDefaultReportUri=\"true\">"
         + "<report-uri> https://r.example/report </report-uri></trustkit-config>", "", .shouldBlockConnection, ["https://r.example/report"]),
        ("enforcing parent, nested child", "<trustkit-config enforcePinning=\"true\"/>", "api.", .shouldBlockConnection,
         [PinningEvaluator.trustKitDefaultReportURI]),
        ("TrustKit-Android elsewhere in the file", "", "", .shouldAllowConnection, [PinningEvaluator.trustKitDefaultReportURI]),
    ])
    func trustKitAndroidReportsAndEnforcesOnlyWhenAsked(_ label: String, _ trustKit: String, _ nestedPrefix: String,
                                                        _ decision: TrustDecision, _ reports: [String]) throws {
        let elsewhere = label.hasSuffix("elsewhere in the file")
            ? "<domain-config><domain>other.example</domain><trustkit-config/></domain-config>" : ""
        let nested = nestedPrefix.isEmpty ? "" : "<domain-config><domain>\(nestedPrefix)example.com</domain></domain-config>"
        let xml = "<network-security-config><domain-config><domain>example.com</domain><pin-set>"
            + "<pin digest=\"SHA-256\">\(pin43)=</pin><pin digest=\"SHA-256\">\(String(repeating: "A", count: 43))=</pin></pin-set>"
            + trustKit + nested + "</domain-config>" + elsewhere + "</network-security-config>"
        let policy = try AndroidNSCParser().parse(Data(xml.utf8))
        let date = Date()
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: date)
            .verify(chain: [try Vectors.fixture("leaf")], host: nil)
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: nestedPrefix + "example.com", verification: verification,
                                                   at: date, context: EvaluationContext(androidAnchorStore: .system))
        #expect(evaluation.decision == decision && evaluation.validationResult == .failedNoMatchingPin, "\(label): \(evaluation.reason)")
        #expect(evaluation.connects == (decision == .shouldAllowConnection), "\(label)")
        #expect(evaluation.reportURIs == reports, "\(label)")
    }

    @Test func userInstalledProxyCAFailsBeforePins() throws {
        let policy = try AndroidNSCParser().parse(try Vectors.data("android-nsc/pins1.xml"))
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")])
            .verify(chain: [try Vectors.fixture("leaf")], host: nil)
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: "www.android.com", verification: verification,
                                                   at: Date(), context: EvaluationContext(androidAnchorStore: .user))
        #expect(!evaluation.connects, "targetSdk ≥ 24 does not trust user CAs by default")
    }
}
