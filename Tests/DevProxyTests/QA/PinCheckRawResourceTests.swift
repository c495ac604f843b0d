import CertAuthority
import Foundation
import Testing
import TestSupport

/// `pin-check` on an Android config whose anchors are `<certificates src="@raw/team_ca"/>` reads
/// the resource as `policy check` does (a policy in res/xml/ finds it alone, or `--res DIR|APP.apk`):
/// it judged the live chain as if the app trusted no such anchor, and said "block".
@Suite(.serialized) struct PinCheckRawResourceTests {
    let fixture: PKIFixture
    let server: BackgroundServer
    let host = "api.acme.dev"

    init() throws {
        fixture = try PKIFixture()
        server = try BackgroundServer.tlsServer(for: host, signedBy: fixture)
    }

    /// acme.dev trusts only `@raw/team_ca` and pins the team root and a backup.
    var config: String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <network-security-config>
            <domain-config>
                <domain includeSubdomains="true">acme.dev</domain>
                <trust-anchors><certificates src="@raw/team_ca"/></trust-anchors>
                <pin-set>
                    <pin digest="SHA-256">\(SPKIPin.base64SHA256(fixture.root.spkiDER))</pin>
                    <pin digest="SHA-256">AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</pin>
                </pin-set>
            </domain-config>
        </network-security-config>
        """
    }

    /// `NAME/res/xml/network_security_config.xml`, with `res/raw/team_ca.pem` holding `certificate`
    /// as openssl writes it.
    func resDirectory(_ name: String, holding certificate: String) throws -> (res: String, policy: String) {
        let res = fixture.directory.file(name + "/res")
        for folder in ["xml", "raw"] {
            try FileManager.default.createDirectory(atPath: res + "/" + folder, withIntermediateDirectories: true)
        }
        try config.write(toFile: res + "/xml/network_security_config.xml", atomically: true, encoding: .utf8)
        let converted = try Subprocess.run("openssl", ["x509", "-in", certificate, "-out", res + "/raw/team_ca.pem"])
        #expect(converted.status == 0, "\(converted.output)")
        return (res, res + "/xml/network_security_config.xml")
    }

    func pinCheck(_ policy: String, _ extra: [String] = []) throws -> (Subprocess.Result, [String: Any]) {
        let result = try Subprocess.run(Subprocess.devproxy, ["pin-check", "https://\(host):\(server.port)/", "--policy", policy,
                                                              "--resolve", "\(host):\(server.port):127.0.0.1",
                                                              "--ca-file", fixture.rootPath, "--json"] + extra, timeout: 30)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, object)
    }

    @Test func theRawResourceDecidesAsInPolicyCheck() throws {
        defer { server.stop() }
        let team = try resDirectory("team", holding: fixture.rootPath)
        // In res/xml/: the resource beside it is read, and holds the team root the chain ends in.
        let (inRes, inResJSON) = try pinCheck(team.policy)
        #expect(inRes.status == 0, "\(inRes.output)")
        #expect(inResJSON["decision"] as? String == "allow", "\(inRes.output)")
        #expect(inResJSON["matched_pin"] as? String == "sha256/" + SPKIPin.base64SHA256(fixture.root.spkiDER))

        // Elsewhere: unread, the decision turns on it and says so (exit 5), as `policy check` does.
        let loose = fixture.directory.write("nsc.xml", config)
        let (unread, unreadJSON) = try pinCheck(loose)
        #expect(unread.status == 5, "\(unread.output)")
        #expect(unreadJSON["decision"] as? String == "uncertain", "\(unread.output)")
        #expect(unreadJSON["result"] is NSNull, "\(unread.output)")
        #expect((unreadJSON["reason"] as? String)?.hasPrefix("depends on @raw/team_ca, which DevProxy has not read") == true,
                "\(unread.output)")

        // --res DIR: read there; a resource holding another CA blocks, as Android would.
        let (given, givenJSON) = try pinCheck(loose, ["--res", team.res])
        #expect(given.status == 0 && givenJSON["decision"] as? String == "allow", "\(given.output)")
        let otherKey = fixture.directory.file("other.key"), otherCA = fixture.directory.file("other.pem")
        let made = try Subprocess.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                  "-subj", "/CN=Other CA", "-keyout", otherKey, "-out", otherCA, "-days", "2"])
        #expect(made.status == 0, "\(made.output)")
        let other = try resDirectory("other", holding: otherCA)
        let (blocked, blockedJSON) = try pinCheck(loose, ["--res", other.res])
        #expect(blocked.status == 1 && blockedJSON["decision"] as? String == "block", "\(blocked.output)")

        let missing = try Subprocess.run(Subprocess.devproxy, ["pin-check", "https://\(host):\(server.port)/", "--policy", loose,
                                                               "--res", fixture.directory.file("nowhere")])
        #expect(missing.status == 3, "\(missing.output)")
        #expect(missing.stderr.hasPrefix("error: --res \(fixture.directory.file("nowhere")): no such file or directory"),
                "\(missing.output)")
    }

    /// An .apk (zipped here with `zip`) is read with unzip, as `policy check --res app.apk` reads it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zip")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/unzip"), "no zip or unzip"))
    func theResourceIsReadFromAnAPK() throws {
        defer { server.stop() }
        let team = try resDirectory("apk", holding: fixture.rootPath)
        let apk = fixture.directory.file("app.apk")
        let zipped = try Subprocess.run("sh", ["-c", "cd \"$0/..\" && zip -q -r \"$1\" res", team.res, apk])
        #expect(zipped.status == 0, "\(zipped.output)")
        let (result, json) = try pinCheck(fixture.directory.write("nsc.xml", config), ["--res", apk])
        #expect(result.status == 0, "\(result.output)")
        #expect(json["decision"] as? String == "allow", "\(result.output)")
    }
}
