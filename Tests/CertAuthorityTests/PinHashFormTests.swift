@testable import CertAuthority
import Foundation
import Testing
import TestSupport

/// Every `PinHashForm` of certificates and keys of each supported type, cross-checked against
/// openssl computing the same bytes its own way.
@Suite struct PinHashFormTests {
    /// Runs a shell pipeline on `input` written to a file and returns its trimmed stdout.
    func shell(_ pipeline: String, _ directory: TemporaryDirectory) throws -> String {
        let result = try Subprocess.run("bash", ["-c", "set -o pipefail; " + pipeline], directory: directory.path)
        #expect(result.status == 0, "\(pipeline): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func selfSigned(_ type: KeyType) throws -> (Certificate, PrivateKey) {
        let key = try PrivateKey.generate(type)
        let now = Date()
        let certificate = try CertificateProfile.root(name: "Form \(type.rawValue)", unit: nil, notBefore: now.addingTimeInterval(-60),
                                                      notAfter: now.addingTimeInterval(86400))
            .sign(publicKey: key, issuer: nil, issuerKey: key)
        return (certificate, key)
    }

    @Test(arguments: [KeyType.p256, .p384, .rsa2048, .rsa3072])
    func formsMatchOpenSSL(_ type: KeyType) throws {
        let directory = TemporaryDirectory()
        let (certificate, _) = try selfSigned(type)
        _ = directory.write("cert.pem", certificate.pem)
        let pub = "openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform DER"
        let spki = try shell("\(pub) | openssl dgst -sha256 -binary | base64", directory)
        // SecKeyCopyExternalRepresentation: PKCS#1 RSAPublicKey for RSA; the point for EC, which
        // is the SPKI's BIT STRING contents, i.e. its last 1 + 2 × field-size bytes.
        let raw: String
        switch type {
        case .rsa2048, .rsa3072, .rsa4096:
            raw = try shell("openssl x509 -in cert.pem -pubkey -noout | openssl rsa -pubin -RSAPublicKey_out -outform DER "
                            + "2>/dev/null | openssl dgst -sha256 -binary | base64", directory)
        default:
            let pointSize = type == .p256 ? 65 : 97
            raw = try shell("\(pub) | tail -c \(pointSize) | openssl dgst -sha256 -binary | base64", directory)
        }
        let whole = try shell("openssl x509 -in cert.pem -outform DER | openssl dgst -sha256 -binary | base64", directory)
        #expect(PinHashForm.spki.digest(of: certificate)?.base64 == spki)
        #expect(PinHashForm.rawKey.digest(of: certificate)?.base64 == raw)
        #expect(PinHashForm.certificate.digest(of: certificate)?.base64 == whole)
        // TrustKit rebuilds the standard SPKI for these key types: equal to spki, never to raw-key.
        #expect(PinHashForm.trustKit.digest(of: certificate)?.base64 == spki)
        #expect(raw != spki)
    }

    @Test func aKeyHasEveryFormButCertificate() throws {
        let (certificate, key) = try selfSigned(.p256)
        let source = try #require(try PinSource.all(in: try key.pem()).first)
        for form in [PinHashForm.spki, .rawKey, .trustKit] {
            #expect(form.digest(of: source) == form.digest(of: certificate), "\(form)")
        }
        #expect(PinHashForm.certificate.digest(of: source) == nil)
    }

    @Test func hashedBytesOfARawEC256KeyAreTheUncompressedPoint() throws {
        let (certificate, _) = try selfSigned(.p256)
        let raw = try #require(PinHashForm.rawKey.hashedBytes(of: PinSource(certificate: certificate)))
        #expect(raw.count == 65 && raw.first == 0x04)
        #expect(Array(certificate.spkiDER.suffix(65)) == raw)
        let rebuilt = try #require(PinHashForm.trustKit.hashedBytes(of: PinSource(certificate: certificate)))
        #expect(rebuilt == certificate.spkiDER)
    }

    @Test func ed25519HasNoRawKeyOrTrustKitForm() throws {
        let directory = TemporaryDirectory()
        _ = try shell("openssl genpkey -algorithm ED25519 -out ed.key && openssl pkey -in ed.key -pubout -out ed.pub", directory)
        let source = try #require(try PinSource.all(in: Array(directory.read("ed.pub").utf8)).first)
        #expect(PinHashForm.spki.digest(of: source) != nil)
        #expect(PinHashForm.rawKey.digest(of: source) == nil)
        #expect(PinHashForm.trustKit.digest(of: source) == nil)
    }
}
