import CertAuthority
import Foundation

/// The file and directory names inside a config file (`run --config FILE`), read against the
/// file's own directory rather than the working directory, with a leading `~` expanded: a team
/// config checked into a repository (`"ca_dir": "ca"`, `"upstream_ca": ["certs/staging.pem"]`)
/// names the same files from wherever it is run, as nginx reads an `include` and as ssh_config's
/// users expect of `~`. Names given on the command line are the shell's and stay as they are.
enum ConfigFilePaths {
    /// Where an option's value names a file.
    enum Shape {
        /// The whole value (`"log": "flows.jsonl"`).
        case whole
        /// The whole value, unless it is one of these words (`"session": "new"`).
        case wholeExcept(Set<String>)
        /// What follows the first `=` (`"leaf_key": ["api.acme.dev=debug-leaf.key"]`).
        case afterEquals
        /// What follows the first `=`, or the whole value without one (`--client-cert [GLOB=]FILE`).
        case afterOptionalEquals
        /// What follows the first `=`, split at the first `,` into two names
        /// (`--verify-signature GLOB=KEYFILE[,SCHEME.json]`).
        case afterEqualsCommaSeparated
        /// The last part of a map rule, its first character the separator (`--map-local |REGEX|PATH`).
        case mapTarget
        /// The last part of a `--modify-headers` or `--modify-body` rule when it is `@FILE`
        /// (`|NAME|@token.txt`, `|REGEX|@replacement.json`).
        case headerValueFile
    }

    /// The options of `devproxy run` whose values name files or directories, and how.
    static let shapes: [String: Shape] = [
        "ca-dir": .whole, "intermediate": .whole, "log": .whole, "har": .whole, "upstream-ca": .whole, "keylog": .whole,
        "proxy-auth": .whole, "passphrase-file": .whole, "reports": .whole, "web-password-file": .whole,
        "client-cert-passphrase-file": .whole, "upstream-proxy-auth-file": .whole, "proto": .whole,
        "session": .wholeExcept(["new", "off"]), "leaf-key": .afterEquals, "client-cert": .afterOptionalEquals,
        "verify-signature": .afterEqualsCommaSeparated, "map-local": .mapTarget,
        "modify-headers": .headerValueFile, "modify-body": .headerValueFile,
    ]

    /// `value` of `option`, as written in a config file in `directory`, with the names in it read
    /// against that directory (`""` for the working directory) and a leading `~` or `~USER` expanded.
    /// - Throws: `CommandFailure` for a `~USER` that names no user here.
    static func resolve(_ value: String, option: String, directory: String) throws -> String {
        let place = { (name: Substring) throws -> String in try resolve(path: String(name), directory: directory, option: option) }
        switch shapes[option] {
        case nil: return value
        case .whole?: return try place(value[...])
        case .wholeExcept(let words)?: return words.contains(value) ? value : try place(value[...])
        case .afterOptionalEquals?:
            guard value.contains("=") else { return try place(value[...]) }
            return try afterEquals(value, place)
        case .afterEquals?: return try afterEquals(value, place)
        case .mapTarget?:
            // `|FILTER|REGEX|PATH` or `|REGEX|PATH`: the path is what follows the second (else the
            // first) separator after the leading one, as `MapRules.parts` splits it.
            guard let separator = value.first else { return value }
            var parts = value.dropFirst().split(separator: separator, maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, let last = parts.last, !last.isEmpty else { return value }
            parts[parts.count - 1] = Substring(try place(last))
            return String(separator) + parts.joined(separator: String(separator))
        case .headerValueFile?:
            guard let separator = value.first else { return value }
            var parts = value.dropFirst().split(separator: separator, maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, let last = parts.last, last.hasPrefix("@"), last.count > 1 else { return value }
            parts[parts.count - 1] = "@" + Substring(try place(last.dropFirst()))
            return String(separator) + parts.joined(separator: String(separator))
        case .afterEqualsCommaSeparated?:
            return try afterEquals(value) { files in
                try files.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(place)
                    .joined(separator: ",")
            }
        }
    }

    /// `GLOB=` as it is, the rest through `place`; a value without `=` as it is (its option's
    /// parser says what is wrong with it).
    private static func afterEquals(_ value: String, _ place: (Substring) throws -> String) throws -> String {
        guard let equals = value.firstIndex(of: "=") else { return value }
        let rest = value[value.index(after: equals)...]
        return String(value[...equals]) + (rest.isEmpty ? "" : try place(rest))
    }

    /// One name: `~`, `~/…` and `~USER/…` expanded; a relative name put in `directory`; an
    /// absolute one as it is.
    static func resolve(path: String, directory: String, option: String) throws -> String {
        if path.hasPrefix("~") {
            let slash = path.firstIndex(of: "/") ?? path.endIndex
            let user = String(path[path.index(after: path.startIndex)..<slash])
            guard let home = homeDirectory(of: user.isEmpty ? nil : user) else {
                let key = option.replacingOccurrences(of: "-", with: "_")
                throw CommandFailure(user.isEmpty
                    ? "config key \"\(key)\": \(path) starts with ~, but HOME is not set and this user has no home directory"
                    : "config key \"\(key)\": \(path) starts with ~\(user), but there is no user \(user) here")
            }
            return home + path[slash...]
        }
        guard !path.hasPrefix("/") else { return path }
        return PathName.join(directory, path)
    }

    /// `$HOME` (else the password database's entry) for nil; `user`'s home directory otherwise.
    private static func homeDirectory(of user: String?) -> String? {
        if user == nil, let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        let entry = user.map { getpwnam($0) } ?? getpwuid(getuid())
        guard let entry, let directory = entry.pointee.pw_dir else { return nil }
        let home = String(cString: directory)
        return home.isEmpty ? nil : home
    }
}
