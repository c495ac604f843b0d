import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One body's spool file (0600): written by the capture that made it, then read by the session
/// store's writer; removed, and its bytes given back to the `BodySpool`'s budget, when the last
/// reference goes (stored, shed, or the exchange abandoned).
///
/// Written by one thread at a time (the capture's, then its background digest's queue, in order); after
/// `finishWriting()` it only reads and may be handed across threads.
public final class SpoolFile: @unchecked Sendable {
    /// The file's path.
    public let path: String
    /// Bytes written.
    public private(set) var length = 0
    /// False when bytes the store wanted were refused (the spool's disk budget was spent): the file
    /// then holds only the flow log's part of the body.
    public private(set) var isComplete = true
    private var descriptor: Int32
    private let spool: BodySpool
    // Bytes counted against the spool's budget: `length`, plus any of a failed write.
    private var reserved = 0

    init(path: String, descriptor: Int32, spool: BodySpool) {
        self.path = path
        self.descriptor = descriptor
        self.spool = spool
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
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

    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var base = bytes.baseAddress, descriptor >= 0 else { return bytes.isEmpty }
        var left = bytes.count
        while left > 0 {
            let written = Glibc.write(descriptor, base, left)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            base += written
            left -= written
        }
        return true
    }

    /// Gives up on the rest of the body (a write of it failed): the file keeps the bytes before,
    /// and the store records the body as cut there.
    public func abandonRest() {
        isComplete = false
    }

    /// Closes the writing descriptor: the file is whole (readers open it by path).
    public func finishWriting() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
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
