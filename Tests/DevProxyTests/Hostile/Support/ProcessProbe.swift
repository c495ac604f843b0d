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
        return Int(line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
    }

    /// This process's TCP sockets (not listening) bound to local `port` (or connected to remote
    /// `port` when `remote`), from
    /// `/proc/self/fd` and `/proc/net/tcp{,6}`: unlike process-wide counts, this sees only the
    /// connections of one server even while other tests run in parallel.
    static func connections(port: Int, remote: Bool = false) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var inodes = Set<String>()
        for fd in fds {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                  link.hasPrefix("socket:[") else { continue }
            inodes.insert(String(link.dropFirst(8).dropLast()))
        }
        var count = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, inodes.contains(String(fields[9])), fields[3] != "0A" else { continue }
                let address = remote ? fields[2] : fields[1]
                if address.split(separator: ":").last.flatMap({ Int($0, radix: 16) }) == port { count += 1 }
            }
        }
        return count
    }

    /// Waits up to `timeout` until `connections(port:remote:)` is at most `limit`.
    static func settle(connectionsTo port: Int, remote: Bool = false, atMost limit: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while connections(port: port, remote: remote) > limit {
            if Date() > deadline { return false }
            usleep(100_000)
        }
        return true
    }
}
