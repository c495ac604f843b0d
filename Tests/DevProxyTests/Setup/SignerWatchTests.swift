@testable import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy run` on a team intermediate near its end: the new bundle copied over
/// `--intermediate` is taken without a restart, and the end is announced once before and once
/// after. A running proxy kept the old one until it expired and then refused every host.
@Suite struct SignerWatchTests {
    let dir = TemporaryDirectory()
    var ca: String { dir.file("ca") }

    func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, arguments)
    }

    /// `ca issue` for ana@acme.dev into `bundle`; returns the intermediate's serial.
    func issue(days: Int, to bundle: String) throws -> String {
        let issued = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev", "--days", String(days), "--out", bundle])
        #expect(issued.status == 0, "\(issued.output)")
        return String(try #require(issued.stdout.split(separator: "\n").first { $0.contains("serial") }?.split(separator: " ").last))
    }

    /// The serial (lowercase hex) of the intermediate the proxy sends for `host`, read by openssl
    /// s_client through the proxy.
    func servedIntermediate(proxy: DevProxyProcess, origin: OriginServer, host: String) throws -> String {
        let shown = try Subprocess.run("openssl", ["s_client", "-proxy", "127.0.0.1:\(proxy.port)", "-connect", "\(host):\(origin.port)",
                                                   "-servername", host, "-showcerts", "-CAfile", dir.file("ca/root.pem"),
                                                   "-verify_return_error"], timeout: 30)
        #expect(shown.stdout.contains("Verify return code: 0 (ok)"), "\(shown.output)")
        let blocks = shown.stdout.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst()
        let second = try #require(blocks.dropFirst().first, "\(shown.output)")
        let pem = "-----BEGIN CERTIFICATE-----" + (second.components(separatedBy: "-----END CERTIFICATE-----").first ?? "")
            + "-----END CERTIFICATE-----\n"
        let serial = try Subprocess.run("openssl", ["x509", "-noout", "-serial"], stdin: Array(pem.utf8))
        return String(serial.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("serial=".count)).lowercased()
    }

    @Test(.backstop) func aNewBundleAtTheSamePathIsTakenWithoutARestart() throws {
        #expect(try devproxy(["ca", "init", "--ca-dir", ca]).status == 0)
        let bundle = dir.file("ana.pem")
        let first = try issue(days: 1, to: bundle)
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--intermediate", bundle, "--ca-dir", ca, "--no-web", "--insecure-upstream",
                                         "--resolve", "origin.test:\(origin.port):127.0.0.1"])
        #expect(try servedIntermediate(proxy: proxy, origin: origin, host: "localhost") == first)
        // The security lead's new one, copied over the old bundle, as the engineer would.
        let second = try issue(days: 7, to: bundle)
        #expect(try servedIntermediate(proxy: proxy, origin: origin, host: "origin.test") == second)
        let stopped = proxy.stop()
        #expect(stopped.stdout.contains("DevProxy: signing leaves with the new intermediate of ana@acme.dev (serial \(second)"),
                "\(stopped.stdout)")
        // The start-up warning (a day left) says where the next one goes, not only the lead's command.
        #expect(stopped.stderr.contains("warning: your intermediate expires in 23 h ")
                && stopped.stderr.contains("min; get a new one with `devproxy ca issue --email ana@acme.dev` and put it at "
                                         + "\(bundle): a running devproxy takes it without a restart"), "\(stopped.stderr)")
    }

    /// An intermediate that ends while the proxy runs: one console warning says so and what to do,
    /// and each refused host's line says the intermediate expired; it named only name constraints
    /// or a revocation, and nothing was said once.
    @Test(.backstop) func anIntermediateThatEndsWhileRunningIsSaidOnce() throws {
        let pki = try PKIFixture()
        let root = try pki.store.rootSigner(passphrase: nil)
        let key = try PrivateKey.generate(.p256)
        let ends = Date().addingTimeInterval(2)
        let certificate = try CertificateProfile.intermediate(email: "ana@acme.dev", permittedDNS: [],
                                                              notBefore: Date().addingTimeInterval(-60), notAfter: ends)
            .sign(publicKey: key, issuer: root.certificate, issuerKey: root.key)
        let bundle = dir.write("short.pem", bytes: try key.pem() + Array(certificate.pem.utf8) + Array(root.certificate.pem.utf8))
        chmod(bundle, 0o600)
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--intermediate", bundle, "--ca-dir", dir.file("engineer"), "--no-web",
                                         "--insecure-upstream", "--resolve", "origin.test:\(origin.port):127.0.0.1"])
        Thread.sleep(until: ends.addingTimeInterval(1.2))
        for host in ["localhost", "origin.test"] {
            let refused = try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                      "--cacert", pki.rootPath, "https://\(host):\(origin.port)/"], timeout: 30)
            #expect(refused.status != 0, "\(refused.output)")
        }
        let stopped = proxy.stop()
        let ended = stopped.stderr.components(separatedBy: "warning: your intermediate \(certificate.serialHex) ended at ").count - 1
        #expect(ended == 1, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("every intercepted host fails (leaf_refused) until a new one is in place: put a new "
                                        + "bundle from your security lead (`devproxy ca issue --email ana@acme.dev`) at \(bundle)"),
                "\(stopped.stderr)")
        let refusedLines = stopped.stdout.split(separator: "\n").filter { $0.contains("leaf_refused") }
        #expect(refusedLines.count == 2, "\(stopped.stdout)")
        #expect(refusedLines.allSatisfy { $0.contains("the intermediate may not sign for this host (outside its name constraints, "
                                                         + "expired or revoked)") }, "\(stopped.stdout)")
    }

    /// Near the end, one warning saying how to get the next one in; after it, one saying every
    /// intercepted host fails until then. Each once, however many connections ask.
    @Test func theEndIsAnnouncedOnceBeforeAndOnceAfter() throws {
        let pki = try PKIFixture(days: 7)
        let selection = SignerSelection(store: pki.store, email: "ana@acme.dev", bundlePath: pki.bundlePath, signWithRoot: false,
                                        passphrase: nil)
        let ends = pki.intermediate.notAfter
        let fresh = SignerWatch(selection: selection, current: pki.signer, interval: 0)
        let near = fresh.look(at: ends.addingTimeInterval(-2 * 3600 - 120))
        #expect(near.replacement == nil)
        #expect(near.warnings.count == 1)
        #expect(near.warnings.first?.hasPrefix("your intermediate \(pki.intermediate.serialHex) ends at "
                                               + "\(ISO8601.string(ends)) (in 2 h 2 min): put a new bundle from your security "
                                               + "lead (`devproxy ca issue --email ana@acme.dev`) at \(pki.bundlePath), and "
                                               + "DevProxy takes it without a restart") == true, "\(near.warnings)")
        #expect(fresh.look(at: ends.addingTimeInterval(-3600)).warnings.isEmpty)
        let ended = fresh.look(at: ends.addingTimeInterval(1))
        #expect(ended.warnings.count == 1)
        #expect(ended.warnings.first?.hasPrefix("your intermediate \(pki.intermediate.serialHex) ended at \(ISO8601.string(ends)): "
                                                + "every intercepted host fails (leaf_refused) until a new one is in place") == true,
                "\(ended.warnings)")
        #expect(fresh.look(at: ends.addingTimeInterval(60)).warnings.isEmpty)
    }

    /// A bundle of another CA copied over the path is not taken: clients were told to trust this
    /// root, and would refuse every leaf. It is said once.
    @Test func aBundleOfAnotherRootIsNotTaken() throws {
        let pki = try PKIFixture(days: 1)
        let bundle = dir.file("ana.pem")
        try FileManager.default.copyItem(atPath: pki.bundlePath, toPath: bundle)
        let selection = SignerSelection(store: CAStore(directory: dir.file("no-ca")), email: "ana@acme.dev", bundlePath: bundle,
                                        signWithRoot: false, passphrase: nil)
        let watch = SignerWatch(selection: selection, current: pki.signer, interval: 0)
        let other = try PKIFixture(days: 7)
        try FileManager.default.removeItem(atPath: bundle)
        try FileManager.default.copyItem(atPath: other.bundlePath, toPath: bundle)
        let looked = watch.look()
        #expect(looked.replacement == nil)
        #expect(looked.warnings.first?.contains("now holds the intermediate \(other.intermediate.serialHex) of another root") == true,
                "\(looked.warnings)")
        #expect(watch.look().warnings.isEmpty)
    }
}
