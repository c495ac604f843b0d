import Foundation

/// A process's resources as Linux reports them (`/proc/PID`), for leak checks: this test
/// process (`ProcessProbe.current`, whose counts also see suites running in parallel) or a
/// child such as a `devproxy run` the test started, whose counts are its own alone.
struct ProcessProbe {
    /// The `/proc` entry: `self` or a process id.
    let process: String

    static let current = ProcessProbe(process: "self")

    init(process: String) { self.process = process }
    init(pid: Int32) { process = String(pid) }

    /// Open file descriptors (`/proc/PID/fd`).
    func descriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd").count) ?? -1
    }

    /// Threads (`Threads:` in `/proc/PID/status`).
    func threads() -> Int { status("Threads:") }

    /// Resident set size in KiB (`VmRSS:`).
    func residentKiB() -> Int { status("VmRSS:") }

    /// Waits up to `timeout` for the thread and descriptor counts to come back within `slack`.
    func settle(threads: Int? = nil, descriptors: Int? = nil, slack: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let threadsOK = threads.map { self.threads() <= $0 + slack } ?? true
            let descriptorsOK = descriptors.map { self.descriptors() <= $0 + slack } ?? true
            if threadsOK && descriptorsOK { return true }
            if Date() > deadline { return false }
            usleep(100_000)
        }
    }

    private func status(_ key: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return -1 }
        return Int(line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
    }

    /// The process's TCP sockets (not listening) bound to local `port` (or connected to remote
    /// `port` when `remote`), from `/proc/PID/fd` and `/proc/net/tcp{,6}`: unlike process-wide
    /// counts, this sees only the connections of one server even while other tests run in parallel.
    func connections(port: Int, remote: Bool = false) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd")) ?? []
        var inodes = Set<String>()
        for fd in fds {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process)/fd/" + fd),
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
    func settle(connectionsTo port: Int, remote: Bool = false, atMost limit: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while connections(port: port, remote: remote) > limit {
            if Date() > deadline { return false }
            usleep(100_000)
        }
        return true
    }
}
