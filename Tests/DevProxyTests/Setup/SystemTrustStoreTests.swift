@testable import DevProxy
import CertAuthority
import Foundation
import Testing
import TestSupport

/// Whether this test run may make private mount namespaces over a Debian system store.
enum PrivateMountNamespace {
    static var isAvailable: Bool {
        guard geteuid() == 0, SystemTrustStore.Layout.detect() == .debian else { return false }
        return (try? Subprocess.run("unshare", ["--mount", "--propagation", "private", "true"]).status) == 0
    }
}

/// `devproxy trust … --store system` running the real update-ca-certificates, inside a private
/// mount namespace whose /usr/local/share/ca-certificates and /etc/ssl/certs are copies, so the
/// machine's own store never changes.
@Suite(.enabled(if: PrivateMountNamespace.isAvailable, "needs root, unshare and Debian's update-ca-certificates"))
struct SystemTrustStoreTests {
    /// The copies the namespace mounts over the real directories.
    struct Copies {
        let dir = TemporaryDirectory()
        var local: String { dir.file("local") }
        var certs: String { dir.file("certs") }
        /// Empty: Debian's hooks (the Java keystore's) run dpkg triggers, which would reach
        /// outside the copies.
        var hooks: String { dir.file("hooks") }

        init() throws {
            let copied = try Subprocess.run("cp", ["-a", "/usr/local/share/ca-certificates", dir.file("local")])
            let copiedCerts = try Subprocess.run("cp", ["-a", "/etc/ssl/certs", dir.file("certs")])
            guard copied.status == 0, copiedCerts.status == 0 else { throw TestFailure("cp: \(copied.output)\(copiedCerts.output)") }
            try FileManager.default.createDirectory(atPath: dir.file("hooks"), withIntermediateDirectories: true)
        }

        /// Runs `command` with the copies mounted in place of the real directories.
        func run(_ command: [String]) throws -> Subprocess.Result {
            let script = """
            set -e
            mount --bind "$1" /usr/local/share/ca-certificates
            mount --bind "$2" /etc/ssl/certs
            if [ -d /etc/ca-certificates/update.d ]; then mount --bind "$3" /etc/ca-certificates/update.d; fi
            shift 3
            exec "$@"
            """
            return try Subprocess.run("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh",
                                                  local, certs, hooks] + command)
        }
    }

    @Test func installStatusUninstallRestoresTheStoreByteForByte() throws {
        let harness = try TrustHarness()
        let copies = try Copies()
        let nickname = try harness.nickname
        let realBundle = FileManager.default.contents(atPath: "/etc/ssl/certs/ca-certificates.crt")
        let realLocal = treeSnapshot("/usr/local/share/ca-certificates")
        // The tool's own first run: this machine's copy may hold a file where update-ca-certificates
        // keeps a link (a CA copied in by hand), which any run of the tool replaces, whatever
        // devproxy does. Start from the state the tool itself leaves.
        let normalised = try copies.run(["update-ca-certificates"])
        #expect(normalised.status == 0, "\(normalised.output)")
        let (localBefore, certsBefore) = (treeSnapshot(copies.local), treeSnapshot(copies.certs))
        func trust(_ words: [String]) throws -> Subprocess.Result {
            try copies.run(["env", "XDG_STATE_HOME=" + harness.state, Subprocess.devproxy, "trust"] + words
                           + ["--store", "system", "--ca-dir", harness.ca])
        }

        let before = try trust(["status"])
        #expect(before.status == 1, "\(before.output)")
        #expect(before.stdout.contains("not trusted  system store (Debian: /usr/local/share/ca-certificates)"))
        let unverified = try copies.run(["openssl", "verify", "-CApath", "/etc/ssl/certs", "-no-CAfile", harness.rootPath])
        #expect(unverified.status != 0, "the root is not trusted before install")

        let installed = try trust(["install"])
        #expect(installed.status == 0, "\(installed.output)")
        let anchor = "/usr/local/share/ca-certificates/\(nickname).crt"
        #expect(installed.stdout.contains("added \(anchor) and ran update-ca-certificates"))
        #expect(FileManager.default.fileExists(atPath: copies.local + "/\(nickname).crt"))
        #expect(try String(contentsOfFile: copies.certs + "/ca-certificates.crt", encoding: .utf8)
            .contains(String(contentsOfFile: harness.rootPath, encoding: .utf8).split(separator: "\n")[1]), "the bundle holds it")
        let verified = try copies.run(["openssl", "verify", "-CApath", "/etc/ssl/certs", "-no-CAfile", harness.rootPath])
        #expect(verified.status == 0, "OpenSSL finds the root by hash: \(verified.output)")

        let during = try trust(["status"])
        #expect(during.status == 0, "\(during.output)")
        #expect(during.stdout.contains("trusted      system store (Debian: /usr/local/share/ca-certificates): \(anchor)"))
        let again = try trust(["install"])
        #expect(again.status == 0)
        #expect(again.stdout.contains("already trusted (\(anchor))"))

        let removed = try trust(["uninstall"])
        #expect(removed.status == 0, "\(removed.output)")
        #expect(removed.stdout.contains("removed \(anchor) and ran update-ca-certificates --fresh"))
        #expect(treeDifferences(localBefore, treeSnapshot(copies.local)) == [])
        #expect(treeDifferences(certsBefore, treeSnapshot(copies.certs)) == [], "every link and file of /etc/ssl/certs as it was")
        let after = try trust(["status"])
        #expect(after.status == 1)

        #expect(FileManager.default.contents(atPath: "/etc/ssl/certs/ca-certificates.crt") == realBundle, "the machine's bundle never changed")
        #expect(treeDifferences(realLocal, treeSnapshot("/usr/local/share/ca-certificates")) == [])
    }

    /// Without root the system store is not touched: the exact sudo command instead, exit 1.
    @Test func withoutRootItPrintsTheSudoCommand() throws {
        let harness = try TrustHarness()
        // nobody must be able to read the root and reach the binary.
        chmod(harness.dir.path, 0o755)
        let root = harness.dir.write("root.pem", try String(contentsOfFile: harness.rootPath, encoding: .utf8))
        let copies = try Copies()
        let result = try copies.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                     Subprocess.devproxy, "trust", "install", "--store", "system", "--root", root])
        guard !result.stderr.contains("Permission denied") else {
            throw TestFailure("nobody cannot run \(Subprocess.devproxy): \(result.output)")
        }
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stdout.contains("needs sudo   system store (Debian: /usr/local/share/ca-certificates)"))
        #expect(TrustHarness.errorLines(result) == [
            "error: system store (Debian: /usr/local/share/ca-certificates): changing the system store needs root; run: sudo \(Subprocess.devproxy) trust install --store system --root \(root)",
        ])
        #expect(!treeSnapshot(copies.local).keys.contains { $0.hasPrefix("devproxy-") })
    }
}
