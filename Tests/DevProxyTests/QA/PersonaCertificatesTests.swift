import CertAuthority
import Foundation
import Testing
import TestSupport

/// Each persona's leaf, checked by `openssl verify` against the root a device would hold: only
/// `team` passes against the team root, `unpinned` only against the QA alternate root, and the
/// others fail with the reason a client would give.
@Suite struct PersonaCertificatesTests {
    let fixture: PKIFixture
    let personas: PersonaCertificates
    let host = "api.acme.dev"

    init() throws {
        fixture = try PKIFixture()
        try QAAlternateRoot(store: fixture.store).create()
        personas = try PersonaCertificates(store: fixture.store, team: LeafCache(issuer: LeafIssuer(signer: fixture.signer)))
    }

    /// `openssl verify` of `leaf` (with its chain as untrusted) against `anchor`, checking `host`.
    func verify(_ persona: Persona, against anchor: String? = nil) throws -> Subprocess.Result {
        let leaf = try #require(try personas.leaf(for: persona, host: host))
        let dir = fixture.directory
        let leafPath = dir.write("leaf-\(persona.rawValue).pem", leaf.certificate.pem)
        var arguments = ["verify", "-purpose", "sslserver", "-verify_hostname", host, "-CAfile", anchor ?? fixture.rootPath]
        if !leaf.chain.isEmpty { arguments += ["-untrusted", dir.write("chain-\(persona.rawValue).pem", leaf.chain.map(\.pem).joined())] }
        return try Subprocess.run("openssl", arguments + [leafPath])
    }

    var alternateRootPath: String { QAAlternateRoot(store: fixture.store).certificatePath }

    @Test func teamLeafVerifiesAgainstTheTeamRootAndComesFromTheCache() throws {
        let result = try verify(.team)
        #expect(result.status == 0, "\(result.output)")
        #expect(try personas.leaf(for: .team, host: host) === personas.team.leaf(for: try LeafName(host)))
    }

    @Test func unpinnedLeafVerifiesOnlyAgainstTheQAAlternateRoot() throws {
        #expect(try verify(.unpinned, against: alternateRootPath).status == 0)
        let againstTeam = try verify(.unpinned)
        #expect(againstTeam.status != 0)
        #expect(againstTeam.output.contains("unable to get local issuer certificate"), "\(againstTeam.output)")
    }

    /// `ca trace` of an `unpinned` leaf names the QA alternate root it came from: it said "Not
    /// issued by this CA", with that root in the same directory. A stranger's leaf still gets that.
    @Test func traceNamesTheQAAlternateRootOfAnUnpinnedLeaf() throws {
        let leaf = try #require(try personas.leaf(for: .unpinned, host: host))
        let path = fixture.directory.write("unpinned-leaf.pem", leaf.certificate.pem)
        let traced = try Subprocess.run(Subprocess.devproxy, ["ca", "trace", "--ca-dir", fixture.store.directory, path])
        #expect(traced.status == 1)
        #expect(traced.stdout.contains("comes from its QA alternate root") && traced.stdout.contains("`unpinned` persona"),
                "\(traced.output)")
        let untrusted = try #require(try personas.leaf(for: .untrusted, host: host))
        let stranger = fixture.directory.write("untrusted-leaf.pem", untrusted.certificate.pem)
        let other = try Subprocess.run(Subprocess.devproxy, ["ca", "trace", "--ca-dir", fixture.store.directory, stranger])
        #expect(other.status == 1 && other.stdout.hasPrefix("Not issued by this CA ("), "\(other.output)")
    }

    @Test func untrustedLeafFailsAgainstBothRoots() throws {
        for anchor in [fixture.rootPath, alternateRootPath] {
            let result = try verify(.untrusted, against: anchor)
            #expect(result.status != 0)
            #expect(result.output.contains("unable to get local issuer certificate"), "\(result.output)")
        }
    }

    @Test func expiredLeafFailsAsExpiredWithinTheIssuersValidity() throws {
        let leaf = try #require(try personas.leaf(for: .expired, host: host))
        #expect(leaf.certificate.notAfter < Date())
        #expect(leaf.certificate.notBefore >= fixture.intermediate.notBefore)
        let result = try verify(.expired)
        #expect(result.status != 0)
        #expect(result.output.contains("certificate has expired"), "\(result.output)")
    }

    @Test func wrongHostLeafFailsOnTheName() throws {
        let result = try verify(.wrongHost)
        #expect(result.status != 0)
        #expect(result.output.contains("hostname mismatch"), "\(result.output)")
        #expect(try personas.leaf(for: .wrongHost, host: host)?.certificate.sanDNSNames == [PersonaCertificates.wrongHostName])
    }

    @Test func selfSignedLeafFailsAsSelfSigned() throws {
        let result = try verify(.selfSigned)
        #expect(result.status != 0)
        #expect(result.output.contains("self-signed certificate"), "\(result.output)")
    }

    @Test func passthroughHasNoLeafAndLeavesAreCachedPerHost() throws {
        #expect(try personas.leaf(for: .passthrough, host: host) == nil)
        let first = try personas.leaf(for: .untrusted, host: host)
        #expect(first === (try personas.leaf(for: .untrusted, host: host)))
        #expect(first !== (try personas.leaf(for: .untrusted, host: "other.acme.dev")))
    }

    @Test func unpinnedWithoutAlternateRootSaysHowToCreateIt() throws {
        let bare = try PKIFixture()
        let personas = try PersonaCertificates(store: bare.store, team: LeafCache(issuer: LeafIssuer(signer: bare.signer)))
        #expect(throws: CAError.self) { try personas.leaf(for: .unpinned, host: "api.acme.dev") }
        do { _ = try personas.leaf(for: .unpinned, host: "api.acme.dev") } catch let error as CAError {
            #expect(error.reason.contains("devproxy qa init"))
        }
    }

    @Test func concurrentRequestsAreSafe() throws {
        let personas = self.personas
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            let persona: Persona = [.untrusted, .selfSigned, .expired, .wrongHost][index % 4]
            _ = try? personas.leaf(for: persona, host: "h\(index % 3).acme.dev")
        }
        #expect(try personas.leaf(for: .selfSigned, host: "h0.acme.dev")?.certificate.sanDNSNames == ["h0.acme.dev"])
    }
}

/// `PATTERN=NAME` rules: first match wins, `team` by default, bad rules named.
@Suite struct PersonaRulesTests {
    @Test func firstMatchingRuleWinsAndTeamIsTheDefault() throws {
        let rules = try PersonaRules(parsing: ["api.*.example.com=expired", "*.example.com=unpinned", "cdn.other.net=self-signed"])
        #expect(rules.persona(for: "api.eu.example.com") == .expired)
        #expect(rules.persona(for: "www.example.com") == .unpinned)
        #expect(rules.persona(for: "a.b.example.com") == .unpinned)
        #expect(rules.persona(for: "example.com") == .team, "*.example.com does not cover the apex")
        #expect(rules.persona(for: "CDN.other.net") == .selfSigned, "case-insensitive")
        #expect(rules.persona(for: "elsewhere.org") == .team)
        #expect(try PersonaRules(parsing: ["*=wrong-host"]).persona(for: "anything") == .wrongHost)
    }

    @Test func badRulesAreRejectedWithTheChoices() throws {
        #expect(throws: CAError.self) { try PersonaRules(parsing: ["*.example.com"]) }
        do { _ = try PersonaRules(parsing: ["*.example.com=pinned"]) } catch let error as CAError {
            #expect(error.reason.contains("wrong-host") && error.reason.contains("pinned"))
        }
        #expect(throws: CAError.self) { try PersonaRules(parsing: ["=team"]) }
    }

    @Test func globEdgeCases() {
        #expect(GlobPattern("*").matches(""))
        #expect(GlobPattern("a*b*c").matches("abc"))
        #expect(GlobPattern("a*b*c").matches("axxbyyc"))
        #expect(!GlobPattern("a*b*c").matches("acb"))
        #expect(!GlobPattern("ab*ba").matches("aba"), "pieces may not overlap")
    }
}
