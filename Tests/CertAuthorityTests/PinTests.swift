import CertAuthority
import Foundation
import Testing
import TestSupport

/// Our SPKI pins agree with `openssl … | base64` for every TrustKit fixture, as recorded in
/// `Tests/Fixtures/trustkit/expected-pins.json`.
@Suite struct PinTests {
    struct Expected: Decodable {
        let spki_sha256: String
        let spki_sha1: String
    }

    @Test func everyTrustKitFixtureMatchesExpectedPins() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("trustkit/expected-pins.json")))
        let expected = try JSONDecoder().decode([String: Expected].self, from: data)
        #expect(expected.count >= 10)
        for (file, pins) in expected {
            let sources = try PinSource.all(in: try SecureFile.read(Fixtures.path("trustkit/" + file), what: file))
            let first = try #require(sources.first, "\(file)")
            #expect(first.pin == "sha256/" + pins.spki_sha256, "\(file)")
            #expect(SPKIPin.base64SHA1(first.spkiDER) == pins.spki_sha1, "\(file)")
        }
    }

    @Test func keysAndCSRsGiveTheSamePinAsTheirCertificate() throws {
        let dir = TemporaryDirectory()
        let key = try PrivateKey.generate(.p256)
        let keyPath = dir.write("next.key", bytes: try key.pem())
        let csr = try Subprocess.run("openssl", ["req", "-new", "-key", keyPath, "-subj", "/CN=next root"])
        #expect(csr.status == 0)
        let csrPath = dir.write("next.csr", csr.stdout)
        let pub = try Subprocess.run("openssl", ["pkey", "-in", keyPath, "-pubout"]).stdout
        let expected = try key.pin
        #expect(try PinSource.all(in: Array(pub.utf8)).first?.pin == expected)
        #expect(try PinSource.all(in: try SecureFile.read(csrPath, what: "csr")).first?.pin == expected)
        #expect(try PinSource.all(in: try SecureFile.read(keyPath, what: "key")).first?.kind == .privateKey)
        let derPath = dir.file("next.der")
        #expect(try Subprocess.run("openssl", ["req", "-in", csrPath, "-outform", "DER", "-out", derPath]).status == 0)
        #expect(try PinSource.all(in: try SecureFile.read(derPath, what: "csr")).first?.pin == expected)
    }

    /// A PKCS#1 `RSA PUBLIC KEY` (`openssl rsa -RSAPublicKey_out`), PEM or DER, pins as its
    /// SubjectPublicKeyInfo does (checked against openssl's own hash); it was refused.
    @Test func aPKCS1RSAPublicKeyPinsAsItsSPKI() throws {
        let dir = TemporaryDirectory()
        let keyPath = dir.file("r.key")
        #expect(try Subprocess.run("openssl", ["genrsa", "-out", keyPath, "2048"]).status == 0)
        let pkcs1 = try Subprocess.run("openssl", ["rsa", "-in", keyPath, "-RSAPublicKey_out"]).stdout
        #expect(pkcs1.hasPrefix("-----BEGIN RSA PUBLIC KEY-----"))
        let spki = dir.file("spki.der")
        #expect(try Subprocess.run("openssl", ["rsa", "-in", keyPath, "-pubout", "-outform", "DER", "-out", spki]).status == 0)
        let digest = try Subprocess.run("/bin/sh", ["-c", "openssl dgst -sha256 -binary \"$0\" | base64", spki]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try PinSource.all(in: Array(pkcs1.utf8)).first?.pin == "sha256/" + digest)
        let der = dir.file("pkcs1.der")
        #expect(try Subprocess.run("openssl", ["rsa", "-in", keyPath, "-RSAPublicKey_out", "-outform", "DER", "-out", der]).status == 0)
        #expect(try PinSource.all(in: try SecureFile.read(der, what: "key")).first?.pin == "sha256/" + digest)
    }

    @Test func garbageIsACorruptCertificateError() {
        let error = #expect(throws: CAError.self) { try PinSource.all(in: Array("hello".utf8)) }
        #expect(error?.code == .corruptCertificate)
    }
}
