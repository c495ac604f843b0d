import Foundation
import TestSupport

/// `devproxy run` as a child process, as a user starts it. Stopped (SIGTERM) when released.
final class DevProxyProcess {
    let process = Process()
    let port: Int
    /// Everything printed before `listening on` (and before `web ui:` when waited for).
    let banner: String
    /// The `web ui: URL` line's URL, when `webUI` was asked for.
    let webUI: String?
    /// The `web ui:` URL's address without its path and token (`http://127.0.0.1:PORT`), and the
    /// token, for a test that calls the web UI's API with `Authorization: Bearer TOKEN`.
    static func webAPI(_ ui: String) -> (base: String, token: String) {
        (String(ui.prefix { $0 != "?" }.dropLast()), String(ui.split(separator: "=").last ?? ""))
    }
    /// What it prints after the banner, for a test that reads it while the proxy runs.
    let stdout = Pipe()
    private let stderr = Pipe()

    /// Starts `devproxy run ARGS --listen 127.0.0.1:0` and waits for its `listening on` line.
    /// With `webUI`, also waits for the `web ui: URL` line. Under `launcher` (`ip netns exec NAME`,
    /// which execs it: the process is still devproxy). In `directory` when given.
    init(_ arguments: [String], environment: [String: String] = [:], listen: Bool = true, webUI: Bool = false,
         launcher: [String] = [], directory: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: launcher.isEmpty ? Subprocess.devproxy : "/usr/bin/env")
        process.arguments = (launcher.isEmpty ? [] : launcher + [Subprocess.devproxy])
            + ["run"] + arguments + (listen ? ["--listen", "127.0.0.1:0"] : [])
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        // With the flow log or HAR on stdout, the status lines go to stderr.
        let statusLines = arguments.contains("/dev/stdout") ? stderr : stdout
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while found == nil && Date() < deadline && process.isRunning {
            let line = statusLines.fileHandleForReading.readLine()
            lines.append(line)
            // `listening on 127.0.0.1:PORT (regular)`: the first listener's port.
            if line.hasPrefix("listening on ") {
                let address = line.dropFirst("listening on ".count).split(separator: " ").first ?? ""
                if let colon = address.lastIndex(of: ":") { found = Int(address[address.index(after: colon)...]) }
            }
            if line.isEmpty && !process.isRunning { break }
        }
        let webUIPrefix = "web ui: "
        while webUI && found != nil && !lines.contains(where: { $0.hasPrefix(webUIPrefix) }) && Date() < deadline
            && process.isRunning {
            lines.append(statusLines.fileHandleForReading.readLine())
        }
        self.webUI = lines.first { $0.hasPrefix(webUIPrefix) }.map { String($0.dropFirst(webUIPrefix.count)) }
        banner = lines.joined(separator: "\n")
        guard let found, !webUI || self.webUI != nil else {
            process.terminate()
            let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestFailure("devproxy did not start: \(banner) \(errors)")
        }
        port = found
    }

    deinit {
        if process.isRunning { _ = stop() }
    }

    /// SIGTERM, then waits (bounded) for the exit; returns the status and what it printed after the banner.
    /// The bound covers a shutdown that waits for connections still recording (grace 5 s, the cut
    /// 2 s, up to 30 s for the records): a SIGKILL before that left spool files behind under load.
    func stop(timeout: TimeInterval = 45) -> (status: Int32, stdout: String, stderr: String) {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, out, err)
    }

    /// Voluntary context switches of all the process's threads so far (each is a wake-up after
    /// sleeping), from /proc/PID/task/*/status.
    var voluntaryContextSwitches: Int {
        let tasks = "/proc/\(process.processIdentifier)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return ids.reduce(0) { total, id in
            let status = (try? String(contentsOfFile: "\(tasks)/\(id)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return total + (line.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0)
        }
    }

    /// Peak resident memory so far (VmHWM), in bytes.
    var peakResidentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
}

extension DevProxyProcess {
    /// A page script (`WebUIBrowser.run`: `script` in TestSupport's Resources, `only` one check of
    /// it) run in headless Chromium against this proxy's web UI (started with `webUI: true`), its
    /// requests through this proxy.
    func runPage(shots: String? = nil, only: String? = nil, script: String = "webui_browser.py",
                 timeout: TimeInterval = 180) throws -> Subprocess.Result {
        try WebUIBrowser.run(ui: try require(webUI, "no web ui: line"), proxy: "http://127.0.0.1:\(port)", shots: shots,
                             only: only, script: script, timeout: timeout)
    }
}
