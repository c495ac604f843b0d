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
        var host = ProcessInfo.processInfo.hostName.lowercased()
        if host.isEmpty || host == "localhost" { host = "devproxy" }
        if !host.contains(".") { host += ".local" }
        return "\(user)@\(host)"
    }

    /// `git config user.email` run with `environment`; nil when git is missing, fails or prints
    /// nothing.
    ///
    /// Spawned directly (`posix_spawnp`, output through a pipe) rather than with Foundation's
    /// `Process`, which leaves a monitoring thread and two dispatch threads behind for the
    /// life of the proxy.
    static func gitEmail(environment: [String: String], git: String = "git") -> String? {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return nil }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        let words: [String] = [git, "config", "user.email"]
        let argv = words.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, git, &actions, nil, argv, envp)
        close(writeEnd)
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while output.count < 4096 {
            let count = read(readEnd, &chunk, chunk.count)
            if count > 0 {
                output += chunk[0..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Exited with 0 (git says 1 when the key is not set).
        guard status == 0 else { return nil }
        let email = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return email.isEmpty ? nil : email
    }
}
