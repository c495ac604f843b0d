import Foundation

/// Runs a program to completion and captures its output: spawned with `posix_spawnp` (a bare
/// name is looked up on PATH), standard input from /dev/null so a program that would prompt
/// fails instead of waiting, output through a pipe.
///
/// Not Foundation's `Process`, which leaves a monitoring thread and two dispatch threads behind
/// for the life of the proxy. `LocalIdentity` (git) and `ExternalTool` (the trust stores' tools)
/// both run their programs through this.
enum ChildProcess {
    /// How a run ended.
    struct Finished {
        /// The exit status, or 128 + the signal for a killed program.
        let status: Int32
        /// Standard output (and standard error when asked), at most `outputLimit` bytes.
        let output: [UInt8]
    }

    /// Why a program could not be started.
    enum Failure: Error {
        case pipe
        /// `posix_spawnp`'s error number.
        case spawn(Int32)
    }

    /// Runs `program` with `arguments` in `environment` (the whole environment, not added to
    /// this process's) and waits for it.
    ///
    /// - Parameters:
    ///   - standardError: also capture standard error, interleaved with standard output;
    ///     otherwise it goes to /dev/null.
    ///   - outputLimit: bytes of output kept; the rest is read and dropped, so the program
    ///     never blocks on a full pipe.
    static func run(_ program: String, _ arguments: [String], environment: [String: String],
                    standardError: Bool, outputLimit: Int = .max) throws(Failure) -> Finished {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw .pipe }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        if standardError {
            posix_spawn_file_actions_adddup2(&actions, writeEnd, STDERR_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, program, &actions, nil, argv, envp)
        close(writeEnd)
        guard spawned == 0 else { throw .spawn(spawned) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(readEnd, &chunk, chunk.count)
            if count > 0 {
                output += chunk[0..<min(count, max(0, outputLimit - output.count))]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WEXITSTATUS, or 128 + the signal for a killed program.
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Finished(status: code, output: output)
    }
}
