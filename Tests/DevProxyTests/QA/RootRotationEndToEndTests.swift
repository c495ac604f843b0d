import CertAuthority
import Foundation
import Testing
import TestSupport

/// Rotating the team root through the CLI, met by a real OkHttp 3.13 client the way devices
/// meet it: trusting only the old root, apps pinning either root pass through the
/// cross-certificate chain; trusting the new root, the app pinning it passes; trusting both,
/// OkHttp cleans the chain to the new root and an app pinning only the old one fails.
@Suite struct RootRotationEndToEndTests {
    static let host = "api.acme.dev"

    @Test func okHttpThroughTheCrossCertificateChain() throws {
        let directory = TemporaryDirectory()
        let ca = directory.file("team-ca")
        func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
            let result = try Subprocess.run(Subprocess.devproxy, arguments + ["--ca-dir", ca])
            #expect(result.status == 0, "\(arguments): \(result.output)")
            return result
        }
        _ = try devproxy(["ca", "init", "--name", "Acme Dev Root", "--days", "30"])
        let oldRoot = directory.write("old-root.pem", directory.read("team-ca/root.pem"))
        let oldPin = try #require(try Certificate.all(from: Array(directory.read("old-root.pem").utf8)).first).pin
        let next = try devproxy(["ca", "init", "--next"])
        let nextPin = try #require(next.stdout.split(separator: "\n").first { $0.contains("SPKI pin") }?
            .split(separator: " ").last.map(String.init))
        #expect(nextPin != oldPin)

        // Apps ship the next key as the backup pin: `pins snippet` reads it without --backup.
        let snippet = try devproxy(["pins", "snippet", "--domain", Self.host, "--format", "okhttp"])
        #expect(snippet.stdout.contains(oldPin) && snippet.stdout.contains(nextPin), "\(snippet.stdout)")
        // A policy that pins only the current root is warned about while the next key waits.
        let onlyOld = directory.write("only-old.txt", "\(Self.host) \(oldPin)\n")
        let pendingCheck = try Subprocess.run(Subprocess.devproxy, ["policy", "check", onlyOld, "--ca-dir", ca])
        #expect(pendingCheck.stdout.contains("not the next root key"), "\(pendingCheck.output)")

        let rotate = try devproxy(["ca", "rotate", "--transition-days", "10"])
        #expect(rotate.stdout.contains("Acme Dev Root G2"), "\(rotate.stdout)")
        let newRoot = directory.file("team-ca/root.pem")
        let newPin = try #require(try Certificate.all(from: Array(directory.read("team-ca/root.pem").utf8)).first).pin
        #expect(newPin == nextPin, "the new root is the key whose pin apps already ship")
        let rotatedCheck = try Subprocess.run(Subprocess.devproxy, ["policy", "check", onlyOld, "--ca-dir", ca])
        #expect(rotatedCheck.stdout.contains("pins only the team root being retired"), "\(rotatedCheck.output)")
        let both = directory.write("both.txt", "\(Self.host) \(oldPin)\n\(Self.host) \(newPin)\n")
        let bothCheck = try Subprocess.run(Subprocess.devproxy, ["policy", "check", both, "--ca-dir", ca])
        #expect(!bothCheck.stdout.contains("retired"), "\(bothCheck.output)")

        let bundle = directory.file("carol.pem")
        _ = try devproxy(["ca", "issue", "--email", "carol@acme.dev", "--out", bundle])
        let origin = try OriginServer(names: [Self.host])
        let log = directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--intermediate", bundle, "--upstream-ca", origin.caPath, "--log", log,
                                         "--quiet",
                                         "--resolve", "\(Self.host):\(origin.port):127.0.0.1"])
        let classes = try PinnedClientEndToEndTests.compileClient(in: directory)
        func okhttp(pin: String, trusting anchors: [String]) throws -> Subprocess.Result {
            try Subprocess.run("java", ["-cp", classes, "PinnedClient", String(proxy.port),
                                        "https://\(Self.host):\(origin.port)/cl?n=5",
                                        pin] + anchors, timeout: 60)
        }
        let oldDeviceOldApp = try okhttp(pin: oldPin, trusting: [oldRoot])
        #expect(oldDeviceOldApp.stdout == "200 hello", "\(oldDeviceOldApp.output)")
        let oldDeviceNewApp = try okhttp(pin: newPin, trusting: [oldRoot])
        #expect(oldDeviceNewApp.stdout == "200 hello", "\(oldDeviceNewApp.output)")
        let newDeviceNewApp = try okhttp(pin: newPin, trusting: [newRoot])
        #expect(newDeviceNewApp.stdout == "200 hello", "\(newDeviceNewApp.output)")
        let newDeviceOldApp = try okhttp(pin: oldPin, trusting: [newRoot])
        #expect(newDeviceOldApp.status == 3, "\(newDeviceOldApp.output)")
        let bothDeviceOldApp = try okhttp(pin: oldPin, trusting: [oldRoot, newRoot])
        #expect(bothDeviceOldApp.status == 3, "OkHttp cleans to the shorter path: \(bothDeviceOldApp.output)")
        #expect(bothDeviceOldApp.stdout.contains("Certificate pinning failure"), "\(bothDeviceOldApp.output)")
        _ = proxy.stop()

        // The bundle's chain and the old root both trace to this CA.
        let trace = try devproxy(["ca", "trace", bundle])
        #expect(trace.stdout.contains("carol@acme.dev"), "\(trace.stdout)")
        #expect(trace.stdout.contains("cross-certificate"), "\(trace.stdout)")
        let oldTrace = try devproxy(["ca", "trace", oldRoot])
        #expect(oldTrace.stdout.contains("a previous root of this CA"), "\(oldTrace.stdout)")
    }
}
