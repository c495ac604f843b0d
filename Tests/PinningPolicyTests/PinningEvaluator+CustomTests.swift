import CertAuthority
import Foundation
import Testing
import TestSupport
@testable import PinningPolicy

/// A hand-written pinner's decision for a chain minted by a team CA, per hash form and scope,
/// and the lints that catch the classic bugs of such pinners.
@Suite struct CustomPinnerEvaluationTests {
    let fixture: PKIFixture
    let leaf: Leaf
    let host = "api.acme.dev"

    init() throws {
        fixture = try PKIFixture()
        leaf = try LeafIssuer(signer: fixture.signer).issue(for: [try LeafName("api.acme.dev")])
    }

    var verification: ChainVerification {
        ChainVerifier(trustAnchors: [fixture.root]).verify(chain: [leaf.certificate] + leaf.chain, host: host)
    }

    func policy(_ hash: PinHashForm, _ scope: CustomPinner.Scope, pins: [[UInt8]], enforce: Bool = true) -> PinningPolicy {
        let pinList = pins.map { Pin(.sha256, digest: $0) }
        let pinner = CustomPinner(name: "Pinner", hash: hash, scope: scope, hosts: [host], pins: pinList, enforce: enforce)
        return PinningPolicy(source: .custom, domains: [PinnedDomain(pattern: host, pins: pinList, enforce: enforce, source: .custom)],
                             customPinner: pinner)
    }

    func evaluate(_ policy: PinningPolicy, host: String = "api.acme.dev") -> PinEvaluation {
        PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: Date())
    }

    static let spare = [UInt8](repeating: 7, count: 32)

    @Test(arguments: PinHashForm.allCases)
    func anyScopeMatchesTheTeamRootInItsOwnForm(_ form: PinHashForm) throws {
        let root = try #require(form.digest(of: fixture.root))
        let evaluation = evaluate(policy(form, .any, pins: [Self.spare, root]))
        #expect(evaluation.decision == .shouldAllowConnection, "\(evaluation.reason)")
        #expect(evaluation.matchedCertificate == fixture.root)
        #expect(evaluation.validationResult == .success)
    }

    @Test func rawKeyPinnerHoldingSPKIPinsMatchesNothing() throws {
        let pins = [Digest.sha256(fixture.root.spkiDER), Digest.sha256(fixture.intermediate.spkiDER)]
        let evaluation = evaluate(policy(.rawKey, .any, pins: pins))
        #expect(evaluation.decision == .shouldBlockConnection)
        #expect(evaluation.validationResult == .failedNoMatchingPin)
        #expect(evaluation.reason == "no certificate's raw-key hash is pinned")
    }

    @Test func leafScopeIgnoresCAPinsAndMatchesTheLeafKey() throws {
        let rootPin = try #require(PinHashForm.trustKit.digest(of: fixture.root))
        let blocked = evaluate(policy(.trustKit, .leaf, pins: [rootPin, Self.spare]))
        #expect(blocked.decision == .shouldBlockConnection)
        #expect(blocked.reason == "the leaf's trustkit hash is not pinned")
        let leafPin = try #require(PinHashForm.trustKit.digest(of: leaf.certificate))
        let allowed = evaluate(policy(.trustKit, .leaf, pins: [leafPin, Self.spare]))
        #expect(allowed.decision == .shouldAllowConnection)
        #expect(allowed.matchedCertificate == leaf.certificate)
    }

    @Test func caScopeIgnoresTheLeaf() throws {
        let leafPin = Digest.sha256(leaf.certificate.spkiDER)
        #expect(evaluate(policy(.spki, .ca, pins: [leafPin, Self.spare])).decision == .shouldBlockConnection)
        let intermediatePin = Digest.sha256(fixture.intermediate.spkiDER)
        let evaluation = evaluate(policy(.spki, .ca, pins: [intermediatePin, Self.spare]))
        #expect(evaluation.matchedCertificate == fixture.intermediate)
    }

    @Test func untrustedChainIsRefusedBeforeHashingAndOtherHostsAreNotPinned() throws {
        let rootPin = Digest.sha256(fixture.root.spkiDER)
        let untrusted = ChainVerifier(trustAnchors: []).verify(chain: [leaf.certificate] + leaf.chain, host: host)
        let evaluation = PinningEvaluator.evaluate(policy: policy(.spki, .any, pins: [rootPin]), host: host,
                                                   verification: untrusted, at: Date())
        #expect(evaluation.validationResult == .failedInvalidCertificateChain)
        #expect(evaluation.decision == .shouldBlockConnection)
        #expect(evaluate(policy(.spki, .any, pins: [rootPin]), host: "other.acme.dev").decision == .domainNotPinned)
    }

    @Test func notEnforcingAllowsAMismatch() {
        let evaluation = evaluate(policy(.rawKey, .any, pins: [Self.spare], enforce: false))
        #expect(evaluation.decision == .shouldAllowConnection)
        #expect(evaluation.validationResult == .failedNoMatchingPin)
    }

    func lints(_ policy: PinningPolicy, chain: [Certificate] = []) -> [PolicyLint] {
        var linter = PolicyLinter(chains: chain.isEmpty ? [:] : [host: chain])
        linter.teamRoot = fixture.root
        return linter.lint(policy)
    }

    @Test func spkiPinsInARawKeyPinnerAreFlaggedWithTheRightPin() throws {
        // The "expected certificate" is production's: here the served chain's intermediate.
        let spki = Digest.sha256(fixture.intermediate.spkiDER)
        let raw = try #require(PinHashForm.rawKey.digest(of: fixture.intermediate))
        let found = lints(policy(.rawKey, .any, pins: [spki, Self.spare]), chain: [leaf.certificate, fixture.intermediate])
        let wrong = found.filter { $0.kind == .wrongHashForm }
        #expect(wrong.count == 1)
        #expect(wrong.first?.message == "pin \(spki.base64) is the spki hash of \(fixture.intermediate.subject), but the "
                + "pinner hashes raw-key: it matches nothing, in production too; its raw-key pin is \(raw.base64)")
        #expect(found.contains { $0.kind == .teamRootNotPinned })
    }

    @Test func aTeamRootPinInALeafOnlyPinnerIsFlagged() throws {
        let rootPin = Digest.sha256(fixture.root.spkiDER)
        let found = lints(policy(.spki, .leaf, pins: [rootPin, Self.spare]))
        #expect(found.contains { $0.kind == .caPinInLeafPinner && $0.message.contains("no CA can satisfy it, the team CA included") })
        #expect(found.contains { $0.kind == .leafOnlyPinner })
        #expect(!found.contains { $0.kind == .teamRootNotPinned })
    }

    @Test func onePinHasNoBackupAndTheRightPinsLintClean() throws {
        let rootPin = try #require(PinHashForm.rawKey.digest(of: fixture.root))
        let single = lints(policy(.rawKey, .any, pins: [rootPin]))
        #expect(single.map(\.kind) == [.noBackupPin])
        #expect(lints(policy(.rawKey, .any, pins: [rootPin, Self.spare])).isEmpty)
    }

    @Test func certificatePinsWarnAboutRenewal() throws {
        let rootPin = try #require(PinHashForm.certificate.digest(of: fixture.root))
        #expect(lints(policy(.certificate, .any, pins: [rootPin, Self.spare])).map(\.kind) == [.pinsCertificate])
    }
}
