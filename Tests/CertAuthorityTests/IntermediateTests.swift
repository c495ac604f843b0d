@testable import CertAuthority
import Foundation
import Testing
import TestSupport

/// Per-engineer intermediates: profile, bundle, ledger, limits, revocation with a CRL that
/// OpenSSL accepts, and tracing back to the engineer.
@Suite struct IntermediateTests {
    @Test func intermediateProfileMatchesTheIssue() throws {
        let pki = try PKIFixture(permittedDNS: ["acme.dev", "acme.test"])
        let text = try Subprocess.run("openssl", ["x509", "-noout", "-text", "-nameopt", "oneline"],
                                      stdin: Array(pki.intermediate.pem.utf8)).stdout
        #expect(text.contains("X509v3 Basic Constraints: critical"))
        #expect(text.contains("CA:TRUE, pathlen:0"))
        #expect(text.contains("X509v3 Key Usage: critical"))
        #expect(text.contains("Certificate Sign, CRL Sign"))
        #expect(text.contains("email:ana@acme.dev"))
        #expect(text.contains("X509v3 Name Constraints: critical"))
        #expect(text.contains("DNS:acme.dev") && text.contains("DNS:acme.test"))
        #expect(pki.intermediate.commonName == "DevProxy Intermediate ana@acme.dev")
        #expect(pki.intermediate.subjectEmail == "ana@acme.dev")
        #expect(pki.intermediate.authorityKeyIdentifier == pki.root.subjectKeyIdentifier)
        #expect(pki.intermediate.serialHex.count >= 16)
        let days = pki.intermediate.notAfter.timeIntervalSince(Date()) / 86400
        #expect(days > 6.9 && days <= 7.0)
        let verify = try Subprocess.run("openssl", ["verify", "-x509_strict", "-CAfile", pki.rootPath, pki.intermediatePath()])
        #expect(verify.status == 0, "\(verify.output)")
    }

    /// A device whose clock runs behind (a phone that has been off, a VM restored from a snapshot)
    /// takes a chain issued a moment ago: the intermediate is backdated an hour as the root and the
    /// leaves are. It was backdated five minutes, so for a device 30 minutes behind the leaf was
    /// valid but the intermediate above it "not yet valid" for the first half hour of its life.
    @Test func aFreshChainVerifiesOnADeviceWhoseClockIsBehind() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("api.acme.dev")])
        let leafPath = pki.directory.write("behind-leaf.pem", leaf.certificate.pem)
        let behind = String(Int(Date().timeIntervalSince1970) - 30 * 60)
        let verify = try Subprocess.run("openssl", ["verify", "-attime", behind, "-purpose", "sslserver", "-CAfile", pki.rootPath,
                                                    "-untrusted", pki.intermediatePath(), leafPath])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(Date().timeIntervalSince(pki.intermediate.notBefore) >= 3600 - 60)
        // Never before the root it chains to.
        #expect(pki.intermediate.notBefore >= pki.root.notBefore)
    }

    /// An intermediate is for TLS servers (EKU serverAuth): what its key signs for another use, as
    /// whoever stole a bundle would sign, is refused by a verifier that chains EKUs, OpenSSL's
    /// `verify -purpose` here, while its server leaves pass. Without the EKU the client
    /// certificate and the S/MIME certificate for anyone's address both verified.
    @Test func anIntermediateSignsForTLSServersOnly() throws {
        let pki = try PKIFixture()
        let text = try Subprocess.run("openssl", ["x509", "-noout", "-ext", "extendedKeyUsage"],
                                      stdin: Array(pki.intermediate.pem.utf8)).stdout
        #expect(text.contains("TLS Web Server Authentication") && !text.contains("critical"), "\(text)")
        let intermediate = pki.intermediatePath()
        func signed(_ name: String, subject: String, extensions: String) throws -> String {
            let key = pki.directory.file(name + ".key"), csr = pki.directory.file(name + ".csr")
            let certificate = pki.directory.file(name + ".pem"), ext = pki.directory.write(name + ".ext", extensions + "\n")
            let request = try Subprocess.run("openssl", ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                         "-nodes", "-subj", subject, "-keyout", key, "-out", csr])
            #expect(request.status == 0, "\(request.output)")
            // The bundle's key signs, as a stolen bundle would.
            let made = try Subprocess.run("openssl", ["x509", "-req", "-in", csr, "-CA", intermediate, "-CAkey", pki.bundlePath,
                                                      "-CAcreateserial", "-days", "1", "-extfile", ext, "-out", certificate])
            #expect(made.status == 0, "\(made.output)")
            return certificate
        }
        func verify(_ certificate: String, purpose: String) throws -> Subprocess.Result {
            try Subprocess.run("openssl", ["verify", "-purpose", purpose, "-CAfile", pki.rootPath, "-untrusted", intermediate,
                                           certificate])
        }
        let server = try signed("server", subject: "/CN=api.acme.dev",
                                extensions: "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:api.acme.dev")
        let passed = try verify(server, purpose: "sslserver")
        #expect(passed.status == 0, "\(passed.output)")
        let client = try signed("client", subject: "/CN=admin", extensions: "extendedKeyUsage=clientAuth")
        let smime = try signed("smime", subject: "/CN=ceo@example.com",
                               extensions: "extendedKeyUsage=emailProtection\nsubjectAltName=email:ceo@example.com")
        for (certificate, purpose) in [(client, "sslclient"), (smime, "smimesign")] {
            let refused = try verify(certificate, purpose: purpose)
            #expect(refused.status != 0, "\(purpose): \(refused.output)")
            #expect(refused.output.contains("at 1 depth lookup: unsuitable certificate purpose"), "\(purpose): \(refused.output)")
        }
    }

    @Test func bundleHoldsKeyIntermediateAndRootAt0600() throws {
        let pki = try PKIFixture()
        #expect(pki.directory.mode(pki.bundlePath) == 0o600)
        let text = String(decoding: try SecureFile.read(pki.bundlePath, what: "bundle"), as: UTF8.self)
        let labels = PEMBlock.all(in: text).map(\.label)
        #expect(labels == ["PRIVATE KEY", "CERTIFICATE", "CERTIFICATE"])
        let certificates = try Certificate.all(from: Array(text.utf8))
        #expect(certificates == [pki.intermediate, pki.root])
    }

    @Test func ledgerRecordsEveryField() throws {
        let pki = try PKIFixture(permittedDNS: ["acme.dev"])
        let records = try pki.store.ledger.read().records
        #expect(records.map(\.type) == [.root, .intermediate])
        let record = try #require(records.last)
        #expect(record.serial == pki.intermediate.serialHex)
        #expect(record.email == "ana@acme.dev")
        #expect(record.sha256Fingerprint == pki.intermediate.sha256Fingerprint)
        #expect(record.spkiPin == pki.intermediate.pin)
        #expect(record.permittedDomains == ["acme.dev"])
        #expect(record.issuerFingerprint == pki.root.sha256Fingerprint)
        #expect(record.notAfter == ISO8601.string(pki.intermediate.notAfter))
        #expect(ISO8601.date(record.issuedAt) != nil)
        let raw = pki.directory.read("ca/ledger.jsonl")
        #expect(raw.contains("\"not_before\"") && raw.contains("\"spki_pin\"") && raw.contains("\"issuer_fingerprint\""))
        #expect(raw.hasSuffix("\n"))
    }

    @Test(arguments: [0, -1, 91])
    func daysOutOfRangeAreRefused(_ days: Int) throws {
        let pki = try PKIFixture()
        let error = #expect(throws: CAError.self) {
            try pki.store.issueIntermediate(email: "bo@acme.dev", days: days, permittedDNS: [], keyType: .p256, output: nil, passphrase: nil)
        }
        #expect(error?.code == .invalidInput)
        #expect(try pki.store.ledger.read().records.count == 2)
    }

    @Test(arguments: ["bo", "bo@@acme.dev", "bo@acme", "b o@acme.dev", "bo@acme.dev\n", "@acme.dev", "bo@.dev", "bo,x@acme.dev"])
    func invalidEmailsAreRefused(_ email: String) throws {
        let pki = try PKIFixture()
        let error = #expect(throws: CAError.self) {
            try pki.store.issueIntermediate(email: email, days: 1, permittedDNS: [], keyType: .p256, output: nil, passphrase: nil)
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.reason.contains("not an email address") == true)
    }

    @Test func revocationWritesACRLThatOpenSSLAccepts() throws {
        let pki = try PKIFixture()
        let revoked = try pki.store.revoke(serial: nil, email: "ANA@acme.dev", reason: .keyCompromise, passphrase: nil)
        #expect(revoked.map(\.serial) == [pki.intermediate.serialHex])
        let crl = pki.store.crlPath
        #expect(try Subprocess.run("openssl", ["crl", "-in", crl, "-CAfile", pki.rootPath, "-noout"]).status == 0)
        let text = try Subprocess.run("openssl", ["crl", "-in", crl, "-noout", "-text"]).stdout
        #expect(text.uppercased().contains(pki.intermediate.serialHex.uppercased()))
        #expect(text.contains("Key Compromise"))
        let check = try Subprocess.run("openssl", ["verify", "-crl_check", "-CRLfile", crl, "-CAfile", pki.rootPath, pki.intermediatePath()])
        #expect(check.status != 0)
        #expect(check.output.contains("certificate revoked"))
        let status = try pki.store.intermediates().entries.first?.status
        #expect(status == .revoked)
        // Revoking again adds nothing; an unknown serial is an error.
        #expect(try pki.store.revoke(serial: pki.intermediate.serialHex, email: nil, reason: .superseded, passphrase: nil).isEmpty)
        #expect((#expect(throws: CAError.self) { try pki.store.revoke(serial: "abcdef", email: nil, reason: .unspecified, passphrase: nil) })?.code == .notFound)
    }

    @Test func crlOfAnUnrevokedIntermediatePassesCRLCheck() throws {
        let pki = try PKIFixture()
        let (other, _) = try pki.store.issueIntermediate(email: "bo@acme.dev", days: 3, permittedDNS: [], keyType: .p256, output: nil, passphrase: nil)
        _ = try pki.store.revoke(serial: nil, email: "ana@acme.dev", reason: .superseded, passphrase: nil)
        let path = pki.directory.write("bo.pem", other.pem)
        let check = try Subprocess.run("openssl", ["verify", "-crl_check", "-CRLfile", pki.store.crlPath, "-CAfile", pki.rootPath, path])
        #expect(check.status == 0, "\(check.output)")
    }

    @Test func tornLedgerLineIsReportedWithItsNumberAndBlocksWrites() throws {
        let pki = try PKIFixture()
        let handle = try #require(FileHandle(forWritingAtPath: pki.store.ledgerPath))
        handle.seekToEndOfFile()
        handle.write(Data("{\"type\":\"intermediate\",\"serial\":\"ab".utf8))
        handle.closeFile()
        let contents = try pki.store.ledger.read()
        #expect(contents.records.count == 2)
        #expect(contents.problems.map(\.line) == [3])
        #expect(contents.problems.first?.reason.contains("torn") == true)
        let error = #expect(throws: CAError.self) {
            try pki.store.issueIntermediate(email: "bo@acme.dev", days: 1, permittedDNS: [], keyType: .p256, output: nil, passphrase: nil)
        }
        #expect(error?.code == .ledgerCorrupt)
        #expect(error?.reason.contains("line 3") == true)
    }

    @Test func corruptMiddleLineIsReportedNotSkipped() {
        let contents = Ledger.parse(Array("{\"type\":\"root\",\"serial\":\"1\",\"issued_at\":\"x\"}\nnot json\n\n".utf8))
        #expect(contents.records.count == 1)
        #expect(contents.problems == [Ledger.Problem(line: 2, reason: "not a valid record: not JSON")])
    }

    @Test func traceFindsTheEngineerFromALeafAChainOrAReport() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("a.example.com")])
        let fromLeaf = try pki.store.trace(Array(leaf.certificate.pem.utf8))
        #expect(fromLeaf.map(\.relation) == [.issuedByIntermediate])
        #expect(fromLeaf.first?.intermediate?.email == "ana@acme.dev")
        let chain = try pki.store.trace(Array((leaf.certificate.pem + pki.intermediate.pem + pki.root.pem).utf8))
        #expect(chain.map(\.relation) == [.issuedByIntermediate, .isIntermediate, .isRoot])
        let report = """
        {"validated-certificate-chain": [\(jsonString(leaf.certificate.pem.replacingOccurrences(of: "\n", with: "\r\n"))), \(jsonString(pki.intermediate.pem))]}
        """
        let fromReport = try pki.store.trace(Array(report.utf8))
        #expect(fromReport.first?.intermediate?.serial == pki.intermediate.serialHex)
        let der = try pki.store.trace(leaf.certificate.der)
        #expect(der.first?.relation == .issuedByIntermediate)
    }

    @Test func traceOfAForeignCertificateFindsNothing() throws {
        let pki = try PKIFixture()
        let other = try PKIFixture()
        let leaf = try LeafIssuer(signer: other.signer).issue(for: [try LeafName("a.example.com")])
        #expect(try pki.store.trace(Array(leaf.certificate.pem.utf8)).isEmpty)
        #expect(throws: CAError.self) { try pki.store.trace(Array("{\"x\": 1}".utf8)) }
        #expect(throws: CAError.self) { try pki.store.trace(Array("garbage".utf8)) }
    }

    private func jsonString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }
}
