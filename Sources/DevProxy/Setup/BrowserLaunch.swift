import CertAuthority
import Foundation

/// `devproxy browser`: a Chromium-family browser (Chrome, Chromium, Edge, Brave, Vivaldi), or
/// else Firefox (`FirefoxLaunch`), in a profile of its own, every request through DevProxy and
/// its root trusted, with nothing changed in the system's trust store or the everyday profile:
/// HTTP Toolkit's "intercept a fresh Chrome".
///
/// Trust: on Linux, Chromium reads the user's NSS database, `$HOME/.pki/nssdb`; the browser runs
/// with `HOME` in the profile, whose own database holds the root (`certutil`), so every chain to
/// the root verifies as a public one does. Elsewhere, or without certutil, Chromium is told to
/// accept the keys of the root and the CA directory's intermediates
/// (`--ignore-certificate-errors-spki-list`, which it honours with `--user-data-dir` only and
/// announces in a bar).
public enum BrowserLaunch {
    /// Names looked up on PATH (Linux), in order.
    public static let names = ["google-chrome", "google-chrome-stable", "chromium", "chromium-browser",
                               "microsoft-edge", "microsoft-edge-stable", "brave-browser", "vivaldi"]
    /// Where macOS keeps them.
    public static let macApplications = [
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
        "/Applications/Brave Browser.app/Contents/MacOS/Brave Browser",
    ]

    /// The browser to run: `given` (a path, or a name on PATH, or on macOS the application that
    /// name stands for), else the first of `names` on PATH or of `macApplications`, else the first
    /// Firefox (`FirefoxLaunch.names`, then its macOS application); nil when there is none.
    public static func find(_ given: String?, environment: [String: String]) -> String? {
        let path = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        func onPath(_ name: String) -> String? {
            if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
            return path.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        func installed(_ application: String?) -> String? {
            application.flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
        }
        if let given { return onPath(given) ?? installed(FirefoxLaunch.macApplications[given]) }
        return names.lazy.compactMap(onPath).first
            ?? macApplications.first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? FirefoxLaunch.names.lazy.compactMap(onPath).first
            ?? installed(FirefoxLaunch.macApplications["firefox"])
    }

    /// The browser's command-line options (before any the user adds and the URLs).
    /// - Parameters:
    ///   - profile: `--user-data-dir`, the fresh profile.
    ///   - keys: base64 SHA-256 of SubjectPublicKeyInfo to accept (empty when the NSS database trusts the root).
    ///   - interceptLoopback: send loopback through DevProxy too (Chromium bypasses it by itself).
    ///   - asRoot: Chromium refuses to start as root without `--no-sandbox`.
    public static func arguments(profile: String, proxy: ProxyAddress, keys: [String], interceptLoopback: Bool,
                                 asRoot: Bool) -> [String] {
        var arguments = ["--user-data-dir=\(profile)", "--proxy-server=\(proxy.url)", "--no-first-run",
                         "--no-default-browser-check"]
        if interceptLoopback { arguments.append("--proxy-bypass-list=<-loopback>") }
        if !keys.isEmpty { arguments.append("--ignore-certificate-errors-spki-list=" + keys.joined(separator: ",")) }
        if asRoot { arguments.append("--no-sandbox") }
        return arguments
    }

    /// The keys `--ignore-certificate-errors-spki-list` takes for `root` and the certificates in
    /// `caDirectory/intermediates` (Chromium matches a key of the chain the server sends, which
    /// is the leaf and the intermediate, not the root).
    public static func keys(root: Certificate, caDirectory: String) -> [String] {
        var certificates = [root]
        let directory = caDirectory + "/intermediates"
        for file in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            where file.hasSuffix(".pem") {
            guard let bytes = FileManager.default.contents(atPath: directory + "/" + file),
                  let found = try? Certificate.all(from: [UInt8](bytes)) else { continue }
            certificates += found.filter(\.isCA)
        }
        var seen = Set<String>()
        return certificates.map { SPKIPin.base64SHA256($0.spkiDER) }.filter { seen.insert($0).inserted }
    }

    /// Makes `home/.pki/nssdb`, an empty NSS database that trusts `root` for websites.
    /// - Throws: `TrustStoreError` when certutil is missing or fails.
    public static func prepareNSS(home: String, root: Certificate) throws {
        let directory = home + "/.pki/nssdb"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try trust(root, inDatabase: directory, creating: true)
    }

    /// Adds `root` to the NSS database in `directory`, trusted to identify websites (`C,,`), under
    /// `TrustRoot.nickname`; with `creating`, first makes the database (no password).
    ///
    /// certutil directly, not `NSSTrustStore.install`: that keeps a copy of the store for
    /// `devproxy trust uninstall` under `~/.local/state`, which a profile's own database does
    /// not need and which would outlive the profile.
    /// - Throws: `TrustStoreError` when certutil is missing or fails.
    static func trust(_ root: Certificate, inDatabase directory: String, creating: Bool) throws {
        let certutil = ExternalTool("certutil")
        let database = "sql:" + directory
        if creating {
            let made = try certutil.run(["-N", "-d", database, "--empty-password"])
            guard made.status == 0 else { throw TrustStoreError(.toolFailed, "certutil -N failed: \(made.lastLine)") }
        }
        let trustRoot = TrustRoot(certificate: root)
        let added: ExternalTool.Outcome
        do {
            added = try trustRoot.withPEMFile { path in
                try certutil.run(["-A", "-d", database, "-t", "C,,", "-n", trustRoot.nickname, "-i", path])
            }
        } catch let error as TrustStoreError {
            throw error
        } catch {
            throw TrustStoreError(.fileError, "cannot write the root for certutil: \(error)")
        }
        guard added.status == 0 else { throw TrustStoreError(.toolFailed, "certutil -A failed: \(added.lastLine)") }
    }

    /// Whether certutil is on PATH (Linux's way to trust the root in the profile alone).
    public static var canMakeNSSDatabase: Bool { ExternalTool("certutil").isInstalled }
}
