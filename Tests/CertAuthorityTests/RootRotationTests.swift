@testable import CertAuthority
import Foundation
import Testing
import TestSupport

/// Rotating the team root: the next key made ahead of time, `rotate` with a cross-certificate,
/// and the chains it serves checked by `openssl verify` against trust stores holding the old
/// root only, the new root only, and both.
@Suite struct RootRotationTests {
    /// A team CA (ana's intermediate under the first root) rotated to a new root, then bob's
    /// intermediate issued under it.
    struct Rotated {
        let pki: PKIFixture
        let next: PinSource
        let rotation: RootRotation
        let bob: Signer
        let bobBundle: String

        init(passphrase: String? = nil) throws {
            pki = try PKIFixture()
            next = try pki.store.makeNextRootKey(keyType: .p256, passphrase: passphrase)
            rotation = try pki.store.rotate(name: nil, days: 3650, transitionDays: 90, passphrase: passphrase)
            let issued = try pki.store.issueIntermediate(email: "bob@acme.dev", days: 7, permittedDNS: [],
                                                         keyType: .p256,
                                                         output: nil, passphrase: passphrase)
            bobBundle = issued.1
            bob = try Signer(bundle: try SecureFile.read(bobBundle, what: "bundle"))
        }

        /// `openssl verify` of a leaf for `api.acme.dev` with `untrusted` as the served chain.
        func verify(trusting anchors: [Certificate], served: [Certificate],
                    leaf: Certificate) throws -> Subprocess.Result {
            let directory = pki.directory
            let tag = UUID().uuidString
            let trust = directory.write("trust-\(tag).pem", anchors.map(\.pem).joined())
            let untrusted = directory.write("untrusted-\(tag).pem", served.map(\.pem).joined())
            let leafPath = directory.write("leaf-\(tag).pem", leaf.pem)
            return try Subprocess.run("openssl", ["verify", "-x509_strict", "-purpose", "sslserver",
                                                  "-verify_hostname", "api.acme.dev",
                                                  "-show_chain", "-CAfile", trust, "-untrusted", untrusted, leafPath])
        }
    }

    @Test func nextKeyIsStoredLikeTheRootKeyAndRecorded() throws {
        let pki = try PKIFixture()
        let rootBefore = try pki.store.rootCertificate()
        let next = try pki.store.makeNextRootKey(keyType: .p256, passphrase: nil)
        #expect(pki.directory.mode(pki.store.nextRootKeyPath) == 0o600)
        #expect(try pki.store.rootCertificate() == rootBefore, "the root is unchanged until rotate")
        #expect(try pki.store.nextRootPublicKey()?.pin == next.pin)
        let key = try PrivateKey(pem: try SecureFile.read(pki.store.nextRootKeyPath, what: "key"))
        #expect(try key.pin == next.pin)
        let records = try pki.store.ledger.read().records
        #expect(records.last?.type == .nextRootKey)
        #expect(records.last?.spkiPin == next.pin)
        #expect(throws: CAError.self) { try pki.store.makeNextRootKey(keyType: .p256, passphrase: nil) }
    }

    @Test func nextKeyIsEncryptedWhenTheRootKeyIs() throws {
        let directory = TemporaryDirectory()
        let store = CAStore(directory: directory.file("ca"))
        try store.initialize(name: "Acme Dev Root", keyType: .p256, days: 30, passphrase: "root secret")
        #expect(throws: CAError.self) { try store.makeNextRootKey(keyType: .p256, passphrase: "wrong") }
        try store.makeNextRootKey(keyType: .p256, passphrase: "root secret")
        let pem = String(decoding: try SecureFile.read(store.nextRootKeyPath, what: "key"), as: UTF8.self)
        #expect(pem.contains("ENCRYPTED PRIVATE KEY"))
        #expect(throws: CAError.self) { try store.rotate(name: nil, days: 10, transitionDays: 5, passphrase: nil) }
        let rotation = try store.rotate(name: nil, days: 10, transitionDays: 5, passphrase: "root secret")
        #expect(rotation.root.commonName == "Acme Dev Root G2")
        #expect(try store.rootSigner(passphrase: "root secret").certificate == rotation.root)
    }

    @Test func rotateWithoutANextKeyIsRefusedAndChangesNothing() throws {
        let pki = try PKIFixture()
        let before = try SecureFile.read(pki.store.ledgerPath, what: "ledger")
        #expect(throws: CAError.self) { try pki.store.rotate(name: nil, days: 10, transitionDays: 5, passphrase: nil) }
        #expect(try pki.store.rootCertificate() == pki.root)
        #expect(try SecureFile.read(pki.store.ledgerPath, what: "ledger") == before)
    }

    @Test func rotationMakesANewRootACrossCertificateAndRecordsBoth() throws {
        let setup = try Rotated()
        let (old, new, cross) = (setup.rotation.previous, setup.rotation.root, setup.rotation.cross)
        #expect(old == setup.pki.root)
        #expect(try setup.pki.store.rootCertificate() == new)
        #expect(new.isSelfSigned && new.pin == setup.next.pin)
        #expect(cross.spkiDER == new.spkiDER && cross.subject == new.subject)
        #expect(cross.isIssued(by: old) && cross.isCA)
        #expect(cross.notAfter <= Date().addingTimeInterval(90 * 86400 + 60))
        #expect(!FileManager.default.fileExists(atPath: setup.pki.store.nextRootKeyPath))
        #expect(FileManager.default.fileExists(atPath: setup.rotation.retiredCertificatePath))
        let types = try setup.pki.store.ledger.read().records.map(\.type)
        #expect(types.suffix(4) == [.nextRootKey, .root, .crossCertificate, .intermediate])
        let crossRecord = try #require(try setup.pki.store.ledger.read().records.first { $0.type == .crossCertificate })
        #expect(crossRecord.issuerFingerprint == old.sha256Fingerprint)
        // New intermediates come from the new root, and their bundle carries the cross-certificate.
        #expect(setup.bob.certificate.isIssued(by: new))
        #expect(setup.bob.root == new)
        #expect(setup.bob.chain == [setup.bob.certificate, cross])
        #expect(try setup.pki.store.retiringRoots() == [old])
    }

    @Test func opensslVerifiesTheServedChainUnderOldNewAndBothRoots() throws {
        let setup = try Rotated()
        let leaf = try LeafIssuer(signer: setup.bob).issue(for: [try LeafName("api.acme.dev")])
        let (old, new) = (setup.rotation.previous, setup.rotation.root)
        #expect(leaf.chain == [setup.bob.certificate, setup.rotation.cross], "leaf → intermediate → cross-certificate")

        let oldOnly = try setup.verify(trusting: [old], served: leaf.chain, leaf: leaf.certificate)
        #expect(oldOnly.status == 0, "\(oldOnly.output)")
        #expect(oldOnly.stdout.contains(old.commonName ?? "?"), "the path ends at the old root: \(oldOnly.stdout)")
        let newOnly = try setup.verify(trusting: [new], served: leaf.chain, leaf: leaf.certificate)
        #expect(newOnly.status == 0, "\(newOnly.output)")
        let both = try setup.verify(trusting: [old, new], served: leaf.chain, leaf: leaf.certificate)
        #expect(both.status == 0, "\(both.output)")

        // Without the cross-certificate a device that trusts only the old root fails: it is what
        // carries the transition.
        let withoutCross = try setup.verify(trusting: [old], served: [setup.bob.certificate], leaf: leaf.certificate)
        #expect(withoutCross.status != 0)
        #expect(withoutCross.output.contains("unable to get local issuer certificate"), "\(withoutCross.output)")
    }

    @Test func ancientIntermediatesStillVerifyUnderTheOldRootAndTraceUnderEither() throws {
        let setup = try Rotated()
        let ana = setup.pki.signer
        let anaLeaf = try LeafIssuer(signer: ana).issue(for: [try LeafName("api.acme.dev")])
        let verify = try setup.verify(trusting: [setup.rotation.previous], served: anaLeaf.chain,
                                      leaf: anaLeaf.certificate)
        #expect(verify.status == 0, "\(verify.output)")

        let bobLeaf = try LeafIssuer(signer: setup.bob).issue(for: [try LeafName("api.acme.dev")])
        let served = bobLeaf.certificate.pem + bobLeaf.chain.map(\.pem).joined()
        let underNew = try setup.pki.store.trace(Array(served.utf8))
        #expect(underNew.contains { $0.relation == .issuedByIntermediate && $0.intermediate?.email == "bob@acme.dev" })
        #expect(underNew.contains { $0.relation == .isCrossCertificate && $0.root == setup.rotation.previous })
        let underOld = try setup.pki.store.trace(Array((anaLeaf.certificate.pem + setup.rotation.previous.pem).utf8))
        #expect(underOld.contains { $0.relation == .issuedByIntermediate && $0.intermediate?.email == "ana@acme.dev" })
        #expect(underOld.contains { $0.relation == .isRoot && $0.root == setup.rotation.previous })
    }

    @Test func crossCertificateLeavesTheChainWhenTheTransitionWindowEnds() throws {
        let setup = try Rotated()
        let later = Date().addingTimeInterval(91 * 86400)
        #expect(setup.pki.store.crossCertificates(for: setup.rotation.root, now: later).isEmpty)
        #expect(setup.pki.store.crossCertificates(for: setup.rotation.root) == [setup.rotation.cross])
        #expect(try setup.pki.store.retiringRoots(now: later).isEmpty)
    }

    @Test func generationNames() {
        #expect(CAStore.nextGenerationName("Acme Dev Root") == "Acme Dev Root G2")
        #expect(CAStore.nextGenerationName("Acme Dev Root G2") == "Acme Dev Root G3")
        #expect(CAStore.nextGenerationName(String(repeating: "x", count: 64)).count == 64)
    }
}
