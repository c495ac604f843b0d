import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy browser` with Firefox: Debian's Firefox ESR, headless, taking a screenshot of an
/// HTTPS page whose host only the proxy can resolve, through a real `devproxy run`; the root is
/// trusted in the profile's own NSS database alone, and without that trust the origin never sees
/// the request. Every Firefox process the tests start is gone when each test ends.
@Suite(.serialized) struct FirefoxLaunchTests {
    static let firefox = BrowserLaunch.find("firefox-esr", environment: ProcessInfo.processInfo.environment)
    static let canRun = firefox != nil && BrowserLaunch.canMakeNSSDatabase

    typealias Setup = TransparentExecTests.Setup

    /// The page loads: Firefox wrote its screenshot, the origin got the request, the proxy's flow
    /// log has it (SNI the origin's name, HTTP/2 or HTTP/1.1 as Firefox spoke it), and the
    /// temporary profile, HOME and `~/.local/state` hold nothing of it afterwards. As root (CI),
    /// `XAUTHORITY` names a file `nobody` owns, which Firefox refuses as root unless headless.
    @Test(.enabled(if: canRun, "needs firefox-esr and certutil"))
    func firefoxLoadsAnHTTPSPageThroughDevProxy() throws {
        let setup = try Setup()
        var environment: [String: String] = [:]
        if geteuid() == 0 {
            let cookie = setup.dir.write("xauthority", "")
            #expect(chown(cookie, 65534, 65534) == 0)
            environment["XAUTHORITY"] = cookie
        }
        let url = setup.url("/cl?n=5&firefox=1")
        let shot = setup.dir.file("page.png")
        let run = try setup.firefox(url, extra: ["-headless", "-screenshot", shot], environment: environment)
        #expect(run.status == 0, "\(run.output.suffix(1500))")
        #expect(run.stderr.contains("devproxy browser: \(Self.firefox ?? "")")
                && run.stderr.contains("in the profile's own NSS database"), "\(run.stderr.prefix(800))")
        let png = FileManager.default.contents(atPath: shot).map { [UInt8]($0.prefix(8)) }
        #expect(png == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "no screenshot: \(run.output.suffix(800))")
        #expect(try setup.originRequests().contains("GET /cl?n=5&firefox=1 "))
        let said = run.stderr.split(separator: "\n").first { $0.hasPrefix("  profile ") } ?? ""
        let profile = String(said.dropFirst("  profile ".count).prefix { $0 != " " })
        #expect(!profile.isEmpty && !FileManager.default.fileExists(atPath: profile), "\(run.stderr.prefix(600))")
        for left in [".mozilla", ".cache/mozilla", ".pki", "state/devproxy"] {
            #expect(!FileManager.default.fileExists(atPath: setup.dir.file(left)), "\(left) outside the profile")
        }
        let flows = try setup.flows()
        let flow = flows.first { $0.request?.url == url }
        #expect(flow?.response?.status == 200 && flow?.tls?.client?.sni == "origin.test",
                "\(flows.map { $0.request?.url ?? $0.server.host ?? "?" })")
        let version = flow?.request?.httpVersion ?? "none"
        #expect(["HTTP/2", "HTTP/1.1"].contains(version), "\(version)")
    }

    /// The negative: the same Firefox, options and `user.js`, in a profile whose NSS database
    /// does not hold the root, refuses DevProxy's certificate (the proxy's flow says
    /// `client_rejected_certificate`, unknown_ca) and the origin never gets the request. Firefox
    /// then shows its error page and never takes the screenshot, so it is stopped after 15 s.
    @Test(.enabled(if: canRun, "needs firefox-esr and certutil"))
    func withoutTheProfilesTrustThePageDoesNotLoad() throws {
        let setup = try Setup()
        let profile = setup.dir.file("tmp/untrusting")
        try FileManager.default.createDirectory(atPath: profile + "/home", withIntermediateDirectories: true)
        let made = try Subprocess.run("certutil", ["-N", "-d", "sql:" + profile, "--empty-password"], timeout: 30)
        #expect(made.status == 0, "\(made.output)")
        let proxy = ProxyAddress(host: "127.0.0.1", port: setup.proxy.port)
        _ = setup.dir.write("tmp/untrusting/user.js", FirefoxLaunch.userJS(proxy: proxy, interceptLoopback: false))
        let url = setup.url("/cl?n=5&untrusted=1")
        _ = try setup.stoppingFirefox {
            try Subprocess.run("timeout", ["-s", "KILL", "15", Self.firefox ?? "firefox-esr"]
                               + FirefoxLaunch.arguments(profile: profile)
                               + ["-headless", "-screenshot", setup.dir.file("page.png"), url],
                               environment: ["HOME": profile + "/home", "XAUTHORITY": ""], timeout: 60)
        }
        #expect(!FileManager.default.fileExists(atPath: setup.dir.file("page.png")))
        let seen = try setup.originRequests()
        #expect(seen.contains("GET /requests") && !seen.contains("untrusted=1"), "\(seen)")
        let flows = try setup.flows()
        #expect(!flows.contains { $0.request?.url == url }, "the request got through")
        #expect(flows.contains { $0.tls?.client?.sni == "origin.test"
                                 && $0.error?.kind == "client_rejected_certificate" },
                "\(flows.map { "\($0.server.host ?? "?") \($0.error?.kind ?? "-")" })")
    }

    /// `--intercept-loopback`: Firefox sends `localhost` through DevProxy too (it never does by
    /// itself): the proxy has a flow for localhost at the origin's port. The origin's certificate
    /// names origin.test only, so DevProxy answers with its own error page, which Firefox trusts,
    /// loads and screenshots.
    @Test(.enabled(if: canRun, "needs firefox-esr and certutil"))
    func interceptLoopbackSendsLocalhostThroughDevProxy() throws {
        let setup = try Setup()
        let url = "https://localhost:\(setup.origin.port)/cl?n=5&loopback=1"
        let run = try setup.firefox(url, extra: ["-headless", "-screenshot", setup.dir.file("page.png")],
                                    options: ["--intercept-loopback"])
        #expect(run.status == 0, "\(run.output.suffix(1200))")
        let flows = try setup.flows()
        #expect(flows.contains { $0.request?.url == url }, "\(flows.map { $0.request?.url ?? $0.server.host ?? "?" })")
    }

    /// Auto-detection: with no Chromium on PATH, Firefox ESR is the one `devproxy browser` runs.
    @Test(.enabled(if: canRun, "needs firefox-esr and certutil"))
    func withoutChromiumFirefoxIsFound() throws {
        let setup = try Setup()
        let bin = setup.dir.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/firefox-esr",
                                                   withDestinationPath: Self.firefox ?? "")
        let url = setup.url("/cl?n=5&found=1")
        let run = try setup.firefox(url, browser: nil, extra: ["-headless", "-screenshot", setup.dir.file("page.png")],
                                    environment: ["PATH": bin])
        #expect(run.status == 0 && run.stderr.contains("devproxy browser: \(bin)/firefox-esr through"),
                "\(run.output.suffix(1200))")
        #expect(try setup.originRequests().contains("GET /cl?n=5&found=1 "))
        _ = setup.proxy.stop()
    }

    /// Ubuntu's Firefox is a snap (its /usr/bin/firefox a script running /snap/bin/firefox),
    /// which has a /tmp of its own and sees only `~/snap/firefox` of HOME: the fresh profile goes
    /// under `~/snap/firefox/common`, with its user.js, and is removed afterwards. A stand-in for
    /// the script prints the profile it was given and that profile's proxy.
    @Test(.enabled(if: BrowserLaunch.canMakeNSSDatabase, "needs certutil"))
    func theFirefoxSnapGetsItsProfileWhereItCanReadIt() throws {
        let setup = try Setup()
        let bin = setup.dir.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let script = setup.dir.write("bin/firefox", "#!/bin/sh\n# Ubuntu's: exec /snap/bin/firefox \"$@\"\n"
                                     + "echo \"profile=$2\"; grep network.proxy.ssl_port \"$2/user.js\"\n")
        #expect(chmod(script, 0o755) == 0)
        #expect(FirefoxLaunch.isSnap(script) && FirefoxLaunch.isSnap("/snap/bin/firefox"))
        #expect(!FirefoxLaunch.isSnap(Self.firefox ?? "/usr/bin/firefox-esr"))
        let run = try setup.firefox(setup.url("/"), browser: script, extra: [])
        let common = setup.dir.file("snap/firefox/common")
        #expect(run.status == 0 && run.stdout.contains("profile=\(common)/devproxy-browser-")
                && run.stdout.contains("user_pref(\"network.proxy.ssl_port\", \(setup.proxy.port));"), "\(run.output)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: common)) == [], "the profile is removed")
        let elsewhere = try setup.firefox(setup.url("/"), browser: script, extra: [],
                                          options: ["--profile", setup.dir.file("elsewhere")])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("the Firefox snap cannot read it")
                && !elsewhere.stdout.contains("profile="), "\(elsewhere.output)")
        _ = setup.proxy.stop()
    }

    /// `--trust-by-key` has no Firefox equivalent: one `error:` line, exit 2, no profile made.
    @Test(.enabled(if: canRun, "needs firefox-esr and certutil"))
    func trustByKeyIsRefusedForFirefox() throws {
        let setup = try Setup()
        let profile = setup.dir.file("never-made")
        let run = try setup.firefox(setup.url("/"), extra: ["-headless"],
                                    options: ["--trust-by-key", "--profile", profile])
        let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(run.status == 2 && errors.count == 1 && errors[0].contains("--trust-by-key")
                && errors[0].contains("Firefox has no such option"), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: profile))
        _ = setup.proxy.stop()
    }

    /// As root, with a window and another user's `XAUTHORITY`, Firefox would print its own
    /// refusal and exit: devproxy says what to do instead, before Firefox starts.
    @Test(.enabled(if: canRun && geteuid() == 0, "needs firefox-esr, certutil and root"))
    func asRootAnotherUsersDisplayIsRefused() throws {
        let setup = try Setup()
        let cookie = setup.dir.write("xauthority", "")
        #expect(chown(cookie, 65534, 65534) == 0)
        let run = try setup.firefox(setup.url("/"), extra: [], environment: ["XAUTHORITY": cookie, "DISPLAY": ":99"])
        #expect(run.status == 1
                && run.stderr.contains("error: Firefox will not run as root in another user's X session")
                && run.stderr.contains("-- -headless"), "\(run.output)")
        _ = setup.proxy.stop()
    }

    /// A kept profile: run twice, `user.js` follows the second `--proxy` and the database holds
    /// the root once, trusted for websites.
    @Test(.enabled(if: BrowserLaunch.canMakeNSSDatabase, "needs certutil"))
    func aKeptProfileIsPreparedOnceAndFollowsTheProxy() throws {
        let dir = TemporaryDirectory()
        let store = CAStore(directory: dir.file("ca"))
        try store.initialize(name: "Firefox Test Root", keyType: .p256, days: 2, passphrase: nil)
        let pem = try SecureFile.read(store.rootCertificatePath, what: "root")
        let root = try #require(try Certificate.all(from: pem).first)
        let profile = dir.file("profile")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        try FirefoxLaunch.prepare(profile: profile, root: root, proxy: ProxyAddress(host: "127.0.0.1", port: 8080),
                                  interceptLoopback: false)
        try FirefoxLaunch.prepare(profile: profile, root: root, proxy: ProxyAddress(host: "127.0.0.1", port: 9191),
                                  interceptLoopback: true)
        let userJS = try String(contentsOfFile: profile + "/user.js", encoding: .utf8)
        #expect(userJS.contains("user_pref(\"network.proxy.ssl_port\", 9191);") && !userJS.contains("8080"))
        let listed = try Subprocess.run("certutil", ["-L", "-d", "sql:" + profile], timeout: 30)
        let entries = listed.stdout.split(separator: "\n").filter { $0.hasPrefix("devproxy-") }
        #expect(entries.count == 1 && entries.first?.contains(" C,,") == true, "\(listed.output)")
    }

    /// `user.js`: the manual proxy for HTTP and HTTPS, no first-run pages, no default-browser
    /// check, no telemetry; localhost through the proxy only when asked.
    @Test func theProfileIsToldTheProxy() {
        let proxy = ProxyAddress(host: "127.0.0.1", port: 9090)
        let plain = FirefoxLaunch.userJS(proxy: proxy, interceptLoopback: false)
        for line in ["user_pref(\"network.proxy.type\", 1);", "user_pref(\"network.proxy.http\", \"127.0.0.1\");",
                     "user_pref(\"network.proxy.http_port\", 9090);",
                     "user_pref(\"network.proxy.ssl\", \"127.0.0.1\");", "user_pref(\"network.proxy.ssl_port\", 9090);",
                     "user_pref(\"network.proxy.share_proxy_settings\", true);",
                     "user_pref(\"browser.shell.checkDefaultBrowser\", false);",
                     "user_pref(\"browser.aboutwelcome.enabled\", false);",
                     "user_pref(\"datareporting.policy.dataSubmissionEnabled\", false);",
                     "user_pref(\"toolkit.telemetry.enabled\", false);",
                     "user_pref(\"app.normandy.enabled\", false);"] {
            #expect(plain.contains(line + "\n"), "\(line)")
        }
        #expect(!plain.contains("allow_hijacking_localhost") && !plain.contains("no_proxies_on"))
        let loopback = FirefoxLaunch.userJS(proxy: proxy, interceptLoopback: true)
        #expect(loopback.contains("user_pref(\"network.proxy.allow_hijacking_localhost\", true);\n")
                && loopback.contains("user_pref(\"network.proxy.no_proxies_on\", \"\");\n"))
        #expect(FirefoxLaunch.arguments(profile: "/p") == ["-profile", "/p", "-no-remote", "-new-instance"])
        for firefox in ["/usr/bin/firefox", "/usr/bin/firefox-esr", "/opt/librewolf/librewolf",
                        "/Applications/Firefox Developer Edition.app/Contents/MacOS/firefox"] {
            #expect(FirefoxLaunch.isFirefox(firefox), "\(firefox)")
        }
        #expect(!FirefoxLaunch.isFirefox("/usr/bin/chromium") && !FirefoxLaunch.isFirefox("/usr/bin/google-chrome"))
    }
}

extension TransparentExecTests.Setup {
    /// `devproxy browser --browser BROWSER URL -- EXTRA` against this setup's proxy, with HOME,
    /// TMPDIR (where the temporary profile goes) and XDG_STATE_HOME inside the test's directory;
    /// any Firefox left running with a profile under it is stopped.
    func firefox(_ url: String, browser: String? = "firefox-esr", extra: [String], options: [String] = [],
                 environment: [String: String] = [:]) throws -> Subprocess.Result {
        let tmp = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        // SIGKILL after 60 s: devproxy waits for its browser, and a Firefox that never exits would
        // hold the test forever.
        return try stoppingFirefox {
            try Subprocess.run("/usr/bin/timeout", ["-s", "KILL", "60", Subprocess.devproxy, "browser"]
                               + (browser.map { ["--browser", $0] } ?? [])
                               + ["--ca-dir", dir.file("ca"), "--proxy", "127.0.0.1:\(proxy.port)"] + options
                               + [url, "--"] + extra,
                               environment: ["HOME": dir.path, "TMPDIR": tmp, "XDG_STATE_HOME": dir.file("state"),
                                             "XDG_CACHE_HOME": "", "MOZ_HEADLESS": ""].merging(environment) { $1 },
                               timeout: 90)
        }
    }

    /// Runs `body`, then stops (SIGKILL, by id) every Firefox or `devproxy browser` whose command
    /// line names this test's directory, and every process under them: what outlived `body`
    /// (a Firefox that never exited, its content processes).
    /// - Returns: what `body` returned; fails the test if any such process was left.
    func stoppingFirefox(_ body: () throws -> Subprocess.Result) throws -> Subprocess.Result {
        defer {
            // A killed Firefox's content processes notice within a second or two and exit.
            let deadline = Date().addingTimeInterval(10)
            var left = leftBehind()
            while !left.isEmpty && Date() < deadline {
                usleep(100_000)
                left = leftBehind()
            }
            for pid in left { kill(pid, SIGKILL) }
            #expect(left.isEmpty, "processes left running: \(left)")
        }
        return try body()
    }

    /// Firefox and `devproxy browser` processes naming this test's directory, and their descendants.
    private func leftBehind() -> [pid_t] {
        var parents: [pid_t: pid_t] = [:]
        var started: Set<pid_t> = []
        for pid in ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap({ Int32($0) }) {
            guard pid != getpid(), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[pid] = parent }
            guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
            let command = String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if command.contains(dir.path) && (command.contains("firefox") || command.contains("devproxy browser")) {
                started.insert(pid)
            }
        }
        func descends(_ pid: pid_t) -> Bool {
            var current = pid
            for _ in 0..<64 {
                if started.contains(current) { return true }
                guard let parent = parents[current], parent > 1 else { return false }
                current = parent
            }
            return false
        }
        return parents.keys.filter(descends).sorted()
    }

    /// The request lines the origin received (`origin.py`'s `/requests`, asked directly).
    func originRequests() throws -> String {
        try Subprocess.run("curl", ["-sS", "--cacert", origin.caPath, "--noproxy", "*", "--resolve",
                                    "origin.test:\(origin.port):127.0.0.1", url("/requests")], timeout: 20).stdout
    }
}
