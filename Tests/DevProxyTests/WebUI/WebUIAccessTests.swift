import DevProxy
import Foundation
import Synchronization
import TestSupport
import Testing
@testable import WebUI

/// The UI's access rules (docs/web-ui.md, "Security"), driven with curl against a real server.
@Suite struct WebUIAccessTests {
    @Test func withoutTheTokenEveryRouteIs401() throws {
        let ui = try WebUIHarness()
        for path in ["/", "/index.html", "/api/flows", "/api/flows/x", "/api/events", "/api/info", "/api/ca"] {
            let answer = try ui.request(path, auth: false)
            #expect(answer.status == 401, "\(path)")
            #expect(answer.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        }
        #expect(try ui.request("/api/clear", method: "POST", headers: ["X-DevProxy-CSRF: 1"], auth: false)
            .status == 401)
        #expect(try ui.request("/api/flows", headers: ["Authorization: Bearer 0123456789abcdef0123456789abcdef"],
                               auth: false).status == 401)
        #expect(try ui.request("/?token=wrong", auth: false).status == 401)
        // A browser opening the page without the token gets a page that says what to open (a line
        // of JSON read as broken); the API and scripts keep the JSON.
        let browser = try ui.request("/", headers: ["Accept: text/html,application/xhtml+xml"], auth: false)
        #expect(browser.status == 401 && browser.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(browser.text.contains("needs its token") && browser.text.contains("?token=") && !browser.text.contains("<script"))
        let api = try ui.request("/api/flows", headers: ["Accept: text/html"], auth: false)
        #expect(api.status == 401 && api.headers["content-type"] == "application/json")
    }

    @Test func theTokenOnceBecomesAnHttpOnlyStrictCookieAndTheURLDropsIt() throws {
        let ui = try WebUIHarness()
        let answer = try ui.request("/?token=\(ui.token)&x=1", auth: false)
        #expect(answer.status == 303)
        #expect(answer.headers["location"] == "/?x=1")
        let cookie = try #require(answer.headers["set-cookie"])
        #expect(cookie.hasPrefix("devproxy_token_\(ui.port)=\(ui.token);"))
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let name = "devproxy_token_\(ui.port)"
        let page = try ui.request("/", headers: ["Cookie: other=1; \(name)=\(ui.token)"], auth: false)
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(try ui.request("/api/flows", headers: ["Cookie: \(name)=nottoken"], auth: false).status == 401)
    }

    @Test func aForeignHostIs421EvenWithTheToken() throws {
        let ui = try WebUIHarness()
        #expect(try ui.request("/api/flows", headers: ["Host: evil.test:\(ui.port)"]).status == 421)
        #expect(try ui.request("/api/flows", headers: ["Host: 127.0.0.1:1"]).status == 421)
        #expect(try ui.request("/api/flows", headers: ["Host: localhost:\(ui.port)"]).status == 200)
        #expect(try ui.request("/api/flows", headers: ["Host: [::1]:\(ui.port)"]).status == 200)
        #expect(try ui.request("/api/flows").status == 200)
    }

    @Test func stateChangesNeedTheBearerOrTheCustomHeaderAndASameOriginRequest() throws {
        let ui = try WebUIHarness()
        let cookie = "Cookie: devproxy_token_\(ui.port)=\(ui.token)"
        // A cookie alone (what a forged cross-site form would carry) is not enough.
        #expect(try ui.request("/api/clear", method: "POST", headers: [cookie], auth: false).status == 403)
        #expect(try ui.request("/api/clear", method: "POST", headers: [cookie, "X-DevProxy-CSRF: 1"], auth: false)
            .status == 200)
        #expect(try ui.request("/api/clear", method: "POST").status == 200)
        let crossSite = try ui.request("/api/clear", method: "POST", headers: ["Sec-Fetch-Site: cross-site"])
        #expect(crossSite.status == 403)
        #expect(crossSite.json["error"] as? String
                == "refused: Sec-Fetch-Site is cross-site; the UI only takes changes from its own pages")
        #expect(try ui.request("/api/clear", method: "POST", headers: ["Sec-Fetch-Site: same-site"]).status == 403)
        #expect(try ui.request("/api/clear", method: "POST", headers: ["Origin: http://evil.test"]).status == 403)
        #expect(try ui.request("/api/clear", method: "POST", headers: ["Origin: http://127.0.0.1:\(ui.port)",
                                                                      "Sec-Fetch-Site: same-origin"]).status == 200)
    }

    @Test func everyAnswerCarriesTheCSPAndNosniff() throws {
        let ui = try WebUIHarness()
        for answer in [try ui.request("/"), try ui.request("/api/flows"), try ui.request("/api/flows", auth: false)] {
            #expect(answer.headers["content-security-policy"] == WebConnection.contentSecurityPolicy)
            #expect(answer.headers["x-content-type-options"] == "nosniff")
            #expect(answer.headers["referrer-policy"] == "no-referrer")
        }
        #expect(WebConnection.contentSecurityPolicy.contains("script-src 'self';"))
        #expect(!WebConnection.contentSecurityPolicy.contains("unsafe"))
    }

    @Test func staticFilesRevalidateWithTheirETag() throws {
        let ui = try WebUIHarness()
        let first = try ui.request("/")
        #expect(first.status == 200)
        #expect(first.headers["cache-control"] == "no-cache")
        let etag = try #require(first.headers["etag"])
        #expect(first.body == WebAssets.all["index.html"]?.bytes)
        #expect(try ui.request("/", headers: ["If-None-Match: \(etag)"]).status == 304)
        #expect(try ui.request("/", headers: ["If-None-Match: \"other\""]).status == 200)
        #expect(try ui.request("/no-such-file.js").status == 404)
    }

    /// The build-tool plugin embeds exactly the files of Sources/WebUI/Assets, byte for byte.
    @Test func theEmbeddedAssetsAreTheFilesInTheRepository() throws {
        let assets = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Sources/WebUI/Assets").standardizedFileURL
        let walker = try #require(FileManager.default.enumerator(atPath: assets.path))
        var onDisk: [String: [UInt8]] = [:]
        for case let name as String in walker where !name.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
            var isDirectory: ObjCBool = false
            let path = assets.path + "/" + name
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                onDisk[name] = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
            }
        }
        #expect(onDisk["index.html"] != nil)
        #expect(Set(onDisk.keys) == Set(WebAssets.all.keys))
        for (name, bytes) in onDisk { #expect(WebAssets.all[name]?.bytes == bytes, "\(name)") }
    }

    @Test func badInputGetsAClear4xxAndTheServerKeepsServing() throws {
        let ui = try WebUIHarness()
        #expect(try ui.request("/api/flows", method: "DELETE").status == 405)
        #expect(try ui.request("/api/nothing").status == 404)
        let long = try ui.request("/api/flows?filter=" + String(repeating: "a", count: 9000))
        #expect(long.status == 414)
        let big = try ui.request("/api/replay", method: "POST", headers: ["Content-Length: 99999999"], body: "x")
        #expect(big.status == 413)
        #expect(try ui.request("/api/info").status == 200)
    }

    /// Connections that send nothing cannot lock the UI: with every slot held by one, a new
    /// connection takes the place of the one that has waited longest without a request, and a
    /// connection that sends nothing is answered 408 and closed at the header timeout (it was kept
    /// for the minute of the keep-alive timeout, and 64 of them answered everyone 503, token or not).
    @Test func silentConnectionsCannotLockTheUIOut() throws {
        let ui = try WebUIHarness(web: { $0.maxConnections = 8; $0.headerTimeout = 2 })
        var silent: [Socket] = []
        for _ in 0..<8 { silent.append(try Socket.connect(host: "127.0.0.1", port: ui.port, timeout: 5)) }
        defer { silent.forEach { $0.close() } }
        Thread.sleep(forTimeInterval: 0.3)
        for _ in 0..<3 { #expect(try ui.request("/api/info").status == 200) }
        // The oldest silent connections made room (closed: a read sees the end at once).
        silent[0].setTimeout(5)
        var byte = [UInt8](repeating: 0, count: 64)
        let evicted = try byte.withUnsafeMutableBytes { try silent[0].read(into: $0) }
        #expect(evicted == 0)
        // One that stays silent is told why and closed at the header timeout, not kept a minute.
        let late = try Socket.connect(host: "127.0.0.1", port: ui.port, timeout: 5)
        defer { late.close() }
        late.setTimeout(10)
        let clock = ContinuousClock()
        let start = clock.now
        var answer: [UInt8] = []
        while true {
            let count = try byte.withUnsafeMutableBytes { try late.read(into: $0) }
            if count == 0 { break }
            answer += byte.prefix(count)
        }
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 408"), "\(text)")
        #expect(text.contains("no request within 2 s"), "\(text)")
        #expect(clock.now - start < .seconds(6))
    }

    @Test func thePasswordWorksByBasicAuthOrTheLoginFormAndGivesTheCookie() throws {
        let ui = try WebUIHarness(password: "correct horse")
        let basic = "Authorization: Basic " + Data("anyone:correct horse".utf8).base64EncodedString()
        let viaBasic = try ui.request("/api/info", headers: [basic], auth: false)
        #expect(viaBasic.status == 200)
        #expect(viaBasic.headers["set-cookie"]?.hasPrefix("devproxy_token_\(ui.port)=\(ui.token);") == true)
        let wrong = "Authorization: Basic " + Data("anyone:wrong".utf8).base64EncodedString()
        #expect(try ui.request("/api/info", headers: [wrong], auth: false).status == 401)
        #expect(try ui.request("/login", auth: false).status == 200)
        let login = try ui.request("/login", method: "POST", body: "password=correct+horse", auth: false)
        #expect(login.status == 303)
        #expect(login.headers["set-cookie"]?.contains("HttpOnly") == true)
        #expect(try ui.request("/login", method: "POST", body: "password=nope", auth: false).status == 401)
        #expect(try ui.request("/login", method: "POST", headers: ["Origin: http://evil.test"],
                               body: "password=correct+horse", auth: false).status == 403)
    }

    /// The login form signs in from a real browser: under the UI's `Referrer-Policy: no-referrer`
    /// Chromium posted it with `Origin: null`, which was refused, right password or not.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs /usr/bin/chromium and playwright (scripts/test installs them)"))
    func theLoginFormSignsInFromChromium() throws {
        let ui = try WebUIHarness(password: "correct horse")
        let script = """
            import sys
            from playwright.sync_api import sync_playwright
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
                page = browser.new_page()
                page.goto("\(ui.base)/login")
                page.fill("input[name=password]", "correct horse")
                page.click("button")
                page.wait_for_selector("flow-list", timeout=10000)
                print(page.url)
                browser.close()
            """
        let run = try Subprocess.run("python3", ["-c", script], timeout: 60)
        #expect(run.status == 0 && run.stdout.hasPrefix(ui.base + "/"), "\(run.output)")
    }

    @Test func capturedMarkupNeverLeavesTheAPIAsMarkup() throws {
        let ui = try WebUIHarness()
        ui.add(WebUIFlowsAPITests.line(id: "x1", host: "evil.test", path: "/<script>alert(1)</script>",
                                       requestHeaders: #",["X-<img src=x onerror=alert(1)>","javascript:alert(1)"]"#))
        let list = try ui.request("/api/flows")
        #expect(list.headers["content-type"] == "application/json")
        #expect(!list.text.contains("<script>"))
        let summary = (list.json["flows"] as? [[String: Any]])?.first
        #expect(summary?["url"] as? String == "https://evil.test/<script>alert(1)</script>")
    }

    @Test func aRemoteAddressNeedsAllowRemoteAndAPassword() throws {
        var configuration = WebUIConfiguration()
        configuration.host = "0.0.0.0"
        configuration.port = 0
        #expect(throws: (any Error).self) { try WebUI.bind(configuration) }
        configuration.allowRemote = true
        #expect(throws: (any Error).self) { try WebUI.bind(configuration) }
        // An empty password is none (`devproxy web` took an empty --web-password-file as one).
        configuration.password = ""
        #expect(throws: (any Error).self) { try WebUI.bind(configuration) }
        configuration.password = "secret"
        _ = try WebUI.bind(configuration)
    }

    /// A file with no flow in it is an error, not an empty web UI that serves until Ctrl-C.
    @Test func webRefusesAFileWithNoFlow() throws {
        let directory = TemporaryDirectory()
        let path = directory.write("notes.txt", "root:x:0:0\nnot a flow\n")
        let result = try Subprocess.run(Subprocess.devproxy, ["web", path, "--web", "127.0.0.1:0"], timeout: 10)
        #expect(result.status == 1)
        // Its warnings name the line as `devproxy har`'s do (they read `PATH 1: …`).
        #expect(result.stderr.contains("warning: \(path) line 1: not valid JSON\n"), "\(result.stderr)")
        #expect(result.stderr.hasSuffix("error: \(path) holds no flow: give a saved session, a flow log written with "
                                        + "--log, or a HAR file\n"), "\(result.stderr)")
        #expect(!result.stdout.contains("web ui:"))
    }

    /// A file that cannot be read says why, once: "cannot read PATH" had no reason for a missing
    /// file, and a directory read "cannot open PATH: cannot read PATH: it is a directory".
    @Test func webSaysWhyItCannotReadAFile() throws {
        let directory = TemporaryDirectory()
        for (path, reason) in [(directory.file("absent.har"), "no such file"), (directory.path, "it is a directory")] {
            let result = try Subprocess.run(Subprocess.devproxy, ["web", path, "--web", "127.0.0.1:0"], timeout: 10)
            #expect(result.status == 1)
            #expect(result.stderr == "error: cannot read \(path): \(reason)\n", "\(result.stderr)")
        }
    }

    /// Guessing the password is slow and bounded: a wrong one by HTTP Basic waits half a second as
    /// the form's does (it was answered at once: 4,500-9,500 guesses a second), and after 20 wrong
    /// ones in a minute, from any number of connections, no password is checked (429 with
    /// Retry-After), the right one neither; the token still works.
    @Test func wrongPasswordsAreSlowAndCounted() throws {
        let ui = try WebUIHarness(password: "correct horse battery")
        @Sendable func basic(_ password: String) -> String {
            "Authorization: Basic " + Data("u:\(password)".utf8).base64EncodedString()
        }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try ui.request("/api/info", headers: [basic("wrong 0")], auth: false).status == 401)
        #expect(clock.now - start >= .milliseconds(450))
        let statuses = Mutex<[Int]>([])
        let threads = (1...19).map { index in
            Thread { [ui] in
                let status = (try? ui.request("/api/info", headers: [basic("wrong \(index)")], auth: false).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
        }
        threads.forEach { $0.start() }
        while statuses.withLock({ $0.count }) < 19 { Thread.sleep(forTimeInterval: 0.05) }
        #expect(statuses.withLock { $0 } == Array(repeating: 401, count: 19))
        let refused = try ui.request("/api/info", headers: [basic("correct horse battery")], auth: false)
        #expect(refused.status == 429, "\(refused.text)")
        #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 > 0)
        #expect(refused.text.contains("20 wrong passwords in the last minute"), "\(refused.text)")
        #expect(try ui.request("/login", method: "POST", body: "password=correct+horse+battery", auth: false).status == 429)
        #expect(try ui.request("/api/info").status == 200)
    }

    /// A password too short to stand guessing from the network is refused before anything serves.
    @Test func webRefusesAShortPassword() throws {
        let result = try Self.webWithPasswordFile("hunter2\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains("holds a 7-character password; the web UI, reachable from the network, needs at least 12"),
                "\(result.stderr)")
    }

    /// `devproxy web` refuses an empty password file as `run` does, before it serves anything.
    @Test func webRefusesAnEmptyPasswordFile() throws {
        let result = try Self.webWithPasswordFile("\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains("is empty; put the web UI's password in it"), "\(result.stderr)")
        #expect(!result.stdout.contains("web ui:"))
    }

    /// `devproxy web` of an empty flow log beyond loopback, with a password file holding `contents`.
    private static func webWithPasswordFile(_ contents: String) throws -> Subprocess.Result {
        let directory = TemporaryDirectory()
        let session = directory.write("s.jsonl", "")
        let password = directory.file("pw")
        _ = FileManager.default.createFile(atPath: password, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        return try Subprocess.run(Subprocess.devproxy, ["web", session, "--web", "0.0.0.0:0", "--allow-remote",
                                                        "--web-password-file", password], timeout: 10)
    }
}
