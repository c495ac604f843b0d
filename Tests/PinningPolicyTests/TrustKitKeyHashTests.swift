import CertAuthority
import Foundation
import Testing

/// TrustKitKeyHash (in CertAuthority) against `expected-pins.json`; kept in this target because
/// the CertAuthority test target is not ours to extend beyond ChainVerifierTests.
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
}
