import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy policy check` on the example policies in config/policies (their stand-in root pin
/// replaced by a test CA's), and `pins snippet` output fed back through it.
@Suite struct PolicyCheckCommandTests {
    static let standInRootPin = "sJwGycPXqNUZbEJ7c+RWEclEh2mbNvZpUpydlxH0s5c="
    let fixture: PKIFixture

    init() throws {
        fixture = try PKIFixture()
    }

    var rootPin: String { SPKIPin.base64SHA256(fixture.root.spkiDER) }
    var ca: String { fixture.store.directory }

    /// An example policy with the test root pinned (or left as shipped).
    func example(_ name: String, pinTestRoot: Bool = true) throws -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        let text = try String(contentsOf: url.appendingPathComponent("config/policies/\(name)"), encoding: .utf8)
        return fixture.directory.write(name, pinTestRoot ? text.replacingOccurrences(of: Self.standInRootPin, with: rootPin) : text)
    }

    func check(_ arguments: [String]) throws -> (Subprocess.Result, [String: Any]) {
        let result = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, "--json"] + arguments)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, object)
    }

    func hosts(_ object: [String: Any]) -> [String: [String: Any]] {
        Dictionary(uniqueKeysWithValues: ((object["hosts"] as? [[String: Any]]) ?? []).map { ($0["host"] as? String ?? "", $0) })
    }

    @Test func examplesPinningTheTeamRootAreValidAndAllowed() throws {
        for (file, expected) in [("trustkit-Info.plist", ["api.acme.dev", "metrics.acme.dev"]),
                                 ("network_security_config.xml", ["acme.dev"]), ("okhttp-pins.txt", ["acme.dev", "cdn.acme.dev"]),
                                 ("custom-pinner.json", ["api.acme.dev"]), ("ats-Info.plist", ["api.acme.dev"])] {
            let (result, json) = try check([try example(file)])
            #expect(result.status == 0, "\(file): \(result.output)")
            #expect(Set(json.keys) == ["errors", "warnings", "hosts"], "\(file)")
            #expect((json["errors"] as? [String])?.isEmpty == true)
            let rows = hosts(json)
            #expect(Set(rows.keys) == Set(expected), "\(file): \(rows.keys)")
            for (host, row) in rows {
                #expect(row["decision"] as? String == "allow", "\(file) \(host): \(row)")
                #expect(row["result"] as? Int == 0)
                #expect(row["policy_domain"] as? String != nil)
            }
        }
    }

    @Test func examplesAsShippedWarnThatDevProxyCannotDecrypt() throws {
        let (result, json) = try check([try example("trustkit-Info.plist", pinTestRoot: false), "--host", "api.acme.dev",
                                        "--host", "www.api.acme.dev", "--host", "elsewhere.dev"])
        #expect(result.status == 0, "\(result.output)")
        let warnings = (json["warnings"] as? [String]) ?? []
        #expect(warnings.contains("api.acme.dev: DevProxy cannot decrypt this host; the app will block"), "\(warnings)")
        let rows = hosts(json)
        #expect(rows["api.acme.dev"]?["decision"] as? String == "block")
        #expect(rows["api.acme.dev"]?["result"] as? Int == 1)
        #expect(rows["www.api.acme.dev"]?["policy_domain"] as? String == "api.acme.dev", "includeSubdomains")
        #expect(rows["elsewhere.dev"]?["decision"] as? String == "not_pinned")
        #expect(rows["elsewhere.dev"]?["policy_domain"] is NSNull)
        #expect(rows["elsewhere.dev"]?["result"] is NSNull)
    }

    @Test func libraryErrorsExitOneAndLintsAreWarnings() throws {
        let oneEnforcedPin = fixture.directory.write("one.json", "{\"TSKPinnedDomains\": {\"api.acme.dev\": {\"TSKPublicKeyHashes\": [\"\(rootPin)\"]}}}")
        let (bad, badJSON) = try check([oneEnforcedPin])
        #expect(bad.status == 1)
        let firstError = (badJSON["errors"] as? [String])?.first ?? ""
        #expect(firstError.hasPrefix("TrustKit was initialized with less than 2 pins"), "\(firstError)")
        let nsc = fixture.directory.write("nsc.xml", """
            <network-security-config><domain-config><domain>api.acme.dev</domain>
            <trust-anchors><certificates src="user"/></trust-anchors>
            <pin-set expiration="2001-01-01"><pin digest="SHA-256">\(rootPin)</pin></pin-set></domain-config></network-security-config>
            """)
        let (ok, okJSON) = try check([nsc])
        #expect(ok.status == 0, "\(ok.output)")
        let warnings = (okJSON["warnings"] as? [String]) ?? []
        #expect(warnings.contains { $0.hasPrefix("api.acme.dev: only one pin") }, "\(warnings)")
        #expect(warnings.contains { $0.hasPrefix("api.acme.dev: pins expired") }, "\(warnings)")
        #expect(hosts(okJSON)["api.acme.dev"]?["decision"] as? String == "not_pinned", "expired pins are skipped")
        let badPin = fixture.directory.write("bad.xml", "<network-security-config><domain-config><domain>a.dev</domain>"
                                             + "<pin-set><pin digest=\"SHA-256\">AAAA</pin></pin-set></domain-config></network-security-config>")
        let (invalid, _) = try check([badPin])
        #expect(invalid.status == 1)
        let human = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, oneEnforcedPin])
        #expect(human.status == 1 && human.stdout.contains("refuses this policy"))
    }

    /// A config that trusts only the system's anchors refuses the user-installed DevProxy root on
    /// every host, pinned or not, expired pin-set or not (Android checks trust before pins): it was
    /// predicted "not pinned", which QA reads as "DevProxy can decrypt it".
    @Test func aSystemOnlyConfigIsPredictedToBlockEveryHost() throws {
        let nsc = fixture.directory.write("system.xml", """
            <network-security-config><base-config><trust-anchors><certificates src="system"/></trust-anchors></base-config>
            <domain-config><domain>expired.acme.dev</domain>
            <pin-set expiration="2001-01-01"><pin digest="SHA-256">\(rootPin)</pin><pin digest="SHA-256">\(rootPin)</pin></pin-set>
            </domain-config></network-security-config>
            """)
        let (result, json) = try check([nsc, "--host", "api.acme.dev", "--host", "expired.acme.dev"])
        for host in ["api.acme.dev", "expired.acme.dev"] {
            #expect(hosts(json)[host]?["decision"] as? String == "block", "\(host): \(result.output)")
            #expect(hosts(json)[host]?["result"] as? Int == 2, "\(host): \(result.output)")
        }
    }

    /// A policy pinning the engineer's own intermediate (and a backup) is decrypted through
    /// DevProxy: no "the app will block" warning beside the `allow` it predicts.
    @Test func pinningTheEngineersIntermediateIsNotWarnedAsBlocking() throws {
        let intermediatePin = SPKIPin.base64SHA256(fixture.intermediate.spkiDER)
        let backup = SPKIPin.base64SHA256(try PrivateKey.generate(.p256).publicKeyDER)
        let policy = fixture.directory.write("intermediate.txt", "api.acme.dev sha256/\(intermediatePin) sha256/\(backup)\n")
        let (result, json) = try check([policy])
        let warnings = (json["warnings"] as? [String]) ?? []
        #expect(!warnings.contains { $0.contains("cannot decrypt") }, "\(warnings)")
        #expect(hosts(json)["api.acme.dev"]?["decision"] as? String == "allow", "\(result.output)")
    }

    /// An absolute host name (`api.acme.dev.`) is checked against the minted chain without its
    /// trailing dot, as clients check it: the chain was predicted "not trusted" where a real
    /// OkHttp client took it.
    @Test func anAbsoluteHostNameIsCheckedAsClientsCheckIt() throws {
        let pins = fixture.directory.write("pins.txt", "api.acme.dev sha256/\(rootPin) sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
        let (result, json) = try check([pins, "--host", "api.acme.dev."])
        #expect(result.status == 0, "\(result.output)")
        let row = hosts(json)["api.acme.dev."]
        #expect(row?["decision"] as? String != "block" && (row?["reason"] as? String)?.contains("not trusted") != true,
                "\(String(describing: row))")
    }

    /// A file that is no policy at all is said to be so, not read as an OkHttp pin list whose
    /// first word "the OkHttp library refuses" (an Android layout, a Kotlin class without a
    /// pinner, a binary); a pinner with no pins found is valid to OkHttp, with a warning.
    @Test func aFileThatIsNoPolicyIsSaidToBeNone() throws {
        let cases: [(String, [UInt8], String)] = [
            ("layout.xml", Array("<?xml version=\"1.0\"?>\n<!-- a screen -->\n<LinearLayout android:id=\"x\"/>".utf8),
             "it is XML whose root element is <LinearLayout>, not <network-security-config>"),
            ("Api.kt", Array("package com.acme\nimport okhttp3.OkHttpClient\nclass Api { val client = OkHttpClient() }\n".utf8),
             "it looks like Kotlin or Java source without a CertificatePinner.Builder()"),
            ("app.bin", [0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x00, 0xFF, 0xFE], "it is not text"),
        ]
        for (name, bytes, reason) in cases {
            let path = fixture.directory.write(name, bytes: bytes)
            let result = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, path])
            #expect(result.status == 1 && result.stdout.isEmpty, "\(result.output)")
            #expect(result.stderr.hasPrefix("error: \(path): \(reason)"), "\(result.stderr)")
        }
        let constants = fixture.directory.write("Pins.kt", "val pinner = CertificatePinner.Builder()\n  .add(HOST, PIN)\n  .build()\n")
        let (result, json) = try check([constants])
        #expect(result.status == 0, "\(result.output)")
        #expect(((json["warnings"] as? [String]) ?? []).contains { $0.hasPrefix("no pins found") }, "\(json)")
    }

    /// An empty file read as an OkHttp pinner with no pins ("a valid OkHttp CertificatePinner
    /// policy", exit 0), and a directory was "permission denied".
    @Test func anEmptyFileOrADirectoryIsAnErrorThatSaysWhich() throws {
        for (name, text) in [("empty.xml", ""), ("blank.plist", " \n\t\n")] {
            let path = fixture.directory.write(name, text)
            let result = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, path])
            #expect(result.status == 1, "\(result.output)")
            #expect(result.stderr == "error: \(path) is empty: give the Info.plist, network_security_config.xml, OkHttp "
                    + "pins or pinner JSON to check\n")
            #expect(result.stdout.isEmpty)
        }
        let directory = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, fixture.directory.path])
        #expect(directory.status == 1)
        #expect(directory.stderr == "error: cannot read \(fixture.directory.path): it is a directory\n")
        let trace = try Subprocess.run(Subprocess.devproxy, ["ca", "trace", fixture.directory.path])
        #expect(trace.status == 1)
        #expect(trace.stderr.hasSuffix("\(fixture.directory.path): it is a directory\n"), "\(trace.stderr)")
    }

    @Test func servedChainWithLeafPinIsFlagged() throws {
        let leaf = try LeafIssuer(signer: fixture.signer).issue(for: [try LeafName("api.acme.dev")])
        let chain = fixture.directory.write("chain.pem", leaf.certificate.pem + fixture.intermediate.pem)
        let leafPin = SPKIPin.base64SHA256(leaf.certificate.spkiDER)
        let policy = fixture.directory.write("pins.txt", "api.acme.dev sha256/\(leafPin) sha256/\(rootPin)\n")
        let (result, json) = try check([policy, "--chain", chain])
        #expect(result.status == 0, "\(result.output)")
        #expect(((json["warnings"] as? [String]) ?? []).contains { $0.contains("a pin matches the leaf key") })
        #expect(hosts(json)["api.acme.dev"]?["decision"] as? String == "allow")
    }

    @Test func snippetsParseBackAndPinTheRoot() throws {
        let backup = fixture.directory.write("next.key", bytes: try PrivateKey.generate(.p256).pem())
        for format in ["trustkit-plist", "nsc", "okhttp"] {
            let snippet = try Subprocess.run(Subprocess.devproxy, ["pins", "snippet", "--ca-dir", ca, "--domain", "api.acme.dev",
                                                                   "--format", format, "--backup", backup, "--include-subdomains"])
            #expect(snippet.status == 0, "\(format): \(snippet.output)")
            #expect(snippet.stdout.contains(rootPin))
            let file = fixture.directory.write("snippet-\(format)", snippet.stdout)
            let (result, json) = try check([file, "--host", "api.acme.dev", "--host", "www.api.acme.dev"])
            #expect(result.status == 0, "\(format): \(result.output)")
            #expect(((json["warnings"] as? [String]) ?? []).isEmpty, "\(format): \(json)")
            for (host, row) in hosts(json) { #expect(row["decision"] as? String == "allow", "\(format) \(host)") }
        }
        let lonely = try Subprocess.run(Subprocess.devproxy, ["pins", "snippet", "--ca-dir", ca, "--domain", "api.acme.dev",
                                                              "--format", "trustkit"])
        // Not printed as ready to paste: an app built from it crashes at launch (it exited 0).
        #expect(lonely.status == 1 && lonely.stdout.isEmpty, "\(lonely.output)")
        #expect(lonely.stderr.contains("TrustKit refuses to start with fewer than two pins"))
        let reportOnly = try Subprocess.run(Subprocess.devproxy, ["pins", "snippet", "--ca-dir", ca, "--domain", "api.acme.dev",
                                                                  "--format", "trustkit", "--report-only"])
        #expect(reportOnly.status == 0 && reportOnly.stderr.contains("only one pin: TrustKit accepts it"), "\(reportOnly.output)")
        #expect(reportOnly.stdout.contains("TrustKit.initSharedInstance(withConfiguration: trustKitConfig)"))
        let badFormat = try Subprocess.run(Subprocess.devproxy, ["pins", "snippet", "--ca-dir", ca, "--domain", "a.dev", "--format", "xml"])
        #expect(badFormat.status == 2 && badFormat.stderr.hasPrefix("error: --format xml is not one of"))
    }

    /// A TrustKit snippet is checked as TrustKit checks it at start-up, the parser `policy check`
    /// uses: `localhost`, a public suffix with subdomains and a name with no public suffix were
    /// printed as ready to paste (exit 0), and `policy check` of that output said the app crashes.
    @Test(arguments: [(["localhost"], "an invalid domain localhost"),
                      (["co.uk", "--include-subdomains"], "includeSubdomains for a domain suffix co.uk"),
                      (["api.acme.test"], "an invalid domain api.acme.test")])
    func aTrustKitSnippetTrustKitRefusesIsNotPrinted(_ domain: [String], _ reason: String) throws {
        let backup = fixture.directory.write("next.key", bytes: try PrivateKey.generate(.p256).pem())
        for format in ["trustkit", "trustkit-plist"] {
            let result = try Subprocess.run(Subprocess.devproxy, ["pins", "snippet", "--ca-dir", ca, "--format", format,
                                                                  "--backup", backup, "--domain"] + domain)
            #expect(result.status == 1 && result.stdout.isEmpty, "\(result.output)")
            #expect(result.stderr == "error: TrustKit refuses this configuration at start-up, so the app would crash at "
                    + "launch: TrustKit was initialized with \(reason)\n", "\(result.stderr)")
        }
    }

    /// `--domain 'api acme'` made a snippet that pinned a name no host has (exit 0); an address
    /// or a glob would be matched as text too.
    @Test(arguments: ["api acme", "*.acme.dev", "10.0.0.7", "api..acme.dev", "api.acme.dev/v1"])
    func aSnippetForSomethingThatIsNotAHostNameIsRefused(_ domain: String) throws {
        let result = try Subprocess.run(Subprocess.devproxy, ["pins", "snippet", "--ca-dir", ca, "--domain", domain,
                                                              "--format", "nsc"])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.stderr == "error: --domain \(domain) is not a host name; give one like api.example.com "
                + "(--include-subdomains covers the names below it)\n")
        #expect(result.stdout.isEmpty)
    }
}
