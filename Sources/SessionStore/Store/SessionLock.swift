import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One writer to a session at a time: an exclusive `flock` on `PATH-lock` beside the session,
/// holding the writer's pid, taken when a store opens for writing and let go when it closes (or
/// its process ends, however it ends).
///
/// Two proxies given the same `--session FILE` each kept their own count of the compressed frames
/// their flows' records go into: the second's first batch collided with the first's frame ids and
/// was rolled back, and from then on one of them lost most of its flows. A second writer is now
/// refused when it opens, with the first one's pid. Readers (`devproxy web FILE`, the session
/// list) take no lock: they may watch a session that is being written.
///
/// The lock is on a file of its own rather than on the session, whose byte-range locks belong to
/// SQLite (and whose descriptors SQLite closes as it likes, which would drop a POSIX lock of ours).
final class SessionLock: @unchecked Sendable {
    /// The lock file.
    let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// The lock file of the session at `sessionPath`.
    static func path(forSession sessionPath: String) -> String { sessionPath + "-lock" }

    /// Takes the session's lock and writes this process's pid into it.
    /// - Throws: `SessionStoreError(.inUse)` naming the pid that holds it, `.open` when the lock
    ///   file cannot be made.
    static func acquire(sessionPath: String) throws -> SessionLock {
        let path = path(forSession: sessionPath)
        // A holder that lets go unlinks the file: one opened just before that is not the lock any
        // more, so the name is checked to still be the file that was locked.
        for _ in 0..<8 {
            let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw SessionStoreError(.open, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                let holder = readPID(descriptor)
                close(descriptor)
                guard reason == EWOULDBLOCK else {
                    throw SessionStoreError(.open, "cannot lock \(path): \(String(cString: strerror(reason)))")
                }
                throw SessionStoreError(.inUse, "another devproxy\(holder.map { " (pid \($0))" } ?? "") is writing to it")
            }
            var opened = stat(), named = stat()
            guard fstat(descriptor, &opened) == 0, stat(path, &named) == 0,
                  opened.st_dev == named.st_dev, opened.st_ino == named.st_ino else {
                close(descriptor)
                continue
            }
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            return SessionLock(path: path, descriptor: descriptor)
        }
        throw SessionStoreError(.inUse, "another devproxy keeps taking its lock (\(path))")
    }

    /// Whether a writer holds the session at `sessionPath` now.
    static func isHeld(sessionPath: String) -> Bool {
        let descriptor = open(path(forSession: sessionPath), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// Removes the lock file and lets the lock go. Idempotent.
    func release() {
        guard descriptor >= 0 else { return }
        unlink(path)
        close(descriptor)
        descriptor = -1
    }

    /// The pid a holder wrote, if it did.
    private static func readPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
