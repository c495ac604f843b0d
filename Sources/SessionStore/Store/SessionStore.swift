import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A session store: every flow of one run in one SQLite file, written by one thread, read by
/// filters and pages that run in SQLite.
///
/// Lifecycle calls (`started`, `responded`, `finished`) queue the event and return; they wait
/// only when the writer is behind (its queue half full), and then at most
/// `configuration.offerWait`, after which the store sheds bodies, then records, and counts them
/// (`drops`). Queries run on a separate read connection (WAL lets them read while the writer
/// commits) and see what has been committed; `flush()` waits for everything queued so far.
///
/// Thread-safe. Close it with `close()` (also done on release) to fold the WAL into the file.
public final class SessionStore: @unchecked Sendable {
    /// The session file.
    public let path: String
    public let configuration: SessionStoreConfiguration
    /// True when opened with `readOnly`: lifecycle calls and `clear()` do nothing.
    public let isReadOnly: Bool
    /// The files beside the session that hold its spooled bodies.
    let bodyFiles: BodyFiles
    /// Writes flows' marks and comments (`setNote`).
    let notes: NoteWriter

    private let queue: WriteQueue
    private let writer: StoreWriter?
    private let readLock = NSLock()
    private var reader: SQLiteDatabase?
    let observers = StoreObservers()
    private let removeOnClose: Bool
    /// Held while this store writes: one writer to a file at a time.
    private let lock: SessionLock?

    /// Opens the session file at `path`, creating it (mode 0600) with the current schema, or
    /// migrating an older one forward.
    /// - Parameters:
    ///   - readOnly: open an existing file for queries only (`devproxy web FILE`, `devproxy sessions`).
    /// - Throws: `SessionStoreError` (`.open`, `.schema`, `.sqlite`; `.inUse` when another
    ///   process writes to the file).
    public convenience init(path: String, configuration: SessionStoreConfiguration = .init(),
                            readOnly: Bool = false) throws {
        try self.init(path: path, configuration: configuration, readOnly: readOnly, removeOnClose: false)
    }

    /// A store in a new temporary file, removed when the store is closed: for imports shown once.
    public static func temporary(configuration: SessionStoreConfiguration = .init()) throws -> SessionStore {
        let path = NSTemporaryDirectory() + "devproxy-session-\(UUID().uuidString).sqlite"
        return try SessionStore(path: path, configuration: configuration, readOnly: false, removeOnClose: true)
    }

    private init(path: String, configuration: SessionStoreConfiguration, readOnly: Bool, removeOnClose: Bool) throws {
        self.path = path
        self.configuration = configuration
        self.isReadOnly = readOnly
        self.removeOnClose = removeOnClose
        bodyFiles = BodyFiles(sessionPath: path)
        notes = NoteWriter(path: path, readOnly: readOnly)
        queue = WriteQueue(capacity: configuration.queueCapacity, bodyBudget: configuration.queuedBodyBytes,
                           offerWait: configuration.offerWait)
        if readOnly {
            let database = try SQLiteDatabase(path: path, readOnly: true)
            try Self.checkReadable(database, path: path)
            try Self.tuneReader(database, configuration: configuration)
            try MatchFunctions.register(on: database)
            try RecordDecoder.register(on: database)
            try bodyFiles.register(on: database)
            reader = database
            writer = nil
            lock = nil
            return
        }
        lock = try SessionLock.acquire(sessionPath: path)
        try Self.createPrivateFile(path)
        let database = try SQLiteDatabase(path: path)
        // NORMAL in WAL mode: a commit is durable at the next checkpoint; a crash loses at most
        // the last batches, never the file.
        try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        try database.setCacheSize(bytes: configuration.writerCacheBytes)
        try Schema.migrate(database)
        let reader = try SQLiteDatabase(path: path)
        try Self.tuneReader(reader, configuration: configuration)
        try MatchFunctions.register(on: reader)
        try RecordDecoder.register(on: reader)
        try bodyFiles.register(on: reader)
        self.reader = reader
        writer = StoreWriter(database: database, queue: queue, configuration: configuration,
                             bodyFiles: bodyFiles,
                             notify: observers.deliver)
    }

    deinit { close() }

    /// Creates `path` with mode 0600 before SQLite opens it (SQLite gives its WAL and shared-memory
    /// files the main file's mode): flows hold decrypted secrets.
    /// An existing file (and its `-wal` and `-shm`, which hold flows until a checkpoint) is
    /// tightened to 0600 too: O_CREAT leaves an existing file's mode alone.
    private static func createPrivateFile(_ path: String) throws {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SessionStoreError(.open, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw SessionStoreError(.open, "cannot make \(path) private (mode 0600): \(String(cString: strerror(errno)))")
        }
        for companion in [path + "-wal", path + "-shm"] {
            var status = stat()
            if lstat(companion, &status) == 0, status.st_mode & S_IFMT == S_IFREG { chmod(companion, 0o600) }
        }
    }

    /// The file is read, not mapped, and through a small cache (`readerCacheBytes`): a mapped
    /// file's pages count in the proxy's resident memory once a `~b` filter has touched them
    /// (bench/webui: ~700 MiB after a scan of 100k flows), while read pages stay in the kernel's
    /// page cache, which the rest of the machine can reclaim.
    private static func tuneReader(_ database: SQLiteDatabase, configuration: SessionStoreConfiguration) throws {
        try database.execute("PRAGMA mmap_size = 0")
        try database.setCacheSize(bytes: configuration.readerCacheBytes)
    }

    /// Refuses a file this build cannot read. A session written by an older devproxy (a lower
    /// schema version) is first brought forward in place, as opening it for writing would: the
    /// readers know every older way a flow was kept, but their queries name the newer tables and
    /// columns. The migrations only add tables and columns and drop indexes, so an older devproxy
    /// still writing to the file goes on working. A file that cannot be written is refused.
    private static func checkReadable(_ database: SQLiteDatabase, path: String) throws {
        var version = Int(try database.integer("PRAGMA user_version"))
        if version > 0, version < Schema.version, access(path, W_OK) == 0 {
            // Through a connection of its own, closed at once; `database` sees the new schema next.
            try Schema.migrate(try SQLiteDatabase(path: path))
            version = Int(try database.integer("PRAGMA user_version"))
        }
        guard version == Schema.version else {
            let reason = version == 0 ? "\(path) is not a DevProxy session"
                : version < Schema.version
                ? "\(path) has session schema version \(version) and cannot be upgraded to \(Schema.version) here "
                  + "(it is not writable): copy it somewhere writable and open the copy"
                : "\(path) has session schema version \(version); this devproxy reads \(Schema.version)"
            throw SessionStoreError(.schema, reason)
        }
    }

    // MARK: Lifecycle (never waits)

    /// The request head is known. Queued; returns at once.
    public func started(_ record: consuming FlowRecord) {
        offer(.flow(record, phase: .started, json: nil, bodies: nil))
    }

    /// The response head is known. Queued; returns at once.
    public func responded(_ record: consuming FlowRecord) {
        offer(.flow(record, phase: .responded, json: nil, bodies: nil))
    }

    /// A running flow's record so far (a long gRPC stream's messages, say), as the flow log would
    /// write it now: the web UI shows it until the flow finishes (`partialJSON(id:)`). `line` is
    /// its JSON (a trailing newline is left out). Queued; returns at once.
    public func progressed(_ record: consuming FlowRecord, jsonLine line: [UInt8]) {
        let phase: FlowPhase = record.summary.status == nil ? .started : .responded
        offer(.flow(record, phase: phase, json: nil, bodies: nil, partial: FlowJSON(line: line)))
    }

    /// The flow is over: its summary, its record as the flow log writes it, and its bodies
    /// (each cut to `configuration.bodyLimit`). Queued; returns at once.
    public func finished(_ record: consuming FlowRecord, json: String, bodies: consuming FlowBodies) {
        offer(.flow(record, phase: .finished, json: FlowJSON(json), bodies: bodies))
    }

    /// `finished(_:json:bodies:)` with the JSON as the flow log's line (its bytes, ending in a
    /// newline or not): kept as it is, not copied into a string.
    public func finished(_ record: consuming FlowRecord, jsonLine: [UInt8], bodies: consuming FlowBodies) {
        offer(.flow(record, phase: .finished, json: FlowJSON(line: jsonLine), bodies: bodies))
    }

    /// A finished flow given as the flow log writes it (one JSON object, the `flows.jsonl` line):
    /// the proxy's sinks hand the store the same bytes as the log, and the writer thread reads its
    /// summary from them. Under pressure the line is read here instead, so that its bodies can be
    /// shed. A line that is not a flow record is counted as a dropped record.
    /// - Parameter spooled: the bodies' spool files (past the flow log's part): the writer keeps
    ///   them up to `configuration.bodyLimit` instead of the line's bodies, then lets them go.
    public func finished(flowLogLine line: [UInt8], spooled: SpooledBodies? = nil) {
        guard writer != nil else { return }
        let spooled = spooled?.isEmpty == true ? nil : spooled
        if queue.isUnderPressure(adding: line.count + (spooled?.memoryBytes ?? 0)) {
            guard let (entry, json) = Self.read(flowLogLine: line) else {
                queue.countDroppedRecord()
                return
            }
            offer(.flow(entry.record, phase: .finished, json: json,
                        bodies: spooled?.attached(to: entry.bodies) ?? entry.bodies))
        } else {
            queue.offer(.flowLogLine(line, spooled: spooled))
        }
    }

    /// A flow-log line's summary, bodies and JSON text; nil when it is not a flow record.
    static func read(flowLogLine line: [UInt8]) -> (FlowLogEntry, FlowJSON)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
              let entry = try? FlowLogEntry(object) else { return nil }
        return (entry, FlowJSON(line: line))
    }

    /// What the writer would apply of `batch` (tests of its coalescing).
    func coalescedForTesting(_ batch: [StoreEvent]) -> [StoreEvent] {
        writer?.coalesced(batch) ?? batch
    }

    private func offer(_ event: StoreEvent) {
        guard writer != nil else { return }
        queue.offer(event)
    }

    /// Queues a finished flow, waiting for room rather than dropping anything (importers).
    func importFinished(_ record: FlowRecord, json: String, bodies: FlowBodies) {
        guard writer != nil else { return }
        queue.put(.flow(record, phase: .finished, json: FlowJSON(json), bodies: bodies))
    }

    /// Queues `event`, waiting for room rather than dropping it (`saveGRPCSchema`).
    func put(_ event: StoreEvent) {
        guard writer != nil else { return }
        queue.put(event)
    }

    /// What was shed because the queue was full.
    public var drops: StoreDrops { queue.drops }

    /// The last write that failed, if any (the store keeps going with the next batch).
    public var writeFailure: SessionStoreError? { writer?.failure }

    /// Calls `handler` on the writer's thread when a commit fails after one that worked (or the
    /// first does): the batch's flows are not in the store, and the caller should say so.
    public func reportWriteFailures(to handler: @escaping @Sendable (SessionStoreError) -> Void) {
        writer?.reportFailures(to: handler)
    }

    /// Waits until every event queued before the call is committed (and observers told).
    public func flush() {
        guard writer != nil else { return }
        queue.flush()
    }

    /// Deletes every flow; waits until done. Observers receive `cleared`.
    public func clear() {
        guard writer != nil else { return }
        queue.put(.clear)
        queue.flush()
    }

    // MARK: Observers

    /// Calls `observer` after each committed batch, on the writer's thread: keep it short (hand
    /// the batch to the UI's own queue), and never call `flush()` or `clear()` from it (they wait
    /// for that thread). Queries from it are fine.
    /// - Returns: a token for `removeObserver(_:)`.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (StoreChanges) -> Void) -> Int {
        observers.add(observer)
    }

    /// Stops calling the observer `addObserver` returned `token` for.
    public func removeObserver(_ token: Int) {
        observers.remove(token)
    }

    // MARK: Reading

    /// Runs `body` with the read connection, one caller at a time.
    func read<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try readLock.withLock {
            guard let reader else { throw SessionStoreError(.closed, "the session store is closed") }
            return try body(reader)
        }
    }

    /// Bytes the read connection's page cache holds now (tests of its bound).
    func readerCacheBytes() throws -> Int {
        try read { $0.cacheBytes }
    }

    // MARK: Closing

    /// Writes what is queued, stops the writer and closes the file. Later calls do nothing.
    public func close() {
        let wasOpen = readLock.withLock { reader != nil }
        guard wasOpen else { return }
        queue.close()
        writer?.join()
        // Before `detach`: the writer's connection leaves WAL mode only when it is the last one open.
        notes.close()
        readLock.withLock { reader = nil }
        writer?.detach()
        if removeOnClose {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            bodyFiles.removeAll()
        }
        lock?.release()
    }
}
