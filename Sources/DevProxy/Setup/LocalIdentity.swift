import CertAuthority
import Foundation

/// Who is running DevProxy: the email an intermediate is issued for.
public enum LocalIdentity {
    /// `DEVPROXY_EMAIL` when set; else `git config user.email` when it is an address a
    /// certificate can carry (the address of a `Name <address>` value; `.local` added to a dotless
    /// domain, as `ana@laptop`, which git accepts); else `$USER@<hostname>` (with `.local` added
    /// to a dotless host name so it is a valid address). A git value that is none of these is
    /// said in one warning, which names `DEVPROXY_EMAIL`: the first run used to stop on it.
    ///
    /// - Parameter environment: where `DEVPROXY_EMAIL` and `USER` are read, and git's environment.
    public static func email(environment: [String: String] = ProcessInfo.processInfo.environment,
                             warn: ((String) -> Void)? = nil) -> String {
        if let override = environment["DEVPROXY_EMAIL"], !override.isEmpty { return override }
        if let git = gitEmail(environment: environment) {
            if let usable = usable(git) { return usable }
            let fallback = fallbackEmail(environment: environment)
            (warn ?? { StandardError.warn($0) })("git config user.email is \"\(git)\", which is not an email address a certificate can carry; "
                 + "using \(fallback) (set DEVPROXY_EMAIL=you@example.com to choose)")
            return fallback
        }
        return fallbackEmail(environment: environment)
    }

    /// `git`'s value as an address DevProxy accepts: itself, the address inside `Name <address>`,
    /// or with `.local` after a dotless domain; nil when none of these is one.
    static func usable(_ git: String) -> String? {
        var address = git
        if let open = git.lastIndex(of: "<"), let close = git.lastIndex(of: ">"), open < close {
            address = String(git[git.index(after: open)..<close]).trimmingCharacters(in: .whitespaces)
        }
        if let at = address.lastIndex(of: "@"), !address[address.index(after: at)...].contains(".") {
            address += ".local"
        }
        return (try? EmailAddress.validate(address)) == nil ? nil : address
    }

    /// `$USER@<hostname>`.
    private static func fallbackEmail(environment: [String: String]) -> String {
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "developer"
        // A host name is not always a DNS name (`Ana's MacBook`): what an address cannot hold becomes `-`.
        var host = String(ProcessInfo.processInfo.hostName.lowercased().unicodeScalars.map { scalar -> Character in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_" ? Character(scalar) : "-"
        }).split(separator: ".").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "-")) }.filter { !$0.isEmpty }
            .joined(separator: ".")
        if host.isEmpty || host == "localhost" { host = "devproxy" }
        if !host.contains(".") { host += ".local" }
        return "\(user)@\(host)"
    }

    /// `git config user.email` run with `environment`; nil when git is missing, fails or prints
    /// nothing.
    ///
    /// Spawned by `ChildProcess`, not Foundation's `Process`, which leaves threads behind for
    /// the life of the proxy.
    static func gitEmail(environment: [String: String], git: String = "git") -> String? {
        // Exited with 0 (git says 1 when the key is not set); an address fits in 4 KiB.
        guard let finished = try? ChildProcess.run(git, ["config", "user.email"], environment: environment,
                                                   standardError: false, outputLimit: 4096),
              finished.status == 0 else { return nil }
        let email = String(decoding: finished.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return email.isEmpty ? nil : email
    }
}
