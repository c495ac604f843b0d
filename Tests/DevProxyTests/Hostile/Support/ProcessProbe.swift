import Foundation

/// This process's resources as Linux reports them, for leak checks.
enum ProcessProbe {
    /// Open file descriptors (`/proc/self/fd`).
    static func descriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Threads (`Threads:` in `/proc/self/status`).
    static func threads() -> Int { status("Threads:") }

    /// Resident set size in KiB (`VmRSS:`).
    static func residentKiB() -> Int { status("VmRSS:") }

    /// Waits up to `timeout` for the thread and descriptor counts to come back within `slack`.
    static func settle(threads: Int? = nil, descriptors: Int? = nil, slack: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let threadsOK = threads.map { self.threads() <= $0 + slack } ?? true
            let descriptorsOK = descriptors.map { self.descriptors() <= $0 + slack } ?? true
            if threadsOK && descriptorsOK { return true }
            if Date() > deadline { return false }
            usleep(100_000)
        }
    }

    private static func status(_ key: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return -1 }
        return Int(line.dropFirst(key.count).split(separator: " ").first ?? "") ?? -1
    }
}
