import CertAuthority
import Foundation
import Testing
import TestSupport
@testable import PinningPolicy

/// ATS identity pinning on chains built in code (Apple's semantics: a CA identity matches any
/// CA or sub-CA of the chain, a leaf identity only the leaf), and the TLS requirement verdicts
/// for DevProxy and the tls12 / no-forward-secrecy personas.
@Suite struct ATSRequirementsTests {
    let fixture: PKIFixture
    let leaf: Leaf

    init() throws {
        fixture = try PKIFixture()
        leaf = try LeafIssuer(signer: fixture.signer).issue(for: [try LeafName("api.acme.dev")])
    }

    func evaluate(_ pinned: ATSPinnedDomain, host: String = "api.acme.dev", trusted: Bool = true) -> PinEvaluation {
        let policy = PinningPolicy(source: .ats, domains: [PinnedDomain(pattern: pinned.name, includeSubdomains: pinned.includesSubdomains,
                                                                          pins: (pinned.caIdentities ?? []) + (pinned.leafIdentities ?? []),
                                                                          source: .ats)],
                                   ats: ATSPolicy(pinnedDomains: [pinned]))
        let verification = ChainVerifier(trustAnchors: trusted ? [fixture.root] : []).verify(chain: [leaf.certificate] + leaf.chain, host: host)
        return PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: Date())
    }

    func pin(_ certificate: Certificate) -> Pin { Pin(.sha256, digest: Digest.sha256(certificate.spkiDER)) }

    @Test func caIdentityMatchesTheRootOrTheIntermediate() {
        for ca in [fixture.root, fixture.intermediate] {
            let evaluation = evaluate(ATSPinnedDomain(name: "api.acme.dev", caIdentities: [pin(ca)]))
            #expect(evaluation.decision == .shouldAllowConnection, "\(evaluation.reason)")
            #expect(evaluation.matchedCertificate == ca)
        }
    }

    @Test func aLeafKeyUnderCAIdentitiesDoesNotMatch() {
        let evaluation = evaluate(ATSPinnedDomain(name: "api.acme.dev", caIdentities: [pin(leaf.certificate)]))
        #expect(evaluation.decision == .shouldBlockConnection)
        #expect(evaluation.reason == "no certificate of the chain matches api.acme.dev's 1 CA identities")
    }

    @Test func leafIdentityMatchesOnlyTheLeaf() {
        #expect(evaluate(ATSPinnedDomain(name: "api.acme.dev", leafIdentities: [pin(leaf.certificate)])).decision == .shouldAllowConnection)
        #expect(evaluate(ATSPinnedDomain(name: "api.acme.dev", leafIdentities: [pin(fixture.root)])).decision == .shouldBlockConnection)
    }

    @Test func subdomainOneLevelAndUntrustedChain() {
        let parent = ATSPinnedDomain(name: "acme.dev", includesSubdomains: true, caIdentities: [pin(fixture.root)])
        #expect(evaluate(parent).decision == .shouldAllowConnection)
        #expect(evaluate(ATSPinnedDomain(name: "dev", includesSubdomains: true, caIdentities: [pin(fixture.root)])).decision
                == .domainNotPinned)
        #expect(evaluate(parent, trusted: false).validationResult == .failedInvalidCertificateChain)
    }

    @Test func devProxyMeetsTheDefaultsAndPersonasAreRefusedWhereTheyShouldBe() throws {
        let ats = ATSPolicy(exceptionDomains: [ATSExceptionDomain(name: "tls13.acme.dev", minimumTLSVersion: .tls13),
                                               ATSExceptionDomain(name: "old.acme.dev", requiresForwardSecrecy: false)])
        #expect(ats.transport(for: "api.acme.dev").verdict == .meets)
        #expect(ats.transport(for: "tls13.acme.dev").verdict == .meets)
        let tls12 = try #require(TLSOffer.persona("tls12"))
        let refused = ats.transport(for: "tls13.acme.dev", offer: tls12)
        #expect(refused.verdict == .refuses)
        #expect(refused.reasons == ["NSExceptionDomains tls13.acme.dev requires TLSv1.3 or later (NSExceptionMinimumTLSVersion); "
                                    + "the tls12 persona offers at most TLSv1.2"])
        #expect(ats.transport(for: "api.acme.dev", offer: tls12).verdict == .meets)
        let noFS = try #require(TLSOffer.persona("no-forward-secrecy"))
        #expect(ats.transport(for: "api.acme.dev", offer: noFS).verdict == .refuses)
        #expect(ats.transport(for: "old.acme.dev", offer: noFS).verdict == .meets)
        #expect(TLSOffer.persona("team") == nil)
    }

    @Test func certificateTransparencyForAUserRootIsUncertainWithItsSource() {
        let ats = ATSPolicy(exceptionDomains: [ATSExceptionDomain(name: "ct.acme.dev", requiresCertificateTransparency: true)])
        let prediction = ats.transport(for: "ct.acme.dev")
        #expect(prediction.verdict == .uncertain)
        #expect(prediction.reasons.first?.contains("support.apple.com/103214") == true)
        var publicRoot = TLSOffer.devProxy
        publicRoot.anchorInstalledByUser = false
        #expect(ats.transport(for: "ct.acme.dev", offer: publicRoot).verdict == .refuses)
    }

    @Test func arbitraryLoadsLiftsTheDefaultsButNotAnExceptionDomain() throws {
        let ats = ATSPolicy(allowsArbitraryLoads: true, exceptionDomains: [ATSExceptionDomain(name: "strict.acme.dev")])
        let noFS = try #require(TLSOffer.persona("no-forward-secrecy"))
        #expect(ats.transport(for: "api.acme.dev", offer: noFS).verdict == .meets)
        #expect(ats.transport(for: "strict.acme.dev", offer: noFS).verdict == .refuses)
    }

    @Test func lintsCAInLeafIdentitiesAndMissingTeamRoot() {
        var linter = PolicyLinter()
        linter.teamRoot = fixture.root
        let leafOnly = ATSPolicy(pinnedDomains: [ATSPinnedDomain(name: "a.acme.dev", leafIdentities: [pin(fixture.root), pin(leaf.certificate)])])
        let found = linter.lint(PinningPolicy(source: .ats, domains: [], ats: leafOnly))
        #expect(found.map(\.kind) == [.caPinInLeafPinner, .leafOnlyPinner])
        let other = ATSPolicy(pinnedDomains: [ATSPinnedDomain(name: "b.acme.dev", caIdentities: [pin(fixture.intermediate)])])
        #expect(linter.lint(PinningPolicy(source: .ats, domains: [], ats: other)).map(\.kind) == [.teamRootNotPinned])
        let good = ATSPolicy(pinnedDomains: [ATSPinnedDomain(name: "c.acme.dev", caIdentities: [pin(fixture.root)])])
        #expect(linter.lint(PinningPolicy(source: .ats, domains: [], ats: good)).isEmpty)
    }

    @Test func tlsVerdictsNeedNoCA() throws {
        let info: [String: Any] = ["NSAppTransportSecurity": ["NSExceptionDomains": ["api.acme.dev": ["NSExceptionMinimumTLSVersion": "TLSv1.3"]]]]
        let data = try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0)
        var check = PolicyCheck(teamRoot: nil, presented: nil)
        check.offer = try #require(TLSOffer.persona("tls12"))
        let report = check.run(policy: data)
        #expect(report.hosts.map(\.decision) == ["block"])
        #expect(report.hosts.first?.transport == .refuses)
    }

    @Test func policyCheckFoldsTheTLSVerdictIntoTheDecision() throws {
        let info: [String: Any] = ["NSAppTransportSecurity": [
            "NSExceptionDomains": ["api.acme.dev": ["NSExceptionMinimumTLSVersion": "TLSv1.3"]],
            "NSPinnedDomains": ["api.acme.dev": ["NSPinnedCAIdentities": [["SPKI-SHA256-BASE64": pin(fixture.root).base64],
                                                                         ["SPKI-SHA256-BASE64": pin(fixture.intermediate).base64]]]],
        ]]
        let data = try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0)
        var check = PolicyCheck(teamRoot: fixture.root, presented: .minted(issuer: LeafIssuer(signer: fixture.signer), teamRoot: fixture.root))
        let allowed = check.run(policy: data)
        #expect(allowed.hosts.map(\.decision) == ["allow"])
        #expect(allowed.hosts.first?.transport == .meets)
        check.offer = try #require(TLSOffer.persona("tls12"))
        let blocked = check.run(policy: data)
        #expect(blocked.hosts.first?.decision == "block")
        #expect(blocked.hosts.first?.reason.hasPrefix("ATS: NSExceptionDomains api.acme.dev requires TLSv1.3") == true)
    }
}
