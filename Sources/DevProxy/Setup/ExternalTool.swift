import Foundation

/// A program a trust store drives (`update-ca-certificates`, `certutil`, `keytool`, `security`),
/// run to completion with its output captured.
///
/// Spawned by `ChildProcess` (not Foundation's `Process`), with standard input from /dev/null so
/// a tool that would prompt fails instead of waiting.
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
        let environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        do {
            let finished = try ChildProcess.run(path, arguments, environment: environment, standardError: true)
            return Outcome(status: finished.status, output: String(decoding: finished.output, as: UTF8.self))
        } catch .pipe {
            throw TrustStoreError(.toolFailed, "cannot create a pipe for \(executable)")
        } catch .spawn(let code) {
            throw TrustStoreError(.toolMissing, "cannot run \(path): \(String(cString: strerror(code)))")
        }
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
