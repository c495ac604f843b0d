import CertAuthority
import Foundation
import Testing
import TestSupport

/// `--leaf-key GLOB=KEY.pem`: parsing, the leaves it mints (that key for matching hosts, fresh
/// keys for the rest), and the refusal of any CA's key.
@Suite struct FixedLeafKeyTests {
    let fixture: PKIFixture

    init() throws {
        fixture = try PKIFixture()
    }

    func writeKey(_ name: String) throws -> (String, PrivateKey) {
        let key = try PrivateKey.generate(.p256)
        return (fixture.directory.write(name, String(decoding: try key.pem(), as: UTF8.self)), key)
    }

    @Test func matchingHostsGetTheFixedKeyOthersAFreshOne() throws {
        let (path, key) = try writeKey("debug-leaf.key")
        var issuer = LeafIssuer(signer: fixture.signer)
        issuer.fixedKeys = [try FixedLeafKey.parse("*.api.acme.dev=\(path)")]
        let pinned = try issuer.issue(for: [try LeafName("eu.api.acme.dev")])
        #expect(pinned.certificate.spkiDER == (try key.publicKeyDER))
        let again = try issuer.issue(for: [try LeafName("us.api.acme.dev")])
        #expect(again.certificate.spkiDER == pinned.certificate.spkiDER)
        #expect(again.certificate.serialHex != pinned.certificate.serialHex)
        let other = try issuer.issue(for: [try LeafName("www.acme.dev")])
        #expect(other.certificate.spkiDER != (try key.publicKeyDER))
        #expect(try fixture.opensslVerify(pinned.certificate, host: "eu.api.acme.dev").status == 0)
    }

    @Test func malformedArgumentsAreNamed() throws {
        for argument in ["api.acme.dev", "=key.pem", "api.acme.dev="] {
            #expect(throws: CAError.self) { try FixedLeafKey.parse(argument) }
        }
        let notAKey = fixture.directory.write("not-a-key.pem", "hello")
        #expect(throws: CAError.self) { try FixedLeafKey.parse("x=\(notAKey)") }
        #expect(throws: CAError.self) { try FixedLeafKey.parse("x=\(fixture.directory.file("missing.key"))") }
    }

    @Test func caKeysAreRefused() throws {
        let root = try FixedLeafKey.parse("x=\(fixture.store.rootKeyPath)")
        #expect(throws: CAError.self) { try root.refusingCAKeys([fixture.root], ledgerPins: []) }
        #expect(throws: CAError.self) { try root.refusingCAKeys([], ledgerPins: [fixture.root.pin]) }
        // The intermediate's key, taken from the engineer's bundle (certificate + key).
        let intermediate = try FixedLeafKey.parse("x=\(fixture.bundlePath)")
        #expect(throws: CAError.self) { try intermediate.refusingCAKeys([fixture.intermediate], ledgerPins: []) }
        let (path, _) = try writeKey("leaf.key")
        try FixedLeafKey.parse("x=\(path)").refusingCAKeys([fixture.root, fixture.intermediate], ledgerPins: [fixture.root.pin])
    }

    @Test func theIssuerItselfRefusesASignersKey() throws {
        var issuer = LeafIssuer(signer: fixture.signer)
        issuer.fixedKeys = [try FixedLeafKey.parse("*=\(fixture.bundlePath)")]
        #expect(throws: CAError.self) { try issuer.issue(for: [try LeafName("api.acme.dev")]) }
    }
}
