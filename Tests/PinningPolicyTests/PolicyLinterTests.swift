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
}

extension Optional {
    /// The value, or a thrown error naming the type.
    func unwrap() throws -> Wrapped {
        guard let self else { throw PolicyError(.invalidValue, "unexpected nil \(Wrapped.self)") }
        return self
    }
}
