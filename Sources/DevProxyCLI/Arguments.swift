import CertAuthority
/// Parsed command-line arguments: positionals, `--name VALUE` / `--name=VALUE` options and
/// boolean `--flag`s. An option given twice takes the last value, unless it is `repeatable`
/// (`--resolve`, `--passthrough`): then every value counts; or one of the `identities` (`--email`):
/// then two different values are an error. Unknown options are an error, never ignored.
struct Arguments {
    private(set) var positionals: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// - Parameters:
    ///   - arguments: what follows the command words.
    ///   - valued: option names (without `--`) that take a value.
    ///   - booleans: option names that take none.
    /// - Throws: `UsageError` for an unknown option or a missing value.
    init(_ arguments: ArraySlice<String>, valued: Set<String>, booleans: Set<String>) throws {
        var index = arguments.startIndex
        var onlyPositionals = false
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = String(argument.drop { $0 == "-" })
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.endIndex else { throw UsageError("\(argument) needs a value") }
                    value = arguments[index]
                    // The next word is another option (`--out --ca-dir DIR`): its value was forgotten,
                    // and the file was written as `--ca-dir`. `--out=--odd-name` still works.
                    let next = String(value.drop { $0 == "-" }).split(separator: "=").first.map(String.init) ?? ""
                    if value.hasPrefix("-"), valued.contains(next) || booleans.contains(next) {
                        throw UsageError("\(argument) needs a value, and got the option \(value)")
                    }
                    index += 1
                }
                // No option takes an empty value: one is a script's unset variable (`--log "$LOG"`),
                // which read on as "cannot write : No such file or directory", or matched nothing.
                guard !value.isEmpty else {
                    throw UsageError("--\(name) was given an empty value (an unset variable in a script?)")
                }
                // An option that takes one value, given again, takes the last (as curl, getopt's
                // users and argparse do): `alias dp='devproxy run --listen 127.0.0.1:8080'` then
                // `dp --listen 127.0.0.1:9090` listens on 9090. A repeatable one keeps them all.
                if Self.repeatable.contains(name) {
                    options[name, default: []].append(value)
                } else if Self.identities.contains(name), let earlier = options[name]?.first, earlier != value {
                    // Except the engineer an intermediate is tagged with: the ledger traces a chain to
                    // that person for the certificate's life, so two of them is a mistake to stop at.
                    throw UsageError("--\(name) was given twice (\(earlier) and \(value)); it names one engineer")
                } else {
                    options[name] = [value]
                }
            } else if booleans.contains(name), inline == nil {
                flags.insert(name)
            } else if name == "client-cert-passphrase" || name == "client-cert-password" {
                throw UsageError("passphrases are never taken as arguments (other users can read them in `ps`); use "
                                 + "--client-cert-passphrase-file FILE or \(ClientIdentity.passphraseVariable)")
            } else if name == "passphrase" || name == "password" || name == "pass" {
                throw UsageError("passphrases are never taken as arguments (other users can read them in `ps`); use --passphrase-file FILE or DEVPROXY_CA_PASSPHRASE")
            } else if booleans.contains(name) {
                throw UsageError("\(argument): --\(name) takes no value")
            } else {
                // mitmproxy's `-p 8090` or a typo: say what this command takes instead, so the
                // next try works.
                let next = index < arguments.endIndex && !arguments[index].hasPrefix("-") ? arguments[index] : nil
                let hint = Self.suggestion(for: name, next: inline ?? next, known: valued.union(booleans))
                throw UsageError("unknown option \(argument); " + (hint ?? "--help lists the options"))
            }
        }
    }

    /// Options any command takes more than once (`values`); every other one takes one value.
    static let repeatable: Set<String> = [
        "backup", "block-list", "ca-file", "client-cert", "expect", "expected", "grpc-status", "host", "leaf-key", "map-local",
        "map-remote", "mode", "modify-body", "modify-headers", "nss-db",
        "passthrough", "permit-dns", "persona", "pin", "pinset-rewrite", "proto", "redact", "report-uri", "resolve",
        "throttle-hosts", "upstream-ca", "verify-signature",
    ]

    /// Options a second, different value of is an error rather than an override: who a certificate
    /// is issued to is written into it and the ledger, where a silent override cannot be undone.
    static let identities: Set<String> = ["email"]

    /// The value given for `--name`: the last one given.
    func value(_ name: String) -> String? { options[name]?.last }

    /// Every value given for a repeatable `--name`.
    func values(_ name: String) -> [String] { options[name] ?? [] }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// An integer option, validated.
    func integer(_ name: String) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else { throw UsageError("--\(name) must be a whole number, not \"\(text)\"") }
        return number
    }
}

/// A mistake in how the command was called (exit code 2).
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A failure the command reports with `error: …` and an exit code.
struct CommandFailure: Error {
    let message: String
    let exitCode: Int32
    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }
}
