@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy trust … --store nss` against a throwaway NSS database driven by the real certutil.
@Suite(.enabled(if: ExternalToolCheck.installed("certutil"), "certutil (libnss3-tools) is not installed"))
struct NSSTrustStoreTests {
    /// An empty database, as Chromium makes on first run.
    func makeDatabase(_ dir: TemporaryDirectory) throws -> String {
        let db = dir.file("nssdb")
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let made = try Subprocess.run("certutil", ["-N", "-d", "sql:" + db, "--empty-password"])
        guard made.status == 0 else { throw TestFailure("certutil -N: \(made.output)") }
        return db
    }

    @Test func installStatusUninstallRoundTrip() throws {
        let harness = try TrustHarness()
        let db = try makeDatabase(harness.dir)
        let nickname = try harness.nickname
        let listBefore = try Subprocess.run("certutil", ["-L", "-d", "sql:" + db]).stdout
        let bytesBefore = treeSnapshot(db)
        let store = ["--store", "nss", "--nss-db", db]

        let before = try harness.trust(["status"] + store)
        #expect(before.status == 1, "not trusted yet: \(before.output)")
        #expect(before.stdout.contains("not trusted  NSS database \(db) (--nss-db)"))

        let installed = try harness.trust(["install"] + store)
        #expect(installed.status == 0, "\(installed.output)")
        #expect(installed.stdout.contains("added \(nickname) with trust C,,"))
        let listed = try Subprocess.run("certutil", ["-L", "-d", "sql:" + db])
        #expect(listed.stdout.contains(nickname))
        #expect(NSSTrustStore.parseList(listed.stdout) == [NSSTrustStore.Entry(nickname: nickname, sslTrust: "C")])

        let again = try harness.trust(["install"] + store)
        #expect(again.status == 0)
        #expect(again.stdout.contains("already trusted as \(nickname)"), "idempotent: \(again.output)")

        let during = try harness.trust(["status"] + store)
        #expect(during.status == 0, "\(during.output)")
        #expect(during.stdout.contains("trusted      NSS database \(db) (--nss-db): \(nickname)"))

        let removed = try harness.trust(["uninstall"] + store)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("removed \(nickname) (the database is byte for byte as it was before install)"))
        #expect(try Subprocess.run("certutil", ["-L", "-d", "sql:" + db]).stdout == listBefore, "the database lists what it did before")
        #expect(treeDifferences(bytesBefore, treeSnapshot(db)) == [], "cert9.db, key4.db and pkcs11.txt byte for byte")
        #expect(!FileManager.default.fileExists(atPath: harness.state + "/devproxy/trust-backups/\(nickname)"), "the copy is gone")
        let after = try harness.trust(["status"] + store)
        #expect(after.status == 1)
        #expect(after.stdout.contains("not trusted"))
        let twice = try harness.trust(["uninstall"] + store)
        #expect(twice.status == 0)
        #expect(twice.stdout.contains("not installed (no entry \(nickname))"))
    }

    /// A database written to after install (a browser adding a root, say) keeps that change:
    /// uninstall deletes its own entry with certutil instead of restoring the copy.
    @Test func aDatabaseChangedAfterInstallKeepsTheChange() throws {
        let harness = try TrustHarness()
        let db = try makeDatabase(harness.dir)
        let nickname = try harness.nickname
        let store = ["--store", "nss", "--nss-db", db]
        #expect(try harness.trust(["install"] + store).status == 0)
        let other = try TrustHarness()
        let added = try Subprocess.run("certutil", ["-A", "-d", "sql:" + db, "-t", "C,,", "-n", "Someone Else", "-i", other.rootPath])
        #expect(added.status == 0, "\(added.output)")
        let removed = try harness.trust(["uninstall"] + store)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("removed \(nickname) (with certutil -D, as the database changed after install)"))
        let entries = NSSTrustStore.parseList(try Subprocess.run("certutil", ["-L", "-d", "sql:" + db]).stdout)
        #expect(entries == [NSSTrustStore.Entry(nickname: "Someone Else", sslTrust: "C")])
    }

    /// The root put in under another name is found by fingerprint, and uninstall leaves it.
    @Test func statusMatchesByFingerprintAndUninstallLeavesOtherNames() throws {
        let harness = try TrustHarness()
        let db = try makeDatabase(harness.dir)
        let added = try Subprocess.run("certutil", ["-A", "-d", "sql:" + db, "-t", "C,,", "-n", "Our Team Root", "-i", harness.rootPath])
        #expect(added.status == 0, "\(added.output)")
        let status = try harness.trust(["status", "--store", "nss", "--nss-db", db])
        #expect(status.status == 0, "\(status.output)")
        #expect(status.stdout.contains(": Our Team Root"))
        let install = try harness.trust(["install", "--store", "nss", "--nss-db", db])
        #expect(install.stdout.contains("already trusted as Our Team Root"))
        let removed = try harness.trust(["uninstall", "--store", "nss", "--nss-db", db])
        #expect(removed.status == 0)
        #expect(removed.stdout.contains("not installed by devproxy"))
        #expect(try Subprocess.run("certutil", ["-L", "-d", "sql:" + db]).stdout.contains("Our Team Root"))
    }

    /// A status that finds the root missing names the install for the same store, database and
    /// CA: `run devproxy trust install` acted on every store (the system's with sudo, every NSS
    /// profile, the JDK's).
    @Test func aStatusNamesTheInstallForTheStoreItChecked() throws {
        let harness = try TrustHarness()
        let db = try makeDatabase(harness.dir)
        let status = try harness.trust(["status", "--store", "nss", "--nss-db", db])
        #expect(status.status == 1, "\(status.output)")
        #expect(status.stdout.contains("run `devproxy trust install --store nss --nss-db \(db) --ca-dir \(harness.ca)`."),
                "\(status.stdout)")
    }

    @Test func aDirectoryWithoutADatabaseSaysHowToMakeOne() throws {
        let harness = try TrustHarness()
        let result = try harness.trust(["install", "--store", "nss", "--nss-db", harness.dir.path])
        #expect(result.status == 1)
        #expect(TrustHarness.errorLines(result) == ["error: NSS database \(harness.dir.path) (--nss-db): \(harness.dir.path) holds no NSS database (create one: certutil -N -d sql:\(harness.dir.path) --empty-password)"])
    }

    @Test func parsesNicknamesWithSpacesAndTrustFlags() {
        let output = """

        Certificate Nickname                                         Trust Attributes
                                                                     SSL,S/MIME,JAR/XPI

        devproxy-1a2b3c4d                                            C,,
        Acme Corp Root CA                                            CT,C,C
        my client cert                                               u,u,u

        """
        #expect(NSSTrustStore.parseList(output) == [
            .init(nickname: "devproxy-1a2b3c4d", sslTrust: "C"),
            .init(nickname: "Acme Corp Root CA", sslTrust: "CT"),
            .init(nickname: "my client cert", sslTrust: "u"),
        ])
        #expect(NSSTrustStore.parseList("certutil: function failed") == [])
    }

    /// The root already in the database under another name, untrusted (imported by hand): install
    /// says so and changes nothing. NSS keeps one nickname per certificate, so adding it changed
    /// that entry's trust to C,, under its own name, and uninstall then left it trusted.
    @Test func anUntrustedCopyUnderAnotherNameIsLeftAndSaid() throws {
        let harness = try TrustHarness()
        let db = try makeDatabase(harness.dir)
        let imported = try Subprocess.run("certutil", ["-A", "-d", "sql:" + db, "-n", "imported-by-hand", "-t", ",,",
                                                       "-i", harness.rootPath])
        #expect(imported.status == 0, "\(imported.output)")
        let before = try Subprocess.run("certutil", ["-L", "-d", "sql:" + db]).stdout
        let installed = try harness.trust(["install", "--store", "nss", "--nss-db", db])
        #expect(installed.status == 1, "\(installed.output)")
        #expect(installed.stderr.contains("already in \(db) as imported-by-hand, not trusted for websites"), "\(installed.output)")
        #expect(try Subprocess.run("certutil", ["-L", "-d", "sql:" + db]).stdout == before, "nothing changed")
    }

    /// The databases are looked for under `$HOME`, as every other path of the command is (the CA
    /// directory, the backups) and as mkcert does: `NSHomeDirectory()` read the account's home
    /// whatever `$HOME` said, so a sandboxed HOME (CI, `sudo -E`, a test) trusted the root in the
    /// real user's browser database.
    @Test func theDatabasesAreLookedForUnderHOME() throws {
        let harness = try TrustHarness()
        let home = harness.dir.file("home")
        try FileManager.default.createDirectory(atPath: home + "/.pki/nssdb", withIntermediateDirectories: true)
        let made = try Subprocess.run("certutil", ["-N", "-d", "sql:" + home + "/.pki/nssdb", "--empty-password"])
        #expect(made.status == 0, "\(made.output)")
        let status = try harness.trust(["status", "--store", "nss"], environment: ["HOME": home])
        #expect(status.stdout.contains("NSS database \(home)/.pki/nssdb"), "\(status.output)")
    }

    @Test func discoversChromiumAndFirefoxDatabasesUnderHome() throws {
        let home = TemporaryDirectory()
        for path in [".pki/nssdb", ".mozilla/firefox/abcd.default-release", ".mozilla/firefox/empty.profile"] {
            try FileManager.default.createDirectory(atPath: home.file(path), withIntermediateDirectories: true)
        }
        home.write(".pki/nssdb/cert9.db", "")
        home.write(".mozilla/firefox/abcd.default-release/cert9.db", "")
        let found = NSSTrustStore.discover(home: home.path)
        #expect(found.map(\.directory) == [home.file(".pki/nssdb"), home.file(".mozilla/firefox/abcd.default-release")])
        #expect(found.map(\.reader) == ["Chromium", "Firefox profile abcd.default-release"])
    }
}

/// Whether a program is on PATH, for suites that need it.
enum ExternalToolCheck {
    static func installed(_ name: String) -> Bool {
        ExternalTool(name).isInstalled
    }
}
