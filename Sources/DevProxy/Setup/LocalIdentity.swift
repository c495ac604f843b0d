import Foundation

/// Who is running DevProxy: the email an intermediate is issued for.
public enum LocalIdentity {
    /// `git config user.email` when set, else `$USER@<hostname>` (with `.local` added to a
    /// dotless host name so it is a valid address).
    ///
    /// - Parameter environment: where `DEVPROXY_EMAIL` and `USER` are read, and git's environment.
    public static func email(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let override = environment["DEVPROXY_EMAIL"], !override.isEmpty { return override }
        if let git = gitEmail(environment: environment) { return git }
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
