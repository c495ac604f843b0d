import Foundation
@testable import PinningPolicy
import Testing

/// Inputs fuzz/run found that trapped the policy parsers (kept in fuzz/known-crashes/): each
/// must now give a thrown `PolicyError` or a policy, never a crash.
@Suite struct PolicyParserCrashTests {
    /// An `.add(` whose argument list runs past `.build()` makes `parseSource` search a range
    /// whose lower bound was beyond its upper bound (`scan..<end` with `scan > end`).
    @Test func addCallRunningPastBuildDoesNotTrap() throws {
        let source = """
        val pinner = CertificatePinner.Builder()
            .add("api.example.com", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .add("*.example.com",
                 "sha256/BBBBBBBBBBBBBBBBBBBB
                 "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",    .build()

        """
        let policy = try OkHttpPinnerParser().parse(source)
        #expect(policy.domains.first?.pattern == "api.example.com", "the well-formed .add before the broken one is kept")
    }

    /// A network security config whose element name holds bytes that are not UTF-8 traps
    /// inside swift-corelibs-foundation's XMLParser; such input is now refused before it.
    @Test func nonUTF8ElementNameIsRefusedNotATrap() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fuzz/known-crashes/android-nsc/non-utf8-element-name").standardized.path
        let data = try #require(FileManager.default.contents(atPath: path))
        let error = #expect(throws: PolicyError.self) { try AndroidNSCParser().parse(data) }
        #expect(error?.code == .unreadable)
    }

    /// A processing instruction without data crashed FoundationXML (strlen of NULL); such input
    /// is now refused before the parser sees it, while the XML declaration stays accepted.
    @Test(arguments: ["processing-instruction-without-data", "empty-xml-declaration"])
    func processingInstructionWithoutDataIsRefusedNotATrap(_ name: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fuzz/known-crashes/android-nsc/\(name)").standardized.path
        let data = try #require(FileManager.default.contents(atPath: path))
        let error = #expect(throws: PolicyError.self) { try AndroidNSCParser().parse(data) }
        #expect(error?.reason.contains("processing instruction") == true)
        let declared = Data("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<network-security-config/>".utf8)
        #expect(throws: Never.self) { try AndroidNSCParser().parse(declared) }
    }

    /// A `TSKExpirationDate` with a non-ASCII character trapped inside swift-corelibs-foundation's
    /// DateFormatter ("Incorrect range"); such a date is now refused before the formatter.
    @Test func nonASCIIExpirationDateIsRefusedNotATrap() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fuzz/known-crashes/trustkit/non-ascii-expiration-date").standardized.path
        let data = try #require(FileManager.default.contents(atPath: path))
        // A policy or a thrown PolicyError are both fine; reaching this line is the test.
        _ = try? TrustKitPolicyParser().parse(data)
        let policy = try TrustKitPolicyParser().parse(configuration: [
            "TSKPinnedDomains": ["good.com": ["TSKPublicKeyHashes": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                                                                      "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="],
                                              "TSKExpirationDate": "20\u{73C}S30-06-01"]],
        ])
        #expect(policy.domains.first?.expiration == nil)
        #expect(policy.warnings.contains { $0.contains("TSKExpirationDate") })
    }

    /// A whole number in TrustKit source past Int's range (60 digits) trapped converting it to
    /// Int ("Double value cannot be converted to Int"); it reads as a Double now.
    @Test func aWholeNumberPastIntInSourceIsNotATrap() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fuzz/known-crashes/trustkit/whole-number-past-int").standardized.path
        let data = try #require(FileManager.default.contents(atPath: path))
        // A policy or a thrown PolicyError are both fine; reaching this line is the test.
        _ = try? TrustKitPolicyParser().parse(data)
        let number = try #require(try TrustKitSourceReader.configuration(in: "[kTSKPinnedDomains: \"x\", \"n\": 4\(String(repeating: "4", count: 59))]")
                                  as? [String: Any])["n"] as? NSNumber
        #expect(number?.doubleValue == Double(String(repeating: "4", count: 60)))
    }
}
