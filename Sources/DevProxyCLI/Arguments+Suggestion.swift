/// What to write instead of an option the command does not know, for the `unknown option` error.
extension Arguments {
    /// Another tool's spelling (mitmproxy's and mitmdump's, curl's `-k`, mkcert's `-install`) of
    /// something DevProxy takes under another name, with the option it maps to: the hint is given
    /// only where the command takes that option (always when it maps to a command, nil).
    private struct ForeignOption: Sendable {
        let names: Set<String>
        let option: String?
        /// The hint, given the word after the unknown option when it is not an option itself.
        let hint: @Sendable (String?) -> String
    }

    private static let foreignOptions: [ForeignOption] = [
        ForeignOption(names: ["p", "port", "listen-port"], option: "listen") { next in
            "DevProxy takes the address and the port together: --listen 127.0.0.1:\(port(next) ?? "PORT")"
        },
        ForeignOption(names: ["listen-host"], option: "listen") { next in
            "DevProxy takes the address and the port together: --listen \(next.map(bracketed) ?? "HOST"):8080"
        },
        ForeignOption(names: ["web-port"], option: "web") { next in
            "the web UI's address and port go together: --web 127.0.0.1:\(port(next) ?? "PORT")"
        },
        ForeignOption(names: ["web-host"], option: "web") { next in
            "the web UI's address and port go together: --web \(next.map(bracketed) ?? "HOST"):8081"
        },
        // `devproxy web FILE --listen …`: that command's one address is the web UI's.
        ForeignOption(names: ["listen"], option: "web") { next in "the web UI's address is --web \(endpoint(next))" },
        // `devproxy env` and `exec` take the address of a proxy that runs already.
        ForeignOption(names: ["p", "port", "listen-port", "listen"], option: "proxy") { next in
            "the proxy to go through is --proxy \(endpoint(next))"
        },
        ForeignOption(names: ["k", "insecure", "ssl-insecure"], option: "insecure-upstream") { _ in
            "to skip verifying origins' certificates, --insecure-upstream (each flow then records it)"
        },
        ForeignOption(names: ["q"], option: "quiet") { _ in "DevProxy spells it --quiet" },
        ForeignOption(names: ["w", "save-stream-file"], option: "log") { _ in
            "flows are written with --log FILE (JSON Lines; `devproxy har FILE` makes a HAR of it), or --har FILE"
        },
        ForeignOption(names: ["ignore-hosts", "ignore", "tcp-hosts"], option: "passthrough") { _ in
            "hosts are tunnelled undecrypted with --passthrough GLOB ('*.apple.com': a glob, not a regex), repeatable"
        },
        ForeignOption(names: ["confdir", "caroot"], option: "ca-dir") { _ in "the CA's directory is --ca-dir DIR" },
        ForeignOption(names: ["proxyauth"], option: "proxy-auth") { _ in
            "--proxy-auth FILE, a file of user:password lines (never the password itself: `ps` shows it)"
        },
        ForeignOption(names: ["upstream-auth"], option: "upstream-proxy-auth-file") { _ in
            "--upstream-proxy-auth-file FILE, a file holding user:password (never the password itself: `ps` shows it)"
        },
        ForeignOption(names: ["install", "uninstall"], option: nil) { _ in
            "mkcert's -install and -uninstall are `devproxy trust install` and `devproxy trust uninstall` here"
        },
        ForeignOption(names: ["set"], option: "config") { _ in
            "mitmproxy's --set has no counterpart: give the option as a flag (see --help), or its key in --config FILE"
        },
    ]

    /// What to write instead of `--name`: DevProxy's spelling of another proxy's option when this
    /// command takes it (`-p 8090` is `--listen 127.0.0.1:8090`), else an option of this command a
    /// typo or two away (`--passthorugh`), else nil.
    ///
    /// - Parameters:
    ///   - name: the option as given, without its dashes and any `=VALUE`.
    ///   - next: the word after it, when there is one and it is no option.
    ///   - known: every option this command takes.
    static func suggestion(for name: String, next: String?, known: Set<String>) -> String? {
        if let foreign = foreignOptions.first(where: { foreign in
            foreign.names.contains(name) && (foreign.option.map(known.contains) ?? true)
        }) {
            return foreign.hint(next)
        }
        return closeOption(to: name, known: known).map { "did you mean --\($0)?" }
    }

    /// The option `name` is a typo of: at most two edits, and fewer than half the name (`-o` is not
    /// a typo of `-q`); the closest, then the first in order.
    private static func closeOption(to name: String, known: Set<String>) -> String? {
        known.map { (option: $0, distance: editDistance(name, $0)) }
            .filter { $0.distance <= 2 && $0.distance * 2 < name.count }
            .min { ($0.distance, $0.option) < ($1.distance, $1.option) }?.option
    }

    /// What to write instead of a config file's unknown `key` (`listen_port`, `ssl_insecure`, a
    /// typo): the key DevProxy takes, with the hint an option of that spelling gets; nil when
    /// nothing is close. `known`: the command's options (dashed, as on the command line).
    static func configSuggestion(for key: String, known: Set<String>) -> String? {
        let name = key.replacingOccurrences(of: "_", with: "-")
        if let foreign = foreignOptions.first(where: { $0.names.contains(name) && $0.option.map(known.contains) == true }),
           let option = foreign.option {
            return "did you mean \"\(Self.key(option))\"? (\(foreign.hint(nil)))"
        }
        return closeOption(to: name, known: known).map { "did you mean \"\(Self.key($0))\"?" }
    }

    /// An option's name as a config file's key (`upstream-ca`: `upstream_ca`).
    private static func key(_ option: String) -> String { option.replacingOccurrences(of: "-", with: "_") }

    /// A port number, when `word` is one.
    private static func port(_ word: String?) -> String? {
        guard let word, let number = Int(word), (0...65535).contains(number) else { return nil }
        return String(number)
    }

    /// `word` as HOST:PORT: a port alone on loopback, HOST:PORT as given, else a placeholder.
    private static func endpoint(_ word: String?) -> String {
        if let port = port(word) { return "127.0.0.1:\(port)" }
        if let word, let colon = word.lastIndex(of: ":"), port(String(word[word.index(after: colon)...])) != nil {
            return word
        }
        return "127.0.0.1:PORT"
    }

    /// An IPv6 address in brackets, as HOST:PORT writes it.
    private static func bracketed(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// The Levenshtein distance between two option names (insertions, deletions, substitutions).
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
