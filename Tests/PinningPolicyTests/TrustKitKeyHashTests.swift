import CertAuthority
import Foundation
import Testing
import TestSupport

/// TrustKitKeyHash (in CertAuthority) against `expected-pins.json`, and on certificates minted
/// in this process.
@Suite struct TrustKitKeyHashTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        let path: String, spkiSHA256: String, spkiSHA1: String, trustKitPin: String?, matchesOpenSSL: Bool
        var testDescription: String { path }
    }

    static func fixtures() throws -> [Fixture] {
        try Vectors.json("trustkit/expected-pins.json").sorted { $0.key < $1.key }.map { path, value in
            let entry = value as? [String: Any] ?? [:]
            return Fixture(path: path, spkiSHA256: entry["spki_sha256"] as? String ?? "",
                           spkiSHA1: entry["spki_sha1"] as? String ?? "",
                           trustKitPin: entry["trustkit_test_expected_pin"] as? String,
                           matchesOpenSSL: entry["matches_openssl"] as? Bool ?? false)
        }
    }

    @Test func allFixturesListed() throws { #expect(try Self.fixtures().count == 12) }

    @Test(arguments: try fixtures())
    func pinsMatchExpected(_ fixture: Fixture) throws {
        let certificate = try Vectors.certificate(fixture.path)
        #expect(certificate.pin == "sha256/" + fixture.spkiSHA256)
        #expect(SPKIPin.base64SHA1(certificate.spkiDER) == fixture.spkiSHA1)
        let trustKit = TrustKitKeyHash.pin(of: certificate)
        if let expected = fixture.trustKitPin, fixture.matchesOpenSSL {
            #expect(trustKit == expected)
        }
        if fixture.path.hasSuffix("selfsigned.der") {
            #expect(trustKit == nil, "RSA-1024 is not supported by TrustKit")
        } else {
            // Every other fixture is RSA 2048/3072/4096 (e = 65537) or P-256/P-384: equal to the SPKI pin.
            #expect(trustKit == fixture.spkiSHA256)
        }
    }

    /// A leaf minted in this process holds a legacy EC_KEY; TrustKit's hash of an uncompressed
    /// P-256 key must still equal the standard SPKI pin (it once came back nil: result 5).
    @Test(arguments: [KeyType.p256, .p384])
    func freshlyMintedECCertificatesHashLikeTheirSPKI(_ type: KeyType) throws {
        let pki = try PKIFixture(intermediateKey: type)
        let leaf = try LeafIssuer(signer: pki.signer, keyType: type).issue(for: [try LeafName("a.example.com")])
        for certificate in [leaf.certificate, pki.intermediate] {
            #expect(TrustKitKeyHash.pin(of: certificate).map { "sha256/" + $0 } == certificate.pin)
        }
    }
}
