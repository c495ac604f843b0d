import Foundation

/// A Python server run for a test: `python3 SCRIPT ARGUMENTS…`, which prints the port it listens
/// on as its first line and ends when its standard input closes (SIGTERM may be ignored under the
/// test runner); stopped when released.
public final class ScriptServer {
    public let port: Int
    private let process = Process()
    private let stdin = Pipe()

    /// - Parameters:
    ///   - arguments: the script's path and its arguments.
    ///   - hint: said after the failure when no port came (`is grpcio installed?`).
    ///   - quiet: the script's standard error goes nowhere.
    public init(_ arguments: [String], hint: String = "", quiet: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        let line = stdout.fileHandleForReading.readLine()
        guard let port = Int(line) else {
            process.terminate()
            let name = URL(fileURLWithPath: arguments.first ?? "python3").lastPathComponent
            throw TestFailure("\(name) did not print its port (got \"\(line)\")" + (hint.isEmpty ? "" : "; \(hint)"))
        }
        self.port = port
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        // SIGKILL, not terminate(): a child spawned from a dispatch worker thread inherits its
        // blocked signal mask, so SIGTERM may never arrive; closing stdin already asked it to end.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
