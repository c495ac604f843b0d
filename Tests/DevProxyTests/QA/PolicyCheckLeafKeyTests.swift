import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy policy check --leaf-key FILE`: the prediction for a chain whose leaf carries a given
/// key (a PEM public key or certificate, made here with openssl), as `devproxy run --leaf-key`
/// would serve it.
@Suite struct PolicyCheckLeafKeyTests {
    let fixture: PKIFixture

    init() throws {
        fixture = try PKIFixture()
    }

    var ca: String { fixture.store.directory }

    /// A fresh P-256 key from openssl: the private key, its PEM public key and a self-signed
    /// certificate for it, and its `sha256/` pin as openssl computes it.
    func leafKey(_ name: String) throws -> (publicKey: String, certificate: String, pin: String) {
        let key = fixture.directory.file("\(name).key"), publicKey = fixture.directory.file("\(name).pub.pem")
        let certificate = fixture.directory.file("\(name).crt")
        for arguments in [["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
                          ["pkey", "-in", key, "-pubout", "-out", publicKey],
                          ["req", "-x509", "-key", key, "-subj", "/CN=\(name)", "-days", "1", "-out", certificate]] {
            let made = try Subprocess.run("openssl", arguments)
            #expect(made.status == 0, "\(made.output)")
        }
        let pin = try Subprocess.run("sh", ["-c", "openssl pkey -pubin -in \"$0\" -outform DER | openssl dgst -sha256 -binary | base64",
                                            publicKey])
        return (publicKey, certificate, "sha256/" + pin.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func check(_ arguments: [String]) throws -> (Subprocess.Result, [String: [String: Any]]) {
        let result = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, "--json"] + arguments)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        let rows = ((object["hosts"] as? [[String: Any]]) ?? []).map { ($0["host"] as? String ?? "", $0) }
        return (result, Dictionary(rows, uniquingKeysWith: { first, _ in first }))
    }

    /// An OkHttp pinner holding only the leaf key's pin blocks DevProxy's fresh leaves and allows
    /// a leaf carrying that key, given as a public key or as a certificate; another key blocks.
    @Test func aPinnedLeafKeyIsAllowedAndAnotherIsBlocked() throws {
        let pinned = try leafKey("debug-leaf")
        let other = try leafKey("other-leaf")
        let policy = fixture.directory.write("pins.txt", "api.acme.dev \(pinned.pin)\n")

        let (fresh, freshRows) = try check([policy])
        #expect(fresh.status == 0, "\(fresh.output)")
        #expect(freshRows["api.acme.dev"]?["decision"] as? String == "block", "\(fresh.output)")

        for file in [pinned.publicKey, pinned.certificate] {
            let (given, rows) = try check([policy, "--leaf-key", file])
            #expect(given.status == 0, "\(given.output)")
            #expect(rows["api.acme.dev"]?["decision"] as? String == "allow", "\(file): \(given.output)")
            #expect(rows["api.acme.dev"]?["result"] as? Int == 0)
            #expect((rows["api.acme.dev"]?["reason"] as? String)?.hasPrefix(pinned.pin + " matches") == true, "\(given.output)")
        }

        let (wrong, wrongRows) = try check([policy, "--leaf-key", other.publicKey])
        #expect(wrong.status == 0, "\(wrong.output)")
        #expect(wrongRows["api.acme.dev"]?["decision"] as? String == "block", "\(wrong.output)")

        let text = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy, "--leaf-key", pinned.publicKey])
        #expect(text.status == 0, "\(text.output)")
        #expect(text.stdout.contains("with the key in \(pinned.publicKey)"), "\(text.output)")
    }

    /// Wrong uses: one line each, saying what to give instead.
    @Test func badLeafKeysAreOneLineEach() throws {
        let pinned = try leafKey("debug-leaf")
        let policy = fixture.directory.write("pins.txt", "api.acme.dev \(pinned.pin)\n")
        let both = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy, "--leaf-key", pinned.publicKey,
                                                            "--chain", pinned.certificate])
        #expect(both.status == 2, "\(both.output)")
        #expect(both.stderr.contains("error: --leaf-key and --chain"), "\(both.output)")

        let garbage = fixture.directory.write("garbage.pem", "not a key\n")
        let unreadable = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy, "--leaf-key", garbage])
        #expect(unreadable.status == 1, "\(unreadable.output)")
        #expect(unreadable.stderr.hasPrefix("error: \(garbage): "), "\(unreadable.output)")

        let root = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", ca, policy, "--leaf-key",
                                                            fixture.store.rootCertificatePath])
        #expect(root.status == 1, "\(root.output)")
        #expect(root.stderr.contains("is the key of \(fixture.root.subject), a CA"), "\(root.output)")

        let noCA = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "--ca-dir", fixture.directory.file("none"), policy,
                                                            "--leaf-key", pinned.publicKey])
        #expect(noCA.status == 1, "\(noCA.output)")
        #expect(noCA.stderr.contains("error: --leaf-key needs a CA to mint the leaf with"), "\(noCA.output)")
    }
}
