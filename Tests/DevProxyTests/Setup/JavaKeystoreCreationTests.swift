@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy trust … --store java --java-keystore FILE` on a keystore that does not exist yet:
/// install creates it as keytool would (PKCS12, here 0600), status and uninstall know it.
@Suite(.enabled(if: ExternalToolCheck.installed("keytool") && ExternalToolCheck.installed("openssl"), "no keytool or openssl"))
struct JavaKeystoreCreationTests {
    /// `keytool -list -rfc` of `keystore` with `password`, as a Java program would read it.
    func keytoolList(_ keystore: String, password: String) throws -> Subprocess.Result {
        try Subprocess.run("keytool", ["-list", "-rfc", "-keystore", keystore, "-storepass:env", "STOREPASS"],
                           environment: ["STOREPASS": password])
    }

    /// Install creates a PKCS12 keystore with the storepass from $DEVPROXY_JAVA_STOREPASS, 0600,
    /// holding the root; status finds it; uninstall removes the file it created.
    @Test func installCreatesTheKeystoreAndUninstallRemovesIt() throws {
        let harness = try TrustHarness()
        let keystore = harness.dir.file("truststore.p12")
        let nickname = try harness.nickname
        let store = ["--store", "java", "--java-keystore", keystore]
        let password = ["DEVPROXY_JAVA_STOREPASS": "team-store-pass"]

        let before = try harness.trust(["status"] + store, environment: password)
        #expect(before.status == 1, "\(before.output)")
        #expect(before.stdout.contains("not trusted  Java keystore \(keystore) (does not exist yet; `devproxy trust install` "
                                       + "creates it)"), "\(before.output)")
        #expect(TrustHarness.errorLines(before).isEmpty, "\(before.output)")
        #expect(!FileManager.default.fileExists(atPath: keystore), "status creates nothing")

        let installed = try harness.trust(["install"] + store, environment: password)
        #expect(installed.status == 0, "\(installed.output)")
        #expect(installed.stdout.contains("created \(keystore) (PKCS12, 0600, store password from $DEVPROXY_JAVA_STOREPASS) "
                                          + "and added alias \(nickname)"), "\(installed.output)")
        #expect(!installed.output.contains("team-store-pass"))
        let attributes = try FileManager.default.attributesOfItem(atPath: keystore)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let listed = try keytoolList(keystore, password: "team-store-pass")
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.stdout.contains("Keystore type: PKCS12"), "\(listed.output)")
        #expect(listed.stdout.contains("Alias name: \(nickname)"))
        #expect(listed.stdout.contains("trustedCertEntry"))
        // OpenSSL reads the same file as a PKCS#12 holding the root, with the same password.
        let pkcs12 = try Subprocess.run("openssl", ["pkcs12", "-in", keystore, "-nokeys", "-passin", "env:STOREPASS"],
                                        environment: ["STOREPASS": "team-store-pass"])
        #expect(pkcs12.status == 0, "\(pkcs12.output)")
        let root = try String(contentsOfFile: harness.rootPath, encoding: .utf8)
        let base64 = root.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(pkcs12.stdout.split(separator: "\n").filter { !$0.hasPrefix("-----") && !$0.contains(":") && !$0.isEmpty }
                    .joined().contains(base64), "\(pkcs12.output)")
        #expect(!FileManager.default.subpaths(atPath: harness.dir.path)!.contains { $0.hasPrefix(".devproxy-keystore") },
                "no working directory is left behind")

        let during = try harness.trust(["status"] + store, environment: password)
        #expect(during.status == 0, "\(during.output)")
        #expect(during.stdout.contains("trusted      Java keystore \(keystore): \(nickname)"))

        let removed = try harness.trust(["uninstall"] + store, environment: password)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("removed alias \(nickname) and \(keystore), which install created"), "\(removed.output)")
        #expect(!FileManager.default.fileExists(atPath: keystore))

        let again = try harness.trust(["uninstall"] + store, environment: password)
        #expect(again.status == 0, "\(again.output)")
        #expect(again.stdout.contains("\(keystore) does not exist; nothing to remove"), "\(again.output)")
        let after = try harness.trust(["status"] + store, environment: password)
        #expect(after.status == 1)
        #expect(after.stdout.contains("does not exist yet"))
    }

    /// A keystore devproxy created and someone else then added to keeps their entry: uninstall
    /// deletes devproxy's alias alone and leaves the file.
    @Test func aCreatedKeystoreOthersAddedToIsKept() throws {
        let harness = try TrustHarness()
        let keystore = harness.dir.file("truststore.p12")
        let store = ["--store", "java", "--java-keystore", keystore]
        let installed = try harness.trust(["install"] + store)
        #expect(installed.status == 0, "\(installed.output)")
        #expect(installed.stdout.contains("store password changeit, the default"), "\(installed.output)")
        let other = try TrustHarness()
        let added = try Subprocess.run("keytool", ["-importcert", "-noprompt", "-alias", "someone-else", "-file", other.rootPath,
                                                   "-keystore", keystore, "-storepass:env", "STOREPASS"],
                                       environment: ["STOREPASS": "changeit"])
        #expect(added.status == 0, "\(added.output)")
        let removed = try harness.trust(["uninstall"] + store)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("with keytool -delete, as the keystore changed after install"), "\(removed.output)")
        let listed = try keytoolList(keystore, password: "changeit")
        #expect(listed.stdout.contains("Alias name: someone-else"))
        #expect(!listed.stdout.contains("Alias name: \(try harness.nickname)"))
    }

    /// A keystore given as a relative path is named absolute in the `-Djavax.net.ssl.trustStore=`
    /// the line hands to Java programs, which read it from their own working directory: it said
    /// `=./truststore.p12`, which keytool (or a JVM) started anywhere else does not find.
    @Test func aRelativeKeystoreIsHandedToJavaAbsolute() throws {
        let harness = try TrustHarness()
        let result = try Subprocess.run(Subprocess.devproxy, ["trust", "install", "--store", "java", "--java-keystore",
                                                              "./truststore.p12", "--ca-dir", harness.ca],
                                        environment: ["XDG_STATE_HOME": harness.state], directory: harness.dir.path)
        #expect(result.status == 0, "\(result.output)")
        let words = result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        let property = try #require(words.first { $0.hasPrefix("-Djavax.net.ssl.trustStore=") }, "\(result.output)")
        let path = String(property.dropFirst("-Djavax.net.ssl.trustStore=".count))
        #expect(path == harness.dir.file("truststore.p12"), "\(result.output)")
        // As a Java program elsewhere would: keytool from another directory opens the path given.
        let listed = try Subprocess.run("keytool", ["-list", "-keystore", path, "-storepass", "changeit"], directory: "/")
        let nickname = try harness.nickname
        #expect(listed.status == 0 && listed.stdout.contains(nickname), "\(listed.output)")
    }

    /// A keystore in a directory that does not exist is one error line naming the directory
    /// (keytool's own words were a Java exception).
    @Test func aMissingDirectoryIsOneClearError() throws {
        let harness = try TrustHarness()
        let keystore = harness.dir.file("no-such-dir/truststore.p12")
        let result = try harness.trust(["install", "--store", "java", "--java-keystore", keystore])
        #expect(result.status == 1)
        #expect(TrustHarness.errorLines(result) == ["error: Java keystore \(keystore): the directory "
                                                    + "\(harness.dir.file("no-such-dir")) does not exist; create it first"],
                "\(result.output)")
    }
}
