import CertAuthority
import DevProxy
import Foundation

/// `devproxy browser [URL…]`: a fresh Chrome, Chromium, Edge or Brave, or Firefox, whose every
/// request goes through DevProxy and which trusts its root, in a profile of its own
/// (`BrowserLaunch`, `FirefoxLaunch`).
enum BrowserCommand {
    static let usage = """
    devproxy browser: open a fresh Chrome, Chromium, Edge, Brave or Firefox through DevProxy, trusting its root.

      devproxy browser                                 a new window, its own profile, removed when it closes
      devproxy browser https://app.acme.dev/            opening a page
      devproxy browser --browser firefox               Firefox (also firefox-esr, firefox-developer-edition, librewolf)
      devproxy browser --profile ~/.devproxy-chrome     a profile kept between runs (logins, extensions)
      devproxy browser -- --auto-open-devtools-for-tabs  options after -- go to the browser
      devproxy browser --browser firefox -- -devtools   (Firefox's own options)

    Options: --proxy HOST:PORT (default 127.0.0.1:8080)  --ca-dir DIR  --root FILE  --browser PATH|NAME (default the
    first of google-chrome, chromium, microsoft-edge, brave-browser, vivaldi found, else firefox, firefox-esr)
    --profile DIR  --intercept-loopback (localhost through DevProxy too)  --trust-by-key (Chromium only).
    Nothing outside the profile is changed: not the system's trust store, not your everyday profile.
    Chromium: on Linux the root is trusted in the profile's own NSS database (certutil, libnss3-tools); elsewhere,
    without certutil, or with --trust-by-key, by the keys of the root and the CA directory's intermediates
    (--ignore-certificate-errors-spki-list, which it announces in a bar).
    Firefox (-profile DIR -no-remote -new-instance): the profile's user.js sets the manual proxy for HTTP and HTTPS,
    no first-run pages, no default-browser check, no telemetry, studies or updates (--intercept-loopback:
    network.proxy.allow_hijacking_localhost); the root is trusted in the profile's own NSS database, which needs
    certutil (libnss3-tools); --trust-by-key is refused (Firefox has no such option). Ubuntu's Firefox snap gets its
    fresh profile in ~/snap/firefox/common, the only part of your home it can read.
    Exit codes: the browser's own; 1 no browser, no CA yet, no certutil for Firefox, or the profile cannot be made;
    2 usage.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        let separator = raw.firstIndex(of: "--")
        let options = separator.map { raw[raw.startIndex..<$0] } ?? raw
        let extra = separator.map { Array(raw[($0 + 1)...]) } ?? []
        if options.contains("--help") || options.contains("-h") {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(options, valued: ["proxy", "ca-dir", "root", "browser", "profile"],
                                      booleans: ["intercept-loopback", "trust-by-key"])
        let environment = ProcessInfo.processInfo.environment
        guard let browser = BrowserLaunch.find(arguments.value("browser"), environment: environment) else {
            if let given = arguments.value("browser") {
                throw CommandFailure("--browser \(given): no such program (give a path, or a name on PATH)")
            }
            throw CommandFailure("no Chrome, Chromium, Edge or Brave found, nor Firefox (looked for "
                                 + (BrowserLaunch.names + FirefoxLaunch.names).joined(separator: ", ")
                                 + "); give --browser PATH")
        }
        let isFirefox = FirefoxLaunch.isFirefox(browser)
        if isFirefox { try refuseWhatFirefoxCannotDo(arguments) }
        var proxy = ProxyAddress.runDefault
        if let given = arguments.value("proxy") {
            do {
                proxy = try ProxyAddress(parsing: given)
            } catch {
                throw UsageError(error.reason)
            }
        }
        let caDirectory = CAStore.resolveDirectory(flag: arguments.value("ca-dir"))
        let (root, rootPath) = try TerminalSetup.root(arguments.value("root"), caDirectory: caDirectory)

        let kept = arguments.value("profile")
        let snap = isFirefox && FirefoxLaunch.isSnap(browser)
        if snap, let kept {
            let readable = HomeDirectory.current() + "/snap/firefox/"
            guard URL(fileURLWithPath: kept).standardized.path.hasPrefix(readable) else {
                throw CommandFailure("--profile \(kept): the Firefox snap cannot read it (it sees only \(readable) of "
                                     + "your home, and a /tmp of its own): give a directory under \(readable)common")
            }
        }
        let profile = try kept.map { path -> String in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            return path
        } ?? (snap ? snapProfile() : ExecCommand.temporaryDirectory("devproxy-browser", what: "a profile directory"))
        defer { if kept == nil { try? FileManager.default.removeItem(atPath: profile) } }

        let interceptLoopback = arguments.flag("intercept-loopback")
        let trust: String
        let launchOptions: [String]
        if isFirefox {
            trust = try prepareFirefox(profile: profile, root: root, proxy: proxy, interceptLoopback: interceptLoopback,
                                       headless: extra.contains { ["-headless", "--headless"].contains($0) },
                                       snap: snap)
            launchOptions = FirefoxLaunch.arguments(profile: profile)
        } else {
            var keys: [String] = []
            #if os(Linux)
            let useNSS = BrowserLaunch.canMakeNSSDatabase && !arguments.flag("trust-by-key")
            #else
            let useNSS = false
            #endif
            if useNSS {
                let home = profile + "/home"
                do {
                    if !NSSTrustStore.isDatabase(home + "/.pki/nssdb") {
                        try BrowserLaunch.prepareNSS(home: home, root: root)
                    }
                } catch let error as TrustStoreError {
                    throw CommandFailure("cannot make the profile's NSS database in \(home)/.pki/nssdb: "
                                         + error.reason)
                }
                // Chromium finds its NSS database under HOME.
                runWithHome(home)
                trust = "in the profile's NSS database"
            } else {
                keys = BrowserLaunch.keys(root: root, caDirectory: caDirectory)
                trust = "by its key and its intermediates' (--ignore-certificate-errors-spki-list)"
            }
            launchOptions = BrowserLaunch.arguments(profile: profile, proxy: proxy, keys: keys,
                                                    interceptLoopback: interceptLoopback, asRoot: geteuid() == 0)
        }
        TerminalSetup.warnIfNothingListens(at: proxy, or: "every page fails to load")
        let name = root.commonName ?? root.subject
        note("devproxy browser: \(browser) through \(proxy.url), trusting \(name) (\(rootPath)) \(trust)")
        note("  profile \(profile)" + (kept == nil ? " (removed when the browser closes)" : ""))
        let argv = [browser] + launchOptions + extra + arguments.positionals
        return try ExecCommand.spawnAndWait(argv, reportsReady: false).0
    }

    /// Firefox has no way to accept a key as Chromium does, and trusts nothing but its profile's
    /// NSS database, which only certutil writes: one line saying so, before anything is made.
    private static func refuseWhatFirefoxCannotDo(_ arguments: Arguments) throws {
        if arguments.flag("trust-by-key") {
            throw UsageError("--trust-by-key is Chromium's (--ignore-certificate-errors-spki-list); Firefox has no "
                             + "such option: it trusts the root in its profile's own NSS database (certutil), as "
                             + "without the flag")
        }
        if !BrowserLaunch.canMakeNSSDatabase {
            throw CommandFailure("Firefox trusts only its profile's own NSS database, which certutil makes: "
                                 + "install it (Debian/Ubuntu: apt install libnss3-tools; Fedora: dnf install "
                                 + "nss-tools; macOS: brew install nss), or use a Chromium-family browser "
                                 + "(--trust-by-key needs no certutil)")
        }
    }

    /// Writes the Firefox profile's `user.js` and NSS database, and on Linux runs Firefox with
    /// `HOME` inside the profile (Firefox keeps its cache and crash reports under HOME, and as
    /// root refuses a HOME another user owns). Returns how the root is trusted, for the banner.
    private static func prepareFirefox(profile: String, root: Certificate, proxy: ProxyAddress, interceptLoopback: Bool,
                                       headless: Bool, snap: Bool) throws -> String {
        do {
            try FirefoxLaunch.prepare(profile: profile, root: root, proxy: proxy, interceptLoopback: interceptLoopback)
        } catch let error as TrustStoreError {
            throw CommandFailure("cannot prepare the Firefox profile \(profile): \(error.reason)")
        }
        #if os(Linux)
        // The snap sets HOME itself, to a directory of its own under ~/snap/firefox.
        if snap { return "in the profile's own NSS database (cert9.db)" }
        let home = profile + "/home"
        do {
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure("cannot make \(home): \(error.localizedDescription)")
        }
        runWithHome(home)
        setenv("XDG_CACHE_HOME", home + "/.cache", 1)
        let headlessByEnvironment = !(getenv("MOZ_HEADLESS").map { String(cString: $0) } ?? "").isEmpty
        try checkXAuthorityAsRoot(headless: headless || headlessByEnvironment)
        #endif
        return "in the profile's own NSS database (cert9.db)"
    }

    /// A fresh 0700 profile directory where Ubuntu's Firefox snap can read it: under
    /// `~/snap/firefox/common` (the snap's /tmp is its own, and it sees no other part of HOME).
    private static func snapProfile() throws -> String {
        let base = HomeDirectory.current() + "/snap/firefox/common"
        do {
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure("cannot make \(base) for the Firefox snap's profile: \(error.localizedDescription)")
        }
        var template = Array((base + "/devproxy-browser-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure("cannot make a profile directory in \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// HOME for the browser; X11's cookie stays where it was.
    private static func runWithHome(_ home: String) {
        if getenv("XAUTHORITY") == nil, let real = getenv("HOME").map({ String(cString: $0) }) {
            setenv("XAUTHORITY", real + "/.Xauthority", 1)
        }
        setenv("HOME", home, 1)
    }

    /// Firefox run as root will not start when `XAUTHORITY` is a file another user owns ("Running
    /// Firefox as root in a regular user's session is not supported"), headless too: headless it
    /// needs no X server, so the variable goes; with a window, one line says what to do instead.
    private static func checkXAuthorityAsRoot(headless: Bool) throws {
        guard geteuid() == 0, let pointer = getenv("XAUTHORITY") else { return }
        let xauthority = String(cString: pointer)
        var info = stat()
        guard stat(xauthority, &info) == 0, info.st_uid != 0 else { return }
        if headless {
            unsetenv("XAUTHORITY")
            return
        }
        throw CommandFailure("Firefox will not run as root in another user's X session (XAUTHORITY \(xauthority) "
                             + "belongs to uid \(info.st_uid)): run devproxy browser as that user, or headless "
                             + "(-- -headless)")
    }

    /// A line on standard error, so standard output stays the browser's (`--dump-dom`).
    private static func note(_ text: String) {
        FileHandle.standardError.write(Data((Output.printable(text) + "\n").utf8))
    }
}
