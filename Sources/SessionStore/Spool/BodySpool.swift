import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where bodies wait on disk between the proxy and the session store's writer: one 0600 file per
/// body that outgrows the in-memory head, in a 0700 directory, removed when the body is stored,
/// shed or abandoned.
///
/// A capture (the engine's `BodyCapture`) keeps the first `headBytes` of a body in memory and,
/// only when the body goes past them, asks for a `SpoolFile` and writes the rest there, up to
/// `captureLimit`. Bytes on disk are counted against `diskBudget` from the first byte written until
/// the file is removed (when the last reference to it goes): so the files of running exchanges and
/// those queued for the writer are bounded together. Files are named `PID-N.body`; at start, files
/// of processes that no longer run are removed (a crashed run's).
///
/// Thread-safe.
public final class BodySpool: @unchecked Sendable {
    /// Bytes of a body kept in memory before it goes to a file: small bodies never touch the disk.
    public static let headBytes = 64 * 1024
    /// The default bound on spooled bytes on disk: 1 GiB.
    public static let defaultDiskBudget = 1 << 30

    /// The spool directory (0700).
    public let directory: String
    /// Bytes of a body the store wants (its `--store-body-limit`).
    public let storeLimit: Int
    /// Spooled bytes on disk, at most, before further bytes beyond the flow log's part are refused.
    public let diskBudget: Int

    private let lock = NSLock()
    private var bytesOnDisk = 0
    private var filesOpen = 0
    private var nextNumber = 0
    private let prefix = "\(getpid())-"

    /// Creates the directory (0700) if needed and removes stale files of runs that are gone.
    /// - Throws: `SessionStoreError(.open)` when the directory cannot be created.
    public init(directory: String, storeLimit: Int, diskBudget: Int = BodySpool.defaultDiskBudget) throws {
        precondition(storeLimit >= 0 && diskBudget >= 0, "spool limits cannot be negative")
        self.directory = directory
        self.storeLimit = storeLimit
        self.diskBudget = diskBudget
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw SessionStoreError(.open, "cannot create the body spool \(directory): \(error.localizedDescription)")
        }
        // An existing directory keeps its mode unless told: bodies hold decrypted secrets.
        chmod(directory, 0o700)
        removeStale()
    }

    /// Spooled bytes on disk now (running captures and bodies waiting for the store).
    public var spooledBytes: Int { lock.withLock { bytesOnDisk } }
    /// Spool files that exist now.
    public var fileCount: Int { lock.withLock { filesOpen } }

    /// A new empty file (0600), or nil when it cannot be created (the capture keeps the body in
    /// memory instead, as without a spool).
    public func makeFile() -> SpoolFile? {
        let number = lock.withLock { () -> Int in
            nextNumber += 1
            return nextNumber
        }
        let path = "\(directory)/\(prefix)\(number).body"
        let descriptor = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        lock.withLock { filesOpen += 1 }
        return SpoolFile(path: path, descriptor: descriptor, spool: self)
    }

    /// Counts `count` more bytes on disk; false (nothing counted) when that passes the budget,
    /// unless `required` (the flow log's part of a body is written whatever the budget says).
    func reserve(_ count: Int, required: Bool) -> Bool {
        lock.withLock {
            guard required || bytesOnDisk + count <= diskBudget else { return false }
            bytesOnDisk += count
            return true
        }
    }

    /// A file of `count` bytes was removed.
    func released(_ count: Int) {
        lock.withLock {
            bytesOnDisk -= count
            filesOpen -= 1
        }
    }

    /// Removes this process's files (at shutdown, after the store has closed; files still
    /// referenced are removed again, harmlessly, when released).
    public func removeAll() {
        remove { $0.hasPrefix(prefix) }
    }

    /// Removes the files of processes that no longer run, and any with this process's id (left by
    /// an earlier process that had it).
    private func removeStale() {
        remove { name in
            guard let dash = name.firstIndex(of: "-"), let pid = Int32(name[..<dash]) else { return false }
            return pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH)
        }
    }

    private func remove(where matches: (String) -> Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasSuffix(".body") && matches(name) {
            unlink("\(directory)/\(name)")
        }
    }
}
