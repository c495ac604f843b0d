import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy browser`: Debian's Chromium, headless, opened by `devproxy browser` through a real
/// `devproxy run`, loads an HTTPS page whose host only the proxy can resolve; the page is
/// DevProxy's leaf for it, trusted through the profile's own NSS database (no system store, no
/// user profile touched), and the request is the proxy's flow.
@Suite(.serialized) struct BrowserLaunchTests {
    static let haveChromium = BrowserLaunch.find("chromium", environment: ProcessInfo.processInfo.environment) != nil

    /// The proxy and the origin of `TransparentExecTests`.
    typealias Setup = TransparentExecTests.Setup

    /// The page loads through DevProxy with its root trusted in the profile alone: the DOM holds
    /// the origin's body, the flow's SNI is the origin's name, and the temporary profile is gone
    /// once the browser has closed.
    @Test(.enabled(if: haveChromium && BrowserLaunch.canMakeNSSDatabase, "needs chromium and certutil"))
    func chromiumLoadsAnHTTPSPageThroughDevProxy() throws {
        let setup = try Setup()
        let url = "https://origin.test:\(setup.origin.port)/cl?n=5"
        let run = try setup.browse(url)
        #expect(run.status == 0 && run.stdout.contains("hello"), "\(run.stdout.prefix(600))\n\(run.stderr.suffix(1500))")
        let said = run.stderr.split(separator: "\n").first { $0.hasPrefix("  profile ") } ?? ""
        let profile = String(said.dropFirst("  profile ".count).prefix { $0 != " " })
        #expect(!profile.isEmpty && !FileManager.default.fileExists(atPath: profile), "\(run.stderr.prefix(600))")
        #expect(!FileManager.default.fileExists(atPath: setup.dir.path + "/.pki"), "the user's own NSS database")
        // The profile's database is made with certutil alone: `devproxy trust install`'s copy of
        // the store for uninstalling (under XDG_STATE_HOME) was left behind by every run.
        #expect(!FileManager.default.fileExists(atPath: setup.dir.file("state/devproxy")),
                "a trust backup outside the profile")
        _ = setup.proxy.stop()
        let flows = try FlowLogReader.read(path: setup.dir.file("flows.jsonl")).flows
        #expect(flows.contains { $0.request?.url == url && $0.response?.status == 200 && $0.tls?.client?.sni == "origin.test" },
                "\(flows.map { $0.request?.url ?? $0.server.host ?? "?" })")
    }

    /// `--trust-by-key` (macOS's way, and Linux's without certutil): no NSS database, Chromium
    /// told the keys of the root and the intermediate instead, and the page loads the same.
    @Test(.enabled(if: haveChromium, "needs chromium"))
    func trustByKeyLoadsThePageToo() throws {
        let setup = try Setup()
        let profile = setup.dir.file("key-profile")
        let url = "https://origin.test:\(setup.origin.port)/cl?n=5"
        let run = try setup.browse(url, options: ["--trust-by-key", "--profile", profile])
        #expect(run.status == 0 && run.stdout.contains("hello"), "\(run.stderr.suffix(1500))")
        #expect(run.stderr.contains("--ignore-certificate-errors-spki-list"), "\(run.stderr.prefix(600))")
        #expect(!FileManager.default.fileExists(atPath: profile + "/home"), "no NSS database made")
        _ = setup.proxy.stop()
    }

    /// `--profile DIR` keeps the profile, and its NSS database, for the next run.
    @Test(.enabled(if: haveChromium && BrowserLaunch.canMakeNSSDatabase, "needs chromium and certutil"))
    func aProfileGivenIsKept() throws {
        let setup = try Setup()
        let profile = setup.dir.file("kept-profile")
        let run = try setup.browse("https://origin.test:\(setup.origin.port)/cl?n=5", options: ["--profile", profile])
        #expect(run.status == 0 && run.stdout.contains("hello"), "\(run.stderr.suffix(1500))")
        #expect(NSSTrustStore.isDatabase(profile + "/home/.pki/nssdb"))
        _ = setup.proxy.stop()
    }

    /// Chromium's options: its own profile, the proxy, the sandbox off as root (Chromium will not
    /// start otherwise), loopback only when asked, the keys only when given.
    @Test func theBrowserIsToldTheProxyAndItsProfile() {
        let proxy = ProxyAddress(host: "127.0.0.1", port: 9090)
        let plain = BrowserLaunch.arguments(profile: "/p", proxy: proxy, keys: [], interceptLoopback: false, asRoot: false)
        #expect(plain == ["--user-data-dir=/p", "--proxy-server=http://127.0.0.1:9090", "--no-first-run",
                          "--no-default-browser-check"])
        let all = BrowserLaunch.arguments(profile: "/p", proxy: proxy, keys: ["a", "b"], interceptLoopback: true, asRoot: true)
        #expect(all.suffix(3) == ["--proxy-bypass-list=<-loopback>", "--ignore-certificate-errors-spki-list=a,b",
                                  "--no-sandbox"])
    }

    /// The keys cover the root and the CA directory's intermediates, each once, as base64 SHA-256
    /// of the SubjectPublicKeyInfo (what `openssl x509 -pubkey | openssl pkey -pubin -outform der |
    /// openssl dgst -sha256 -binary | base64` prints).
    @Test func theKeysAreTheRootsAndTheIntermediates() throws {
        let setup = try Setup()
        let caDirectory = setup.dir.file("ca")
        let root = try #require(try Certificate.all(from: SecureFile.read(caDirectory + "/root.pem", what: "root")).first)
        let keys = BrowserLaunch.keys(root: root, caDirectory: caDirectory)
        #expect(keys.count == 2 && Set(keys).count == 2, "\(keys)")
        let openssl = try Subprocess.run("sh", ["-c", "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der"
                                                + " | openssl dgst -sha256 -binary | base64", "sh", caDirectory + "/root.pem"])
        #expect(keys.first == openssl.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(openssl.output)")
        _ = setup.proxy.stop()
    }

    /// No browser: one line saying what was looked for.
    @Test func withoutABrowserItSaysWhatItLookedFor() throws {
        let setup = try Setup()
        let run = try Subprocess.run(Subprocess.devproxy, ["browser", "--ca-dir", setup.dir.file("ca")],
                                     environment: ["PATH": setup.dir.path], timeout: 30)
        #expect(run.status == 1 && run.stderr.contains("error: no Chrome, Chromium, Edge or Brave found, nor Firefox")
                && run.stderr.contains("vivaldi, firefox, firefox-esr)"), "\(run.output)")
        let given = try Subprocess.run(Subprocess.devproxy, ["browser", "--browser", "/nonexistent/chrome"], timeout: 30)
        #expect(given.status == 1 && given.stderr.contains("--browser /nonexistent/chrome: no such program"), "\(given.output)")
        _ = setup.proxy.stop()
    }
}

extension TransparentExecTests.Setup {
    /// `devproxy browser` with headless Chromium printing the page's DOM.
    /// Loads `url` with `devproxy browser`, once more when Chromium gave up with
    /// `ERR_NETWORK_CHANGED`: a parallel test that adds a veth pair to this network namespace (the
    /// WireGuard device harness) makes Chromium drop what it is loading (CI saw it).
    func browse(_ url: String, options: [String] = []) throws -> Subprocess.Result {
        let first = try browseOnce(url, options: options)
        guard first.stderr.contains("ERR_NETWORK_CHANGED") else { return first }
        return try browseOnce(url, options: options)
    }

    private func browseOnce(_ url: String, options: [String]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, ["browser", "--browser", "chromium", "--ca-dir", dir.file("ca"),
                                                 "--proxy", "127.0.0.1:\(proxy.port)"] + options
                           + [url, "--", "--headless=new", "--dump-dom", "--disable-gpu"],
                           environment: ["HOME": dir.path, "XDG_STATE_HOME": dir.file("state")], timeout: 90)
    }
}
