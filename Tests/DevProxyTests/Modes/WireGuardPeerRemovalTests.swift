@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// `devproxy wireguard --remove-peer N`: a device revoked. Its key leaves `wireguard.json`, its
/// number and address are never given again, and a running `devproxy run --mode wireguard` stops
/// serving it within about a second: the device in a namespace of the test's own (wireguard-go and
/// wg, `WireGuardModeTests.Device`) loses its tunnel, its open connection is closed as far as the
/// origin, and its next handshake is refused.
@Suite(.serialized) struct WireGuardPeerRemovalTests {
    /// A device connected as peer 2 is removed with the real CLI while `devproxy run` runs: before,
    /// curl through the tunnel gets the origin's answer; after, the connection it kept open is closed
    /// at the origin within a few seconds (the run reads the key file once a second), a new request
    /// fails within its bound, a fresh `wg` handshake gets no answer, the console says
    /// `wireguard: peer 2 (10.0.0.3) removed` once, and `/api/wireguard` lists peer 1 alone, peer 2's
    /// config route answering 404 with one line.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func aRemovedDeviceLosesItsTunnelWithinASecondOrSo() throws {
        let device = try WireGuardModeTests.Device()
        let origin = try OriginServer()
        let run = try WebUIWireGuardTests.Run(wireGuard: device.hostAddress, extra: [
            "--allow-remote", "--upstream-ca", origin.caPath, "--resolve", "origin.test:\(origin.port):127.0.0.1"])
        let listening = try #require(run.listening)
        let ca = run.dir.file("ca")
        let added = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", ca, "--endpoint", listening, "--peer", "2"],
                                       timeout: 20)
        #expect(added.status == 0 && added.stdout.contains("Address = 10.0.0.3/32"), "\(added.output)")
        try device.connect(added.stdout, directory: run.dir)
        let root = run.dir.file("ca/root.pem")
        let address = try device.namespace.sh("getent ahostsv4 origin.test").stdout.split(separator: " ").first.map(String.init) ?? ""
        let resolve = "origin.test:\(origin.port):\(address)"
        let before = try device.namespace.sh("curl -sS --max-time 20 --cacert \(root) --resolve \(resolve) "
                                             + "'https://origin.test:\(origin.port)/cl?n=5&by=before-removal'", timeout: 40)
        #expect(before.stdout == "hello", "\(before.output)")
        let handshakes = { try device.namespace.sh("wg show \(device.interface) latest-handshakes").stdout }
        #expect(try handshakes().split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? 0 > 0)

        // A connection held open through the tunnel: an event stream that goes quiet for 30 s.
        let held = Process()
        held.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        held.arguments = device.namespace.launcher + ["curl", "-sS", "-N", "--max-time", "40", "--cacert", root, "--resolve",
                                                      resolve, "https://origin.test:\(origin.port)/quiet?s=30"]
        held.standardOutput = FileHandle.nullDevice
        held.standardError = FileHandle.nullDevice
        try held.run()
        defer {
            // SIGKILL: Process.terminate() (SIGTERM) left this curl running until its --max-time here.
            if held.isRunning { kill(held.processIdentifier, SIGKILL) }
            held.waitUntilExit()
        }
        let requests = { try Subprocess.run("curl", ["-sS", "--cacert", origin.caPath, origin.url("/requests")], timeout: 10).stdout }
        var deadline = Date().addingTimeInterval(10)
        while !(try requests()).contains("/quiet") && Date() < deadline { usleep(100_000) }
        #expect(try requests().contains("/quiet") && !(try requests()).contains("/quiet abandoned"))

        let removed = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", ca, "--remove-peer", "2"], timeout: 20)
        let removedAt = Date()
        #expect(removed.status == 0 && removed.stdout.hasPrefix("removed peer 2 (10.0.0.3)")
                && removed.stdout.split(separator: "\n").count == 1, "\(removed.output)")
        // Closed by the run itself (no web UI request reads the key file meanwhile): at the origin too.
        deadline = Date().addingTimeInterval(6)
        while !(try requests()).contains("/quiet abandoned") && Date() < deadline { usleep(100_000) }
        let closedAfter = Date().timeIntervalSince(removedAt)
        #expect(try requests().contains("/quiet abandoned") && closedAfter < 3, "closed after \(closedAfter) s")

        let started = Date()
        let after = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
            "curl", "-sS", "--max-time", "4", "--cacert", root, "--resolve", resolve,
            "https://origin.test:\(origin.port)/cl?n=5&by=after-removal"], timeout: 20)
        #expect(after.status != 0 && after.stdout.isEmpty && Date().timeIntervalSince(started) < 6, "\(after.output)")
        // A fresh handshake (the peer set again, as the app does when the tunnel is turned off and on) gets no answer.
        try device.reconnect(added.stdout)
        let pinged = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + ["ping", "-c", "1", "-W", "4",
                                                                                             "10.0.0.1"], timeout: 20)
        #expect(pinged.status != 0, "\(pinged.output)")
        let latest = try handshakes()
        #expect(latest.split(whereSeparator: \.isWhitespace).last == "0", "\(latest)")

        let peers = try #require((try run.json("/api/wireguard"))["peers"] as? [[String: Any]])
        #expect(peers.count == 1 && peers.first?["peer"] as? Int == 1, "\(peers)")
        let gone = try run.get("/api/wireguard/peers/2/config")
        let reason = (try? JSONSerialization.jsonObject(with: Data(gone.body.utf8)) as? [String: Any])?["error"] as? String
        #expect(gone.status == 404 && reason?.hasPrefix("peer 2 (10.0.0.3) was removed") == true
                && reason?.contains("\n") == false && !gone.body.contains("PrivateKey"), "\(gone)")
        #expect(try run.get("/api/wireguard/peers/1/config").status == 200)

        let stopped = run.proxy.stop()
        let lines = stopped.stdout.split(separator: "\n")
        #expect(lines.filter { $0 == "wireguard: peer 2 (10.0.0.3) removed" }.count == 1, "\(stopped.stdout)")
        #expect(lines.contains { $0.contains("refused: handshake initiation from an unknown peer key") }, "\(stopped.stdout)")
    }

    /// The web UI's route, as `--remove-peer` does it: `DELETE /api/wireguard/peers/2` answers what it
    /// removed, the run drops the device at once (the console line, the list), and the file keeps no
    /// key of it; a second removal and a peer that is not there are 404 with one line, another
    /// method 405, and without the token 401, nothing removed.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func theWebUIRemovesADeviceWithDELETE() throws {
        let run = try WebUIWireGuardTests.Run()
        let listening = try #require(run.listening)
        for peer in ["2", "3"] {
            _ = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", run.dir.file("ca"), "--endpoint", listening,
                                                         "--peer", peer], timeout: 20)
        }
        let anonymous = try run.get("/api/wireguard/peers/2", method: "DELETE", token: false)
        #expect(anonymous.status == 401, "\(anonymous)")
        #expect(try run.get("/api/wireguard/peers/2").status == 405)
        let removed = try run.get("/api/wireguard/peers/2", method: "DELETE")
        let answer = try? JSONSerialization.jsonObject(with: Data(removed.body.utf8)) as? [String: Any]
        #expect(removed.status == 200 && answer?["removed"] as? Int == 2 && answer?["address"] as? String == "10.0.0.3",
                "\(removed)")
        let peers = try #require((try run.json("/api/wireguard"))["peers"] as? [[String: Any]])
        #expect(peers.map { $0["peer"] as? Int } == [1, 3], "\(peers)")
        let file = try WireGuardKeyFile.read(path: run.dir.file("ca/wireguard.json"))
        #expect(file.peers.count == 3 && file.peers[1] == nil && file.peers[2] != nil)
        for (path, words) in [("/api/wireguard/peers/2", "peer 2 (10.0.0.3) was already removed"),
                              ("/api/wireguard/peers/7", "no peer 7")] {
            let refused = try run.get(path, method: "DELETE")
            let reason = (try? JSONSerialization.jsonObject(with: Data(refused.body.utf8)) as? [String: Any])?["error"] as? String
            #expect(refused.status == 404 && reason?.hasPrefix(words) == true && reason?.contains("\n") == false, "\(refused)")
        }
        let stopped = run.proxy.stop()
        #expect(stopped.stdout.split(separator: "\n").filter { $0 == "wireguard: peer 2 (10.0.0.3) removed" }.count == 1,
                "\(stopped.stdout)")
    }

    /// The CA view's Remove button (headless Chromium, `Resources/webui_wireguard.py --only remove`):
    /// in two clicks and no dialog (the first says what the second does and removes nothing; blur,
    /// Esc or 4 s disarm it), by mouse or keyboard, it removes peer 2, whose row goes, and the part
    /// says so; peer 1 stays.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil && WebUIBrowser.missing == nil,
                   "needs root, network namespaces, wireguard-go, wg, chromium and playwright"))
    func theRemoveButtonRemovesADevice() throws {
        let run = try WebUIWireGuardTests.Run()
        _ = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", run.dir.file("ca"), "--endpoint",
                                                     try #require(run.listening), "--peer", "2"], timeout: 20)
        let result = try run.proxy.runPage(only: "remove", script: "webui_wireguard.py", timeout: 120)
        #expect(WebUIBrowser.passed(result).isSuperset(of: ["remove-first-click-asks", "remove-disarms",
                                                           "remove-second-click-removes", "remove-keeps-peer-1",
                                                           "no-page-errors"]),
                "\(result.output)")
        #expect(result.status == 0, "\(result.output)")
    }

    /// The CLI's side, with no run: `--remove-peer N` deletes that device's private key (0600 kept),
    /// says what it removed in one line, and refuses with one line a peer that is not there or already
    /// removed; the other devices keep their numbers, keys and addresses; a removed number is not
    /// given again (`--peer N` names the next free one); every device may go, peer 1 and the last
    /// one too, after which `devproxy wireguard` says how to add one.
    @Test func removingAPeerKeepsTheOthersAndNeverReusesItsNumber() throws {
        let dir = TemporaryDirectory()
        func wireguard(_ extra: [String]) throws -> Subprocess.Result {
            try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", dir.file("ca")] + extra, timeout: 20)
        }
        let missing = try wireguard(["--remove-peer", "1"])
        #expect(missing.status == 1 && missing.stderr.hasPrefix("error: there is no peer 1 to remove")
                && missing.stderr.split(separator: "\n").count == 1, "\(missing.output)")
        let third = try wireguard(["--endpoint", "192.0.2.7", "--peer", "3"])
        #expect(third.status == 0 && third.stdout.contains("Address = 10.0.0.4/32"), "\(third.output)")
        let second = try wireguard(["--endpoint", "192.0.2.7", "--peer", "2"])
        let path = dir.file("ca/wireguard.json")

        let removed = try wireguard(["--remove-peer", "2"])
        #expect(removed.status == 0 && removed.stdout.hasPrefix("removed peer 2 (10.0.0.3): ")
                && removed.stdout.contains(path) && removed.stdout.split(separator: "\n").count == 1, "\(removed.output)")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let privateKey = second.stdout.split(separator: "\n").first { $0.hasPrefix("PrivateKey = ") }?.dropFirst(13) ?? "-"
        #expect(!text.contains(privateKey), "peer 2's private key is still in the file")
        let file = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let entries = try #require(file["peers"] as? [[String: Any]])
        #expect(entries.count == 3 && entries[1]["private_key"] == nil && entries[1]["removed"] is String
                && entries[1]["public_key"] is String, "\(entries.map(\.keys))")
        #expect(try wireguard(["--endpoint", "192.0.2.7", "--peer", "3"]).stdout == third.stdout, "peer 3 kept its key and address")

        for (arguments, status, words) in [
            (["--remove-peer", "2"], Int32(1), "error: peer 2 (10.0.0.3) was already removed ("),
            (["--remove-peer", "7"], 1, "error: there is no peer 7: "),
            (["--remove-peer", "x"], 2, "error: --remove-peer x is not a device number"),
            (["--remove-peer", "1", "--peer", "3"], 2, "error: --remove-peer takes no --peer"),
            (["--endpoint", "192.0.2.7", "--peer", "2"], 1, "error: peer 2 (10.0.0.3) was removed ("),
        ] {
            let refused = try wireguard(arguments)
            #expect(refused.status == status && refused.stderr.hasPrefix(words) && refused.stderr.split(separator: "\n").count == 1
                    && refused.stdout.isEmpty, "\(arguments): \(refused.output)")
        }
        #expect(try wireguard(["--endpoint", "192.0.2.7", "--peer", "2"]).stderr.contains("--peer 4 adds a device"))

        // Peer 1 and the last device may go too; the next device gets the next number.
        #expect(try wireguard(["--remove-peer", "1"]).stdout.contains("1 device is left"))
        #expect(try wireguard(["--endpoint", "192.0.2.7"]).stdout.contains("Address = 10.0.0.4/32"), "the first device left")
        #expect(try wireguard(["--remove-peer", "3"]).stdout.contains("no device is left (devproxy wireguard --peer 4 adds one)"))
        let none = try wireguard(["--endpoint", "192.0.2.7"])
        #expect(none.status == 1 && none.stderr.hasPrefix("error: every device of ") && none.stderr.contains("--peer 4 adds one"),
                "\(none.output)")
        #expect(try wireguard(["--endpoint", "192.0.2.7", "--peer", "4"]).stdout.contains("Address = 10.0.0.5/32"))
    }

    /// Commands that change the key file at the same time (devices added while one is removed) each
    /// see the others' change: every key a config was printed with is still in the file, at the
    /// address that config gave, and the removal stays (the file is changed under a `flock`).
    @Test func commandsChangingTheKeysAtOnceKeepEachOthersChanges() throws {
        let dir = TemporaryDirectory()
        let ca = dir.file("ca")
        #expect(try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", ca, "--endpoint", "192.0.2.7"],
                                   timeout: 20).status == 0)
        let results = Mutex<[Int: Subprocess.Result]>([:])
        DispatchQueue.concurrentPerform(iterations: 13) { index in
            let arguments = index == 0 ? ["--remove-peer", "1"] : ["--endpoint", "192.0.2.7", "--peer", String(index + 1)]
            let result = try? Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", ca] + arguments, timeout: 30)
            results.withLock { $0[index] = result }
        }
        let file = try WireGuardKeyFile.read(path: dir.file("ca/wireguard.json"))
        #expect(file.peers.count == 13 && file.peers[0] == nil, "\(file.peers.map { $0 != nil })")
        for index in 1..<13 {
            let printed = results.withLock { $0[index] }
            let key = printed?.stdout.split(separator: "\n").first { $0.hasPrefix("PrivateKey = ") }.map { String($0.dropFirst(13)) }
            #expect(printed?.status == 0 && key != nil && file.peers[index]?.base64 == key
                    && printed?.stdout.contains("Address = 10.0.0.\(index + 2)/32") == true,
                    "peer \(index + 1): \(printed?.output ?? "no result")")
        }
    }
}
