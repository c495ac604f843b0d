import CertAuthority
import Foundation
import Testing
import TestSupport

/// ChainVerifier over the TrustKit fixtures in `Tests/Fixtures/trustkit/Certificates`.
@Suite struct ChainVerifierTests {
    static let certificates = Fixtures.url("trustkit/Certificates")

    static func load(_ name: String) throws -> Certificate {
        try Certificate.all(from: [UInt8](Data(contentsOf: certificates.appendingPathComponent(name))))[0]
    }

    /// 2016-01-22, TrustKit's test date.
    static let testDate = Date(timeIntervalSinceReferenceDate: 475_163_640)

    @Test func buildsPathToAnUnservedRoot() throws {
        let leaf = try Self.load("RSA_4096/www.good.com.der"), root = try Self.load("RSA_4096/GoodRootCA.der")
        let result = ChainVerifier(trustAnchors: [root], verificationTime: Self.testDate).verify(chain: [leaf], host: "www.good.com")
        #expect(result.path == [leaf, root])
    }

    @Test func dropsServedCertificatesOffThePath() throws {
        let leaf = try Self.load("RSA_4096/www.good.com.der"), root = try Self.load("RSA_4096/GoodRootCA.der")
        let injected = try Self.load("RSA_2048/GlobalSignRootCA.der")
        let result = ChainVerifier(trustAnchors: [root], verificationTime: Self.testDate)
            .verify(chain: [leaf, injected], host: "www.good.com")
        #expect(result.path == [leaf, root])
    }

    @Test(arguments: [
        ("www.bad.com", "hostname mismatch"), ("WWW.GOOD.COM", nil), ("10.0.0.1", "IP address mismatch"),
    ] as [(String, String?)])
    func checksTheHostName(_ host: String, _ failure: String?) throws {
        let leaf = try Self.load("RSA_4096/www.good.com.der"), root = try Self.load("RSA_4096/GoodRootCA.der")
        let result = ChainVerifier(trustAnchors: [root], verificationTime: Self.testDate).verify(chain: [leaf], host: host)
        if case .failed(let reason, _) = result { #expect(reason == failure) } else { #expect(failure == nil) }
    }

    @Test func rejectsUntrustedSelfSignedLeaf() throws {
        let selfSigned = try Self.load("RSA_4096/www.good.com.selfsigned.der")
        let result = ChainVerifier(trustAnchors: [try Self.load("RSA_4096/GoodRootCA.der")], verificationTime: Self.testDate)
            .verify(chain: [selfSigned], host: "www.good.com")
        guard case .failed(let reason, _) = result else { Issue.record("verified"); return }
        #expect(reason == "self-signed certificate")
    }

    @Test func rejectsOutsideTheValidityPeriod() throws {
        let leaf = try Self.load("RSA_4096/www.good.com.der"), root = try Self.load("RSA_4096/GoodRootCA.der")
        let late = ChainVerifier(trustAnchors: [root], verificationTime: Date(timeIntervalSince1970: 2_200_000_000))
            .verify(chain: [leaf], host: "www.good.com")
        guard case .failed(let reason, _) = late else { Issue.record("verified in 2039"); return }
        #expect(reason == "certificate has expired")
    }

    @Test func noAnchorsMeansUnableToGetIssuer() throws {
        let leaf = try Self.load("RSA_4096/www.good.com.der")
        let result = ChainVerifier(trustAnchors: [], verificationTime: Self.testDate).verify(chain: [leaf], host: nil)
        guard case .failed(let reason, _) = result else { Issue.record("verified"); return }
        #expect(reason == "unable to get local issuer certificate")
    }

    @Test func threeLevelTrustAnchorChain() throws {
        let leaf = try Self.load("TrustAnchor/anchor-fake.yahoo.com.cert.pem")
        let intermediate = try Self.load("TrustAnchor/anchor-intermediate.cert.pem")
        let root = try Self.load("TrustAnchor/anchor-ca.cert.pem")
        let at = Date(timeIntervalSince1970: 1_600_000_000)
        let result = ChainVerifier(trustAnchors: [root], verificationTime: at).verify(chain: [leaf, intermediate], host: nil)
        // These are X.509 v1 certificates without basicConstraints: OpenSSL refuses the
        // intermediate as a CA unless it is itself an anchor.
        if case .failed(let reason, _) = result {
            #expect(reason == "invalid CA certificate")
        } else {
            #expect(result.path == [leaf, intermediate, root])
        }
        let anchoredAtIntermediate = ChainVerifier(trustAnchors: [intermediate], verificationTime: at)
            .verify(chain: [leaf], host: "fake.yahoo.com")
        #expect(anchoredAtIntermediate.path == [leaf, intermediate], "partial chains end at any anchor; CN-only name")
    }
}
