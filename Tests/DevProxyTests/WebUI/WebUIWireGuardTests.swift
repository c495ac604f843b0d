@testable import DevProxy
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import QRCode
import Synchronization
import Testing
import TestSupport

/// The CA view's Devices (WireGuard) part and its routes (`/api/wireguard`, a device's config and
/// QR code) against a real `devproxy run --mode wireguard` with its web UI: what the device's
/// WireGuard app would scan is exactly `devproxy wireguard`'s config, its private key is behind the
/// token and never cached, and a device whose tunnel comes up (wireguard-go in a namespace of the
/// test's own, `WireGuardModeTests.Device`) is shown connected from its address.
@Suite(.serialized) struct WebUIWireGuardTests {
    /// `devproxy run --mode regular --mode wireguard@HOST:0` with its web UI on 127.0.0.1:0.
    final class Run {
        let dir = TemporaryDirectory()
        let proxy: DevProxyProcess
        /// The wireguard listener's address (`listening on HOST:PORT (wireguard)`), nil without one.
        let listening: String?
        let base: String
        let token: String

        init(wireGuard host: String? = "127.0.0.1", extra: [String] = []) throws {
            let modes = host.map { ["--mode", "regular", "--mode", "wireguard@\($0):0"] } ?? []
            proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"] + modes + extra,
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
            listening = proxy.banner.split(separator: "\n").first { $0.hasPrefix("listening on ") && $0.hasSuffix(" (wireguard)") }
                .map { String($0.dropFirst("listening on ".count).dropLast(" (wireguard)".count)) }
            (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
            if host != nil, listening == nil { throw TestFailure("no wireguard listener: \(proxy.banner)") }
        }

        /// One answer of the UI through curl: status, headers (names lowercased), body as text.
        func get(_ path: String, method: String = "GET", token: Bool = true)
            throws -> (status: Int, headers: [String: String], body: String) {
            let result = try Subprocess.run("curl", ["-sS", "-i", "--max-time", "20", "-X", method]
                                                + (token ? ["-H", "Authorization: Bearer \(self.token)"] : []) + [base + path],
                                            timeout: 30)
            guard let split = result.stdout.range(of: "\r\n\r\n") else { throw TestFailure("curl: \(result.output)") }
            let head = result.stdout[..<split.lowerBound].split(separator: "\r\n")
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            return (status, headers, String(result.stdout[split.upperBound...]))
        }

        func json(_ path: String) throws -> [String: Any] {
            let answer = try get(path)
            return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
                                "\(answer)")
        }

        /// `devproxy wireguard`'s config for this run's keys, written with `endpoint`.
        func printedConfig(endpoint: String) throws -> String {
            let result = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", dir.file("ca"), "--endpoint", endpoint],
                                            timeout: 20)
            guard result.status == 0 else { throw TestFailure("devproxy wireguard: \(result.output)") }
            return result.stdout
        }
    }

    /// `/api/wireguard` lists peer 1, never connected; its config is exactly what `devproxy
    /// wireguard` prints for the same endpoint (the listener's, or `?endpoint=`), an attachment
    /// never cached; its QR code is an SVG document, the QR code of that config; a peer the run does
    /// not accept is 404 and a bad endpoint 400, each with one line; without the token all three
    /// are 401 and show no key.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func theRoutesGiveTheDevicesConfigBehindTheToken() throws {
        let run = try Run()
        let listening = try #require(run.listening)
        let status = try run.json("/api/wireguard")
        #expect(status["listening"] as? String == listening && status["endpoint"] as? String == listening, "\(status)")
        let peers = try #require(status["peers"] as? [[String: Any]], "\(status)")
        #expect(peers.count == 1 && peers[0]["peer"] as? Int == 1 && peers[0]["address"] as? String == "10.0.0.2"
                && peers[0]["connected"] as? Bool == false && peers[0]["last_handshake_seconds"] is NSNull
                && peers[0]["from"] is NSNull, "\(peers)")
        #expect(!String(describing: status).contains("PrivateKey"))

        let own = try run.get("/api/wireguard/peers/1/config")
        let printed = try run.printedConfig(endpoint: listening)
        #expect(own.status == 200 && own.body == printed, "\(own)")
        let config = try run.get("/api/wireguard/peers/1/config?endpoint=10.0.2.2%3A51999")
        let printedForEmulator = try run.printedConfig(endpoint: "10.0.2.2:51999")
        #expect(config.status == 200 && config.body == printedForEmulator, "\(config)")
        #expect(config.body.contains("Endpoint = 10.0.2.2:51999\n") && config.body.contains("PrivateKey = "))
        #expect(config.headers["cache-control"] == "no-store" && config.headers["content-type"] == "text/plain; charset=utf-8"
                && config.headers["content-disposition"] == "attachment; filename=\"devproxy-peer1.conf\"", "\(config.headers)")

        let qr = try run.get("/api/wireguard/peers/1/qr.svg?endpoint=10.0.2.2:51999")
        #expect(qr.status == 200 && qr.headers["content-type"] == "image/svg+xml" && qr.headers["cache-control"] == "no-store",
                "\(qr.headers)")
        let document = try XMLDocument(data: Data(qr.body.utf8))
        #expect(document.rootElement()?.name == "svg")
        let expected = try QRCode.svg(for: config.body)
        #expect(qr.body == expected, "the SVG is not the QR code of the config")

        for (path, words) in [("/api/wireguard/peers/2/config", "no peer 2: this run accepts peer 1"),
                              ("/api/wireguard/peers/0/qr.svg", "no peer 0"), ("/api/wireguard/peers/x/config", "no peer x"),
                              ("/api/wireguard/peers/1/other", "no API route")] {
            let answer = try run.get(path)
            let reason = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["error"] as? String
            #expect(answer.status == 404 && reason?.hasPrefix(words) == true && reason?.contains("\n") == false, "\(path): \(answer)")
        }
        for (query, words) in [("a%20b", "endpoint a b does not name a host"), ("h%3A0", "endpoint h:0: the port is not"),
                               ("h%0A", "endpoint is not HOST[:PORT]")] {
            for route in ["config", "qr.svg"] {
                let answer = try run.get("/api/wireguard/peers/1/\(route)?endpoint=\(query)")
                let reason = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["error"] as? String
                #expect(answer.status == 400 && reason?.hasPrefix(words) == true && reason?.contains("\n") == false,
                        "\(query): \(answer)")
            }
        }
        for path in ["/api/wireguard", "/api/wireguard/peers/1/config", "/api/wireguard/peers/1/qr.svg"] {
            let answer = try run.get(path, token: false)
            #expect(answer.status == 401 && !answer.body.contains("PrivateKey") && !answer.body.contains("10.0.0.2"),
                    "\(path): \(answer)")
        }
        let post = try run.get("/api/wireguard", method: "POST")
        #expect(post.status == 405, "\(post)")
        let stopped = run.proxy.stop()
        #expect(!stopped.stdout.contains("PrivateKey") && !stopped.stderr.contains("PrivateKey"), "the config was logged")
    }

    /// A config route reads the key file once per request, even just after the file changed (a
    /// device added with `devproxy wireguard --peer 2`), where it used to read it twice (once to
    /// accept new peers, once for the key): counted with strace on the run, attached once the run's
    /// own check (once a second) has read the changed file.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil && WebUIWireGuardTests.strace != nil,
                   "needs root, network namespaces, wireguard-go, wg and strace"))
    func theConfigRouteReadsTheKeyFileOnce() throws {
        let run = try Run()
        let listening = try #require(run.listening)
        _ = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", run.dir.file("ca"), "--endpoint", listening,
                                                     "--peer", "2"], timeout: 20)
        usleep(1_500_000)
        let pid = run.proxy.process.processIdentifier
        let trace = run.dir.file("strace.txt")
        // Every thread of the run (`-p` takes them all), and those they start (`-f`: a request's own).
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").joined(separator: ",")
        let strace = Process()
        strace.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // With no signal blocked: what the test process starts inherits its blocked signals, and
        // strace would not stop on SIGINT (its trace is written out when it does).
        strace.arguments = ["python3", "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                            + "os.execv(sys.argv[1], sys.argv[1:])", try #require(Self.strace),
                            "-f", "-e", "trace=openat", "-o", trace, "-p", threads]
        strace.standardOutput = FileHandle.nullDevice
        strace.standardError = FileHandle.nullDevice
        try strace.run()
        defer {
            if strace.isRunning { kill(strace.processIdentifier, SIGKILL) }
            strace.waitUntilExit()
        }
        // strace attaches within this (it says so on stderr, but not in a way to wait for in bounded time).
        usleep(1_000_000)
        let config = try run.get("/api/wireguard/peers/2/config")
        #expect(config.status == 200 && config.body.contains("Address = 10.0.0.3/32"), "\(config)")
        kill(strace.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(10)
        while strace.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!strace.isRunning, "strace did not stop on SIGINT")
        let opens = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("/\(WireGuardKeyFile.fileName)\"") }
        #expect(opens.count == 1, "\(opens)")
    }

    /// strace, when installed.
    static let strace: String? = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A run without a wireguard listener says so (`listening` null, no peers), and a config route
    /// answers 404 with the command that starts one: nothing secret, nor any key file made.
    @Test func aRunWithoutWireGuardShowsNoSecrets() throws {
        let run = try Run(wireGuard: nil)
        let status = try run.json("/api/wireguard")
        #expect(status["listening"] is NSNull && status["endpoint"] is NSNull && (status["peers"] as? [Any])?.isEmpty == true,
                "\(status)")
        let config = try run.get("/api/wireguard/peers/1/config")
        #expect(config.status == 404 && config.body.contains("devproxy run --mode wireguard@0.0.0.0:51820 --allow-remote")
                && !config.body.contains("PrivateKey"), "\(config)")
        #expect(!FileManager.default.fileExists(atPath: run.dir.file("ca/wireguard.json")))
    }

    /// A device whose tunnel comes up (wireguard-go with the config the API gives) is shown
    /// connected within a few seconds, its handshake seconds old, from the address its datagrams come from.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func aDeviceWhoseTunnelIsUpIsShownConnected() throws {
        let device = try WireGuardModeTests.Device()
        let run = try Run(wireGuard: device.hostAddress, extra: ["--allow-remote"])
        let before = try #require((try run.json("/api/wireguard"))["peers"] as? [[String: Any]])
        #expect(before.first?["connected"] as? Bool == false, "\(before)")
        let config = try run.get("/api/wireguard/peers/1/config")
        try device.connect(config.body, directory: run.dir)
        // Where its datagrams come from: the relay carrying them to the listener, on loopback.
        let address = device.hostAddress
        _ = try device.namespace.sh("ping -c 1 -W 5 10.0.0.1", timeout: 20)
        var peer: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            peer = ((try run.json("/api/wireguard"))["peers"] as? [[String: Any]])?.first ?? [:]
            if peer["connected"] as? Bool == true { break }
            usleep(200_000)
        }
        #expect(peer["connected"] as? Bool == true && (peer["last_handshake_seconds"] as? Double ?? 99) < 15
                && (peer["from"] as? String)?.hasPrefix("\(address):") == true, "\(peer) (device at \(address))")
    }

    /// The page follows the device live: open on the CA view while the device is away, it says
    /// `never connected`; once the device's tunnel comes up it says `connected · handshake N s ago`
    /// and where the device came from, without a reload (`--only live` of the browser script,
    /// which saves a screenshot once it saw `never connected`: the device connects after that).
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil && WebUIBrowser.missing == nil,
                   "needs root, network namespaces, wireguard-go, wg, chromium and playwright"))
    func thePanelShowsADeviceConnectedAsItsTunnelComesUp() throws {
        let device = try WireGuardModeTests.Device()
        let run = try Run(wireGuard: device.hostAddress, extra: ["--allow-remote"])
        let shots = TemporaryDirectory()
        let page = Mutex<Subprocess.Result?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let ui = try #require(run.proxy.webUI), proxy = "http://127.0.0.1:\(run.proxy.port)", folder = shots.path
        Thread {
            let result = try? WebUIBrowser.run(ui: ui, proxy: proxy, shots: folder, only: "live",
                                               script: "webui_wireguard.py", timeout: 90)
            page.withLock { $0 = result }
            finished.signal()
        }.start()
        let deadline = Date().addingTimeInterval(40)
        while !FileManager.default.fileExists(atPath: shots.file("wireguard-never-connected.png")) && Date() < deadline {
            usleep(100_000)
        }
        try device.connect(try run.get("/api/wireguard/peers/1/config").body, directory: run.dir)
        _ = try device.namespace.sh("ping -c 1 -W 5 10.0.0.1", timeout: 20)
        #expect(finished.wait(timeout: .now() + 100) == .success, "the browser script did not end")
        let result = try #require(page.withLock { $0 }, "the browser script did not run")
        #expect(WebUIBrowser.passed(result).isSuperset(of: ["live-never-connected", "live-connected", "no-page-errors"]),
                "\(result.output)")
        #expect(result.status == 0, "\(result.output)")
    }

    /// The CA view in headless Chromium (`Resources/webui_wireguard.py`): the devices table, the QR
    /// code loaded and read back by zbar as the config, Copy and Download give the config, the
    /// endpoint field rewrites the config and its QR code, a bad endpoint says why; no CSP violation.
    @Test(.enabled(if: WireGuardModeTests.unavailable == nil && WebUIBrowser.missing == nil,
                   "needs root, network namespaces, wireguard-go, wg, chromium and playwright"))
    func thePanelShowsTheConfigAndItsQRCode() throws {
        let run = try Run()
        let result = try run.proxy.runPage(script: "webui_wireguard.py", timeout: 120)
        #expect(WebUIBrowser.passed(result).isSuperset(of: [
            "devices-table", "qr-loaded", "qr-reads-as-config", "copy-gives-config", "download-gives-config",
            "endpoint-rewrites-config", "endpoint-rewrites-qr", "bad-endpoint-says-why", "no-page-errors"]), "\(result.output)")
        #expect(result.status == 0, "\(result.output)")
    }

    /// Without a wireguard listener the page says how to start one and shows no config.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func thePanelWithoutAListenerSaysHowToStartOne() throws {
        let run = try Run(wireGuard: nil)
        let result = try run.proxy.runPage(script: "webui_wireguard.py", timeout: 120)
        #expect(WebUIBrowser.passed(result).isSuperset(of: ["no-listener-hint", "no-page-errors"]), "\(result.output)")
        #expect(result.status == 0, "\(result.output)")
    }
}
