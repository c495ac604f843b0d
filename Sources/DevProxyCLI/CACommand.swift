import CertAuthority
import Foundation

/// `devproxy ca …`: the team CA for security leads.
enum CACommand {
    static let usage = """
    Team CA: a root, short-lived intermediates per engineer, and a ledger of everything issued.

      devproxy ca init --name "Acme Dev Root"             create the root in the CA directory
      devproxy ca init --passphrase-file root.pass         ... with the key encrypted (AES-256)
      devproxy ca issue --email ana@acme.dev               a 7-day intermediate for Ana
      devproxy ca issue --email ana@acme.dev --days 30 --permit-dns acme.dev --out ana.pem
      devproxy ca list                                     every intermediate and its status (--json)
      devproxy ca revoke --email ana@acme.dev --reason keyCompromise
      devproxy ca revoke 5f3a…                             by serial; rewrites crl.pem
      devproxy ca revoke --cert ca.pem --reason keyCompromise   a CA the root signed that the ledger lacks
      devproxy ca crl                                      re-signs crl.pem (valid a week): weekly, from cron
      devproxy ca trace leaf.pem                           which engineer's intermediate issued it (--json)
      devproxy ca trace pin-failure-report.json
      devproxy ca ledger verify                            no ledger record edited or deleted (each names the one before)
      devproxy ca export --format der --out root.crt       the root for phones (Android, iOS)
      devproxy ca export --bundle ana.pem --format der --out root.crt   the same, from an engineer's bundle
      devproxy ca init --next                              the next root key, made now; apps ship its pin as the backup
      devproxy ca rotate --transition-days 180             the next key becomes the root; a cross-certificate
                                                           (new root signed by the old) keeps old devices working

    Every command takes --ca-dir DIR (default: $DEVPROXY_HOME, else ./ca if present,
    else $XDG_DATA_HOME/devproxy, ~/.local/share/devproxy when unset). Key types (--key): \(KeyType.choices).
    The root key's passphrase comes from --passphrase-file FILE or $DEVPROXY_CA_PASSPHRASE,
    never from an argument. Each command has its own page: devproxy ca issue --help, …
    """

    /// Each subcommand's own page (`devproxy ca issue --help`); `main` sends `--help` after one
    /// of these words here as `[SUB, "--help"]`.
    static let subcommandUsage: [String: String] = [
        "init": initUsage, "issue": CAIssueCommand.usage, "list": CAListCommand.listUsage,
        "revoke": CAListCommand.revokeUsage, "crl": CAListCommand.crlUsage, "trace": CATraceCommand.usage,
        "export": exportUsage, "rotate": CARotateCommand.rotateUsage, "ledger": ledgerUsage,
    ]

    static let commonOptions = """
    --ca-dir DIR: the CA directory (default: $DEVPROXY_HOME, else ./ca if present, else
    $XDG_DATA_HOME/devproxy, ~/.local/share/devproxy when unset).
    """

    static let passphraseNote = """
    The root key's passphrase comes from --passphrase-file FILE or $DEVPROXY_CA_PASSPHRASE, never
    from an argument.
    """

    static let initUsage = """
    devproxy ca init: create the team root CA (security lead, once, on a guarded machine).

      devproxy ca init --name "Acme Dev Root"                      a 10-year root, key unencrypted
      devproxy ca init --name "Acme Dev Root" --passphrase-file root.pass   the key encrypted (AES-256)
      devproxy ca init --key rsa-3072 --days 1825 --ca-dir /secure/acme-ca
      devproxy ca init --next --passphrase-file root.pass          the next root key only: its pin ships in
                                                                   apps as the backup pin before `ca rotate`

    Options: --name NAME (default "DevProxy Team Root")  --key \(KeyType.choices) (default ec-p256)
             --days N (1 to 36500, default 3650)  --passphrase-file FILE  --next  --ca-dir DIR
    Writes root.pem (0644), root.key (0600) and ledger.jsonl in a 0700 directory; prints the SPKI pin.
    \(commonOptions)
    \(passphraseNote)
    Then: devproxy ca issue --email ENGINEER@EXAMPLE.COM
    """

    static let exportUsage = """
    devproxy ca export: the team root's certificate, for devices and tools to trust.

      devproxy ca export                                       PEM on stdout
      devproxy ca export --out root.pem                        PEM to a file (0644)
      devproxy ca export --format der --out root.crt           DER, for Android and iOS
      devproxy ca export --bundle ana@acme.dev.pem --format der --out root.crt
                                                               from an engineer's bundle, no CA directory needed

    Options: --format pem|der (default pem; DER needs --out)  --out FILE  --bundle FILE  --ca-dir DIR
    \(commonOptions)
    """

    static let ledgerUsage = """
    devproxy ca ledger verify: whether the ledger is whole (each record names the SHA-256 of the one before).

      devproxy ca ledger verify                                'ledger intact: N records' and the last digest
      devproxy ca ledger verify --ca-dir /secure/acme-ca

    Options: --ca-dir DIR. Keep the printed digest elsewhere (a ticket, the next audit): the chain shows
    an edited or deleted record, not records cut off its end.
    Exit codes: 0 intact; 1 a record was edited or deleted, or a line cannot be read (each an error:
    line); 2 usage.
    \(commonOptions)
    """

    static func run(_ arguments: ArraySlice<String>) throws -> Int32 {
        guard let sub = arguments.first, sub != "--help", sub != "-h", sub != "help" else {
            // `devproxy ca` alone is a missing subcommand, as for policy, qa and trust.
            return Output.usage(usage, missing: arguments.isEmpty)
        }
        let rest = arguments.dropFirst()
        if let page = subcommandUsage[sub], rest.first == "--help" || rest.first == "-h" {
            Output.line(page)
            return 0
        }
        switch sub {
        case "init": return try initialize(rest)
        case "issue": return try CAIssueCommand.run(rest)
        case "list": return try CAListCommand.list(rest)
        case "revoke": return try CAListCommand.revoke(rest)
        case "crl": return try CAListCommand.crl(rest)
        case "trace": return try CATraceCommand.run(rest)
        case "export": return try export(rest)
        case "rotate": return try CARotateCommand.rotate(rest)
        case "ledger": return try CALedgerCommand.run(rest)
        default: throw UsageError("unknown command `ca \(sub)`; see `devproxy ca --help`")
        }
    }

    /// The CA store named by `--ca-dir` or the defaults.
    static func store(_ arguments: Arguments) -> CAStore {
        let store = CAStore(directory: CAStore.resolveDirectory(flag: arguments.value("ca-dir")))
        // A root key others can read signs intermediates for whoever reads it: said on every use.
        if let warning = SecureFile.looseKeyWarning(store.rootKeyPath, what: "the root key") { Output.warning(warning) }
        return store
    }

    /// ` --ca-dir DIR` when the command was given one, for the follow-up commands it prints: they
    /// are copied and run as printed, and without it they act on the default CA (a local
    /// development root), not the team CA just made. Quoted for a shell when it needs to be.
    static func caDirSuffix(_ arguments: Arguments) -> String {
        guard let directory = arguments.value("ca-dir") else { return "" }
        return " --ca-dir " + RunCommand.shellQuoted(directory)
    }

    /// The passphrase from `--passphrase-file` or the environment.
    static func passphrase(_ arguments: Arguments) throws -> String? {
        try PassphraseSource.resolve(file: arguments.value("passphrase-file")).read()
    }

    /// `--key TYPE`, validated.
    static func keyType(_ arguments: Arguments, default fallback: KeyType = .p256) throws -> KeyType {
        guard let text = arguments.value("key") else { return fallback }
        guard let type = KeyType(argument: text) else { throw UsageError("--key \(text) is not one of \(KeyType.choices)") }
        return type
    }

    private static func initialize(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "name", "key", "days", "passphrase-file"],
                                      booleans: ["next"])
        if arguments.flag("next") { return try CARotateCommand.initializeNext(arguments) }
        let store = store(arguments)
        let days = try arguments.integer("days") ?? 3650
        guard days > 0 else { throw UsageError("--days must be a positive number of days") }
        let secret = try passphrase(arguments)
        let type = try keyType(arguments)
        let root = try store.initialize(name: arguments.value("name") ?? "DevProxy Team Root", keyType: type,
                                        days: days, passphrase: secret)
        Output.line("Created a team root CA in \(store.directory), valid until \(Output.date(root.notAfter)).")
        Output.line()
        Output.line("  subject      \(root.subject)")
        Output.line("  key          \(root.keyDescription) in \(store.rootKeyPath) (0600\(secret != nil ? ", encrypted with AES-256" : ", NOT encrypted"))")
        Output.line("  certificate  \(store.rootCertificatePath)")
        Output.line("  SHA-256      \(root.sha256Fingerprint)")
        Output.line("  SPKI pin     \(root.pin)")
        Output.line("  ledger       \(store.ledgerPath)")
        Output.line()
        let dir = caDirSuffix(arguments)
        Output.line("Next:")
        Output.line("  devproxy ca issue\(dir) --email ENGINEER@EXAMPLE.COM      an intermediate for one engineer (7 days)")
        Output.line("  devproxy ca export\(dir) --format der --out root.crt       the root for phones; apps pin \(root.pin)")
        if secret == nil {
            Output.line()
            Output.line("Keep root.key on a guarded machine; consider --passphrase-file to encrypt it.")
        }
        return 0
    }

    private static func export(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "format", "out", "bundle"], booleans: [])
        let format = arguments.value("format") ?? "pem"
        guard format == "pem" || format == "der" else { throw UsageError("--format must be pem or der") }
        // An engineer with only a bundle has no CA directory: the root is the bundle's last certificate.
        let root: Certificate
        if let bundle = arguments.value("bundle") {
            let bytes = try SecureFile.read(bundle, what: "the bundle")
            let signer: Signer
            do {
                signer = try Signer(bundle: bytes)
            } catch let error as CAError {
                throw CommandFailure("--bundle \(bundle): \(error.reason)")
            }
            guard let last = signer.root else {
                throw CommandFailure("\(bundle) holds no root certificate")
            }
            root = last
        } else {
            root = try store(arguments).rootCertificate()
        }
        let bytes = format == "der" ? root.der : Array(root.pem.utf8)
        guard let out = arguments.value("out") else {
            guard format == "pem" else { throw UsageError("DER is binary; give --out FILE (for example root.crt)") }
            Output.raw(bytes)
            return 0
        }
        try SecureFile.write(bytes, to: out, mode: SecureFile.publicMode)
        Output.wrote(to: out, "Wrote the root certificate (\(format.uppercased())) to \(out).",
                     "  SPKI pin  \(root.pin)",
                     "Install it: Android Settings > Security > Encryption & credentials > Install a certificate > CA certificate;",
                     "iOS: AirDrop or mail the file, install the profile, then enable it in Settings > General > About > "
                        + "Certificate Trust Settings.")
        return 0
    }
}
