import CertAuthority
import Foundation

/// `devproxy browser` for Firefox (and Firefox ESR, Developer Edition, LibreWolf): a profile of
/// its own whose `user.js` sends every request to DevProxy and whose own NSS database trusts the
/// root, HTTP Toolkit's "intercept a fresh Firefox".
///
/// Firefox never reads the system's trust store on Linux, nor Chromium's `~/.pki/nssdb`: each
/// profile holds its own database (cert9.db), so the root goes there (`certutil`) and nowhere
/// else. Firefox has no option like Chromium's `--ignore-certificate-errors-spki-list`, and an
/// enterprise policy (`policies.json` beside the binary) would reach every profile of the
/// installation, so without certutil there is no way to trust the root in this profile alone.
public enum FirefoxLaunch {
    /// Names looked up on PATH when no Chromium is found, in order.
    public static let names = ["firefox", "firefox-esr"]
    /// Where macOS keeps Firefox; what each name on `--browser` stands for there.
    public static let macApplications = [
        "firefox": "/Applications/Firefox.app/Contents/MacOS/firefox",
        "firefox-developer-edition": "/Applications/Firefox Developer Edition.app/Contents/MacOS/firefox",
        "firefox-nightly": "/Applications/Firefox Nightly.app/Contents/MacOS/firefox",
        "librewolf": "/Applications/LibreWolf.app/Contents/MacOS/librewolf",
    ]

    /// Whether `browser` (a path) is a Firefox: its file is `firefox`, `firefox-esr`,
    /// `firefox-bin`, `firefox-developer-edition`, `librewolf`…, or it sits in a `Firefox….app`.
    public static func isFirefox(_ browser: String) -> Bool {
        let file = (browser as NSString).lastPathComponent.lowercased()
        return file.hasPrefix("firefox") || file.hasPrefix("librewolf") || browser.contains("/Firefox")
            || browser.contains("/LibreWolf.app/")
    }

    /// Whether `browser` is Ubuntu's Firefox snap: a path under /snap, `snap` itself (what
    /// /snap/bin/firefox links to), or the small script Ubuntu puts at /usr/bin/firefox to run it.
    /// A snap sees a /tmp of its own and files under the user's home only in
    /// `~/snap/firefox/`, so its profile must be made there.
    public static func isSnap(_ browser: String) -> Bool {
        let resolved = URL(fileURLWithPath: browser).resolvingSymlinksInPath().path
        if browser.hasPrefix("/snap/") || resolved.hasPrefix("/snap/") || resolved.hasSuffix("/bin/snap") {
            return true
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
              let size = attributes[.size] as? Int, size < 4096,
              let bytes = FileManager.default.contents(atPath: resolved), bytes.starts(with: Array("#!".utf8)) else {
            return false
        }
        return String(decoding: bytes, as: UTF8.self).contains("/snap/bin/")
    }

    /// Firefox's command-line options (before any the user adds and the URLs): the profile
    /// directory, no remote (a Firefox already running with another profile does not take the
    /// URLs), a new instance.
    public static func arguments(profile: String) -> [String] {
        ["-profile", profile, "-no-remote", "-new-instance"]
    }

    /// The preferences `user.js` sets, in order: `(name, value)` with the value as JavaScript
    /// (a quoted string, a number, true or false). Firefox reads `user.js` at every start and
    /// its values win over the profile's `prefs.js`.
    ///
    /// Names and values as Firefox's own sources define them: the proxy's in
    /// modules/libpref/init/all.js (`network.proxy.type` 1 is "manual", 0 direct, 5 system) and
    /// StaticPrefList.yaml (`network.proxy.allow_hijacking_localhost`); the rest as WebDriver's
    /// remote/shared/RecommendedPreferences.sys.mjs and geckodriver's prefs.rs set them for a
    /// browser under automation, plus browser/app/profile/firefox.js's own names for the welcome
    /// page (`browser.aboutwelcome.enabled`) and studies (`app.shield.optoutstudies.enabled`).
    /// - Parameter interceptLoopback: proxy localhost too; Firefox never does otherwise, whatever
    ///   `network.proxy.no_proxies_on` says (nsProtocolProxyService's "hijacking" check).
    public static func preferences(proxy: ProxyAddress, interceptLoopback: Bool) -> [(String, String)] {
        let host = quoted(proxy.host)
        var preferences: [(String, String)] = [
            // Manual proxy configuration: HTTP, and the same proxy for HTTPS (CONNECT).
            ("network.proxy.type", "1"),
            ("network.proxy.http", host), ("network.proxy.http_port", String(proxy.port)),
            ("network.proxy.ssl", host), ("network.proxy.ssl_port", String(proxy.port)),
            ("network.proxy.share_proxy_settings", "true"),
            // No first-run or welcome pages, no "what's new" page, no default-browser question.
            ("browser.aboutwelcome.enabled", "false"),
            ("startup.homepage_welcome_url", quoted("")),
            ("startup.homepage_welcome_url.additional", quoted("")),
            ("browser.startup.homepage_override.mstone", quoted("ignore")),
            ("browser.shell.checkDefaultBrowser", "false"),
            ("datareporting.policy.dataSubmissionPolicyBypassNotification", "true"),
            ("browser.sessionstore.resume_from_crash", "false"),
            // No telemetry, health reports, studies (Normandy, Shield), updates or region lookups:
            // what would otherwise fill the flow log with Mozilla's requests.
            ("datareporting.policy.dataSubmissionEnabled", "false"),
            ("datareporting.healthreport.uploadEnabled", "false"),
            ("toolkit.telemetry.enabled", "false"),
            ("toolkit.telemetry.unified", "false"),
            ("toolkit.telemetry.archive.enabled", "false"),
            ("app.normandy.enabled", "false"),
            ("app.normandy.api_url", quoted("")),
            ("app.shield.optoutstudies.enabled", "false"),
            ("app.update.auto", "false"),
            ("app.update.disabledForTesting", "true"),
            ("browser.region.network.url", quoted("")),
            ("browser.region.update.enabled", "false"),
            // No captive-portal or connectivity probes (detectportal.firefox.com, every few seconds).
            ("network.captive-portal-service.enabled", "false"),
            ("network.connectivity-service.enabled", "false"),
        ]
        if interceptLoopback {
            preferences += [("network.proxy.allow_hijacking_localhost", "true"),
                            ("network.proxy.no_proxies_on", quoted(""))]
        }
        return preferences
    }

    /// `user.js`: one `user_pref(name, value);` line per preference, after a comment saying who
    /// wrote it.
    public static func userJS(proxy: ProxyAddress, interceptLoopback: Bool) -> String {
        "// Written by devproxy browser: this profile's proxy is DevProxy at \(proxy.url).\n"
            + preferences(proxy: proxy, interceptLoopback: interceptLoopback)
            .map { "user_pref(\(quoted($0.0)), \($0.1));\n" }.joined()
    }

    /// Makes `profile` ready: its `user.js` (rewritten each run, so `--proxy` and
    /// `--intercept-loopback` take effect in a kept profile), and its NSS database trusting `root`
    /// for websites (made when missing; the root added when the database does not trust it yet).
    /// - Throws: `TrustStoreError` when certutil is missing or fails, or `user.js` cannot be written.
    public static func prepare(profile: String, root: Certificate, proxy: ProxyAddress,
                               interceptLoopback: Bool) throws {
        do {
            try SecureFile.write(Array(userJS(proxy: proxy, interceptLoopback: interceptLoopback).utf8),
                                 to: profile + "/user.js", mode: 0o600)
        } catch let error as CAError {
            throw TrustStoreError(.fileError, "cannot write \(profile)/user.js: \(error.reason)")
        }
        if NSSTrustStore.isDatabase(profile) {
            let store = NSSTrustStore(directory: profile, reader: "devproxy browser (Firefox)")
            if try store.holders(of: TrustRoot(certificate: root)).isEmpty {
                try BrowserLaunch.trust(root, inDatabase: profile, creating: false)
            }
        } else {
            try BrowserLaunch.trust(root, inDatabase: profile, creating: true)
        }
    }

    /// `value` as a JavaScript string literal.
    private static func quoted(_ value: String) -> String {
        var literal = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case _ where scalar.value < 0x20: literal += String(format: "\\u%04x", scalar.value)
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }
}
