import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy policy check` on a TrustKit-Android config whose entry does not enforce: what each
/// host's prediction says beside the lint.
@Suite struct PolicyCheckTrustKitAndroidTests {
    /// The lint's words (`PolicyLinter`, README, docs/pinning.md).
    static let reach = "report-only through TrustKit-Android's socket factory; from Android 7 the platform's "
        + "Network Security Config still blocks a pin mismatch on every other connection"

    /// A pin mismatch on a report-only TrustKit-Android entry is `allow (result 1)` only for the
    /// connections TrustKit-Android's socket factory makes; the lint said so, while the host's
    /// prediction said "one through the platform's own trust manager fails", for every Android
    /// (before 7 the platform applies no pin-set) and in other words than the lint's.
    @Test func aReportOnlyMismatchSaysItHoldsOnlyThroughTheSocketFactory() throws {
        let fixture = try PKIFixture()
        // Two pins, neither the test CA's: every chain DevProxy presents mismatches.
        let pins = ["TwyNzy19zZi7cKfPsucs1E+h8ODOCPMrT8681sFWJvw=", "S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo="]
        let xml = "<network-security-config><base-config><trust-anchors><certificates src=\"user\"/>"
            + "<certificates src=\"system\"/></trust-anchors></base-config><domain-config><domain>api.acme.dev</domain>"
            + "<pin-set>" + pins.map { "<pin digest=\"SHA-256\">\($0)</pin>" }.joined() + "</pin-set>"
            + "<trustkit-config/></domain-config></network-security-config>"
        let policy = fixture.directory.write("network_security_config.xml", xml)

        let json = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", fixture.store.directory,
                                                            "--json", policy])
        #expect(json.status == 0, "\(json.output)")
        let object = (try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [String: Any] ?? [:]
        let host = try #require((object["hosts"] as? [[String: Any]])?.first, "\(json.stdout)")
        #expect(host["decision"] as? String == "allow" && host["result"] as? Int == 1, "\(host)")
        let reason = host["reason"] as? String ?? ""
        #expect(reason.hasPrefix("no pin matches, but TrustKit-Android does not enforce for api.acme.dev"), "\(reason)")
        #expect(reason.hasSuffix(Self.reach), "\(reason)")
        #expect((object["warnings"] as? [String])?.contains("every entry is " + Self.reach) == true, "\(object)")

        let text = try Subprocess.run(Subprocess.devproxy,
                                      ["policy", "check", "--ca-dir", fixture.store.directory, policy])
        let line = text.stdout.split(separator: "\n").first {
            $0.contains("api.acme.dev") && $0.contains("allow (result 1)")
        }
        #expect(line?.hasSuffix(Self.reach) == true, "\(text.output)")
    }
}
