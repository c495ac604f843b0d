import Foundation
import TestSupport

/// `devproxy web FILE --web 127.0.0.1:0` as a child process: the web UI over a saved session or
/// flow log, with no proxy. Waits for its `web ui: URL` line; killed when released.
final class DevProxyViewer {
    private let process = Process()
    /// `http://127.0.0.1:PORT`.
    let base: String
    /// The UI's token (the URL's `token=`).
    let token: String
    /// The lines it printed on stdout before its `web ui:` line (`imported N flow(s) from FILE`).
    private(set) var printed: [String] = []

    /// - Parameters:
    ///   - stderr: a file for what it prints on stderr (its warnings); else discarded.
    ///   - options: more of `devproxy web`'s options (`--proto FILE`).
    init(_ file: String, stderr: String? = nil, options: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: Subprocess.devproxy)
        process.arguments = ["web", file, "--web", "127.0.0.1:0"] + options
        let stdout = Pipe()
        process.standardOutput = stdout
        if let stderr { FileManager.default.createFile(atPath: stderr, contents: nil) }
        process.standardError = FileHandle(forWritingAtPath: stderr ?? "/dev/null")
        try process.run()
        var line = ""
        let deadline = Date().addingTimeInterval(20)
        while !line.hasPrefix("web ui:") && Date() < deadline && process.isRunning {
            if !line.isEmpty { printed.append(line) }
            line = stdout.fileHandleForReading.readLine()
        }
        guard let match = try? #/^web ui: (http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{32})$/#.wholeMatch(in: line) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("devproxy web \(file) printed no web ui line: \(line)")
        }
        base = String(match.1)
        token = String(match.2)
    }

    deinit {
        // Children inherit a blocked SIGTERM: SIGKILL is the signal that always ends them.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
