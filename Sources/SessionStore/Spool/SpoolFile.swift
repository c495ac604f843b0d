import Foundation
#if canImport(Glibc)
import Glibc
import CSystem
#endif

/// One body's spool file (0600): written by the capture that made it, then read by the session
/// store's writer; removed, and its bytes given back to the `BodySpool`'s budget, when the last
/// reference goes (stored, shed, or the exchange abandoned).
///
/// Written by one thread at a time (the capture's, then its background digest's queue, in order); after
/// `finishWriting()` it only reads and may be handed across threads.
///
/// A write that starts on a page boundary of the file, from a page-aligned buffer, in whole pages
/// (the background digest's staging writes) goes around the page cache (`O_DIRECT` on Linux): a
/// spooled body is written once and read rarely, so it should not push the user's own files out of
/// memory, and the kernel no longer copies it into fresh cache pages (`perf` of an h2 256 MiB
/// download on this project's 2-core VM: that copy was 15 % of the proxy's CPU). Anything
/// else, or a file system that refuses `O_DIRECT` (tmpfs on older kernels), is written as usual.
public final class SpoolFile: @unchecked Sendable {
    /// The file's path.
    public let path: String
    /// Bytes written.
    public private(set) var length = 0
    /// False when bytes the store wanted were refused (the spool's disk budget was spent): the file
    /// then holds only the flow log's part of the body.
    public private(set) var isComplete = true
    private var descriptor: Int32
    /// The `O_DIRECT` descriptor: `directNotTried` until a write could use it, -1 when unavailable.
    private var direct: Int32 = SpoolFile.directNotTried
    /// Bytes written around the page cache (`O_DIRECT`).
    public private(set) var directLength = 0
    private let spool: BodySpool
    // Bytes counted against the spool's budget: `length`, plus any of a failed write.
    private var reserved = 0

    init(path: String, descriptor: Int32, spool: BodySpool) {
        self.path = path
        self.descriptor = descriptor
        self.spool = spool
    }

    /// What an `O_DIRECT` write needs aligned: its file offset, its length and its buffer's address.
    public static let directAlignment = 4096
    private static let directNotTried: Int32 = -2

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if direct >= 0 { close(direct) }
        unlink(path)
        spool.released(reserved)
    }

    /// Appends `bytes`: those that land below offset `required` always, the rest while the spool's
    /// budget allows (once refused, no further byte past `required` is written).
    /// - Returns: false when writing failed (a full disk): the file is then of no use.
    public func append(_ bytes: UnsafeRawBufferPointer, required: Int) -> Bool {
        let needed = max(0, min(bytes.count, required - length))
        var count = needed
        if bytes.count > needed, isComplete {
            if spool.reserve(bytes.count - needed, required: false) {
                count = bytes.count
            } else {
                isComplete = false
            }
        }
        guard count > 0 else { return true }
        if needed > 0 { _ = spool.reserve(needed, required: true) }
        reserved += count
        // On a failed write `length` stays: the bytes before it are still good to read back.
        guard write(UnsafeRawBufferPointer(rebasing: bytes.prefix(count))) else { return false }
        length += count
        return true
    }

    /// Writes `bytes` at `length`: their whole pages around the page cache when they start aligned,
    /// the rest (or all of them) through the cache.
    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, descriptor >= 0 else { return bytes.isEmpty }
        guard let direct = writeDirect(bytes) else { return false }
        let rest = bytes.count - direct
        return rest == 0 || Self.writeAll(descriptor, base + direct, rest, at: length + direct).failure == nil
    }

    /// Writes the whole pages at the start of `bytes` with `O_DIRECT` when the file offset and the
    /// buffer are aligned for it. Returns how many bytes it wrote (0 when it could not: unaligned,
    /// or `O_DIRECT` unavailable, which is then not tried again), nil when the disk refused them.
    private func writeDirect(_ bytes: UnsafeRawBufferPointer) -> Int? {
        #if os(Linux)
        let alignment = Self.directAlignment
        let count = bytes.count - bytes.count % alignment
        guard direct != -1, count > 0, let base = bytes.baseAddress, length % alignment == 0,
              Int(bitPattern: base) % alignment == 0 else { return 0 }
        if direct == Self.directNotTried { direct = CSystem_openDirectForWriting(path) }
        guard direct >= 0 else { return 0 }
        let (written, failure) = Self.writeAll(direct, base, count, at: length)
        if let failure {
            // EINVAL: this file system takes O_DIRECT at open but not at write; the cache takes
            // the rest. Anything else (a full disk) fails the write.
            guard failure == EINVAL else { return nil }
            close(direct)
            direct = -1
        }
        directLength += written
        return written
        #else
        return 0
        #endif
    }

    /// pwrite of all `count` bytes from `base` to `target` at `offset`, retrying short writes and
    /// EINTR. - Returns: the bytes written, and why it stopped short (errno; 0 for a write of
    /// nothing), nil when all were written.
    private static func writeAll(_ target: Int32, _ base: UnsafeRawPointer, _ count: Int,
                                 at offset: Int) -> (written: Int, failure: Int32?) {
        var written = 0
        while written < count {
            let result = pwrite(target, base + written, count - written, off_t(offset + written))
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                return (written, result < 0 ? errno : 0)
            }
        }
        return (written, nil)
    }

    /// Gives up on the rest of the body (a write of it failed): the file keeps the bytes before,
    /// and the store records the body as cut there.
    public func abandonRest() {
        isComplete = false
    }

    /// Closes the writing descriptor: the file is whole (readers open it by path).
    public func finishWriting() {
        if descriptor >= 0 { close(descriptor) }
        if direct >= 0 { close(direct) }
        descriptor = -1
        direct = -1
    }

    /// The `count` bytes from `offset` (fewer at the end of the file); nil when it cannot be read.
    public func read(offset: Int = 0, count: Int) -> [UInt8]? {
        var result: [UInt8] = []
        let complete = chunks(from: offset, upTo: count, chunkSize: max(1, min(count, 1 << 20))) { chunk in
            result.append(contentsOf: chunk)
        }
        return complete ? result : nil
    }

    /// Calls `body` with successive pieces of the file from `offset`, `upTo` bytes in all (fewer
    /// at its end), each at most `chunkSize`: a large body is copied without being held whole.
    /// - Returns: false when the file could not be opened or read.
    @discardableResult
    public func chunks(from offset: Int = 0, upTo total: Int, chunkSize: Int = 256 * 1024,
                       _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Bool {
        let reader = descriptor >= 0 ? descriptor : open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return false }
        defer { if reader != descriptor { close(reader) } }
        var buffer = [UInt8](repeating: 0, count: max(1, min(chunkSize, total)))
        var position = offset
        let end = offset + min(total, max(0, length - offset))
        while position < end {
            let wanted = min(buffer.count, end - position)
            let got = buffer.withUnsafeMutableBytes { pread(reader, $0.baseAddress, wanted, off_t(position)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return false }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(got))) }
            position += got
        }
        return true
    }
}

extension SpoolFile: Equatable {
    /// The same file.
    public static func == (left: SpoolFile, right: SpoolFile) -> Bool { left === right }
}
