import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `TerminalTrust` finds the JDK's keytool and cacerts as `JavaTrustStore` does, and the system
/// bundle in `SystemTrustStore`'s table, from one source each: what `devproxy env` writes for a
/// terminal is made of the files `devproxy trust` drives.
@Suite struct TerminalTrustSourcesTests {
    /// A `JAVA_HOME` with a `bin/keytool` that appends its arguments to `calls` and fails (so no
    /// keystore is made), and a `lib/security/cacerts` (JDK 9 and later).
    static func fakeJDK(_ dir: TemporaryDirectory) throws -> (home: String, calls: String) {
        let home = dir.file("jdk")
        let calls = dir.file("keytool-calls")
        try FileManager.default.createDirectory(atPath: home + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/lib/security", withIntermediateDirectories: true)
        try Data("not a keystore".utf8).write(to: URL(fileURLWithPath: home + "/lib/security/cacerts"))
        let script = "#!/bin/sh\necho \"$@\" >> '\(calls)'\necho 'keytool error: fake JDK' >&2\nexit 1\n"
        try Data(script.utf8).write(to: URL(fileURLWithPath: home + "/bin/keytool"))
        guard chmod(home + "/bin/keytool", 0o755) == 0 else { throw TestFailure("chmod keytool") }
        return (home, calls)
    }

    @Test("keytool and cacerts come from $JAVA_HOME for the trust store and the terminal alike")
    func javaHomeIsOneResolver() throws {
        let dir = TemporaryDirectory()
        let (home, calls) = try Self.fakeJDK(dir)
        let environment = ["JAVA_HOME": home, "PATH": "/nonexistent"]
        #expect(JavaTrustStore.keytool(environment: environment).executable == home + "/bin/keytool")
        #expect(JavaTrustStore.keytool(environment: ["JAVA_HOME": dir.file("none")]).executable == "keytool")
        #expect(JavaTrustStore.cacerts(underAnyOf: [dir.file("none"), home]) == home + "/lib/security/cacerts")
        #expect(TerminalTrust.javaCacerts(environment: environment) == home + "/lib/security/cacerts")

        // `devproxy env`'s keystore is made with that keytool, from that cacerts.
        let caDirectory = dir.file("ca")
        let root = try CAStore(directory: caDirectory).initialize(name: "Sources Test Root", keyType: .p256, days: 2,
                                                                  passphrase: nil)
        let prepared = try TerminalTrust(caDirectory: caDirectory).prepare(root: root, environment: environment)
        let ran = try String(contentsOfFile: calls, encoding: .utf8)
        #expect(ran.hasPrefix("-importkeystore") && ran.contains(home + "/lib/security/cacerts"), "\(ran)")
        #expect(prepared.javaTrustStore == nil && prepared.javaProblem?.contains("fake JDK") == true,
                "\(String(describing: prepared.javaProblem))")
    }

    @Test("The system store's table of bundles, which the terminal's is looked for in, has each layout's first")
    func systemBundlesAreOneTable() {
        let bundles = SystemTrustStore.Layout.bundles
        #expect(bundles == ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                            "/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem",
                            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem"])
        for layout in SystemTrustStore.Layout.all { #expect(bundles.contains(layout.bundle), "\(layout.family)") }
    }
}
