import CertAuthority
import Foundation
import Testing
import TestSupport

/// Android `<certificates src="@raw/name"/>`: `policy check` cannot know whether the resource
/// holds the chain's anchor unless it reads it, so the verdict says what it depends on; given the
/// app's res directory (or a policy inside one), it reads the resource and decides.
@Suite struct PolicyCheckRawResourceTests {
    let fixture: PKIFixture

    init() throws {
        fixture = try PKIFixture()
    }

    var ca: String { fixture.store.directory }
    var rootPin: String { SPKIPin.base64SHA256(fixture.root.spkiDER) }

    /// A config whose acme.dev trusts only `@raw/team_ca` (plus `extra` sources) and pins the team
    /// root and a backup.
    func config(extraSources: String = "") -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <network-security-config>
            <domain-config>
                <domain includeSubdomains="true">acme.dev</domain>
                <trust-anchors>
                    <certificates src="@raw/team_ca"/>\(extraSources)
                </trust-anchors>
                <pin-set>
                    <pin digest="SHA-256">\(rootPin)</pin>
                    <pin digest="SHA-256">AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</pin>
                </pin-set>
            </domain-config>
        </network-security-config>
        """
    }

    /// `res/xml/network_security_config.xml` in a new res directory, with `res/raw/team_ca.pem`
    /// holding `rawPEM` when given.
    func resDirectory(_ name: String, config: String, rawPEM: String?) throws -> (res: String, policy: String) {
        let res = fixture.directory.file(name + "/res")
        try FileManager.default.createDirectory(atPath: res + "/xml", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: res + "/raw", withIntermediateDirectories: true)
        try config.write(toFile: res + "/xml/network_security_config.xml", atomically: true, encoding: .utf8)
        if let rawPEM { try rawPEM.write(toFile: res + "/raw/team_ca.pem", atomically: true, encoding: .utf8) }
        return (res, res + "/xml/network_security_config.xml")
    }

    /// A self-signed CA from openssl, PEM: not the team root.
    func otherCA() throws -> String {
        let key = fixture.directory.file("other.key"), certificate = fixture.directory.file("other.pem")
        let made = try Subprocess.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                  "-subj", "/CN=Other CA", "-keyout", key, "-out", certificate, "-days", "2"])
        #expect(made.status == 0, "\(made.output)")
        return try String(contentsOfFile: certificate, encoding: .utf8)
    }

    /// The team root as openssl writes it (PEM), as an app would bundle it.
    func teamRootPEM() throws -> String {
        let converted = try Subprocess.run("openssl", ["x509", "-in", fixture.rootPath])
        #expect(converted.status == 0, "\(converted.output)")
        return converted.stdout
    }

    func check(_ arguments: [String]) throws -> (Subprocess.Result, [String: Any]) {
        let result = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, "--json"] + arguments)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        let row = ((object["hosts"] as? [[String: Any]]) ?? []).first { $0["host"] as? String == "acme.dev" } ?? [:]
        return (result, row)
    }

    /// Without the resource the verdict is uncertain and says on what; the text output too.
    @Test func anUnseenRawResourceMakesTheVerdictUncertain() throws {
        let policy = fixture.directory.write("network_security_config.xml", config())
        let (result, row) = try check([policy])
        #expect(result.status == 0, "\(result.output)")
        #expect(row["decision"] as? String == "uncertain", "\(result.output)")
        #expect(row["result"] is NSNull, "\(row)")
        let reason = row["reason"] as? String ?? ""
        #expect(reason.hasPrefix("depends on @raw/team_ca, which DevProxy has not read"), "\(reason)")
        #expect(reason.contains("if it holds \(fixture.root.subject): allow (result 0)"), "\(reason)")
        #expect(reason.contains("if not: block (result 2)"), "\(reason)")
        #expect(reason.contains("--res DIR"), "\(reason)")

        let text = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy])
        #expect(text.status == 0, "\(text.output)")
        #expect(text.stdout.contains("uncertain: depends on @raw/team_ca"), "\(text.output)")
    }

    /// A policy inside a res directory has its raw resource read: the team root in it allows,
    /// another CA blocks; `--res DIR` does the same for a policy elsewhere.
    @Test func theResourceIsReadFromTheResDirectory() throws {
        let holding = try resDirectory("holding", config: config(), rawPEM: try teamRootPEM())
        let (allowed, allowedRow) = try check([holding.policy])
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(allowedRow["decision"] as? String == "allow", "\(allowed.output)")
        #expect(allowedRow["result"] as? Int == 0)

        let elsewhere = fixture.directory.write("nsc.xml", config())
        let (given, givenRow) = try check([elsewhere, "--res", holding.res])
        #expect(given.status == 0, "\(given.output)")
        #expect(givenRow["decision"] as? String == "allow", "\(given.output)")

        let other = try resDirectory("other", config: config(), rawPEM: try otherCA())
        let (blocked, blockedRow) = try check([other.policy])
        #expect(blocked.status == 0, "\(blocked.output)")
        #expect(blockedRow["decision"] as? String == "block", "\(blocked.output)")
        #expect(blockedRow["result"] as? Int == 2)
        #expect((blockedRow["reason"] as? String)?.contains("@raw/team_ca (read from \(other.res)/raw/team_ca.pem) does not hold it")
                == true, "\(blockedRow)")

        let missing = try resDirectory("missing", config: config(), rawPEM: nil)
        let (unread, unreadRow) = try check([missing.policy])
        #expect(unread.status == 0, "\(unread.output)")
        #expect(unreadRow["decision"] as? String == "uncertain", "\(unread.output)")
        #expect(unread.stdout.contains("\(missing.res)/raw has no team_ca"), "\(unread.output)")
    }

    /// A config that also trusts `user` (where the team root is) does not depend on the resource.
    @Test func aVerdictTheResourceCannotChangeStaysCertain() throws {
        let policy = fixture.directory.write("nsc.xml", config(extraSources: "\n<certificates src=\"user\"/>"))
        let (result, row) = try check([policy])
        #expect(result.status == 0, "\(result.output)")
        #expect(row["decision"] as? String == "allow", "\(result.output)")
        #expect(!(row["reason"] as? String ?? "").contains("@raw"), "\(row)")
    }

    /// An .apk (a ZIP made here with `zip`, the raw file deflated as aapt stores it) is read the
    /// same way: the team root in res/raw/team_ca.pem allows, another CA blocks.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zip")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/unzip"), "no zip or unzip"))
    func theResourceIsReadFromAnAPK() throws {
        let policy = fixture.directory.write("nsc.xml", config())
        for (name, pem, decision) in [("team", try teamRootPEM(), "allow"), ("other", try otherCA(), "block")] {
            let tree = try resDirectory("apk-" + name, config: config(), rawPEM: pem)
            let apk = fixture.directory.file("\(name).apk")
            let zipped = try Subprocess.run("sh", ["-c", "cd \"$0/..\" && zip -q -r \"$1\" res", tree.res, apk])
            #expect(zipped.status == 0, "\(zipped.output)")
            let (result, row) = try check([policy, "--res", apk])
            #expect(result.status == 0, "\(result.output)")
            #expect(row["decision"] as? String == decision, "\(name): \(result.output)")
            if decision == "block" {
                #expect((row["reason"] as? String)?.contains("\(apk)!/res/raw/team_ca.pem") == true, "\(row)")
            }
        }
        let notAPK = fixture.directory.write("notes.txt", "hello\n")
        let refused = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy, "--res", notAPK])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr.hasPrefix("error: --res \(notAPK): not a directory or an .apk"), "\(refused.output)")
    }

    @Test func aResDirectoryThatIsNotThereIsOneErrorLine() throws {
        let policy = fixture.directory.write("nsc.xml", config())
        let result = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy, "--res",
                                                              fixture.directory.file("nowhere")])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.hasPrefix("error: --res \(fixture.directory.file("nowhere")): "), "\(result.output)")
    }
}
