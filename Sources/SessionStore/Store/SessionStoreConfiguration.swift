import Foundation

/// How a session store keeps bodies and how much it queues before dropping; every default stated.
public struct SessionStoreConfiguration: Sendable, Equatable {
    /// Bytes kept per body (`--store-body-limit`); beyond it the first bytes, the size and the
    /// SHA-256. Default 64 MiB.
    public var bodyLimit: Int
    /// Lifecycle events waiting for the writer before records are dropped. Default 8,000 (a few
    /// seconds of a busy proxy; each holds a summary and header fields, ~1–2 KiB).
    /// Bodies are dropped from the queue's second half onwards, so records outlast them.
    public var queueCapacity: Int
    /// Body bytes waiting for the writer before further bodies are dropped. Default 32 MiB: the
    /// queue is what the proxy's memory holds for the store, so it stays small and bodies are
    /// shed (and counted) before the proxy grows.
    public var queuedBodyBytes: Int
    /// Events the writer commits in one transaction, at most. Default 2,000.
    public var batchSize: Int
    /// How long the writer waits, once an event is queued, for more to share its transaction
    /// (fewer if `batchSize` is reached first; `flush()` cuts it short). Default 50 ms: a short
    /// exchange's three lifecycle steps then land in one batch and its row is written once, and
    /// a commit serves hundreds of flows at a busy proxy's rates; the web UI shows a flow up to
    /// that much later (its event hub gathers 100 ms more), and a running flow one batch delay
    /// more, its steps held for its end (`StoreWriter.heldBack`). 0 commits whatever is there at
    /// once, holding nothing back.
    public var batchDelay: TimeInterval
    /// How long a proxy thread waits for the writer, when the queue is half full or at its body
    /// budget, before its event is queued without bodies (or dropped, when full). Default 100 ms:
    /// a writer that is behind commits a batch well within it, so a proxy busier than its store
    /// slows down instead of losing flows; after a wait runs out, offers do not wait for a second
    /// (a stuck disk holds the proxy up once a second at most). 0: never wait, shed at once.
    public var offerWait: TimeInterval
    /// The writer connection's page cache (`PRAGMA cache_size`). Default 2 MiB: the writer appends,
    /// so it needs the tables' last pages and the index pages on the way to new keys; the file's
    /// other pages come back from the kernel's page cache in microseconds. At 16 MiB the cache
    /// filled within 8,000 flows and stayed in the proxy's RSS for the rest of the run.
    public var writerCacheBytes: Int
    /// The read connection's page cache. Default 4 MiB: filters that scan whole tables of a large
    /// session read far more than any cache the proxy should keep (bench/webui: 100k flows), and
    /// re-read pages come from the kernel's page cache, which the rest of the machine can reclaim.
    public var readerCacheBytes: Int

    public static let defaultBodyLimit = 64 * 1024 * 1024

    public init(bodyLimit: Int = SessionStoreConfiguration.defaultBodyLimit, queueCapacity: Int = 8_000,
                queuedBodyBytes: Int = 32 * 1024 * 1024, batchSize: Int = 2_000, batchDelay: TimeInterval = 0.05,
                writerCacheBytes: Int = 2 * 1024 * 1024, readerCacheBytes: Int = 4 * 1024 * 1024,
                offerWait: TimeInterval = 0.1) {
        precondition(bodyLimit >= 0 && queueCapacity >= 2 && queuedBodyBytes >= 0 && batchSize >= 1
                     && batchDelay >= 0 && writerCacheBytes >= 0 && readerCacheBytes >= 0 && offerWait >= 0,
                     "session store limits must be positive")
        self.bodyLimit = bodyLimit
        self.queueCapacity = queueCapacity
        self.queuedBodyBytes = queuedBodyBytes
        self.batchSize = batchSize
        self.batchDelay = batchDelay
        self.writerCacheBytes = writerCacheBytes
        self.readerCacheBytes = readerCacheBytes
        self.offerWait = offerWait
    }
}
