import Dispatch
import SessionStore

/// Continues a SHA-256 on a serial queue: the relaying thread hands over the body's arrays (kept,
/// not copied) in batches, and waits only when `maxBatchesInFlight` are not hashed yet, which bounds
/// what is held to ~1.25 MiB of body bytes per body (at most 4× that in array capacity: a read of
/// 4 KiB or more keeps its 16 KiB buffer, a shorter one is copied to its size).
///
/// Once told to (`spool(to:from:until:required:)`), the queue also writes the bytes past the flow
/// log's part to the body's spool file, so a large download's disk writes leave the relay's path
/// too, gathered into page-aligned writes of `stagingBytes`.
final class BackgroundDigest: @unchecked Sendable {
    // @unchecked: `hash`, `position` and the spool state are touched only on `queue` once handed
    // over, and by `finishHex` after a `queue.sync`; `batch` and `batchBytes` only by the owning
    // BodyCapture's thread.
    private let hash: RunningSHA256
    /// The body offset of the next byte the queue sees.
    private var position: Int
    private var spoolFile: SpoolFile?
    private var spoolFrom = 0
    private var spoolUntil = 0
    private var spoolRequired = 0
    /// Spool bytes not written yet (on the queue): one write() per `stagingBytes` instead of one
    /// per relayed read, and ending on a page boundary, so ext4 does not zero the rest of a fresh
    /// block for each write that ends inside it (that zeroing was a fifth of the spool's cost), and
    /// from a page-aligned buffer, so that `SpoolFile` can write them around the page cache.
    private var staged: UnsafeMutableRawBufferPointer?
    private var stagedCount = 0
    private let queue = DispatchQueue(label: "devproxy.body-digest")
    private let slots = DispatchSemaphore(value: BackgroundDigest.maxBatchesInFlight)
    private var batch: [ArraySlice<UInt8>] = []
    private var batchBytes = 0

    /// A batch is handed over at this size: one queue hop per 256 KiB, not per TLS record.
    static let batchBytes = 256 * 1024
    static let maxBatchesInFlight = 4
    static let stagingBytes = 256 * 1024
    private static let pageBytes = 4096

    /// Takes over `hash`, which has seen the body's first `offset` bytes; nothing else may touch it
    /// afterwards.
    init(continuing hash: RunningSHA256, offset: Int) {
        self.hash = hash
        position = offset
    }

    deinit {
        staged?.deallocate()
    }

    /// From body offset `from` (the next byte added, or later) up to `until`, the queue appends the
    /// bytes it hashes to `file` (`SpoolFile.append(_:required:)`); the caller no longer writes it.
    /// A failed write gives up the rest (`SpoolFile.abandonRest`): the store then keeps the flow
    /// log's part, which the caller wrote before.
    func spool(to file: SpoolFile, from: Int, until: Int, required: Int) {
        queue.async { [self] in
            spoolFile = file
            spoolFrom = from
            spoolUntil = until
            spoolRequired = required
        }
    }

    /// Hashes `bytes` after everything added before.
    func add(_ bytes: ArraySlice<UInt8>) {
        batch.append(bytes)
        batchBytes += bytes.count
        if batchBytes >= Self.batchBytes { handOver() }
    }

    /// The hex digest of everything added. Call once.
    func finishHex() -> String {
        handOver()
        return queue.sync {
            flushStaged(all: true)
            return hash.finishHex()
        }
    }

    private func handOver() {
        guard !batch.isEmpty else { return }
        let pieces = batch
        batch = []
        batchBytes = 0
        slots.wait()
        queue.async { [self] in
            for piece in pieces {
                piece.withUnsafeBytes { bytes in
                    hash.update(bytes)
                    write(bytes)
                }
            }
            slots.signal()
        }
    }

    /// On the queue: the part of the next bytes that belongs in the spool file.
    private func write(_ bytes: UnsafeRawBufferPointer) {
        let start = position
        position += bytes.count
        guard spoolFile != nil else { return }
        let low = max(start, spoolFrom), high = min(position, spoolUntil)
        guard low < high else { return }
        var rest = UnsafeRawBufferPointer(rebasing: bytes[(low - start)..<(high - start)])
        while !rest.isEmpty, spoolFile != nil {
            let buffer = staged
                ?? UnsafeMutableRawBufferPointer.allocate(byteCount: Self.stagingBytes, alignment: SpoolFile.directAlignment)
            staged = buffer
            let count = min(rest.count, buffer.count - stagedCount)
            UnsafeMutableRawBufferPointer(rebasing: buffer[stagedCount..<(stagedCount + count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest.prefix(count)))
            stagedCount += count
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(count))
            if stagedCount == buffer.count { flushStaged(all: false) }
        }
        if high == spoolUntil { flushStaged(all: true) }
    }

    /// On the queue: writes the staged bytes, all of them or up to the last page boundary of the
    /// file (the rest stays staged). A failed write gives up the rest of the spool.
    private func flushStaged(all: Bool) {
        guard let buffer = staged else { return }
        defer {
            if all || spoolFile == nil {
                buffer.deallocate()
                staged = nil
                stagedCount = 0
            }
        }
        guard let file = spoolFile, stagedCount > 0 else { return }
        let count = all ? stagedCount : stagedCount - (file.length + stagedCount) % Self.pageBytes
        guard count > 0 else { return }
        guard file.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]), required: spoolRequired) else {
            file.abandonRest()
            spoolFile = nil
            return
        }
        let left = stagedCount - count
        if left > 0, let base = buffer.baseAddress {
            base.copyMemory(from: base + count, byteCount: left)
        }
        stagedCount = left
    }
}
