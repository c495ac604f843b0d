@testable import CertAuthority
import Foundation
import Testing
import TestSupport

/// The CA directory: creation, permissions, encrypted keys, refusal to overwrite, and every
/// bad input ending in a typed error with nothing half written.
@Suite struct CAStoreTests {
    @Test func initCreatesRootKeyAndLedgerWithTightPermissions() throws {
        let dir = TemporaryDirectory()
        let store = CAStore(directory: dir.file("ca"))
        let root = try store.initialize(name: "Acme Root", keyType: .p256, days: 3650, passphrase: nil)
        #expect(dir.mode("ca") == 0o700)
        #expect(dir.mode("ca/root.key") == 0o600)
        #expect(dir.mode("ca/root.pem") == 0o644)
        #expect(root.commonName == "Acme Root")
        #expect(root.isCA && root.isSelfSigned)
        let years = root.notAfter.timeIntervalSince(Date()) / (365.25 * 86400)
        #expect(years > 9.9 && years < 10.1)
        let ledger = try store.ledger.read()
        #expect(ledger.records.map(\.type) == [.root])
        #expect(ledger.records.first?.spkiPin == root.pin)
        let text = try Subprocess.run("openssl", ["x509", "-in", store.rootCertificatePath, "-noout", "-text"]).stdout
        #expect(text.contains("CA:TRUE"))
        #expect(text.contains("Certificate Sign, CRL Sign"))
    }

    @Test func initRefusesToOverwrite() throws {
        let pki = try PKIFixture()
        let before = try SecureFile.read(pki.store.rootKeyPath, what: "key")
        let error = #expect(throws: CAError.self) {
            try pki.store.initialize(name: "Again", keyType: .p256, days: 10, passphrase: nil)
        }
        #expect(error?.code == .caExists)
        #expect(try SecureFile.read(pki.store.rootKeyPath, what: "key") == before)
    }

    @Test func encryptedRootKeyNeedsThePassphrase() throws {
        let dir = TemporaryDirectory()
        let store = CAStore(directory: dir.file("ca"))
        try store.initialize(name: "Locked", keyType: .p256, days: 30, passphrase: "correct horse")
        let pem = dir.read("ca/root.key")
        #expect(pem.contains("BEGIN ENCRYPTED PRIVATE KEY"))
        let withPass = try Subprocess.run("openssl", ["pkey", "-in", store.rootKeyPath, "-passin", "pass:correct horse", "-noout"])
        #expect(withPass.status == 0, "\(withPass.output)")
        let asn1 = try Subprocess.run("openssl", ["asn1parse", "-in", store.rootKeyPath]).stdout
        #expect(asn1.contains("aes-256-cbc"))
        let without = try Subprocess.run("openssl", ["pkey", "-in", store.rootKeyPath, "-passin", "pass:", "-noout"])
        #expect(without.status != 0)
        #expect(try store.rootSigner(passphrase: "correct horse").certificate.pin == store.rootCertificate().pin)
        #expect((#expect(throws: CAError.self) { try store.rootSigner(passphrase: "wrong") })?.code == .wrongPassphrase)
        #expect((#expect(throws: CAError.self) { try store.rootSigner(passphrase: nil) })?.code == .passphraseRequired)
    }

    @Test(arguments: [KeyType.p384, .rsa2048])
    func rootOfOtherKeyTypes(_ type: KeyType) throws {
        let pki = try PKIFixture(rootKey: type, intermediateKey: .p256)
        #expect(pki.root.keyDescription == (type == .p384 ? "EC P-384" : "RSA 2048"))
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("x.example.com")])
        #expect(try pki.opensslVerify(leaf.certificate, host: "x.example.com").status == 0)
    }

    @Test func corruptOrTruncatedKeyIsReported() throws {
        let pki = try PKIFixture()
        let key = dir(pki).read("ca/root.key")
        dir(pki).write("ca/root.key", String(key.prefix(key.count / 2)))
        let error = #expect(throws: CAError.self) { try pki.store.rootSigner(passphrase: nil) }
        #expect(error?.code == .corruptKey)
        #expect(error?.reason.contains("root.key") == true)
    }

    @Test func keyThatDoesNotMatchItsCertificateIsReported() throws {
        let pki = try PKIFixture()
        dir(pki).write("ca/root.key", String(decoding: try PrivateKey.generate(.p256).pem(), as: UTF8.self))
        let error = #expect(throws: CAError.self) { try pki.store.rootSigner(passphrase: nil) }
        #expect(error?.code == .keyMismatch)
    }

    @Test func corruptCertificateIsReported() throws {
        let pki = try PKIFixture()
        dir(pki).write("ca/root.pem", "-----BEGIN CERTIFICATE-----\nMIIB!!!\n-----END CERTIFICATE-----\n")
        let error = #expect(throws: CAError.self) { try pki.store.rootCertificate() }
        #expect(error?.code == .corruptCertificate)
    }

    @Test func missingCADirectorySaysHowToCreateOne() throws {
        let store = CAStore(directory: "/nonexistent/devproxy-ca")
        let error = #expect(throws: CAError.self) { try store.rootCertificate() }
        #expect(error?.code == .caMissing)
        #expect(error?.reason.contains("devproxy ca init") == true)
    }

    @Test func readOnlyDirectoryFailsWithoutHalfWrittenFiles() throws {
        let pki = try PKIFixture()
        let before = try FileManager.default.contentsOfDirectory(atPath: pki.store.intermediatesDirectory)
        let ledgerBefore = dir(pki).read("ca/ledger.jsonl")
        chmod(pki.store.intermediatesDirectory, 0o500)
        chmod(pki.store.ledgerPath, 0o400)
        defer { chmod(pki.store.intermediatesDirectory, 0o700); chmod(pki.store.ledgerPath, 0o600) }
        // root bypasses permission bits; only assert where they are enforced.
        guard getuid() != 0 else {
            let readOnly = CAStore(directory: "/proc/devproxy-ca")
            let error = #expect(throws: CAError.self) { try readOnly.initialize(name: "x", keyType: .p256, days: 1, passphrase: nil) }
            #expect(error?.code == .notWritable)
            return
        }
        #expect(throws: CAError.self) {
            try pki.store.issueIntermediate(email: "bo@acme.dev", days: 1, permittedDNS: [], keyType: .p256, output: nil, passphrase: nil)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: pki.store.intermediatesDirectory) == before)
        #expect(dir(pki).read("ca/ledger.jsonl") == ledgerBefore)
    }

    @Test func exportGivesPEMAndDER() throws {
        let pki = try PKIFixture()
        let der = try pki.store.rootCertificate().der
        #expect(try Certificate(der: der) == pki.root)
        let path = pki.directory.write("root.crt", bytes: der)
        let text = try Subprocess.run("openssl", ["x509", "-inform", "DER", "-in", path, "-noout", "-subject"]).stdout
        #expect(text.contains("Test Root"))
        #expect(try pki.store.rootCertificate().pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
    }

    @Test func defaultDirectoryFollowsTheDocumentedOrder() {
        #expect(CAStore.resolveDirectory(flag: "/x", environment: ["DEVPROXY_HOME": "/y"]) == "/x")
        #expect(CAStore.resolveDirectory(flag: nil, environment: ["DEVPROXY_HOME": "/y"]) == "/y")
        let dir = TemporaryDirectory()
        try? FileManager.default.createDirectory(atPath: dir.file("ca"), withIntermediateDirectories: true)
        #expect(CAStore.resolveDirectory(flag: nil, environment: [:], workingDirectory: dir.path) == dir.file("ca"))
        #expect(CAStore.resolveDirectory(flag: nil, environment: ["XDG_DATA_HOME": "/d"], workingDirectory: "/nonexistent") == "/d/devproxy")
        #expect(CAStore.resolveDirectory(flag: nil, environment: ["HOME": "/h"], workingDirectory: "/nonexistent") == "/h/.local/share/devproxy")
    }

    private func dir(_ pki: PKIFixture) -> TemporaryDirectory { pki.directory }
}
