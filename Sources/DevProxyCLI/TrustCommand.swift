import CertAuthority
import DevProxy
import Foundation

/// `devproxy trust install | uninstall | status`: the team root in this machine's trust stores.
enum TrustCommand {
    static let usage = """
    Trust the root on this machine, as mkcert does: the system store, NSS (Chromium, Firefox), Java.

      devproxy trust install                          every store found; the system store needs sudo
      sudo devproxy trust install --store system      Debian/Ubuntu, Fedora/RHEL, Arch; the keychain on macOS
      devproxy trust install --store nss              Chromium's ~/.pki/nssdb and every Firefox profile
      devproxy trust install --store nss --nss-db ~/work/nssdb
      devproxy trust install --store java             the JDK's cacerts ($JAVA_HOME, else java.home of java on PATH)
      devproxy trust install --store java --java-keystore ./truststore.p12   created (PKCS12, 0600) if it is not there
      devproxy trust install --root ana-root.pem      another root than the CA directory's root.pem
      devproxy trust status                           which stores hold the root (exit 1 if one does not)
      devproxy trust uninstall                        remove exactly what install added

    \(storeOptions)
    Stores keep it as devproxy-<first 8 hex digits of its SHA-256>, and status matches by fingerprint.
    Exit codes: 0 done; 1 a store failed, needs sudo, or (status) does not hold the root; 2 usage.
    Each has its own page: devproxy trust install --help (status, uninstall).
    """

    /// The options every subcommand takes, and where the root comes from.
    static let storeOptions = """
    Options: --store system|nss|java|all (default all)  --root FILE (PEM or DER)  --ca-dir DIR
             --nss-db DIR (repeatable)  --java-keystore FILE
    The root defaults to root.pem in the CA directory ($DEVPROXY_HOME, else ./ca if present, else
    $XDG_DATA_HOME/devproxy, ~/.local/share/devproxy when unset). Java's store password is changeit
    unless $DEVPROXY_JAVA_STOREPASS is set (it reaches keytool through the environment, never argv).
    """

    static let installUsage = """
    devproxy trust install: add the root to this machine's trust stores, as `mkcert -install` does.

      devproxy trust install                          every store found; the system store needs sudo
      sudo devproxy trust install --store system      Debian/Ubuntu, Fedora/RHEL, Arch; the keychain on macOS
      devproxy trust install --store nss              Chromium's ~/.pki/nssdb and every Firefox profile
      devproxy trust install --store java --java-keystore ./truststore.p12   created (PKCS12, 0600) if it is not there
      devproxy trust install --root ana-root.pem      another root than the CA directory's root.pem

    \(storeOptions)
    Each store keeps it as devproxy-<first 8 hex digits of its SHA-256>; installing twice changes
    nothing, and a backup of what was there is kept for `trust uninstall`.
    Exit codes: 0 every store chosen holds it; 1 a store failed or needs sudo (the line says the
    exact command); 2 usage.
    Next: `devproxy trust status` shows which stores hold it; restart browsers and Java programs.
    """

    static let statusUsage = """
    devproxy trust status: which of this machine's trust stores hold the root (matched by fingerprint).

      devproxy trust status                           every store found
      devproxy trust status --store nss --nss-db ~/work/nssdb
      devproxy trust status --root ana-root.pem       another root than the CA directory's root.pem

    \(storeOptions)
    Exit codes: 0 every store checked holds it; 1 one does not (the last line says the install
    command) or a store could not be read; 2 usage.
    Next: `devproxy trust install` for the stores that do not hold it.
    """

    static let uninstallUsage = """
    devproxy trust uninstall: remove exactly what `trust install` added, nothing else.

      devproxy trust uninstall                        every store found; the system store needs sudo
      sudo devproxy trust uninstall --store system
      devproxy trust uninstall --store java --java-keystore ./truststore.p12

    \(storeOptions)
    A keystore `trust install` created is deleted if nothing was added to it since; otherwise only
    the devproxy-… entry goes.
    Exit codes: 0 no store chosen holds it any more; 1 a store failed or needs sudo; 2 usage.
    Next: `devproxy trust status` confirms no store holds it.
    """

    /// Each subcommand's own `--help` page.
    static let subcommandUsage: [String: String] = [
        "install": installUsage, "status": statusUsage, "uninstall": uninstallUsage,
    ]

    /// What the command does to each store.
    enum Action: String {
        case install, uninstall, status
    }

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        guard let word = raw.first, word != "--help", word != "-h", word != "help" else {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        guard let action = Action(rawValue: word) else {
            throw UsageError("unknown command `trust \(word)`; see `devproxy trust --help`")
        }
        if let page = subcommandUsage[word], raw.dropFirst().first == "--help" || raw.dropFirst().first == "-h" {
            Output.line(page)
            return 0
        }
        let arguments = try Arguments(raw.dropFirst(), valued: ["store", "root", "ca-dir", "nss-db", "java-keystore"], booleans: [])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument `\(arguments.positionals[0])`; the root is given with --root FILE")
        }
        let choice = arguments.value("store") ?? "all"
        guard ["system", "nss", "java", "all"].contains(choice) else {
            throw UsageError("--store must be system, nss, java or all, not \(choice)")
        }
        let (root, rootPath) = try loadRoot(arguments, for: action)
        let selection = TrustStoreSelection(choice: choice, nssDatabases: arguments.values("nss-db"),
                                            javaKeystore: arguments.value("java-keystore"))
        let heading = action == .install ? "Installing" : action == .uninstall ? "Uninstalling" : "Checking"
        Output.line("\(heading) \"\(root.displayName)\" (\(root.nickname), SHA-256 \(root.certificate.sha256Fingerprint)) from \(rootPath)")
        Output.line()
        for note in selection.notes { Output.line("  skipped      \(note)") }
        var failures = selection.errors
        var untrusted = 0
        for store in selection.stores {
            if let reason = store.unavailableReason {
                Output.line("  unavailable  \(store.description): \(reason)")
                failures.append("\(store.description): \(reason)")
                continue
            }
            do {
                switch action {
                case .status:
                    let holders = try store.holders(of: root)
                    if holders.isEmpty { untrusted += 1 }
                    Output.line(holders.isEmpty ? "  not trusted  \(store.description)"
                                : "  trusted      \(store.description): \(holders.joined(separator: ", "))")
                case .install, .uninstall:
                    let change = action == .install ? try store.install(root) : try store.uninstall(root)
                    let label = change.changed ? (action == .install ? "added" : "removed") : "unchanged"
                    Output.line("  \(label.padding(toLength: 13, withPad: " ", startingAt: 0))\(store.description)")
                    Output.line("               \(change.summary)")
                }
            } catch let error as TrustStoreError where error.code == .needsPrivileges {
                Output.line("  needs sudo   \(store.description)")
                failures.append("\(store.description): \(error.reason); run: \(sudoCommand(action, store: choice == "all" ? storeOption(store) : choice, root: rootPath, arguments: arguments))")
            } catch let error as TrustStoreError {
                Output.line("  failed       \(store.description)")
                failures.append("\(store.description): \(error.reason)")
            }
        }
        Output.line()
        switch action {
        case .install where failures.isEmpty:
            Output.line("Done. Restart browsers and Java programs to pick it up; `devproxy trust status` shows which stores hold it.")
        case .uninstall where failures.isEmpty:
            Output.line("Done. `devproxy trust status` confirms no store holds it.")
        case .status where failures.isEmpty:
            Output.line(untrusted == 0 ? "Every store checked holds this root."
                        : "Not trusted by \(untrusted) store\(untrusted == 1 ? "" : "s"): run `\(installCommand(arguments))`.")
        default:
            break
        }
        failures.forEach(Output.error)
        return failures.isEmpty && untrusted == 0 ? 0 : 1
    }

    /// The root from `--root FILE` or the CA directory, and the absolute path it came from.
    ///
    /// - Throws: `CommandFailure` for a file with no CA in it, and, to install, for a CA that is
    ///   not a root (an engineer's intermediate): `uninstall` and `status` take one, so an
    ///   intermediate installed before can be found and removed.
    private static func loadRoot(_ arguments: Arguments, for action: Action) throws -> (TrustRoot, String) {
        let path: String
        if let given = arguments.value("root") {
            path = given
        } else {
            let store = CAStore(directory: CAStore.resolveDirectory(flag: arguments.value("ca-dir")))
            guard store.exists else {
                throw CommandFailure("no root at \(store.rootCertificatePath); run `devproxy` once to create a local CA, or give --root FILE (`devproxy ca export --bundle BUNDLE --out root.pem` makes one from your bundle)")
            }
            path = store.rootCertificatePath
        }
        let certificates: [Certificate]
        do {
            certificates = try Certificate.all(from: try SecureFile.read(path, what: "the root certificate"))
        } catch let error as CAError {
            throw CommandFailure("\(path): \(error.reason)")
        }
        // A bundle (leaf or intermediate, then root) names its root as the self-signed CA.
        guard let certificate = certificates.count == 1 ? certificates[0] : certificates.last(where: { $0.isSelfSigned && $0.isCA }) else {
            throw CommandFailure("\(path) holds \(certificates.count) certificates and no self-signed root; give the root alone with --root FILE")
        }
        guard certificate.isCA else {
            throw CommandFailure("\(path) is not a CA certificate (\(certificate.subject)); trust stores want the root")
        }
        // An intermediate as a trust anchor: trusted only until it ends (a week), not the root apps
        // pin, and revoked in no CRL a client reads; one more dead entry in the store each week.
        if action == .install, !certificate.isSelfSigned {
            throw CommandFailure("\(path) holds an intermediate CA (\(certificate.subject), issued by \(certificate.issuer), valid "
                                 + "until \(Output.date(certificate.notAfter))), not a root; install the root it chains to: "
                                 + "`devproxy ca export --bundle BUNDLE --out root.pem` takes it from your bundle")
        }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return (TrustRoot(certificate: certificate), URL(fileURLWithPath: absolute).standardized.path)
    }

    /// `--store` for one store, when `all` has to be narrowed for sudo.
    private static func storeOption(_ store: any TrustStore) -> String {
        store is NSSTrustStore ? "nss" : store is JavaTrustStore ? "java" : "system"
    }

    /// The exact command that does what this user could not: this executable's absolute path (root's
    /// PATH may not find it) and the root's absolute path (root's CA directory is another).
    private static func sudoCommand(_ action: Action, store: String, root: String, arguments: Arguments) -> String {
        var words = ["sudo", executablePath(), "trust", action.rawValue, "--store", store, "--root", root]
        if store == "java", let keystore = arguments.value("java-keystore") { words += ["--java-keystore", keystore] }
        if store == "nss" { for db in arguments.values("nss-db") { words += ["--nss-db", db] } }
        return commandLine(words)
    }

    /// Words as a command line to copy: one with a space quoted.
    private static func commandLine(_ words: [String]) -> String {
        words.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    /// `devproxy trust install` for the stores and root this status was asked about: without
    /// them it acted on every store (the system's with sudo, every NSS profile, the JDK's).
    private static func installCommand(_ arguments: Arguments) -> String {
        var words = ["devproxy", "trust", "install"]
        if let store = arguments.value("store") { words += ["--store", store] }
        for db in arguments.values("nss-db") { words += ["--nss-db", db] }
        if let keystore = arguments.value("java-keystore") { words += ["--java-keystore", keystore] }
        if let root = arguments.value("root") { words += ["--root", root] }
        if let directory = arguments.value("ca-dir") { words += ["--ca-dir", directory] }
        return commandLine(words)
    }

    private static func executablePath() -> String {
        let invoked = CommandLine.arguments[0]
        guard invoked.contains("/") else { return invoked }
        return URL(fileURLWithPath: invoked).resolvingSymlinksInPath().path
    }
}
