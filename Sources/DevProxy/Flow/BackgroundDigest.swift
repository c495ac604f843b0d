import Dispatch
import SessionStore

/// Continues a SHA-256 on a serial queue: the relaying thread hands over the body's arrays (kept,
/// not copied) in batches, and waits only when `maxBatchesInFlight` are not hashed yet, which bounds
/// what is held to ~1.25 MiB of body bytes per body (at most 4× that in array capacity: a read of
/// 4 KiB or more keeps its 16 KiB buffer, a shorter one is copied to its size).
///
/// Once told to (`spool(to:from:until:required:)`), the queue also writes the bytes past the flow
/// log's part to the body's spool file, so a large download's disk writes leave the relay's path
/// too.
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
    private let queue = DispatchQueue(label: "devproxy.body-digest")
    private let slots = DispatchSemaphore(value: BackgroundDigest.maxBatchesInFlight)
    private var batch: [ArraySlice<UInt8>] = []
    private var batchBytes = 0

    /// A batch is handed over at this size: one queue hop per 256 KiB, not per TLS record.
    static let batchBytes = 256 * 1024
    static let maxBatchesInFlight = 4

    /// Takes over `hash`, which has seen the body's first `offset` bytes; nothing else may touch it
    /// afterwards.
    init(continuing hash: RunningSHA256, offset: Int) {
        self.hash = hash
        position = offset
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
        return queue.sync { hash.finishHex() }
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
        guard let file = spoolFile else { return }
        let low = max(start, spoolFrom), high = min(position, spoolUntil)
        guard low < high else { return }
        if !file.append(UnsafeRawBufferPointer(rebasing: bytes[(low - start)..<(high - start)]), required: spoolRequired) {
            file.abandonRest()
            spoolFile = nil
        }
    }
}
