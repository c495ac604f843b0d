import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy trust` as it is called wrongly: usage, one `error:` line, exit codes.
@Suite struct TrustCommandTests {
    @Test func withoutASubcommandItPrintsUsageAndExitsTwo() throws {
        let result = try Subprocess.run(Subprocess.devproxy, ["trust"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("devproxy trust install --store nss") && result.stdout.isEmpty)
        let help = try Subprocess.run(Subprocess.devproxy, ["trust", "--help"])
        #expect(help.status == 0)
    }

    @Test func badArgumentsAreUsageErrors() throws {
        let harness = try TrustHarness()
        let store = try harness.trust(["install", "--store", "keychain"])
        #expect(store.status == 2)
        #expect(TrustHarness.errorLines(store) == ["error: --store must be system, nss, java or all, not keychain"])
        let verb = try harness.trust(["add"])
        #expect(verb.status == 2)
        #expect(TrustHarness.errorLines(verb) == ["error: unknown command `trust add`; see `devproxy trust --help`"])
        let positional = try harness.trust(["install", "root.pem"])
        #expect(positional.status == 2)
        #expect(TrustHarness.errorLines(positional).first?.contains("--root FILE") == true)
    }

    @Test func aMissingRootSaysHowToGetOne() throws {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run(Subprocess.devproxy, ["trust", "status", "--ca-dir", dir.file("none")])
        #expect(result.status == 1)
        #expect(TrustHarness.errorLines(result) == ["error: no root at \(dir.file("none"))/root.pem; run `devproxy` once to create a local CA, or give --root FILE (`devproxy ca export --bundle BUNDLE --out root.pem` makes one from your bundle)"])
    }

    @Test func aCertificateThatIsNotACAIsRefused() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("leaf.pem")
        let made = try Subprocess.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                  "-subj", "/CN=a.dev", "-addext", "basicConstraints=critical,CA:FALSE",
                                                  "-keyout", dir.file("leaf.key"), "-out", path, "-days", "1"])
        #expect(made.status == 0, "\(made.output)")
        let result = try Subprocess.run(Subprocess.devproxy, ["trust", "status", "--root", path])
        #expect(result.status == 1)
        #expect(TrustHarness.errorLines(result).first?.hasPrefix("error: \(path) is not a CA certificate") == true, "\(result.output)")
    }

    /// An engineer's intermediate (what `openssl x509 -in bundle.pem` prints first) is not
    /// installed as a trust anchor: it was, with trust C,, in NSS, trusted only until it ended and
    /// not the root apps pin. `status` and `uninstall` still take it, so one installed before goes.
    @Test func anIntermediateIsNotInstalledAsARoot() throws {
        let pki = try PKIFixture()
        let database = pki.directory.file("nssdb")
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        let created = try Subprocess.run("certutil", ["-N", "-d", "sql:" + database, "--empty-password"])
        #expect(created.status == 0, "\(created.output)")
        let intermediate = pki.intermediatePath()
        let refused = try Subprocess.run(Subprocess.devproxy, ["trust", "install", "--store", "nss", "--nss-db", database,
                                                               "--root", intermediate])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(TrustHarness.errorLines(refused) == ["error: \(intermediate) holds an intermediate CA (\(pki.intermediate.subject), "
                                                     + "issued by \(pki.root.subject), valid until "
                                                     + "\(Self.utc(pki.intermediate.notAfter))), not a root; install the root it "
                                                     + "chains to: `devproxy ca export --bundle BUNDLE --out root.pem` takes it "
                                                     + "from your bundle"], "\(refused.output)")
        let listed = try Subprocess.run("certutil", ["-L", "-d", "sql:" + database])
        #expect(!listed.stdout.contains("devproxy-"), "\(listed.output)")
        // The bundle itself names its root, which is installed.
        let bundle = try Subprocess.run(Subprocess.devproxy, ["trust", "install", "--store", "nss", "--nss-db", database,
                                                              "--root", pki.bundlePath])
        #expect(bundle.status == 0, "\(bundle.output)")
        #expect(bundle.stdout.contains("Installing \"Test Root\""), "\(bundle.output)")
        let status = try Subprocess.run(Subprocess.devproxy, ["trust", "status", "--store", "nss", "--nss-db", database,
                                                              "--root", intermediate])
        #expect(status.status == 1 && TrustHarness.errorLines(status).isEmpty, "\(status.output)")
    }

    /// `yyyy-MM-dd HH:mm UTC`, as the CLI prints dates.
    static func utc(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }
}
