import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// PolicyLinter findings.
@Suite struct PolicyLinterTests {
    @Test func findsEachProblem() throws {
        let now = Vectors.trustKitTestDate
        let root = try Pin(sha256Base64: "S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=").unwrap()
        let leafPin = try Pin(sha256Base64: "TwyNzy19zZi7cKfPsucs1E+h8ODOCPMrT8681sFWJvw=").unwrap()
        let policy = PinningPolicy(source: .trustKit, domains: [
            PinnedDomain(pattern: "a.com", pins: [leafPin], enforce: false, expiration: now.addingTimeInterval(-1), source: .trustKit),
            PinnedDomain(pattern: "b.com", pins: [root, leafPin], enforce: false, expiration: now.addingTimeInterval(86_400),
                         source: .trustKit),
        ])
        let linter = PolicyLinter(teamRootPins: [root], chains: ["a.com": [try Vectors.fixture("leaf")]])
        let kinds = linter.lint(policy, at: now).map { "\($0.domain ?? "*") \($0.kind.rawValue)" }
        // a.com pins neither root nor intermediate, but it is report-only and expired: it blocks nothing.
        #expect(kinds == ["a.com noBackupPin", "a.com pinsLeafKey", "a.com expired", "b.com expiresSoon",
                          "* reportOnlyEverywhere"])
        let enforced = PinningPolicy(source: .trustKit, domains: [
            PinnedDomain(pattern: "c.com", pins: [leafPin, leafPin], enforce: true, expiration: nil, source: .trustKit),
        ])
        let message = linter.lint(enforced, at: now).first { $0.kind == .teamRootNotPinned }?.message
        #expect(message == "DevProxy cannot decrypt this host; the app will block")
    }

    /// An Android domain whose user-installed anchors override pins connects through DevProxy
    /// (the evaluator predicts "not pinned"): the lint said the app would block.
    @Test func userAnchorsThatOverridePinsAreNotABlock() throws {
        let root = try Pin(sha256Base64: "S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=").unwrap()
        let other = try Pin(sha256Base64: "TwyNzy19zZi7cKfPsucs1E+h8ODOCPMrT8681sFWJvw=").unwrap()
        let xml = """
            <network-security-config><domain-config><domain>api.acme.dev</domain>
            <trust-anchors><certificates src="user" overridePins="%@"/><certificates src="system"/></trust-anchors>
            <pin-set><pin digest="SHA-256">\(Data(other.digest).base64EncodedString())</pin></pin-set></domain-config></network-security-config>
            """
        let linter = PolicyLinter(teamRootPins: [root])
        for (overrides, blocks) in [("true", false), ("false", true)] {
            let policy = try AndroidNSCParser().parse(Data(xml.replacingOccurrences(of: "%@", with: overrides).utf8))
            #expect(linter.lint(policy).contains { $0.kind == .teamRootNotPinned } == blocks, "overridePins=\(overrides)")
        }
    }

    /// TrustKit-Android's report-only default relaxes only the connections given its socket
    /// factory: from Android 7 the platform's Network Security Config still blocks a pin mismatch
    /// everywhere else. The lint said "nothing is blocked" of such an app.
    @Test func trustKitAndroidReportOnlyStillBlocksOutsideItsSocketFactory() throws {
        let pins = ["TwyNzy19zZi7cKfPsucs1E+h8ODOCPMrT8681sFWJvw=", "S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo="]
        let xml = "<network-security-config><domain-config><domain>api.acme.dev</domain><pin-set>"
            + pins.map { "<pin digest=\"SHA-256\">\($0)</pin>" }.joined()
            + "</pin-set><trustkit-config/></domain-config>"
            + "</network-security-config>"
        let policy = try AndroidNSCParser().parse(Data(xml.utf8))
        let lint = try PolicyLinter().lint(policy).first { $0.kind == .reportOnlyEverywhere }.unwrap()
        #expect(lint.message == "every entry is report-only through TrustKit-Android's socket factory; from Android 7 "
                + "the platform's Network Security Config still blocks a pin mismatch on every other connection")
        #expect(!lint.message.contains("nothing is blocked"))
        let iOS = PinningPolicy(source: .trustKit, domains: [
            PinnedDomain(pattern: "api.acme.dev", pins: try pins.map { try Pin(sha256Base64: $0).unwrap() },
                         enforce: false, source: .trustKit),
        ])
        #expect(PolicyLinter().lint(iOS).map(\.message) == ["every entry is report-only; nothing is blocked"])
    }
}

extension Optional {
    /// The value, or a thrown error naming the type.
    func unwrap() throws -> Wrapped {
        guard let self else { throw PolicyError(.invalidValue, "unexpected nil \(Wrapped.self)") }
        return self
    }
}
