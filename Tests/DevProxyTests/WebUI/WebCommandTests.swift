import Foundation
import TestSupport
import Testing

/// `devproxy run` serving the UI by default and `devproxy web FILE`, as a user starts them.
@Suite struct WebCommandTests {
    static var webLine: Regex<(Substring, Substring, Substring)> {
        #/^web ui: http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32})$/#
    }

    @Test func runPrintsOneWebUILineAndStoresTheSessionByDefault() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0"])
        let session = try #require(proxy.banner.split(separator: "\n").first { $0.hasPrefix("session: ") })
        #expect(session.contains("/sessions/session-"))
        let output = proxy.stop().stdout
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("web ui:") }
        #expect(lines.count == 1)
        #expect(lines.first.map { (try? Self.webLine.wholeMatch(in: String($0))) != nil } == true, "\(output)")
        #expect(FileManager.default.fileExists(atPath: String(session.dropFirst("session: ".count))))

        let quiet = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--no-web"])
        #expect(!quiet.stop().stdout.contains("web ui:"))
    }

    @Test func webOpensAFlowLogWithoutProxying() throws {
        let dir = TemporaryDirectory()
        let log = dir.write("flows.jsonl", [WebUIFlowsAPITests.line(id: "w1", host: "a.test"),
                                            WebUIFlowsAPITests.line(id: "w2", host: "b.test", status: 500)]
            .joined(separator: "\n") + "\n")
        let viewer = try DevProxyViewer(log)
        let flows = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(viewer.token)",
                                                viewer.base + "/api/flows?filter=~c%20500"])
        let json = try JSONSerialization.jsonObject(with: Data(flows.stdout.utf8)) as? [String: Any]
        #expect(json?["total"] as? Int == 1)
        let replay = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                                                 "-X", "POST", "-H", "Authorization: Bearer \(viewer.token)",
                                                 viewer.base + "/api/flows/w1/replay"])
        #expect(replay.stdout == "409")
        let info = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(viewer.token)",
                                               viewer.base + "/api/info"])
        #expect(info.stdout.contains("\"mode\":\"viewer\""))
    }
    /// `devproxy web SESSION` beside the `devproxy run` writing it follows the file: a flow the
    /// proxy records after the viewer opened reaches the viewer's live stream (it said "live" and
    /// never changed until a reload).
    @Test(.backstop) func aViewerFollowsTheSessionAProxyWrites() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let session = dir.file("s.sqlite")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", session, "--no-web", "--quiet"])
        let curl = ["-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)"]
        _ = try Subprocess.run("curl", curl + ["http://127.0.0.1:\(origin.port)/before-viewer"])
        let viewer = try DevProxyViewer(session)
        let script = """
            curl -sN --max-time 6 -H "Authorization: Bearer $1" "$2/api/events" > "$3" &
            sleep 1.5
            curl -sS --max-time 5 --proxy "http://127.0.0.1:$4" "http://127.0.0.1:$5/after-viewer" > /dev/null
            wait
            """
        let events = dir.file("events.txt")
        _ = try Subprocess.run("bash", ["-c", script, "bash", viewer.token, viewer.base, events, String(proxy.port),
                                        String(origin.port)], timeout: 20)
        #expect(dir.read("events.txt").contains("/after-viewer"), "\(dir.read("events.txt").prefix(600))")
        _ = proxy.stop()
    }

    /// Beside a proxy on loopback, `/api/info` offers the onboarding address without its QR code
    /// (`onboarding_loopback`), which a phone would open as itself; the CA tab says why.
    @Test func aLoopbackOnboardingAddressComesWithoutAQRCode() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        let info = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(token)", base + "/api/info"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(json["onboarding_loopback"] as? Bool == true && json["qr_svg_path"] == nil, "\(json)")
        #expect((json["onboarding_url"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
        _ = proxy.stop()
    }

    /// The UI beyond loopback says it is plain HTTP (its password and cookie cross the network as
    /// they are), where it said nothing.
    @Test func aRemoteWebUISaysItIsPlainHTTP() throws {
        let dir = TemporaryDirectory()
        let log = dir.write("flows.jsonl", WebUIFlowsAPITests.line(id: "w1", host: "a.test") + "\n")
        let password = dir.file("pw")
        _ = FileManager.default.createFile(atPath: password, contents: Data("correct horse battery\n".utf8),
                                           attributes: [.posixPermissions: 0o600])
        let result = try Subprocess.run("bash", ["-c", "timeout -k 1 3 \"$0\" web \"$1\" --web 0.0.0.0:0 --allow-remote "
                                                 + "--web-password-file \"$2\"; true", Subprocess.devproxy, log, password],
                                        timeout: 15)
        #expect(result.stdout.contains("web ui: http://127.0.0.1:"), "\(result.output)")
        #expect(result.stderr.contains("is plain HTTP: its password and session cookie cross the network unencrypted"),
                "\(result.output)")
    }
}

