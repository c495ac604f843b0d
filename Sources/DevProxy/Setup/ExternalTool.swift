import Foundation

/// A program a trust store drives (`update-ca-certificates`, `certutil`, `keytool`, `security`),
/// run to completion with its output captured.
///
/// Spawned with `posix_spawnp` rather than Foundation's `Process`, as `LocalIdentity` does, and
/// with standard input from /dev/null so a tool that would prompt fails instead of waiting.
struct ExternalTool: Sendable {
    /// What a finished run left behind.
    struct Outcome: Sendable {
        let status: Int32
        /// Standard output and standard error, interleaved as written.
        let output: String

        /// The last non-empty line, for an error message.
        var lastLine: String {
            output.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                .map(String.init) ?? "no output"
        }
    }

    /// The name or path to run; a bare name is looked up on PATH.
    let executable: String

    init(_ executable: String) {
        self.executable = executable
    }

    /// The full path of the program, or nil when it is not installed.
    func location(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if executable.contains("/") { return FileManager.default.isExecutableFile(atPath: executable) ? executable : nil }
        let path = environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        // sbin is often missing from a user's PATH, yet update-ca-certificates lives there.
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin"]
        return directories.map { $0 + "/" + executable }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether the program is installed.
    var isInstalled: Bool { location() != nil }

    /// Runs the program with `arguments` and waits for it.
    ///
    /// - Parameter environment: variables added to this process's environment (keytool's store
    ///   password travels this way, never in argv).
    /// - Throws: `TrustStoreError` `.toolMissing` when it is not installed or cannot start.
    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Outcome {
        guard let path = location() else {
            throw TrustStoreError(.toolMissing, "\(executable) is not installed")
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw TrustStoreError(.toolFailed, "cannot create a pipe for \(executable)") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDERR_FILENO)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        let environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        close(writeEnd)
        guard spawned == 0 else {
            throw TrustStoreError(.toolMissing, "cannot run \(path): \(String(cString: strerror(spawned)))")
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
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
        // WEXITSTATUS, or 128 + the signal for a killed tool.
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Outcome(status: code, output: String(decoding: output, as: UTF8.self))
    }

    /// Runs the program and throws `.toolFailed` with its last line unless it exits 0.
    @discardableResult
    func check(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        let outcome = try run(arguments, environment: environment)
        guard outcome.status == 0 else {
            throw TrustStoreError(.toolFailed, "\(executable) \(arguments.first ?? "") failed (exit \(outcome.status)): \(outcome.lastLine)")
        }
        return outcome
    }
}
