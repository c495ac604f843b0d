#if canImport(CSystem)
import CSystem
#endif
import Foundation

/// The store's one writer: a thread that takes batches from the `WriteQueue` and commits each
/// in one transaction on its own connection, then tells the observers what changed.
final class StoreWriter: @unchecked Sendable {
    private let database: SQLiteDatabase
    private let queue: WriteQueue
    private let configuration: SessionStoreConfiguration
    private let notify: @Sendable (StoreChanges) -> Void
    /// Where spooled bodies are linked rather than copied (`BodyFiles`).
    private let bodyFiles: BodyFiles
    private let finishedSignal = DispatchSemaphore(value: 0)
    private let errorLock = NSLock()
    private var lastFailure: SessionStoreError?
    /// Told of a commit that failed after one that worked (or the first), under `errorLock`.
    private var failureHandler: (@Sendable (SessionStoreError) -> Void)?
    /// The last commit failed (the writer's thread only): the next failure is not news.
    private var failing = false
    /// When the handler was last told (the writer's thread only): a disk on the edge of full, where
    /// a small batch fits and the next does not, is said again at most every `failureRepeat`.
    private var lastReported: ContinuousClock.Instant?
    static let failureRepeat: Duration = .seconds(30)

    /// Starts the thread. `database` is handed over: only this writer's thread uses it from now on.
    init(database: SQLiteDatabase, queue: WriteQueue, configuration: SessionStoreConfiguration, bodyFiles: BodyFiles,
         notify: @escaping @Sendable (StoreChanges) -> Void) {
        self.database = database
        self.bodyFiles = bodyFiles
        self.queue = queue
        self.configuration = configuration
        self.notify = notify
        let thread = Thread { [self] in run() }
        thread.name = "devproxy-session-store"
        thread.start()
    }

    /// The last commit that failed (a full disk, a removed file), if any.
    var failure: SessionStoreError? { errorLock.withLock { lastFailure } }

    /// Calls `handler` (on the writer's thread) when a commit fails after one that worked, or the
    /// first one does, and at most every `failureRepeat`: a full disk is said once, not once a
    /// batch, nor once a flip of a disk on the edge of full (where the test on a small disk
    /// counted up to six).
    func reportFailures(to handler: @escaping @Sendable (SessionStoreError) -> Void) {
        errorLock.withLock { failureHandler = handler }
    }

    private func failed(_ error: SessionStoreError) {
        let now = ContinuousClock.now
        let news = !failing && lastReported.map { now - $0 >= Self.failureRepeat } ?? true
        let handler = errorLock.withLock { () -> (@Sendable (SessionStoreError) -> Void)? in
            lastFailure = error
            return news ? failureHandler : nil
        }
        failing = true
        if let handler {
            lastReported = now
            handler(error)
        }
    }

    /// Waits for the thread to drain the queue and stop (after `queue.close()`).
    func join() { finishedSignal.wait() }

    /// The `seq` of each flow written and not finished yet (`upsert`), by id.
    private var runningSequences: [String: Int64] = [:]

    /// Flows that were running when the store was last cleared: their later steps are not written,
    /// so a request pending at a clear does not come back when it ends (mitmproxy's `view.clear`
    /// drops a flow for good; its later updates find nothing to update). An id leaves the set with
    /// its `finished` step; the set is emptied past `runningSequencesKept` (flows that never end).
    private var clearedRunning: Set<String> = []

    /// Compress flow records and header blocks against earlier ones (`RecordCompression.swift`).
    private let records = RecordCompressor()
    private let requestHeads = RecordCompressor()
    private let responseHeads = RecordCompressor()

    /// The frame the batch's flow records are gathered into (`RecordFrames.swift`), and the
    /// last frame id given out (read from the file on first use).
    private var frame = FrameBuilder()
    private var lastFrameID: Int64?

    /// The last batch's summaries' array, empty, kept for the next batch's (`run`).
    private var changedFlows: [FlowSummary] = []
    /// The most summaries' room kept between batches: a full batch's.
    private var changedFlowsKept: Int { configuration.batchSize * 2 }
    /// A batch of at least this many events is a busy one, whose summaries' room is kept.
    private static let busyBatch = 200

    /// Events committed since the heap was last trimmed (`trimHeapAfterBacklog`).
    private var committedSinceTrim = 0

    /// Body files linked in the running batch (removed if it rolls back), and those whose rows a
    /// `clear` in it deleted (removed once it commits).
    private var linkedInBatch: [String] = []
    private var clearedFiles: [String] = []

    private func run() {
        // Running flows' steps held back from the last batch (`heldBack`): they go first in the next.
        var carried: [StoreEvent] = []
        while true {
            // With steps held back, wait for new events no longer than a batch delay: then the
            // held-back steps are written whatever comes.
            guard var taken = queue.take(limit: configuration.batchSize, gather: configuration.batchDelay,
                                         waitingAtMost: carried.isEmpty ? nil : configuration.batchDelay) else {
                // Closed and drained.
                if !carried.isEmpty { commit(carried) }
                break
            }
            var batch = carried
            let carriedBefore = carried.count
            let tookAny = !taken.isEmpty
            batch += taken
            // Let go here: held to the end of the loop's turn (as a debug build does), the events'
            // bodies, spool files among them, outlived the batch's `done`, after which a flush
            // returns and its caller may count the spool's files.
            taken = []
            carried = []
            if configuration.batchDelay > 0, tookAny, !queue.isFlushRequested {
                carried = Self.heldBack(from: &batch, after: carriedBefore)
            }
            commit(batch)
        }
        finishedSignal.signal()
    }

    /// Takes out of `batch` the `started`, `responded` and `progressed` steps of flows that do not
    /// finish in it, from index `start` on (a step held back once is not held again) and after
    /// the batch's last `clear`, in their order.
    ///
    /// They go first in the next batch, where most of those flows finish (a stream in flight when
    /// the writer took the batch ends within milliseconds): the flow's row is then written once,
    /// at its first step's place, as for a flow whose steps all met in one batch. Written now, such
    /// a flow cost an INSERT of its running row and its heads, then an UPDATE and the stale rows'
    /// DELETEs: at h2 keep-alive, one flow in ten (docs/performance.md, runs 41 and 42). A running
    /// flow shows in the web UI one batch delay later.
    static func heldBack(from batch: inout [StoreEvent], after start: Int) -> [StoreEvent] {
        let lastClear = batch.lastIndex { if case .clear = $0 { true } else { false } }
        let first = max(start, (lastClear ?? -1) + 1)
        guard first < batch.endIndex else { return [] }
        var finished = Set<String>(minimumCapacity: batch.count - first)
        for index in first..<batch.endIndex {
            if case .step(let step) = batch[index], step.phase == .finished { finished.insert(step.id) }
        }
        var held: [StoreEvent] = []
        var kept: [StoreEvent] = []
        kept.reserveCapacity(batch.count)
        kept += batch[..<first]
        for index in first..<batch.endIndex {
            if case .step(let step) = batch[index], step.phase != .finished, !finished.contains(step.id) {
                held.append(batch[index])
            } else {
                kept.append(batch[index])
            }
        }
        guard !held.isEmpty else { return [] }
        batch = kept
        return held
    }

    /// Writes `batch` in one transaction, tells the observers, and reports it done to the queue.
    private func commit(_ batch: consuming [StoreEvent]) {
        var batch = batch
        // The summaries' array is the last batch's, emptied: a busy batch's (2,000 summaries,
        // ~700 KiB) is past malloc's mmap threshold, and a fresh one a batch was three new
        // mappings, every page faulted in (docs/performance.md, run 36).
        var changes = StoreChanges(cleared: false, flows: changedFlows)
        changedFlows = []
        // A batch rolled back did not clear: the flows it set aside are the store's again.
        let clearedBefore = clearedRunning
        do {
            let events = readingLines(batch)
            let order = Self.applyOrder(events)
            try database.transaction {
                for index in order { try apply(events[index], to: &changes) }
                try insertPendingRows(into: &changes)
                try writeFrame()
            }
            bodyFiles.remove(clearedFiles)
            clearedFiles.removeAll()
            linkedInBatch.removeAll()
            failing = false
        } catch let error as SessionStoreError {
            changes = StoreChanges(cleared: false, flows: [])
            // Rolled back: rows this batch inserted are gone, dictionaries too.
            forgetWrittenRows()
            clearedRunning = clearedBefore
            failed(error)
        } catch {
            forgetWrittenRows()
            clearedRunning = clearedBefore
            failed(SessionStoreError(.sqlite, "\(error)"))
        }
        if changes.cleared || !changes.flows.isEmpty { notify(changes) }
        // Kept for the next batch while batches are busy (emptied in place; an observer that
        // held on to it keeps its copy); a quiet batch lets a burst's room go.
        if batch.count >= Self.busyBatch, changes.flows.capacity <= changedFlowsKept {
            changes.flows.removeAll(keepingCapacity: true)
            changedFlows = changes.flows
        }
        let committed = batch.count, bodyBytes = WriteQueue.bodyBytes(of: batch)
        // The batch's bodies (spool files among them) are let go before a flush can return.
        batch = []
        queue.done(count: committed, bodyBytes: bodyBytes)
        trimHeapAfterBacklog(committed: committed)
    }

    /// Forgets what the writer knows of rows it wrote (running flows' `seq`s, compression
    /// dictionaries, the batch's body files, removed): after `clear`, or a batch rolled back.
    private func forgetWrittenRows() {
        // Rolled back (or nothing linked): the batch's files name rows that are not there.
        bodyFiles.remove(linkedInBatch)
        linkedInBatch.removeAll()
        clearedFiles.removeAll()
        runningSequences.removeAll()
        pendingRows.removeAll()
        pendingValues.removeAll()
        records.reset()
        requestHeads.reset()
        responseHeads.reset()
        frame.reset()
    }

    /// Once the queue is empty after at least 2,000 events, hands freed heap back to the system:
    /// the events were allocated on the proxy's threads and are freed here, leaving holes in
    /// glibc's arenas that only `malloc_trim` returns (docs/performance.md, "Process memory").
    private func trimHeapAfterBacklog(committed: Int) {
        committedSinceTrim += committed
        guard committedSinceTrim >= 2_000, queue.isEmpty else { return }
        committedSinceTrim = 0
        #if canImport(CSystem) && os(Linux)
        malloc_trim(0)
        #endif
    }

    /// The batch with flow-log lines read, and without the `started` and `responded` steps of
    /// flows that also finish in it: a short exchange costs one row write, not three, which is
    /// what lets one writer keep up with a busy proxy. A flow that finishes in the batch is written
    /// where its first step was, so flows get their `seq` in the order they started, as the list
    /// shows them (a request that started first and finished last used to be numbered after the
    /// ones it overlapped). A `clear` still separates what came before it from what came after.
    func coalesced(_ batch: [StoreEvent]) -> [StoreEvent] {
        let events = readingLines(batch)
        return Self.applyOrder(events).map { events[$0] }
    }

    /// `batch` with its flow-log lines read (the same array when it has none, as from the proxy).
    private func readingLines(_ batch: [StoreEvent]) -> [StoreEvent] {
        guard batch.contains(where: { if case .flowLogLine = $0 { true } else { false } }) else { return batch }
        return batch.compactMap(readingLine)
    }

    /// The indices of `events` to apply, in the order to apply them: a flow with a `finished` step
    /// later in the batch (and no `clear` between) has its `finished` steps applied at its first
    /// step's place and its other steps, made stale by them, left out; every other event stays
    /// where it is.
    private static func applyOrder(_ events: [StoreEvent]) -> [Int] {
        var order: [Int] = []
        order.reserveCapacity(events.count)
        var segmentStart = events.startIndex
        while segmentStart < events.endIndex {
            // A segment ends after a `clear`: steps on either side of it are not merged.
            let clearIndex = events[segmentStart...].firstIndex { if case .clear = $0 { true } else { false } }
            let segmentEnd = clearIndex ?? events.endIndex
            // Each flow's first `finished` step; a flow finished twice (a flow log read twice) has
            // its later ones in `laterFinished`, applied after the first as they came.
            var firstFinished = [String: Int](minimumCapacity: segmentEnd - segmentStart)
            var laterFinished: [String: [Int]] = [:]
            for index in segmentStart..<segmentEnd {
                guard case .step(let step) = events[index], step.phase == .finished else { continue }
                if firstFinished[step.id] == nil {
                    firstFinished[step.id] = index
                } else {
                    laterFinished[step.id, default: []].append(index)
                }
            }
            for index in segmentStart..<segmentEnd {
                guard case .step(let step) = events[index], let first = firstFinished[step.id] else {
                    order.append(index)
                    continue
                }
                // -1 once placed: the flow's other steps are left out.
                guard first >= 0 else { continue }
                firstFinished[step.id] = -1
                order.append(first)
                if let later = laterFinished[step.id] { order += later }
            }
            if let clearIndex { order.append(clearIndex) }
            segmentStart = segmentEnd + (clearIndex == nil ? 0 : 1)
        }
        return order
    }

    /// `event` with a flow-log line read into its finished flow; nil (counted as a dropped
    /// record) for a line that is not a flow record; any other event as it is.
    private func readingLine(_ event: StoreEvent) -> StoreEvent? {
        guard case .flowLogLine(let line, let spooled) = event else { return event }
        guard let (entry, json) = SessionStore.read(flowLogLine: line) else {
            queue.countDroppedRecord()
            return nil
        }
        let bodies = spooled?.attached(to: entry.bodies) ?? entry.bodies
        return .flow(entry.record, phase: .finished, json: json, bodies: bodies)
    }

    private func apply(_ event: StoreEvent, to changes: inout StoreChanges) throws {
        switch event {
        case .clear:
            try insertPendingRows(into: &changes)
            if clearedRunning.count + runningSequences.count > Self.runningSequencesKept { clearedRunning.removeAll() }
            clearedRunning.formUnion(runningSequences.keys)
            // The batch's own files go now (their rows go either way); those of earlier
            // batches once this one commits.
            forgetWrittenRows()
            clearedFiles = bodyFiles.names()
            try database.execute("""
                DELETE FROM flows; DELETE FROM flow_heads; DELETE FROM flow_records; DELETE FROM bodies;
                DELETE FROM record_dictionaries; DELETE FROM record_frames; DELETE FROM flow_notes;
                """)
            changes = StoreChanges(cleared: true, flows: [])
        case .grpcSchema(let schema):
            try database.statement(Self.insertGRPCSchema).run([.text(schema.host), .integer(Int64(schema.port)),
                                                                .text(schema.service), .text(schema.learned),
                                                                .blob(schema.descriptorSet)])
        case .flowLogLine:
            // `coalesced` reads every line before a batch is applied; one given here directly is read the same way.
            if let resolved = readingLine(event) { try apply(resolved, to: &changes) }
        case .step(let step):
            if !clearedRunning.isEmpty, clearedRunning.contains(step.id) {
                if step.phase == .finished { clearedRunning.remove(step.id) }
                return
            }
            // The step's record is read where it is, not copied (a copy of a record counts a
            // reference for each of its ~25 strings, and again to let it go); its bodies are
            // copied once and read from that copy, with no temporary arrays of them (copies and
            // arrays of them took ~3,300 instructions a flow, callgrind).
            var bodies = step.bodies
            let shed = Self.shedIncompleteSpools(&bodies)
            if shed > 0 { queue.countDroppedBodies(shed) }
            let record = step.record
            let blocks = record.headerBlocks
            let host = record.summary.host
            // A finished flow's record and header texts go into the batch's frame, and the
            // flow's row points at them; a large record is kept alone, its heads in `flow_heads`.
            // Small bodies go in the frame too (`FramedBody`); the others are rows of `bodies`.
            var reference: RecordReference?
            var requestSection: [UInt8]?, responseSection: [UInt8]?
            if let json = step.json, FrameBuilder.takes(recordOfLength: json.count) {
                requestSection = bodies?.request.flatMap(framedSection)
                responseSection = bodies?.response.flatMap(framedSection)
                reference = try json.bytes.withUnsafeBytes { bytes in
                    try frame.append(record: UnsafeRawBufferPointer(rebasing: bytes.prefix(json.count)),
                                     request: blocks.request, response: blocks.response, requestBody: requestSection,
                                     responseBody: responseSection, host: host, newID: newFrameID)
                }
            }
            // A finished flow kept whole in the frame, with no row of its own so far, waits to be
            // inserted with the next ones (`insertPendingRows`); any other write goes after them,
            // so rows are numbered in the order they are applied.
            if step.phase == .finished, let reference, runningSequences[record.summary.id] == nil,
               requestSection != nil || bodies?.request.map(\.isEmptyAsStored) ?? true,
               responseSection != nil || bodies?.response.map(\.isEmptyAsStored) ?? true {
                var summary = record.summary
                summary.phase = .finished
                if shed > 0 { summary.bodiesDropped = true }
                // Read from the finished flow's bodies here, on the writer's thread, never on the
                // proxy's; a flow that is no GraphQL call is ruled out by its method and content type
                // (a WebSocket by its subprotocol).
                let graphQL = Self.graphQL(of: summary, bodies: bodies, responseHeaders: blocks.response,
                                           record: step.json)
                Self.appendRowValues(summary, phase: .finished, bodiesDropped: shed > 0, record: reference.bytes,
                                     graphQL: graphQL, to: &pendingValues)
                pendingRows.append(PendingRow(change: changes.flows.count, framedRequest: requestSection != nil,
                                              framedResponse: responseSection != nil))
                changes.flows.append(consume summary)
                // Set in place: set on `summary` before, it kept the compiler from consuming it.
                if let graphQL { changes.flows[changes.flows.count - 1].graphQL = graphQL }
                if pendingRows.count == Self.rowsPerInsert { try insertPendingRows(into: &changes) }
                if frame.isFull { try writeFrame() }
                return
            }
            try insertPendingRows(into: &changes)
            // A running GraphQL WebSocket is named from its messages so far (a subscription lasts).
            let graphQL = step.phase == .finished || record.summary.isWebSocket
                ? Self.graphQL(of: record.summary, bodies: bodies, responseHeaders: blocks.response,
                               record: step.json ?? step.partial)
                : nil
            let recordValue = step.json == nil ? nil : reference.map { $0.bytes } ?? []
            guard let (summaryWritten, isNew) = try upsert(record.summary, phase: step.phase, bodiesDropped: shed > 0,
                                                           record: recordValue, graphQL: graphQL)
            else { return }
            var summary = summaryWritten
            let sequence = summary.sequence
            if reference != nil {
                if !isNew {
                    try deleteStaleRows(of: sequence, framedRequest: requestSection != nil,
                                        framedResponse: responseSection != nil)
                }
                if frame.isFull { try writeFrame() }
            } else {
                try database.statement(Self.upsertHeads).run([
                    .integer(sequence), try stored(blocks.request, by: requestHeads, host: host),
                    try stored(blocks.response, by: responseHeads, host: host),
                ])
            }
            // A finished flow's record kept alone, or a running flow's record so far.
            if let json = step.json ?? step.partial, reference == nil {
                let value = try json.bytes.withUnsafeBytes { bytes in
                    try records.encode(UnsafeRawBufferPointer(rebasing: bytes.prefix(json.count)), host: host,
                                       plain: json.sqlValue, makeDictionary: storeDictionary)
                }
                try database.statement(Self.upsertJSON).run([.integer(sequence), value])
            }
            if requestSection == nil, let body = bodies?.request { try storeRow(body, part: .request, sequence: sequence) }
            if responseSection == nil, let body = bodies?.response { try storeRow(body, part: .response, sequence: sequence) }
            summary.phase = step.phase
            changes.flows.append(summary)
        }
    }

    /// The GraphQL call a finished flow is (`GraphQLCall.detect`), from its bodies as the flow
    /// log has them (a spooled body's first bytes, or its decoded text); nil for any other flow.
    /// A WebSocket is one when its handshake settled on a GraphQL subprotocol (`responseHeaders`,
    /// checked first): its operations and errors are read from the messages of `record`, the flow
    /// log's record of it (so far, while it runs).
    private static func graphQL(of summary: FlowSummary, bodies: FlowBodies?, responseHeaders: String?,
                                record: FlowJSON?) -> GraphQLCall? {
        if summary.isWebSocket {
            guard let record, let kind = GraphQLCall.webSocketProtocol(responseHeaders: responseHeaders) else {
                return nil
            }
            return GraphQLCall.detect(webSocket: kind, record: record.bytes[..<record.count])
        }
        return GraphQLCall.detect(method: summary.method, url: summary.url, requestContentType: summary.requestContentType,
                           requestBody: bodies?.request, responseContentType: summary.contentType,
                           responseBody: bodies?.response)
    }

    /// Deletes what an earlier step of the flow at `sequence` (or an earlier copy of it) left
    /// beside its row, now that its record, heads and framed bodies are in a frame: its heads,
    /// its record kept alone, and the body rows of the parts now framed.
    private func deleteStaleRows(of sequence: Int64, framedRequest: Bool, framedResponse: Bool) throws {
        try database.statement(Self.deleteHeads).run([.integer(sequence)])
        try database.statement(Self.deleteJSON).run([.integer(sequence)])
        for (part, framed) in [(StoredBody.Part.request, framedRequest), (.response, framedResponse)] where framed {
            try database.statement(Self.deleteBody).run([.integer(sequence), .integer(Int64(part.rawValue))])
        }
    }

    /// `body` as a section of its flow's frame (`FramedBody`), cut to the store's limit; nil when
    /// it is kept as a row of `bodies` instead (too large, spooled, or empty: no row at all).
    private func framedSection(_ body: StoredBody) -> [UInt8]? {
        let limit = configuration.bodyLimit
        if body.bytes.count <= limit { return FramedBody.takes(body) ? FramedBody.encode(body) : nil }
        let cut = body.limited(to: limit)
        return FramedBody.takes(cut) ? FramedBody.encode(cut) : nil
    }

    /// Stores `body` as a row of `bodies`, cut to the store's limit unless spooled. An empty body
    /// (every GET's request) is no row: readers answer it from the flow's size
    /// (`SessionStore.emptyBody`), and a GET costs two B-tree inserts less.
    private func storeRow(_ body: StoredBody, part: StoredBody.Part, sequence: Int64) throws {
        guard !body.isEmptyAsStored else { return }
        try store(body.spooled == nil ? body.limited(to: configuration.bodyLimit) : body, part: part, sequence: sequence)
    }

    /// `text` as `compressor` stores it for a flow to `host` (NULL for none).
    private func stored(_ text: String?, by compressor: RecordCompressor, host: String) throws -> SQLValue {
        guard let text else { return .null }
        var utf8 = text
        return try utf8.withUTF8 { bytes in
            try compressor.encode(UnsafeRawBufferPointer(bytes), host: host, plain: .text(text),
                                  makeDictionary: storeDictionary)
        }
    }

    /// The next frame's id: one past the largest any frame of the file ever had (`record_frames`
    /// is AUTOINCREMENT, so an id is never reused after `clear()`, and a reader's cached frame
    /// never names another).
    private func newFrameID() throws -> Int64 {
        let last = try lastFrameID ?? database.integer(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'record_frames'), 0), "
            + "coalesce((SELECT max(id) FROM record_frames), 0))")
        lastFrameID = last + 1
        return last + 1
    }

    /// Compresses the frame gathered so far and stores it (nothing when it is empty).
    private func writeFrame() throws {
        guard let gathered = frame.take() else { return }
        let value = try gathered.text.withUnsafeBytes { text in
            try records.encode(text, host: gathered.host, sample: UnsafeRawBufferPointer(rebasing: text[gathered.sample]),
                               records: gathered.count,
                               plain: .utf8(gathered.text, count: gathered.text.count), makeDictionary: storeDictionary)
        }
        try database.statement(Self.insertFrame).run([.integer(gathered.id), value])
    }

    /// Stores a new compression dictionary; its id.
    private func storeDictionary(_ bytes: [UInt8]) throws -> Int64 {
        try database.statement(Self.insertDictionary).run([.blob(bytes)])
        return database.lastInsertRowID
    }

    /// The parameters of `insertFlow`, `updateFlow` (without its `seq`) and `upsertFlow` for `s`.
    private static func rowValues(_ s: FlowSummary, phase: FlowPhase, bodiesDropped: Bool, record: [UInt8]?,
                                  graphQL: GraphQLCall?) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(valuesPerRow)
        appendRowValues(s, phase: phase, bodiesDropped: bodiesDropped, record: record, graphQL: graphQL, to: &values)
        return values
    }

    /// The parameters `rowValues` gives, appended to `values`; `graphQL` is the flow's GraphQL call
    /// (the writer's reading of its bodies, where `s.graphQL` is nil).
    private static func appendRowValues(_ s: FlowSummary, phase: FlowPhase, bodiesDropped: Bool, record: [UInt8]?,
                                        graphQL: GraphQLCall?, to values: inout [SQLValue]) {
        // One value at a time: appending an array literal built the values twice.
        values.append(.text(s.id))
        values.append(.integer(Int64(phase.rawValue)))
        values.append(.text(s.started))
        values.append(.string(s.method))
        values.append(.string(s.url))
        values.append(.text(s.host))
        values.append(.int(s.status))
        values.append(.string(s.httpVersion))
        values.append(.text(s.mode))
        values.append(.string(s.errorKind))
        values.append(.string(s.contentType))
        values.append(.string(s.requestContentType))
        values.append(.int(s.requestSize))
        values.append(.int(s.responseSize))
        values.append(.double(s.durationMs))
        values.append(.string(s.persona))
        values.append(.string(s.signerEmail))
        values.append(.string(s.signerSerial))
        values.append(.string(s.verdict))
        values.append(.bool(s.isWebSocket))
        values.append(.bool(s.isTunnel))
        values.append(.bool(s.bodiesDropped || bodiesDropped))
        values.append(record.map { $0.isEmpty ? .null : .blob($0) } ?? .null)
        values.append(.bool(record != nil))
        values.append(.int(s.grpcStatus))
        values.append(.int(s.port))
        values.append(s.informational.isEmpty ? .null : .text(s.informational.map(String.init).joined(separator: " ")))
        let call = graphQL ?? s.graphQL
        values.append(call.map { .text($0.storedOperations) } ?? .null)
        values.append(.int(call?.errors))
        values.append(.string(s.mapped))
        values.append(.string(s.client))
        values.append(.string(s.replayOf))
        values.append(.string(s.clientProcess))
        values.append(.string(s.clientExecutable))
        values.append(.int(s.clientPID))
    }

    /// Parameters of a row of `flows` (`insertFlow`).
    static let valuesPerRow = 35

    /// A finished flow's row waiting in `pendingRows` to be inserted with others; its parameters
    /// are the `valuesPerRow` at its place in `pendingValues`.
    private struct PendingRow {
        /// Where its summary is in the batch's changes (its `seq` is set once inserted).
        let change: Int
        /// Which of its bodies are sections of its frame (an earlier copy's rows for them go).
        let framedRequest: Bool
        let framedResponse: Bool
    }

    /// Finished flows whose rows wait to go in with others, in the order they were applied, and
    /// their parameters, row after row (one array for all: the statement binds them as they are).
    private var pendingRows: [PendingRow] = []
    private var pendingValues: [SQLValue] = []
    /// `insertFlows`, prepared once (the connection's cache finds a statement by its text, and
    /// hashed these 3 KiB each time).
    private var insertFlowsStatement: SQLiteStatement?

    /// Rows an `INSERT` of `pendingRows` takes at once. SQLite's work for one statement (starting
    /// it, `AUTOINCREMENT`'s update of `sqlite_sequence`, ending it) is then shared by this many
    /// flows: a C program with the store's schema spent 23.6k instructions a row one at a time,
    /// 16.8k fifty at a time (docs/performance.md, run 29); 16 takes most of that.
    static let rowsPerInsert = 16

    /// `insertFlow` for `rowsPerInsert` rows: the same columns and parameters, row after row.
    private static let insertFlows: String = {
        let rows = (0..<rowsPerInsert).map { row in
            let p = { (n: Int) in "?\(row * valuesPerRow + n)" }
            return "(" + (1...22).map(p).joined(separator: ", ")
                + ", iif(\(p(24)), \(p(23)), NULL), \(p(25)), \(p(26)), \(p(27)), \(p(28)), \(p(29)), \(p(30)), \(p(31)), \(p(32)),"
                + " \(p(33)), \(p(34)), \(p(35)))"
        }
        return """
            INSERT INTO flows (id, phase, started, method, url, host, status, http_version, mode, error_kind, content_type,
                request_content_type, request_size, response_size, duration_ms, persona, signer_email, signer_serial,
                verdict, websocket, tunnel, bodies_dropped, record, grpc_status, port, informational, graphql,
            graphql_errors, mapped, client, replay_of, client_process, client_exe, client_pid)
            VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (id) DO NOTHING
            """
    }()

    /// Inserts `pendingRows` and sets their summaries' `seq` in `changes`: `rowsPerInsert` of them
    /// in one statement, whose new rows take consecutive `seq`s (AUTOINCREMENT, one writer), or
    /// fewer one at a time. A row whose id is already stored (a flow log imported twice) is
    /// written as `upsert` writes it: over the stored row, whose stale heads, record and framed
    /// bodies go.
    private func insertPendingRows(into changes: inout StoreChanges) throws {
        guard !pendingRows.isEmpty else { return }
        defer {
            pendingRows.removeAll(keepingCapacity: true)
            pendingValues.removeAll(keepingCapacity: true)
        }
        if pendingRows.count == Self.rowsPerInsert {
            let statement = try insertFlowsStatement ?? database.statement(Self.insertFlows)
            insertFlowsStatement = statement
            try statement.run(pendingValues)
            if database.changes == pendingRows.count {
                let first = database.lastInsertRowID - Int64(pendingRows.count - 1)
                for (offset, row) in pendingRows.enumerated() { changes.flows[row.change].sequence = first + Int64(offset) }
                return
            }
            // An id was already stored: the rows go one at a time, the ones just inserted found again.
        }
        var superseded: [Int] = []
        for (index, row) in pendingRows.enumerated() {
            let values = Array(pendingValues[(index * Self.valuesPerRow)..<((index + 1) * Self.valuesPerRow)])
            try database.statement(Self.insertFlow).run(values)
            if database.changes > 0 {
                changes.flows[row.change].sequence = database.lastInsertRowID
                continue
            }
            guard let sequence = try database.rows(Self.upsertFlow, values, { $0.int64(0) ?? 0 }).first else {
                superseded.append(row.change)
                continue
            }
            changes.flows[row.change].sequence = sequence
            try deleteStaleRows(of: sequence, framedRequest: row.framedRequest, framedResponse: row.framedResponse)
        }
        for change in superseded.reversed() { changes.flows.remove(at: change) }
    }

    /// Inserts the flow or updates it in place; nil when the stored flow is already further on,
    /// else its summary as stored and whether its row is new.
    ///
    /// The first write of a flow is a plain INSERT and a later one an UPDATE by its `seq`, which
    /// the writer keeps while the flow runs (`runningSequences`); only when either finds a row it
    /// did not expect (an id already stored, a row gone) does it run the full upsert. SQLite's
    /// `ON CONFLICT DO UPDATE … RETURNING` cost ~75k instructions a row (an ephemeral table for
    /// `RETURNING`, the conflict probe; callgrind, docs/performance.md).
    /// - Parameters:
    ///   - bodiesDropped: set on the stored row whatever `s` says (its bodies were shed).
    ///   - record: the row's `record` (a `RecordReference`; empty for none); nil keeps what it has.
    ///   - graphQL: the GraphQL call the finished flow is (`GraphQLCall.detect`), nil for none.
    private func upsert(_ s: FlowSummary, phase: FlowPhase, bodiesDropped: Bool, record: [UInt8]?,
                        graphQL: GraphQLCall?) throws -> (FlowSummary, isNew: Bool)? {
        var values = Self.rowValues(s, phase: phase, bodiesDropped: bodiesDropped, record: record, graphQL: graphQL)
        var written: Int64?
        var isNew = false
        if let known = runningSequences[s.id] {
            values.append(.integer(known))
            try database.statement(Self.updateFlow).run(values)
            values.removeLast()
            if database.changes > 0 { written = known }
        } else {
            try database.statement(Self.insertFlow).run(values)
            if database.changes > 0 {
                written = database.lastInsertRowID
                isNew = true
            }
        }
        if written == nil { written = try database.rows(Self.upsertFlow, values) { $0.int64(0) ?? 0 }.first }
        guard let sequence = written else {
            runningSequences[s.id] = nil
            return nil
        }
        if phase == .finished {
            runningSequences[s.id] = nil
        } else {
            // A cache: flows that never finish (a dropped record, a shutdown) must not grow it.
            if runningSequences.count >= Self.runningSequencesKept { runningSequences.removeAll() }
            runningSequences[s.id] = sequence
        }
        var summary = s
        summary.sequence = sequence
        if bodiesDropped { summary.bodiesDropped = true }
        if let graphQL { summary.graphQL = graphQL }
        return (summary, isNew)
    }

    /// Takes from `bodies` (nil: none) the spool files the spool's disk budget cut short (those
    /// keep the flow log's part, as when nothing is spooled); how many that was: shed bodies,
    /// counted. `bodies` is written only when one is shed (the common case reads it alone).
    private static func shedIncompleteSpools(_ bodies: inout FlowBodies?) -> Int {
        var shed = 0
        if bodies?.request?.spooled?.isComplete == false {
            bodies?.request?.spooled = nil
            shed += 1
        }
        if bodies?.response?.spooled?.isComplete == false {
            bodies?.response?.spooled = nil
            shed += 1
        }
        return shed
    }

    /// Stores a body: as TEXT when its bytes are its text (one copy, searched as a C string),
    /// otherwise the bytes as a BLOB and the decoded text beside them. A spooled body is copied
    /// from its file (`storeSpooled`).
    private func store(_ body: StoredBody, part: StoredBody.Part, sequence: Int64) throws {
        if let spooled = body.spooled {
            try storeSpooled(body, spooled, part: part, sequence: sequence)
            return
        }
        let data: SQLValue
        var text = SQLValue.string(body.text)
        if let bodyText = body.text, Self.isSameText(bodyText, body.bytes) {
            data = .text(bodyText)
            text = .null
        } else {
            data = .blob(body.bytes)
        }
        try database.statement(Self.upsertBody).run([
            .integer(sequence), .integer(Int64(part.rawValue)), .integer(Int64(body.size)), .string(body.sha256),
            data, text,
        ])
    }

    /// Stores a spooled body, up to `configuration.bodyLimit` of it, with the line's size and hash
    /// (of the whole). Its text, when the flow log's text is just its first bytes (a plain text
    /// body), is the bytes themselves: stored as TEXT when the log had it whole, else left out so
    /// that `~b` searches every stored byte; a decoded (gzip, br…) text is kept beside the bytes.
    /// The spool file itself becomes the body's file beside the session (`BodyFiles`: a hard link,
    /// no copy); where it cannot, the bytes go in through incremental blob I/O, a piece at a
    /// time, never whole in memory.
    private func storeSpooled(_ body: StoredBody, _ spooled: SpooledBody, part: StoredBody.Part,
                              sequence: Int64) throws {
        let length = min(spooled.length, configuration.bodyLimit)
        var text = body.limited(to: configuration.bodyLimit).text
        if let logged = text, logged.utf8.count <= length, let prefix = spooled.prefix(logged.utf8.count),
           Self.isSameText(logged, prefix) {
            if prefix.count == length {
                try database.statement(Self.upsertBody).run([
                    .integer(sequence), .integer(Int64(part.rawValue)), .integer(Int64(body.size)),
                    .string(body.sha256), .text(logged), .null,
                ])
                return
            }
            text = nil
        }
        if let file = spooled.file, spooled.isComplete,
           let name = bodyFiles.adopt(file, length: length, sequence: sequence, part: part) {
            linkedInBatch.append(name)
            try database.statement(Self.upsertFileBody).run([
                .integer(sequence), .integer(Int64(part.rawValue)), .integer(Int64(body.size)), .string(body.sha256),
                .blob([]), .string(text), .text(name),
            ])
            return
        }
        let rows = try database.rows(Self.upsertBodyReturningRowID, [
            .integer(sequence), .integer(Int64(part.rawValue)), .integer(Int64(body.size)), .string(body.sha256),
            .zeroBlob(length), .string(text),
        ]) { $0.int64(0) ?? 0 }
        guard let rowid = rows.first, length > 0 else { return }
        let blob = try SQLiteBlob(database: database, table: "bodies", column: "data", rowid: rowid)
        var offset = 0
        let read = try spooled.chunks(upTo: length) { chunk in
            try blob.write(chunk, at: offset)
            offset += chunk.count
        }
        if !read || offset != length {
            // The file went missing or short: keep what the flow log has instead, and count it shed.
            var logged = body
            logged.spooled = nil
            try store(logged.limited(to: configuration.bodyLimit), part: part, sequence: sequence)
            try database.statement(Self.markBodiesDropped).run([.integer(sequence)])
            queue.countDroppedBodies(1)
        }
    }

    /// Whether `text` is exactly `bytes` with no NUL (so it can be stored, and searched, as a C string).
    static func isSameText(_ text: String, _ bytes: [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            bytes.withUnsafeBytes { raw in
                guard utf8.count == raw.count else { return false }
                guard let base = raw.baseAddress, let textBase = utf8.baseAddress else { return true }
                return memcmp(base, textBase, raw.count) == 0 && memchr(base, 0, raw.count) == nil
            }
        }
    }

    /// The flow's columns are ?1–?22 and ?25–?35 (`grpc_status`, `port`, `informational`, `graphql`,
    /// `graphql_errors`, `mapped`, `client`, `replay_of`, `client_process`, `client_exe`, `client_pid`);
    /// ?23 its
    /// `record`, which ?24 (0 or 1) says whether to set.
    private static let upsertFlow: StaticString = """
        INSERT INTO flows (id, phase, started, method, url, host, status, http_version, mode, error_kind, content_type,
            request_content_type, request_size, response_size, duration_ms, persona, signer_email, signer_serial,
            verdict, websocket, tunnel, bodies_dropped, record, grpc_status, port, informational, graphql,
            graphql_errors, mapped, client, replay_of, client_process, client_exe, client_pid)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            iif(?24, ?23, NULL), ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35)
        ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, started = excluded.started, method = excluded.method,
            url = excluded.url, host = excluded.host, status = excluded.status, http_version = excluded.http_version,
            mode = excluded.mode, error_kind = excluded.error_kind, content_type = excluded.content_type,
            request_content_type = excluded.request_content_type, request_size = excluded.request_size,
            response_size = excluded.response_size, duration_ms = excluded.duration_ms, persona = excluded.persona,
            signer_email = excluded.signer_email, signer_serial = excluded.signer_serial, verdict = excluded.verdict,
            websocket = excluded.websocket, tunnel = excluded.tunnel, grpc_status = excluded.grpc_status,
            port = excluded.port, informational = excluded.informational, graphql = excluded.graphql,
            graphql_errors = excluded.graphql_errors, mapped = excluded.mapped, client = excluded.client,
            replay_of = excluded.replay_of, client_process = excluded.client_process, client_exe = excluded.client_exe,
            client_pid = excluded.client_pid,
            bodies_dropped = max(flows.bodies_dropped, excluded.bodies_dropped),
            record = iif(?24, excluded.record, flows.record)
        WHERE excluded.phase >= flows.phase
        RETURNING seq
        """
    /// `upsertFlow` for a new id: the same parameters; nothing changes when the id is stored.
    private static let insertFlow: StaticString = """
        INSERT INTO flows (id, phase, started, method, url, host, status, http_version, mode, error_kind, content_type,
            request_content_type, request_size, response_size, duration_ms, persona, signer_email, signer_serial,
            verdict, websocket, tunnel, bodies_dropped, record, grpc_status, port, informational, graphql,
            graphql_errors, mapped, client, replay_of, client_process, client_exe, client_pid)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            iif(?24, ?23, NULL), ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35)
        ON CONFLICT (id) DO NOTHING
        """
    /// `upsertFlow`'s update for a row whose `seq` (?36) is known: the same parameters, the same rule.
    private static let updateFlow: StaticString = """
        UPDATE flows SET phase = ?2, started = ?3, method = ?4, url = ?5, host = ?6, status = ?7, http_version = ?8,
            mode = ?9, error_kind = ?10, content_type = ?11, request_content_type = ?12, request_size = ?13,
            response_size = ?14, duration_ms = ?15, persona = ?16, signer_email = ?17, signer_serial = ?18,
            verdict = ?19, websocket = ?20, tunnel = ?21, bodies_dropped = max(bodies_dropped, ?22),
            record = iif(?24, ?23, record), grpc_status = ?25, port = ?26, informational = ?27, graphql = ?28,
            graphql_errors = ?29, mapped = ?30, client = ?31, replay_of = ?32, client_process = ?33,
            client_exe = ?34, client_pid = ?35
        WHERE seq = ?36 AND id = ?1 AND phase <= ?2
        """
    private static let insertFrame: StaticString = "INSERT INTO record_frames (id, data) VALUES (?, ?)"
    private static let deleteHeads: StaticString = "DELETE FROM flow_heads WHERE seq = ?"
    private static let deleteJSON: StaticString = "DELETE FROM flow_records WHERE seq = ?"
    private static let deleteBody: StaticString = "DELETE FROM bodies WHERE seq = ? AND part = ?"
    private static let runningSequencesKept = 20_000
    private static let upsertHeads: StaticString =
        "INSERT OR REPLACE INTO flow_heads (seq, request_headers, response_headers) VALUES (?, ?, ?)"
    private static let upsertJSON: StaticString = "INSERT OR REPLACE INTO flow_records (seq, json) VALUES (?, ?)"
    private static let insertDictionary: StaticString = "INSERT INTO record_dictionaries (data) VALUES (?)"
    private static let insertGRPCSchema: StaticString =
        "INSERT INTO grpc_schemas (host, port, service, learned, descriptor_set) VALUES (?, ?, ?, ?, ?)"
    private static let markBodiesDropped: StaticString = "UPDATE flows SET bodies_dropped = 1 WHERE seq = ?"
    private static let upsertBody: StaticString =
        "INSERT OR REPLACE INTO bodies (seq, part, size, sha256, data, text) VALUES (?, ?, ?, ?, ?, ?)"
    private static let upsertFileBody: StaticString =
        "INSERT OR REPLACE INTO bodies (seq, part, size, sha256, data, text, file) VALUES (?, ?, ?, ?, ?, ?, ?)"
    private static let upsertBodyReturningRowID: StaticString =
        "INSERT OR REPLACE INTO bodies (seq, part, size, sha256, data, text) VALUES (?, ?, ?, ?, ?, ?) RETURNING rowid"
}

extension StoreWriter {
    /// After `join()`: folds the WAL into the main file and leaves it in rollback-journal mode, so
    /// a saved session is one self-contained file. Fails harmlessly while a reader is still open.
    func detach() {
        try? database.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
    }
}
