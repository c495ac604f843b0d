import CertAuthority
import Foundation

/// The file operations the flow sinks need, with errors in `FlowLogError` terms. Everything
/// is created 0600: flow logs and HAR files hold decrypted secrets.
enum FlowFile {
    static let privateMode: mode_t = 0o600

    /// Opens `path` for appending, creating it 0600 and tightening an existing file to 0600.
    /// A regular file is opened readable too, so the caller can look at the last byte already
    /// there. Anything else (a FIFO Wireshark or a script reads, `/dev/stdout`) is opened for
    /// writing only and left as it is: read-write, the log would be a reader of its own FIFO, and
    /// once the real reader went its writes would fill the pipe and block for ever.
    /// - Returns: the file descriptor, owned by the caller, and whether it is a regular file.
    static func openForAppending(_ path: String) throws -> (fd: Int32, regular: Bool) {
        // `/dev/stdout` (or the file stdout goes to): the process's own descriptor, duplicated. A
        // second open of a regular file has an offset of its own, and the console's lines through
        // descriptor 1 overwrote flow lines there.
        if let standard = SecureFile.standardDescriptor(for: path) {
            let fd = fcntl(standard, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { throw error(errno, writing: path) }
            return (fd, false)
        }
        if !isRegularOrAbsent(path) {
            let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
            guard fd >= 0 else { throw error(errno, writing: path) }
            return (fd, false)
        }
        let fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, privateMode)
        guard fd >= 0 else { throw error(errno, writing: path) }
        guard fchmod(fd, privateMode) == 0 else {
            let code = errno
            close(fd)
            let reason = String(cString: strerror(code))
            throw FlowLogError(.notWritable, "cannot make \(path) private (mode 0600): \(reason); "
                               + "it holds decrypted traffic, so use a file you own")
        }
        return (fd, true)
    }

    /// Replaces `path` with `bytes` atomically: a 0600 temporary file beside it, fsynced, renamed.
    /// A path that is not a regular file itself (a link such as `/dev/stdout`, a device, a FIFO)
    /// is written in place: renaming over it would replace the link or the device with a file
    /// (as root, `/dev/stdout` itself).
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        if !isPlainFileOrAbsent(path) {
            // Created (0600) when a link names a file not there yet.
            if let failure = SecureFile.writeInPlace(bytes, to: path, creating: privateMode) {
                throw error(failure, writing: path)
            }
            return
        }
        let directory = PathName.directory(of: path)
        let name = PathName.lastComponent(of: path)
        let unique = "\(getpid())-\(UInt32.random(in: .min ... .max))"
        let temporary = (directory.isEmpty ? "." : directory) + "/.\(name).tmp-\(unique)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, privateMode)
        guard fd >= 0 else { throw error(errno, writing: path) }
        var failure = fchmod(fd, privateMode) == 0 ? nil : errno
        if failure == nil { failure = bytes.withUnsafeBytes { SecureFile.writeAll(fd, $0) } }
        if failure == nil && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw error(failure, writing: path)
        }
    }

    /// Whether `path` is a regular file (through links) or does not exist yet.
    static func isRegularOrAbsent(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) != 0 || status.st_mode & S_IFMT == S_IFREG
    }

    /// Whether `path` itself is a regular file (not a link to one) or does not exist yet.
    static func isPlainFileOrAbsent(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) != 0 || status.st_mode & S_IFMT == S_IFREG
    }

    /// Reads a whole file.
    static func read(_ path: String) throws -> [UInt8] {
        do {
            return try SecureFile.contents(of: path, limit: .max)
        } catch {
            if error.code == ENOENT { throw FlowLogError(.notFound, "\(path) does not exist") }
            throw FlowLogError(.notReadable, "cannot read \(path): \(error.reason)")
        }
    }

    static func error(_ code: Int32, writing path: String) -> FlowLogError {
        let reason = String(cString: strerror(code))
        if code == EACCES || code == EROFS || code == EPERM || code == ENOENT || code == EISDIR {
            return FlowLogError(.notWritable, "cannot write \(path): \(reason); choose a writable path")
        }
        return FlowLogError(.io, "cannot write \(path): \(reason)")
    }
}
