@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy trust … --store java` with the real keytool on a copy of the JDK's cacerts.
@Suite(.enabled(if: JavaTrustStore.defaultKeystore() != nil && ExternalToolCheck.installed("keytool"), "no JDK cacerts or keytool"))
struct JavaTrustStoreTests {
    /// A private copy of the JDK's cacerts (following the Debian symlink to /etc/ssl/certs/java).
    func copyOfCacerts(_ dir: TemporaryDirectory) throws -> String {
        let original = try #require(JavaTrustStore.defaultKeystore())
        let copy = dir.file("cacerts")
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: original).resolvingSymlinksInPath().path, toPath: copy)
        return copy
    }

    func keytoolList(_ keystore: String) throws -> String {
        try Subprocess.run("keytool", ["-list", "-rfc", "-keystore", keystore, "-storepass", "changeit"]).stdout
    }

    @Test func installStatusUninstallRestoresTheKeystore() throws {
        let harness = try TrustHarness()
        let keystore = try copyOfCacerts(harness.dir)
        let nickname = try harness.nickname
        let bytesBefore = FileManager.default.contents(atPath: keystore)
        let listBefore = try keytoolList(keystore)
        let store = ["--store", "java", "--java-keystore", keystore]

        let before = try harness.trust(["status"] + store)
        #expect(before.status == 1, "\(before.output)")
        #expect(before.stdout.contains("not trusted  Java keystore \(keystore)"))

        let installed = try harness.trust(["install"] + store)
        #expect(installed.status == 0, "\(installed.output)")
        #expect(installed.stdout.contains("added alias \(nickname)"))
        #expect(try keytoolList(keystore).contains("Alias name: \(nickname)"))
        let again = try harness.trust(["install"] + store)
        #expect(again.stdout.contains("already trusted as \(nickname)"))

        let during = try harness.trust(["status"] + store)
        #expect(during.status == 0, "\(during.output)")
        #expect(during.stdout.contains("trusted      Java keystore \(keystore): \(nickname)"))

        let removed = try harness.trust(["uninstall"] + store)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("removed alias \(nickname) (the keystore is byte for byte as it was before install)"))
        #expect(try keytoolList(keystore) == listBefore, "the same entries, in the same order")
        #expect(FileManager.default.contents(atPath: keystore) == bytesBefore, "byte for byte")
        let after = try harness.trust(["status"] + store)
        #expect(after.status == 1)
    }

    /// An entry added after install stays; devproxy's alias goes with keytool -delete.
    @Test func aKeystoreChangedAfterInstallKeepsTheChange() throws {
        let harness = try TrustHarness()
        let keystore = try copyOfCacerts(harness.dir)
        let listBefore = try keytoolList(keystore)
        let nickname = try harness.nickname
        #expect(try harness.trust(["install", "--store", "java", "--java-keystore", keystore]).status == 0)
        let other = try TrustHarness()
        let added = try Subprocess.run("keytool", ["-importcert", "-noprompt", "-alias", "someone-else", "-file", other.rootPath,
                                                   "-keystore", keystore, "-storepass", "changeit"])
        #expect(added.status == 0, "\(added.output)")
        let removed = try harness.trust(["uninstall", "--store", "java", "--java-keystore", keystore])
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("removed alias \(nickname) (with keytool -delete, as the keystore changed after install)"))
        let listAfter = try keytoolList(keystore)
        #expect(listAfter.contains("Alias name: someone-else"))
        #expect(!listAfter.contains("Alias name: \(nickname)"))
        #expect(JavaTrustStore.parseList(listAfter).count == JavaTrustStore.parseList(listBefore).count + 1)
    }

    /// A real Java client (HttpsURLConnection through `devproxy run`) that trusts only the keystore
    /// copy: refused before install, 200 while installed, refused again after uninstall.
    @Test func javaThroughTheProxyTrustsTheRootOnlyWhileInstalled() throws {
        let pki = try PKIFixture()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", pki.store.directory, "--intermediate", pki.bundlePath, "--upstream-ca", origin.caPath,
                                         "--resolve", "origin.test:\(origin.port):127.0.0.1", "--quiet"])
        let keystore = try copyOfCacerts(pki.directory)
        let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestSupport/Resources/TrustStoreClient.java").path
        func java() throws -> Subprocess.Result {
            try Subprocess.run("java", ["-Djavax.net.ssl.trustStore=" + keystore, "-Djavax.net.ssl.trustStorePassword=changeit",
                                        client, String(proxy.port), "https://origin.test:\(origin.port)/cl?n=5"], timeout: 120)
        }
        func trust(_ action: String) throws -> Subprocess.Result {
            try Subprocess.run(Subprocess.devproxy, ["trust", action, "--store", "java", "--java-keystore", keystore, "--root", pki.rootPath],
                               environment: ["XDG_STATE_HOME": pki.directory.file("state")])
        }
        let before = try java()
        #expect(before.status == 3, "\(before.output)")
        #expect(before.stdout.contains("PKIX path building failed"), "\(before.output)")
        #expect(try trust("install").status == 0)
        let during = try java()
        #expect(during.status == 0, "\(during.output)")
        #expect(during.stdout == "200 hello", "\(during.output)")
        #expect(try trust("uninstall").status == 0)
        let after = try java()
        #expect(after.status == 3, "\(after.output)")
        #expect(after.stdout.contains("PKIX path building failed"))
    }

    /// A wrong store password names the variable that gives the right one (keytool's own words,
    /// "password was incorrect", named no way to).
    @Test func aWrongStorePasswordNamesTheVariable() throws {
        let harness = try TrustHarness()
        let keystore = try copyOfCacerts(harness.dir)
        let result = try harness.trust(["install", "--store", "java", "--java-keystore", keystore],
                                       environment: ["DEVPROXY_JAVA_STOREPASS": "wrong"])
        #expect(result.status == 1)
        let lines = TrustHarness.errorLines(result)
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\(keystore) refused the keystore password: set DEVPROXY_JAVA_STOREPASS to its password")
                == true, "\(lines)")
    }

    @Test func parsesAliasesAndTheirCertificates() {
        let output = """
        Keystore type: JKS
        Keystore provider: SUN

        Your keystore contains 2 entries

        Alias name: debian:isrg_root_x1.pem
        Creation date: Dec 1, 2026
        Entry type: trustedCertEntry

        -----BEGIN CERTIFICATE-----
        AAAA
        -----END CERTIFICATE-----


        *******************************************
        *******************************************


        Alias name: devproxy-1a2b3c4d
        Creation date: Dec 1, 2026
        Entry type: trustedCertEntry

        -----BEGIN CERTIFICATE-----
        BBBB
        -----END CERTIFICATE-----
        """
        let entries = JavaTrustStore.parseList(output)
        #expect(entries.map(\.alias) == ["debian:isrg_root_x1.pem", "devproxy-1a2b3c4d"])
        #expect(entries[1].pem.contains("BBBB") && !entries[1].pem.contains("AAAA"))
    }
}
