import Foundation

/// File writes that never leave half a file behind and set permissions before any byte lands.
public enum SecureFile {
    /// Permissions for private keys, bundles and flow logs.
    public static let privateMode: mode_t = 0o600
    /// Permissions for certificates and CRLs.
    public static let publicMode: mode_t = 0o644
    /// Permissions for the CA directory.
    public static let directoryMode: mode_t = 0o700

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, created
    /// with `mode`, fsynced, then renamed over the target.
    ///
    /// - Parameter exclusive: fail with `.caExists` instead of replacing an existing file.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t, exclusive: Bool = false) throws {
        if exclusive, FileManager.default.fileExists(atPath: path) {
            throw CAError(.caExists, "\(path) already exists; refusing to overwrite it")
        }
        if isStream(path) {
            if let failure = writeInPlace(bytes, to: path) { throw writeError(path: path, errno: failure) }
            return
        }
        let directory = PathName.directory(of: path)
        let temporary = (directory.isEmpty ? "." : directory) + "/.\(PathName.lastComponent(of: path)).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw writeError(path: path, errno: errno) }
        var ok = fchmod(fd, mode) == 0
        ok = ok && bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { if errno == EINTR { continue }; return false }
                offset += written
            }
            return true
        }
        let savedErrno = errno
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let failure = errno == 0 ? savedErrno : errno
            unlink(temporary)
            throw writeError(path: path, errno: failure)
        }
    }

    /// Whether `path` is a stream to write into rather than a file to replace: a device, a FIFO,
    /// or a name under `/dev` or `/proc` (`--out /dev/stdout`, whatever stdout leads to). Renaming
    /// a new file over such a path replaced it: as root, `/dev/stdout` itself became a file.
    public static func isStream(_ path: String) -> Bool {
        if path.hasPrefix("/dev/") || path.hasPrefix("/proc/") { return true }
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFREG
    }

    /// The process's own stdout or stderr when `path` leads to the same file (`/dev/stdout`): a
    /// second open of it would write from offset 0 over what the process prints there.
    public static func standardDescriptor(for path: String) -> Int32? {
        var target = stat()
        guard stat(path, &target) == 0 else { return nil }
        for descriptor in [STDOUT_FILENO, STDERR_FILENO] {
            var status = stat()
            if fstat(descriptor, &status) == 0, status.st_dev == target.st_dev, status.st_ino == target.st_ino {
                return descriptor
            }
        }
        return nil
    }

    /// Writes all of `bytes` into `path` where it is, leaving its mode alone: a stream (`isStream`),
    /// or a link that must stay one. The process's own stdout or stderr is written through its
    /// descriptor; a regular file behind the path loses what an earlier, longer content left.
    /// - Parameter mode: create `path` with this mode when it is not there (a link to a new file).
    /// - Returns: `errno` of the failure, nil on success.
    public static func writeInPlace(_ bytes: [UInt8], to path: String, creating mode: mode_t? = nil) -> Int32? {
        if let standard = standardDescriptor(for: path) {
            return bytes.withUnsafeBytes { writeAll(standard, $0) }
        }
        let fd = mode.map { open(path, O_WRONLY | O_CREAT | O_CLOEXEC, $0) } ?? open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var status = stat()
        let regular = fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        // A private file reached through a link (`--har link.har`) is tightened as one written
        // by rename is: it already existed with its own mode.
        if regular, let mode, fchmod(fd, mode) != 0 { return errno }
        if let failure = bytes.withUnsafeBytes({ writeAll(fd, $0) }) { return failure }
        if regular { _ = ftruncate(fd, off_t(bytes.count)) }
        return nil
    }

    /// Writes all of `bytes` at the descriptor's position, resuming after partial writes and
    /// `EINTR`, and waiting for room when the descriptor is non-blocking (a parent may hand the
    /// console such a standard output; a regular file never says `EAGAIN`).
    /// - Returns: `errno` of a failed write, `nil` on success.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
            default:
                return errno
            }
        }
        return nil
    }

    /// Creates `path` (and parents) with mode 0700, or tightens an existing directory to it.
    /// A warning when the key at `path` may be read by other users (group or other bits set):
    /// a CA key or a bundle that several accounts can read signs for whoever reads it. Nil for a
    /// 0600 (or stricter) file, a pipe, or a file that cannot be examined.
    public static func looseKeyWarning(_ path: String, what: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o077 != 0 else { return nil }
        return "\(what) \(path) may be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))): "
            + "`chmod 600 \(path)`"
    }

    public static func makePrivateDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: Int(directoryMode)])
        } catch {
            throw CAError(.notWritable, "cannot create the directory \(path): \(String(cString: strerror(errno)))")
        }
        chmod(path, directoryMode)
    }

    /// Reads a whole file (`contents(of:)`); its failure as `CAError` naming `what` was read.
    public static func read(_ path: String, what: String, limit: Int = defaultReadLimit) throws -> [UInt8] {
        do {
            return try contents(of: path, limit: limit)
        } catch {
            throw CAError(error.tooLarge ? .invalidInput : .notFound, "cannot read \(what) at \(path): \(error.reason)")
        }
    }

    /// The most `contents(of:)` reads unless told otherwise.
    public static let defaultReadLimit = 256 << 20

    /// Why a file could not be read, in a few words: `no such file`, `it is a directory`,
    /// `permission denied`, or the system's own.
    public struct ReadFailure: Error, Sendable {
        public let reason: String
        /// The file held more than the limit.
        public let tooLarge: Bool
        /// The system's error number (`ENOENT`, `EISDIR`, …); 0 for `tooLarge`.
        public var code: Int32 = 0
    }

    /// A whole file's bytes: a regular file, or a pipe or device (`--passphrase-file <(pass show
    /// ca)`, `/dev/stdin`), which Foundation's `contents(atPath:)` could not read. More than
    /// `limit` bytes is refused, not read into memory.
    public static func contents(of path: String, limit: Int = defaultReadLimit) throws(ReadFailure) -> [UInt8] {
        try readBytes(path, upTo: limit, refusingMore: true)
    }

    /// The first `count` bytes of a file (fewer when it is shorter), with `contents(of:)`'s failures:
    /// enough to tell a format by, without reading a whole session.
    public static func head(of path: String, count: Int) throws(ReadFailure) -> [UInt8] {
        try readBytes(path, upTo: count, refusingMore: false)
    }

    /// `path` opened for reading (the caller closes it), with `contents(of:)`'s reasons when it
    /// cannot be: no such file, permission denied, a directory.
    public static func openForReading(_ path: String) throws(ReadFailure) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadFailure(reason: reason(errno: errno), tooLarge: false, code: errno) }
        var status = stat()
        if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw ReadFailure(reason: "it is a directory", tooLarge: false, code: EISDIR)
        }
        return fd
    }

    private static func readBytes(_ path: String, upTo limit: Int, refusingMore: Bool) throws(ReadFailure) -> [UInt8] {
        let fd = try openForReading(path)
        defer { close(fd) }
        var status = stat()
        _ = fstat(fd, &status)
        var bytes: [UInt8] = []
        if status.st_mode & S_IFMT == S_IFREG { bytes.reserveCapacity(min(Int(status.st_size), limit)) }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            // Past the limit by one byte at most, so `refusingMore` can tell a longer file.
            let wanted = refusingMore ? chunk.count : min(chunk.count, limit - bytes.count)
            if wanted == 0 { return bytes }
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, wanted) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadFailure(reason: reason(errno: errno), tooLarge: false, code: errno)
            }
            guard bytes.count + count <= limit || !refusingMore else {
                throw ReadFailure(reason: "it holds more than \(limit >> 20) MiB", tooLarge: true)
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    private static func reason(errno code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES: return "permission denied"
        case EISDIR: return "it is a directory"
        default: return String(cString: strerror(code))
        }
    }

    static func writeError(path: String, errno code: Int32) -> CAError {
        let reason = String(cString: strerror(code))
        if code == EACCES || code == EROFS || code == EPERM {
            return CAError(.notWritable, "cannot write \(path): \(reason); check the directory's permissions or choose another with --ca-dir")
        }
        return CAError(.io, "cannot write \(path): \(reason)")
    }
}
