import Dispatch

/// Continues a SHA-256 on a serial queue: the relaying thread hands over the body's arrays (kept,
/// not copied) in batches, and waits only when `maxBatchesInFlight` are not hashed yet, which bounds
/// what is held to ~1.25 MiB of body bytes per body (at most 4× that in array capacity: a read of
/// 4 KiB or more keeps its 16 KiB buffer, a shorter one is copied to its size).
final class BackgroundDigest: @unchecked Sendable {
    // @unchecked: `hash` is touched only on `queue` once handed over, and by `finishHex` after a
    // `queue.sync`; `batch` and `batchBytes` only by the owning BodyCapture's thread.
    private let hash: RunningSHA256
    private let queue = DispatchQueue(label: "devproxy.body-digest")
    private let slots = DispatchSemaphore(value: BackgroundDigest.maxBatchesInFlight)
    private var batch: [ArraySlice<UInt8>] = []
    private var batchBytes = 0

    /// A batch is handed over at this size: one queue hop per 256 KiB, not per TLS record.
    static let batchBytes = 256 * 1024
    static let maxBatchesInFlight = 4

    /// Takes over `hash`, which has seen the body so far; nothing else may touch it afterwards.
    init(continuing hash: RunningSHA256) {
        self.hash = hash
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
            for piece in pieces { piece.withUnsafeBytes { hash.update($0) } }
            slots.signal()
        }
    }
}
