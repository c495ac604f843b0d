import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// TrustKit's pin-validation tests (`pinning_validation` in the vectors), run through
/// ChainVerifier + PinningEvaluator at TrustKit's test date.
@Suite struct PinningEvaluatorTests {
    @Test func vectorFileHasAllValidationCases() throws {
        #expect(try VectorCase.trustKit("pinning_validation").count == 12)
    }

    @Test(arguments: try VectorCase.trustKit("pinning_validation"))
    func pinningValidation(_ vector: VectorCase) throws {
        let served = try (vector.body["served"] as? [String] ?? []).map(Vectors.fixture)
        let anchors = try (vector.body["anchors"] as? [String] ?? []).map(Vectors.fixture)
        let host = try #require(vector.body["host"] as? String)
        let domains = try #require(vector.body["policy"] as? [String: Any])
        let policy = try TrustKitPolicyParser().parse(configuration: ["TSKPinnedDomains": domains])
        let verification = ChainVerifier(trustAnchors: anchors, verificationTime: Vectors.trustKitTestDate)
            .verify(chain: served, host: host)
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: host, verification: verification,
                                                   at: Vectors.trustKitTestDate)
        #expect(evaluation.validationResult?.rawValue == vector.body["evaluationResult"] as? Int, "\(evaluation.reason)")
        #expect(evaluation.decision.rawValue == vector.body["decision"] as? Int, "\(evaluation.reason)")
        // Reports go out exactly when validation ran and did not succeed.
        let reported = (vector.body["evaluationResult"] as? Int).map { $0 != 0 } ?? false
        #expect(evaluation.sendsReport == reported)
    }

    @Test func injectedCertificateWithItsRealPinStillDoesNotMatch() throws {
        let policy = try TrustKitPolicyParser().parse(configuration: ["TSKPinnedDomains": ["www.good.com": [
            "TSKPublicKeyHashes": ["K87oWBWM9UZfyddvDfoxL+8lpNyoUB2ptGtn0fv6G2Q=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]]]])
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: Vectors.trustKitTestDate)
            .verify(chain: [try Vectors.fixture("leaf"), try Vectors.fixture("globalsign_root")], host: "www.good.com")
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification,
                                                   at: Vectors.trustKitTestDate)
        #expect(evaluation.validationResult == .failedNoMatchingPin)
        #expect(evaluation.evaluatedChain.count == 2)
    }

    @Test func matchReportsCertificateAndPin() throws {
        let policy = try TrustKitPolicyParser().parse(configuration: ["TSKPinnedDomains": ["www.good.com": [
            "TSKPublicKeyHashes": ["S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]]]])
        let root = try Vectors.fixture("root_anchor")
        let verification = ChainVerifier(trustAnchors: [root], verificationTime: Vectors.trustKitTestDate)
            .verify(chain: [try Vectors.fixture("leaf")], host: "www.good.com")
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification,
                                                   at: Vectors.trustKitTestDate)
        #expect(evaluation.matchedCertificate == root)
        #expect(evaluation.matchedPin?.base64 == "S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=")
    }

    @Test func expiryIsStrictlyAfterMidnightUTC() throws {
        let policy = try TrustKitPolicyParser().parse(configuration: ["TSKPinnedDomains": ["www.good.com": [
            "TSKExpirationDate": "2016-01-22",
            "TSKPublicKeyHashes": ["BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]]]])
        let midnight = try #require(ISO8601DateFormatter().date(from: "2016-01-22T00:00:00Z"))
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: midnight)
            .verify(chain: [try Vectors.fixture("leaf")], host: "www.good.com")
        let atMidnight = PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification, at: midnight)
        let after = PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification,
                                              at: midnight.addingTimeInterval(1))
        #expect(atMidnight.decision == .shouldBlockConnection)
        #expect(after.decision == .domainNotPinned)
    }
}
