@testable import CertAuthority
import Foundation
import Testing
import TestSupport

/// Leaves minted from an engineer's intermediate must satisfy `openssl verify -x509_strict
/// -purpose sslserver` with hostname checks, whatever the intermediate's key type.
@Suite struct LeafIssuerTests {
    @Test(arguments: KeyType.allCases)
    func leafFromIntermediateOfEachKeyTypeVerifiesWithOpenSSL(_ type: KeyType) throws {
        let pki = try PKIFixture(rootKey: .p256, intermediateKey: type)
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("api.example.com")])
        let result = try pki.opensslVerify(leaf.certificate, host: "api.example.com")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains(": OK"))
        #expect(leaf.chain == [pki.intermediate])
    }

    @Test func rsa2048LeafVerifies() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer, keyType: .rsa2048).issue(for: [try LeafName("rsa.example.com")])
        #expect(leaf.certificate.keyDescription == "RSA 2048")
        #expect(try pki.opensslVerify(leaf.certificate, host: "rsa.example.com").status == 0)
    }

    @Test func wrongHostnameFailsVerification() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("api.example.com")])
        let result = try pki.opensslVerify(leaf.certificate, host: "evil.example.org")
        #expect(result.status != 0)
        #expect(result.output.contains("hostname mismatch") || result.output.contains("Hostname mismatch"))
    }

    @Test func ipLiteralGetsAnIPAddressSAN() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("127.0.0.1")])
        #expect(leaf.certificate.sanDNSNames.isEmpty)
        #expect(try pki.opensslVerify(leaf.certificate, host: "127.0.0.1").status == 0)
        let v6 = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("[::1]")])
        #expect(try pki.opensslVerify(v6.certificate, host: "::1").status == 0)
    }

    @Test func wildcardLeafCoversOneLabel() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("*.example.com")])
        #expect(try pki.opensslVerify(leaf.certificate, host: "a.example.com").status == 0)
        #expect(try pki.opensslVerify(leaf.certificate, host: "a.b.example.com").status != 0)
    }

    @Test func profileFieldsAreAsSpecified() throws {
        let pki = try PKIFixture()
        let now = Date()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("Api.Example.com")], now: now)
        let cert = leaf.certificate
        #expect(cert.commonName == "api.example.com")
        #expect(cert.sanDNSNames == ["api.example.com"])
        #expect(cert.authorityKeyIdentifier == pki.intermediate.subjectKeyIdentifier)
        #expect(cert.serialHex.count >= 16, "serial \(cert.serialHex) has fewer than 64 bits")
        #expect(!cert.isCA)
        #expect(cert.notAfter <= pki.intermediate.notAfter)
        #expect(cert.notBefore >= pki.intermediate.notBefore)
        #expect(abs(cert.notBefore.timeIntervalSince(max(now.addingTimeInterval(-3600), pki.intermediate.notBefore))) < 2)
        let text = try Subprocess.run("openssl", ["x509", "-noout", "-text"], stdin: Array(cert.pem.utf8)).stdout
        #expect(text.contains("TLS Web Server Authentication"))
        #expect(text.contains("Digital Signature"))
        #expect(text.contains("CA:FALSE"))
    }

    @Test func notAfterIsCappedAtThirtyDaysAndTheIssuer() throws {
        let pki = try PKIFixture(days: 60)
        let now = Date()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("a.example.com")], now: now)
        #expect(abs(leaf.certificate.notAfter.timeIntervalSince(now.addingTimeInterval(30 * 86400))) < 2)
        let short = try PKIFixture(days: 2)
        let capped = try LeafIssuer(signer: short.signer).issue(for: [try LeafName("a.example.com")], now: now)
        #expect(capped.certificate.notAfter == short.intermediate.notAfter)
    }

    @Test func leafNeverUsesTheCAKey() throws {
        let pki = try PKIFixture()
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("a.example.com")])
        #expect(leaf.certificate.spkiDER != pki.intermediate.spkiDER)
        #expect(leaf.certificate.spkiDER != pki.root.spkiDER)
        let second = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("a.example.com")])
        #expect(second.certificate.spkiDER != leaf.certificate.spkiDER)
    }

    @Test func nameOutsideConstraintsIsRefusedWithATypedError() throws {
        let pki = try PKIFixture(permittedDNS: ["acme.dev"])
        let issuer = LeafIssuer(signer: pki.signer)
        #expect(try pki.opensslVerify(try issuer.issue(for: [try LeafName("api.acme.dev")]).certificate, host: "api.acme.dev").status == 0)
        #expect(try pki.opensslVerify(try issuer.issue(for: [try LeafName("acme.dev")]).certificate, host: "acme.dev").status == 0)
        let error = #expect(throws: CAError.self) { try issuer.issue(for: [try LeafName("api.example.com")]) }
        #expect(error?.code == .nameNotPermitted)
        #expect(!pki.signer.permits(try LeafName("notacme.dev")))
    }

    @Test func openSSLRejectsALeafOutsideTheConstraintWithPermittedSubtreeViolation() throws {
        let pki = try PKIFixture(permittedDNS: ["acme.dev"])
        // Bypass our own refusal to show OpenSSL enforces the constraint too.
        let key = try PrivateKey.generate(.p256)
        let outside = try CertificateProfile.leaf(names: [.dns("www.example.com")], notBefore: Date().addingTimeInterval(-60),
                                                  notAfter: Date().addingTimeInterval(3600))
            .sign(publicKey: key, issuer: pki.intermediate, issuerKey: pki.signer.key)
        let result = try pki.opensslVerify(outside, host: "www.example.com")
        #expect(result.status != 0)
        #expect(result.output.contains("permitted subtree violation"))
    }

    /// DNS subtrees alone left IP addresses unconstrained: NSS accepted a leaf for any IP literal
    /// under an intermediate "for acme.dev" (OpenSSL refused it only by its CN). Such an
    /// intermediate now excludes every address, and DevProxy mints no leaf for one (it passes
    /// the host through).
    @Test func aDNSConstrainedIntermediateSignsNoIPAddress() throws {
        let pki = try PKIFixture(permittedDNS: ["acme.dev"])
        let text = try Subprocess.run("openssl", ["x509", "-noout", "-ext", "nameConstraints"],
                                      stdin: Array(pki.intermediate.pem.utf8)).stdout
        #expect(text.contains("Excluded:") && text.contains("IP:0.0.0.0/0.0.0.0")
                && text.contains("IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0"), "\(text)")
        for address in ["127.0.0.1", "::1"] {
            #expect(!pki.signer.permits(try LeafName(address)))
            let error = #expect(throws: CAError.self) { try LeafIssuer(signer: pki.signer).issue(for: [try LeafName(address)]) }
            #expect(error?.code == .nameNotPermitted)
        }
        #expect(try PKIFixture().signer.permits(try LeafName("127.0.0.1")))
        // Bypassing our own refusal, OpenSSL now refuses by the SAN address itself.
        let key = try PrivateKey.generate(.p256)
        let forged = try CertificateProfile.leaf(names: [try LeafName("10.0.0.7")], notBefore: Date().addingTimeInterval(-60),
                                                 notAfter: Date().addingTimeInterval(3600))
            .sign(publicKey: key, issuer: pki.intermediate, issuerKey: pki.signer.key)
        let result = try pki.opensslVerify(forged, host: "10.0.0.7")
        #expect(result.status != 0 && result.output.contains("excluded subtree violation"), "\(result.output)")
    }

    /// An RSA leaf may encipher, which TLS 1.2's RSA key exchange (the `no-forward-secrecy`
    /// persona) needs: Java and NSS refused it without keyEncipherment. EC leaves only sign.
    @Test func rsaLeavesMayEncipher() throws {
        let pki = try PKIFixture()
        func usage(_ type: KeyType) throws -> String {
            let leaf = try LeafIssuer(signer: pki.signer, keyType: type).issue(for: [try LeafName("api.acme.dev")])
            #expect(try pki.opensslVerify(leaf.certificate, host: "api.acme.dev").status == 0)
            return try Subprocess.run("openssl", ["x509", "-noout", "-ext", "keyUsage"], stdin: Array(leaf.certificate.pem.utf8)).stdout
        }
        #expect(try usage(.rsa2048).contains("Digital Signature, Key Encipherment"))
        let ec = try usage(.p256)
        #expect(ec.contains("Digital Signature") && !ec.contains("Encipherment"))
    }

    /// An expired root is named as the root, with what a lead can do about it: `ca issue` said
    /// "the intermediate <root serial> expired … get a new one with `devproxy ca issue`".
    @Test func anExpiredRootIsCalledTheRoot() throws {
        let pki = try PKIFixture()
        let later = pki.root.notAfter.addingTimeInterval(86400)
        let error = #expect(throws: CAError.self) {
            try pki.store.issueIntermediate(email: "bo@acme.dev", days: 1, permittedDNS: [], keyType: .p256, output: nil,
                                            passphrase: nil, now: later)
        }
        #expect(error?.code == .signerExpired)
        #expect(error?.reason.hasPrefix("the root \(pki.root.serialHex) expired on ") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains("devproxy ca init --next") == true)
        let intermediate = #expect(throws: CAError.self) { try pki.signer.checkValidity(at: pki.intermediate.notAfter + 60) }
        #expect(intermediate?.reason.contains("devproxy ca issue --email ana@acme.dev") == true, "\(intermediate?.reason ?? "")")
    }

    @Test func expiredSignerIsRefused() throws {
        let pki = try PKIFixture()
        let later = pki.intermediate.notAfter.addingTimeInterval(60)
        let error = #expect(throws: CAError.self) { try LeafIssuer(signer: pki.signer).issue(for: [try LeafName("a.b.com")], now: later) }
        #expect(error?.code == .signerExpired)
        #expect(error?.reason.contains("devproxy ca issue") == true)
    }

    @Test func leafNamesAreValidated() {
        #expect(throws: CAError.self) { try LeafName("bad host") }
        #expect(throws: CAError.self) { try LeafName("a,DNS:evil.com") }
        #expect(throws: CAError.self) { try LeafName("") }
        #expect(throws: CAError.self) { try LeafName("*.com") }
        #expect(throws: CAError.self) { try LeafName(String(repeating: "a", count: 64) + ".com") }
    }

    /// A name over 64 characters (the CN's cap) gets no CN, as mitmproxy does (CA/B BR §7.1.4.3: a
    /// CN is one of the SAN values; it was the name cut at 64, which matched nothing); the SAN
    /// carries it whole, and a name of 64 or fewer is still the CN.
    @Test func longHostNameGetsNoCommonNameButFullSAN() throws {
        let pki = try PKIFixture()
        let long = String(repeating: "a", count: 60) + "." + String(repeating: "b", count: 20) + ".example.com"
        let leaf = try LeafIssuer(signer: pki.signer).issue(for: [try LeafName(long)])
        #expect(leaf.certificate.commonName == nil)
        #expect(leaf.certificate.sanDNSNames == [long])
        #expect(try pki.opensslVerify(leaf.certificate, host: long).status == 0)
        let short = String(repeating: "c", count: 52) + ".example.com"
        #expect(try LeafIssuer(signer: pki.signer).issue(for: [try LeafName(short)]).certificate.commonName == short)
    }

    /// An absolute name (`api.acme.dev.`, as openssl s_client and Python send it) is its host:
    /// it got no leaf ("not a host name").
    @Test func anAbsoluteNameIsItsHost() throws {
        #expect(try LeafName("api.acme.dev.") == .dns("api.acme.dev"))
        #expect(throws: CAError.self) { try LeafName("api.acme.dev..") }
        #expect(throws: CAError.self) { try LeafName(".") }
    }

    @Test func rootCanSignLeavesForSmallTeams() throws {
        let pki = try PKIFixture()
        let rootSigner = try pki.store.rootSigner(passphrase: nil)
        let leaf = try LeafIssuer(signer: rootSigner).issue(for: [try LeafName("a.example.com")])
        #expect(leaf.chain.isEmpty)
        let path = pki.directory.write("root-leaf.pem", leaf.certificate.pem)
        let result = try Subprocess.run("openssl", ["verify", "-x509_strict", "-purpose", "sslserver", "-verify_hostname",
                                                    "a.example.com", "-CAfile", pki.rootPath, path])
        #expect(result.status == 0, "\(result.output)")
    }
}
