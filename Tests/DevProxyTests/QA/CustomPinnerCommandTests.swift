import CertAuthority
import Foundation
import Testing
import TestSupport

/// Hand-written pinners from the command line: `pins --format` against openssl, `policy check`
/// on kind `custom` files (the classic bugs, bad input), `pins snippet --format custom` fed back,
/// and `run --leaf-key` under a real leaf-pinning client (`curl --pinnedpubkey`).
@Suite struct CustomPinnerCommandTests {
    let fixture: PKIFixture

    init() throws {
        fixture = try PKIFixture()
    }

    static func fixtureText(_ name: String) throws -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return try String(contentsOf: url.appendingPathComponent("Fixtures/custom/\(name)"), encoding: .utf8)
    }

    func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, arguments)
    }

    func openssl(_ pipeline: String) throws -> String {
        let result = try Subprocess.run("bash", ["-c", "set -o pipefail; " + pipeline], directory: fixture.directory.path)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `pins --format all --json` rows for `file`, by form.
    func forms(_ file: String) throws -> [String: String] {
        let result = try devproxy(["pins", "--format", "all", "--json", file])
        #expect(result.status == 0, "\(result.output)")
        let rows = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]) ?? []
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in
            (row["pin"] as? String).map { (row["form"] as? String ?? "", $0) }
        })
    }

    @Test func pinsFormatMatchesOpenSSL() throws {
        let root = fixture.rootPath
        let pub = "openssl x509 -in \(root) -pubkey -noout | openssl pkey -pubin -outform DER"
        let found = try forms(root)
        #expect(found["spki"] == (try openssl("\(pub) | openssl dgst -sha256 -binary | base64")))
        #expect(found["raw-key"] == (try openssl("\(pub) | tail -c 65 | openssl dgst -sha256 -binary | base64")))
        #expect(found["trustkit"] == found["spki"])
        #expect(found["certificate"] == (try openssl("openssl x509 -in \(root) -outform DER | openssl dgst -sha256 -binary | base64")))
        // One form of one key is the bare hash, as a pinner holds it and curl's --pinnedpubkey takes it.
        let text = try devproxy(["pins", "--format", "raw-key", root])
        #expect(text.stdout == "\(found["raw-key"] ?? "?")\n", "\(text.stdout)")
        let bad = try devproxy(["pins", "--format", "md5", root])
        #expect(bad.status == 2 && bad.stderr == "error: --format md5 is not one of spki, raw-key, trustkit, certificate, all\n")
    }

    @Test func policyCheckFindsSPKIPinsInARawKeyPinner() throws {
        let spki = SPKIPin.base64SHA256(fixture.root.spkiDER)
        let text = try Self.fixtureText("certificate-pinner.json")
            .replacingOccurrences(of: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", with: spki)
        let path = fixture.directory.write("pinner.json", text)
        let result = try devproxy(["policy", "check", "--ca-dir", fixture.store.directory, "--json", path, "--host", "api.example.com"])
        #expect(result.status == 0, "\(result.output)")
        let json = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        let warnings = json["warnings"] as? [String] ?? []
        let raw = try #require(PinHashForm.rawKey.digest(of: fixture.root)).base64
        #expect(warnings.contains("CertificatePinner: pin \(spki) is the spki hash of \(fixture.root.subject), but the pinner "
                                  + "hashes raw-key: it matches nothing, in production too; its raw-key pin is \(raw)"), "\(warnings)")
        let host = (json["hosts"] as? [[String: Any]])?.first
        #expect(host?["decision"] as? String == "block")
    }

    @Test func expectedCertificatesRevealPinsOfTheWrongForm() throws {
        // Production's chain stands here as a second, unrelated CA; the pinner holds its SPKI pin.
        let production = try PKIFixture()
        let spki = SPKIPin.base64SHA256(production.intermediate.spkiDER)
        let path = fixture.directory.write("pinner.json", """
            {"kind": "custom", "name": "Pinner", "hash": "raw-key", "scope": "any", "hosts": ["api.acme.dev"],
             "pins": ["\(spki)", "\(SPKIPin.base64SHA256(production.root.spkiDER))"]}
            """)
        let without = try devproxy(["policy", "check", "--ca-dir", fixture.store.directory, path])
        #expect(!without.stdout.contains("but the pinner hashes raw-key"), "\(without.stdout)")
        let with = try devproxy(["policy", "check", "--ca-dir", fixture.store.directory, path,
                                 "--expected", production.intermediatePath()])
        #expect(with.stdout.contains("pin \(spki) is the spki hash of \(production.intermediate.subject), but the pinner hashes "
                                     + "raw-key: it matches nothing, in production too"), "\(with.stdout)")
    }

    @Test func policyCheckFindsATeamRootPinInALeafOnlyPinner() throws {
        let text = try Self.fixtureText("pinning-delegate.json")
            .replacingOccurrences(of: "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=", with: SPKIPin.base64SHA256(fixture.root.spkiDER))
        let result = try devproxy(["policy", "check", "--ca-dir", fixture.store.directory, fixture.directory.write("delegate.json", text)])
        #expect(result.status == 0)
        #expect(result.stdout.contains("a CA, but the pinner hashes the leaf only: no CA can satisfy it, the team CA included"),
                "\(result.stdout)")
        #expect(result.stdout.contains("api.tuapp.com") && result.stdout.contains("block (result 1): the leaf's trustkit hash is not pinned"))
    }

    @Test func unknownHashIsOneErrorLine() throws {
        let path = fixture.directory.write("unknown.json", try Self.fixtureText("unknown-hash.json"))
        let result = try devproxy(["policy", "check", path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "error: \(path): unknown hash \"md5\"; use one of spki, raw-key, trustkit, certificate\n")
    }

    @Test func malformedInfoPlistIsOneErrorLine() throws {
        let path = fixture.directory.write("Info.plist", "<plist><dict><key>NSAppTransportSecurity</key><dict>")
        let result = try devproxy(["policy", "check", path])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: \(path): not a property list"))
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test func customSnippetOfTheTeamRootIsAllowed() throws {
        let snippet = try devproxy(["pins", "snippet", "--ca-dir", fixture.store.directory, "--domain", "api.acme.dev",
                                    "--format", "custom", "--hash", "raw-key", "--backup", fixture.intermediatePath()])
        #expect(snippet.status == 0, "\(snippet.output)")
        let path = fixture.directory.write("snippet.json", snippet.stdout)
        let result = try devproxy(["policy", "check", "--ca-dir", fixture.store.directory, "--json", path])
        let json = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect((json["warnings"] as? [String])?.isEmpty == true, "\(json)")
        #expect((json["hosts"] as? [[String: Any]])?.first?["decision"] as? String == "allow", "\(json)")
    }

    @Test func atsSnippetsPinTheTeamRootOrTheLeafKeyAndCheckClean() throws {
        let snippet = try devproxy(["pins", "snippet", "--ca-dir", fixture.store.directory, "--domain", "api.acme.dev",
                                    "--format", "ats", "--backup", fixture.intermediatePath()])
        #expect(snippet.status == 0, "\(snippet.output)")
        let path = fixture.directory.write("Info.plist", snippet.stdout)
        let result = try devproxy(["policy", "check", "--ca-dir", fixture.store.directory, "--json", path])
        let json = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect((json["warnings"] as? [String])?.isEmpty == true, "\(json)")
        let host = (json["hosts"] as? [[String: Any]])?.first
        #expect(host?["decision"] as? String == "allow" && host?["transport"] as? String == "meets", "\(json)")
        let (keyPath, _) = (fixture.directory.file("leaf.key"), ())
        _ = try openssl("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out \(keyPath)")
        let leafSnippet = try devproxy(["pins", "snippet", "--ca-dir", fixture.store.directory, "--domain", "api.acme.dev",
                                        "--format", "ats", "--leaf-key", keyPath])
        #expect(leafSnippet.stdout.contains("<key>NSPinnedLeafIdentities</key>"), "\(leafSnippet.output)")
        #expect(leafSnippet.stdout.contains("<string>\(try forms(keyPath)["spki"] ?? "?")</string>"))
        let refused = try devproxy(["pins", "snippet", "--ca-dir", fixture.store.directory, "--domain", "a.dev", "--format", "ats",
                                    "--hash", "raw-key"])
        #expect(refused.status == 2)
    }

    @Test func leafKeyLeavesSatisfyCurlPinnedPubkeyAndCAKeysAreRefused() throws {
        let origin = try OriginServer()
        let keyPath = fixture.directory.file("debug-leaf.key")
        _ = try openssl("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out \(keyPath)")
        let spki = try forms(keyPath)["spki"] ?? ""
        let snippet = try devproxy(["pins", "snippet", "--ca-dir", fixture.store.directory, "--domain", "localhost",
                                    "--format", "swift-pins", "--hash", "spki", "--leaf-key", keyPath])
        #expect(snippet.stdout.contains("\"\(spki)\", // DevProxy --leaf-key debug-leaf.key"), "\(snippet.output)")
        let proxy = try DevProxyProcess(["--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath,
                                         "--upstream-ca", origin.caPath, "--leaf-key", "localhost=\(keyPath)", "--quiet"])
        let curl = ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", fixture.rootPath]
        let pinned = try Subprocess.run("curl", curl + ["--pinnedpubkey", "sha256//\(spki)", origin.url("/cl?n=5")])
        #expect(pinned.status == 0 && pinned.stdout == "hello", "\(pinned.output)")
        let rootPin = SPKIPin.base64SHA256(fixture.root.spkiDER)
        let refused = try Subprocess.run("curl", curl + ["--pinnedpubkey", "sha256//\(rootPin)", origin.url("/cl?n=5")])
        #expect(refused.status == 90, "\(refused.output)")
        _ = proxy.stop()
        for caKey in [fixture.store.rootKeyPath] {
            let result = try devproxy(["run", "--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath,
                                       "--listen", "127.0.0.1:0", "--leaf-key", "*=\(caKey)"])
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("error: --leaf-key \(caKey) is the key of \(fixture.root.subject), a CA;"), "\(result.stderr)")
        }
        // An encrypted key (a team's CA keys are) was answered "give its passphrase with
        // --passphrase-file", which the leaf key never takes, even when that flag was given.
        let encrypted = fixture.directory.file("encrypted.key")
        let made = try Subprocess.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                  "-aes256", "-pass", "pass:s3cret", "-out", encrypted])
        #expect(made.status == 0, "\(made.output)")
        let passphrase = fixture.directory.write("pass", "s3cret")
        let result = try devproxy(["run", "--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath,
                                   "--listen", "127.0.0.1:0", "--leaf-key", "*=\(encrypted)", "--passphrase-file", passphrase])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: --leaf-key \(encrypted) is encrypted; a leaf key is read unencrypted"),
                "\(result.stderr)")
        #expect(!result.stderr.contains("--passphrase-file"))
    }
}

/// `pin-check` reads the new kinds too: a custom raw-key pinner and an ATS Info.plist, judged on
/// the chain DevProxy really serves.
@Suite struct PinCheckNewKindsTests {
    @Test func pinCheckJudgesCustomAndATSPoliciesThroughTheProxy() throws {
        let fixture = try PKIFixture()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath,
                                         "--upstream-ca", origin.caPath, "--quiet"])
        let raw = try #require(PinHashForm.rawKey.digest(of: fixture.root)).base64
        let custom = fixture.directory.write("pinner.json", """
            {"kind": "custom", "hash": "raw-key", "scope": "ca", "hosts": ["localhost"],
             "pins": ["\(raw)", "\(Digest.sha256(fixture.root.spkiDER).base64)"]}
            """)
        let spki = Digest.sha256(fixture.root.spkiDER).base64
        let info = try PropertyListSerialization.data(fromPropertyList: ["NSAppTransportSecurity": ["NSPinnedDomains": [
            "localhost": ["NSPinnedLeafIdentities": [["SPKI-SHA256-BASE64": spki]]]]]], format: .xml, options: 0)
        let ats = fixture.directory.write("Info.plist", String(decoding: info, as: UTF8.self))
        let base = ["pin-check", origin.url("/"), "--proxy", "127.0.0.1:\(proxy.port)", "--ca-file", fixture.rootPath, "--json"]
        let allowed = try Subprocess.run(Subprocess.devproxy, base + ["--policy", custom])
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(allowed.stdout.contains("\"source\":\"custom\"") || allowed.stdout.contains("\"source\" : \"custom\""), "\(allowed.stdout)")
        // The team root's SPKI as a *leaf* identity: Apple compares it with the leaf only.
        let blocked = try Subprocess.run(Subprocess.devproxy, base + ["--policy", ats])
        #expect(blocked.status == 1, "\(blocked.output)")
        _ = proxy.stop()
    }
}
