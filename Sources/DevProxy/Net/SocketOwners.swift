#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Which process on this machine opened a client's connection to the proxy, as Proxyman and
/// Charles show the client app beside each flow.
///
/// Linux only: the kernel names the client socket's inode (`SocketDiagnostics`), and the process
/// is the one with `socket:[INODE]` among its `/proc/PID/fd/*`. Only processes whose descriptors
/// this user may read (its own) can be found; another user's, a peer on another host or in another
/// network namespace (a container, WireGuard devices, LAN devices) stay unknown, silently (`devproxy exec
/// --transparent`'s bridge names its programs itself: `NamespaceCapture.reportedClient`).
/// Elsewhere (macOS) every client stays unknown.
///
/// The descriptor scan is the expensive part, so it is bounded: the processes that owned a
/// client's socket lately are looked at first (a client opening one connection after another),
/// then the others newest (highest pid) first, and the search gives up past `budget` of the
/// looking thread's CPU time, or past `wallLimit` however busy the machine is. In a recent
/// owner the descriptor numbers its sockets had are read first (the kernel hands out the lowest
/// free number, so a client's next socket mostly takes one its earlier connections had), before a
/// whole listing; the owner's other sockets read on the way are noted, so that a client's
/// connections opened by then and not yet looked up (a browser's six at once) need no reading.
final class SocketOwners: Sendable {
    /// The one the proxy's connections ask.
    static let shared = SocketOwners()

    /// How much CPU time one lookup may spend scanning `/proc` before leaving the process unknown.
    /// CPU time, not time passed: on a busy machine (a CI run, a build beside the proxy) the scan's
    /// thread waits for a core between reads, and a budget of time passed found nothing there
    /// (python3's connection at load 5, `ClientProcessProxyTests`).
    let budget: Duration
    /// How long a lookup may take however little CPU it has had: the connection waits for it.
    let wallLimit: Duration
    /// A process that owned a client's socket lately, and the descriptor numbers those sockets had.
    private struct Owner {
        let pid: Int32
        /// The latest first, at most `descriptorLimit`.
        var descriptors: [Int32] = []
    }

    /// The latest owner first (at most `recentLimit`).
    private let recent = Mutex<[Owner]>([])
    private static let recentLimit = 8
    private static let descriptorLimit = 16
    /// Socket inodes the scans read and not yet asked for, with their process; each is taken
    /// once (one lookup per connection), and the lot dropped past `seenLimit`.
    private let seen = Mutex<[UInt32: Int32]>([:])
    private static let seenLimit = 4096
    /// The name each recent owner had, by pid, with the executable it was read for (`process`).
    private let names = Mutex<[Int32: (exe: String, name: String)]>([:])

    /// - Parameters:
    ///   - budget: how much CPU time one lookup may spend scanning `/proc`.
    ///   - wallLimit: how long one lookup may take.
    ///   - recent: owners to look at first, the latest first (a test's seed).
    init(budget: Duration = .milliseconds(20), wallLimit: Duration = .milliseconds(100), recent: [Int32] = []) {
        self.budget = budget
        self.wallLimit = wallLimit
        self.recent.withLock { $0 = recent.map { Owner(pid: $0) } }
    }

    /// The pids that owned a client's socket lately, the latest first.
    var recentOwners: [Int32] { recent.withLock { $0.map(\.pid) } }

    /// The process a scan saw holding socket `inode`, not yet asked for.
    func noted(_ inode: UInt32) -> Int32? { seen.withLock { $0[inode] } }

    /// The process that owns the other end of `socket` (a connection the proxy accepted), or nil
    /// when it is not on this machine, not this user's, or not found within `budget`.
    /// `destination`: where that process's socket is connected, when not to `socket`'s own address
    /// (a connection a `REDIRECT` rule sent to a transparent listener: its original destination).
    func owner(ofPeerOf socket: Socket, connectedTo destination: SocketAddress? = nil) -> Flow.ClientProcess? {
        #if os(Linux)
        guard let peer = socket.peerAddress, let local = destination ?? socket.localAddress,
              let entry = SocketDiagnostics.find(local: peer, remote: local) else { return nil }
        // Another user's descriptors cannot be read: no need to look (root may read them all).
        let user = geteuid()
        guard user == 0 || entry.uid == user, let pid = pid(holding: entry.inode) else { return nil }
        return process(pid)
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// The process with `socket:[inode]` among its descriptors: the recent owners first, then
    /// every process newest first, until `budget` of this thread's CPU time or `wallLimit` has passed.
    func pid(holding inode: UInt32) -> Int32? {
        let cpuDeadline = Self.threadCPUNanoseconds() + Self.nanoseconds(budget)
        let wallDeadline = DispatchTime.now().uptimeNanoseconds + Self.nanoseconds(wallLimit)
        if let pid = seen.withLock({ $0.removeValue(forKey: inode) }) {
            remember(pid, descriptor: nil)
            return pid
        }
        let first = recent.withLock { $0 }
        for owner in first {
            if let descriptor = holds(owner.pid, inode, trying: owner.descriptors) {
                remember(owner.pid, descriptor: descriptor)
                return owner.pid
            }
        }
        for pid in Self.processes() where !first.contains(where: { $0.pid == pid }) {
            if Self.threadCPUNanoseconds() >= cpuDeadline || DispatchTime.now().uptimeNanoseconds >= wallDeadline {
                return nil
            }
            if let descriptor = holds(pid, inode, trying: []) {
                remember(pid, descriptor: descriptor)
                return pid
            }
        }
        return nil
    }

    /// The CPU time this thread has had (`CLOCK_THREAD_CPUTIME_ID`).
    private static func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) == 0 else { return 0 }
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }

    private func remember(_ pid: Int32, descriptor: Int32?) {
        recent.withLock { owners in
            var owner = owners.first { $0.pid == pid } ?? Owner(pid: pid)
            owners.removeAll { $0.pid == pid }
            if let descriptor {
                owner.descriptors.removeAll { $0 == descriptor }
                owner.descriptors.insert(descriptor, at: 0)
                if owner.descriptors.count > Self.descriptorLimit { owner.descriptors.removeLast() }
            }
            owners.insert(owner, at: 0)
            if owners.count > Self.recentLimit { owners.removeLast() }
        }
    }

    /// Every pid in `/proc`, highest (newest, until the numbers wrap) first.
    private static func processes() -> [Int32] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            if let pid = number(of: entry), pid > 0 { pids.append(pid) }
        }
        return pids.sorted(by: >)
    }

    /// The number a directory entry is named (a pid in `/proc`, a descriptor in `/proc/PID/fd`);
    /// nil for any other name.
    private static func number(of entry: UnsafeMutablePointer<dirent>) -> Int32? {
        withUnsafeBytes(of: entry.pointee.d_name) { name -> Int32? in
            var value: Int32 = 0
            for byte in name {
                if byte == 0 { break }
                guard (48...57).contains(byte), value < Int32.max / 10 - 9 else { return nil }
                value = value * 10 + Int32(byte - 48)
            }
            return value
        }
    }

    /// The number of `pid`'s descriptor that is the socket `inode`, the numbers in `trying` read
    /// first; nil when none is, or they cannot be read (another user's process, one that exited).
    /// A whole listing notes the process's other sockets in `seen`.
    private func holds(_ pid: Int32, _ inode: UInt32, trying: [Int32]) -> Int32? {
        let descriptors = open("/proc/\(pid)/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptors >= 0 else { return nil }
        var link = [UInt8](repeating: 0, count: 64)
        /// The socket inode of the descriptor named `name` (a C string), nil for anything else.
        func socket(_ name: UnsafePointer<CChar>) -> UInt32? {
            let length = link.withUnsafeMutableBytes { buffer in
                readlinkat(descriptors, name, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), buffer.count)
            }
            return length > 0 ? Self.socketInode(link[..<length]) : nil
        }
        // The sockets read on the way are the client's other connections, most not yet asked for.
        var others: [UInt32: Int32] = [:]
        defer { note(others) }
        // The least recently matched number first: a client that keeps N connections open and
        // replaces each as it ends gives its new socket the number the oldest of them just freed.
        for descriptor in trying.reversed() {
            guard let held = String(descriptor).withCString(socket) else { continue }
            if held == inode {
                close(descriptors)
                return descriptor
            }
            others[held] = pid
        }
        guard let directory = fdopendir(descriptors) else {
            close(descriptors)
            return nil
        }
        defer { closedir(directory) }
        var found: Int32?
        while let entry = readdir(directory) {
            // Only symbolic links: skips `.` and `..` without a syscall.
            guard entry.pointee.d_type == UInt8(DT_LNK) else { continue }
            let held = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                socket(bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            guard let held else { continue }
            if held == inode { found = Self.number(of: entry) ?? -1 } else { others[held] = pid }
        }
        if found == nil { others.removeAll() }
        return found
    }

    /// Notes sockets a scan read in `seen`.
    private func note(_ sockets: [UInt32: Int32]) {
        guard !sockets.isEmpty else { return }
        seen.withLock { seen in
            if seen.count + sockets.count > Self.seenLimit { seen.removeAll() }
            seen.merge(sockets) { $1 }
        }
    }

    /// `INODE` of a descriptor's link `socket:[INODE]`; nil for any other.
    private static func socketInode(_ link: ArraySlice<UInt8>) -> UInt32? {
        let prefix = Array("socket:[".utf8)
        guard link.count > prefix.count + 1, link.starts(with: prefix), link.last == UInt8(ascii: "]") else {
            return nil
        }
        var value: UInt32 = 0
        for byte in link.dropFirst(prefix.count).dropLast() {
            guard (48...57).contains(byte) else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = times &+ UInt32(byte - 48)
        }
        return value
    }

    /// `pid`'s name (`/proc/PID/comm`) and executable (`/proc/PID/exe`, nil when unreadable).
    ///
    /// The name is read again only when the executable changed since the pid's last lookup: an
    /// `exec` (`sh -c 'exec curl …'`) changes both, and a client's next connections cost one
    /// `readlink`. (A name a process gives itself, `prctl(PR_SET_NAME)`, shows from its next `exec`.)
    func process(_ pid: Int32) -> Flow.ClientProcess? {
        var target = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink("/proc/\(pid)/exe", &target, target.count)
        let exe = length > 0
            ? String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        if let exe, let known = names.withLock({ $0[pid] }), known.exe == exe {
            return Flow.ClientProcess(pid: Int(pid), name: known.name, exe: exe)
        }
        guard let comm = Self.contents("/proc/\(pid)/comm") else { return nil }
        let name = String(decoding: comm.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        if let exe {
            names.withLock { names in
                if names.count >= Self.recentLimit * 8 { names.removeAll() }
                names[pid] = (exe, name)
            }
        }
        return Flow.ClientProcess(pid: Int(pid), name: name, exe: exe)
    }

    /// A small `/proc` file's bytes (at most 256).
    private static func contents(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return count > 0 ? Array(bytes.prefix(count)) : nil
    }
    #endif
}
