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
/// network namespace (`devproxy exec`, WireGuard devices, LAN devices) stay unknown, silently.
/// Elsewhere (macOS) every client stays unknown.
///
/// The descriptor scan is the expensive part, so it is bounded: the processes that owned a
/// client's socket lately are looked at first (a client opening one connection after another),
/// then the others newest (highest pid) first, and the search gives up past `budget`.
final class SocketOwners: Sendable {
    /// The one the proxy's connections ask.
    static let shared = SocketOwners()

    /// How long one lookup may scan `/proc` before leaving the process unknown.
    let budget: Duration
    /// The pids that owned a client's socket lately, the latest first (at most `recentLimit`).
    private let recent = Mutex<[Int32]>([])
    private static let recentLimit = 8

    /// - Parameters:
    ///   - budget: how long one lookup may scan `/proc`.
    ///   - recent: owners to look at first, the latest first (a test's seed).
    init(budget: Duration = .milliseconds(20), recent: [Int32] = []) {
        self.budget = budget
        self.recent.withLock { $0 = recent }
    }

    /// The pids that owned a client's socket lately, the latest first.
    var recentOwners: [Int32] { recent.withLock { $0 } }

    /// The process that owns the other end of `socket` (a connection the proxy accepted), or nil
    /// when it is not on this machine, not this user's, or not found within `budget`.
    func owner(ofPeerOf socket: Socket) -> Flow.ClientProcess? {
        #if os(Linux)
        guard let peer = socket.peerAddress, let local = socket.localAddress,
              let entry = SocketDiagnostics.find(local: peer, remote: local) else { return nil }
        // Another user's descriptors cannot be read: no need to look (root may read them all).
        let user = geteuid()
        guard user == 0 || entry.uid == user, let pid = pid(holding: entry.inode) else { return nil }
        return Self.process(pid)
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// The process with `socket:[inode]` among its descriptors: the recent owners first, then
    /// every process newest first, until `budget` has passed.
    func pid(holding inode: UInt32) -> Int32? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(budget.components.seconds) * 1_000_000_000
            + UInt64(budget.components.attoseconds / 1_000_000_000)
        let target = Array("socket:[\(inode)]".utf8)
        let first = recent.withLock { $0 }
        for pid in first where Self.holds(pid, target) {
            remember(pid)
            return pid
        }
        for pid in Self.processes() where !first.contains(pid) {
            if DispatchTime.now().uptimeNanoseconds >= deadline { return nil }
            if Self.holds(pid, target) {
                remember(pid)
                return pid
            }
        }
        return nil
    }

    private func remember(_ pid: Int32) {
        recent.withLock { pids in
            pids.removeAll { $0 == pid }
            pids.insert(pid, at: 0)
            if pids.count > Self.recentLimit { pids.removeLast() }
        }
    }

    /// Every pid in `/proc`, highest (newest, until the numbers wrap) first.
    private static func processes() -> [Int32] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let pid = withUnsafeBytes(of: entry.pointee.d_name) { name -> Int32 in
                var value: Int32 = 0
                for byte in name {
                    if byte == 0 { break }
                    guard (48...57).contains(byte), value < Int32.max / 10 - 9 else { return 0 }
                    value = value * 10 + Int32(byte - 48)
                }
                return value
            }
            if pid > 0 { pids.append(pid) }
        }
        return pids.sorted(by: >)
    }

    /// Whether one of `pid`'s descriptors is the socket `target` (`socket:[INODE]`); false when
    /// they cannot be read (another user's process, one that exited).
    private static func holds(_ pid: Int32, _ target: [UInt8]) -> Bool {
        guard let directory = opendir("/proc/\(pid)/fd") else { return false }
        defer { closedir(directory) }
        let descriptors = dirfd(directory)
        var link = [CChar](repeating: 0, count: 64)
        while let entry = readdir(directory) {
            // Only symbolic links: skips `.` and `..` without a syscall.
            guard entry.pointee.d_type == UInt8(DT_LNK) else { continue }
            let length = withUnsafeBytes(of: entry.pointee.d_name) { name in
                readlinkat(descriptors, name.baseAddress!.assumingMemoryBound(to: CChar.self), &link, link.count)
            }
            guard length == target.count else { continue }
            if link.withUnsafeBytes({ $0.prefix(length).elementsEqual(target) }) { return true }
        }
        return false
    }

    /// `pid`'s name (`/proc/PID/comm`) and executable (`/proc/PID/exe`, nil when unreadable).
    static func process(_ pid: Int32) -> Flow.ClientProcess? {
        guard let comm = contents("/proc/\(pid)/comm") else { return nil }
        let name = String(decoding: comm.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        var target = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink("/proc/\(pid)/exe", &target, target.count)
        let exe = length > 0 ? String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
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
