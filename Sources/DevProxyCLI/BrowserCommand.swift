import CertAuthority
import DevProxy
import Foundation

/// `devproxy browser [URL…]`: a fresh Chrome, Chromium, Edge or Brave whose every request goes
/// through DevProxy and which trusts its root, in a profile of its own (`BrowserLaunch`).
enum BrowserCommand {
    static let usage = """
    devproxy browser: open a fresh Chrome, Chromium, Edge or Brave through DevProxy, trusting its root.

      devproxy browser                                 a new window, its own profile, removed when it closes
      devproxy browser https://app.acme.dev/            opening a page
      devproxy browser --profile ~/.devproxy-chrome     a profile kept between runs (logins, extensions)
      devproxy browser -- --auto-open-devtools-for-tabs  options after -- go to the browser

    Options: --proxy HOST:PORT (default 127.0.0.1:8080)  --ca-dir DIR  --root FILE  --browser PATH|NAME (default the
    first of google-chrome, chromium, microsoft-edge, brave-browser, vivaldi found)  --profile DIR  --intercept-loopback
    (localhost through DevProxy too)  --trust-by-key. Nothing outside the profile is changed: not the system's trust store,
    not your everyday profile. On Linux the root is trusted in the profile's own NSS database (certutil, libnss3-tools);
    elsewhere, without certutil, or with --trust-by-key, by the keys of the root and the CA directory's intermediates
    (Chromium's --ignore-certificate-errors-spki-list, which it announces in a bar).
    Exit codes: the browser's own; 1 no browser, no CA yet, or the profile cannot be made; 2 usage.
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
            throw CommandFailure("no Chrome, Chromium, Edge or Brave found (looked for "
                                 + BrowserLaunch.names.joined(separator: ", ") + "); give --browser PATH")
        }
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
        let profile = try kept.map { path -> String in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            return path
        } ?? ExecCommand.temporaryDirectory("devproxy-browser", what: "a profile directory")
        defer { if kept == nil { try? FileManager.default.removeItem(atPath: profile) } }

        var keys: [String] = []
        var trust: String
        #if os(Linux)
        let useNSS = BrowserLaunch.canMakeNSSDatabase && !arguments.flag("trust-by-key")
        #else
        let useNSS = false
        #endif
        if useNSS {
            let home = profile + "/home"
            do {
                if !NSSTrustStore.isDatabase(home + "/.pki/nssdb") { try BrowserLaunch.prepareNSS(home: home, root: root) }
            } catch let error as TrustStoreError {
                throw CommandFailure("cannot make the profile's NSS database in \(home)/.pki/nssdb: \(error.reason)")
            }
            // Chromium finds its NSS database under HOME; X11's cookie stays where it was.
            if environment["XAUTHORITY"] == nil, let real = environment["HOME"] {
                setenv("XAUTHORITY", real + "/.Xauthority", 1)
            }
            setenv("HOME", home, 1)
            trust = "in the profile's NSS database"
        } else {
            keys = BrowserLaunch.keys(root: root, caDirectory: caDirectory)
            trust = "by its key and its intermediates' (--ignore-certificate-errors-spki-list)"
        }
        TerminalSetup.warnIfNothingListens(at: proxy, or: "every page fails to load")
        let name = root.commonName ?? root.subject
        note("devproxy browser: \(browser) through \(proxy.url), trusting \(name) (\(rootPath)) \(trust)")
        note("  profile \(profile)" + (kept == nil ? " (removed when the browser closes)" : ""))
        let positionals = arguments.positionals
        let argv = [browser] + BrowserLaunch.arguments(profile: profile, proxy: proxy, keys: keys,
                                                       interceptLoopback: arguments.flag("intercept-loopback"),
                                                       asRoot: geteuid() == 0) + extra + positionals
        return try ExecCommand.spawnAndWait(argv, reportsReady: false).0
    }

    /// A line on standard error, so standard output stays the browser's (`--dump-dom`).
    private static func note(_ text: String) {
        FileHandle.standardError.write(Data((Output.printable(text) + "\n").utf8))
    }
}
