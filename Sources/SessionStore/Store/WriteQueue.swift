import Foundation

/// The bounded queue between the proxy's threads and the store's writer thread.
///
/// `offer` never waits: when the queue is half full, or its body bytes are at their budget, the
/// event goes in without its bodies; when it is full, the event is dropped. Both are counted.
/// `put` (imports) waits for room instead. The writer `take`s batches and reports them `done`.
final class WriteQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private let bodyBudget: Int
    private var events: [StoreEvent] = []
    private var bodyBytes = 0
    private var accepted = 0
    private var completed = 0
    private var closed = false
    private var dropCounts = StoreDrops()

    init(capacity: Int, bodyBudget: Int) {
        self.capacity = capacity
        self.bodyBudget = bodyBudget
    }

    /// Drops so far.
    var drops: StoreDrops { condition.withLock { dropCounts } }

    /// Counts a record that never reached the queue (it could not be read).
    func countDroppedRecord() {
        condition.withLock { dropCounts.records += 1 }
    }

    /// Counts bodies the writer could not keep whole (their spool was refused disk space).
    func countDroppedBodies(_ count: Int) {
        condition.withLock { dropCounts.bodies += count }
    }

    /// Whether an event holding `bytes` of bodies would have its bodies shed now.
    func isUnderPressure(adding bytes: Int) -> Bool {
        condition.withLock { events.count >= capacity / 2 || bodyBytes + bytes > bodyBudget }
    }

    /// Adds `event` without waiting, shedding its bodies or the whole event under pressure.
    /// - Returns: false when the event was dropped (or the queue is closed).
    @discardableResult
    func offer(_ event: StoreEvent) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return false }
        guard events.count < capacity else {
            dropCounts.records += 1
            return false
        }
        var event = event
        if case .flow(var record, let phase, let json, let bodies?) = event,
           events.count >= capacity / 2 || bodyBytes + bodies.byteCount > bodyBudget {
            let count = (bodies.request == nil ? 0 : 1) + (bodies.response == nil ? 0 : 1)
            dropCounts.bodies += count
            record.summary.bodiesDropped = count > 0
            event = .flow(record, phase: phase, json: json, bodies: nil)
        }
        append(event)
        return true
    }

    /// Adds `event`, waiting until it fits with its bodies. For imports, which must not lose data.
    func put(_ event: StoreEvent) {
        condition.lock()
        defer { condition.unlock() }
        // An event larger than the whole budget still goes in once the queue is empty.
        while !closed, events.count >= capacity / 2 || (bodyBytes + event.bodyBytes > bodyBudget && !events.isEmpty) {
            condition.wait()
        }
        guard !closed else { return }
        append(event)
    }

    private func append(_ event: StoreEvent) {
        events.append(event)
        bodyBytes += event.bodyBytes
        accepted += 1
        condition.broadcast()
    }

    /// Up to `limit` events, waiting while the queue is empty. Nil once closed and drained.
    func take(limit: Int) -> [StoreEvent]? {
        condition.lock()
        defer { condition.unlock() }
        while events.isEmpty && !closed { condition.wait() }
        if events.isEmpty { return nil }
        // Take the whole array when it fits: removing a prefix of a long queue would move the rest.
        if events.count <= limit {
            defer { events = [] }
            return events
        }
        let batch = Array(events.prefix(limit))
        events.removeFirst(batch.count)
        return batch
    }

    /// The writer has committed `batch` (taken earlier): its memory is free and flushes may return.
    func done(_ batch: [StoreEvent]) {
        condition.withLock {
            bodyBytes -= batch.reduce(0) { $0 + $1.bodyBytes }
            completed += batch.count
            condition.broadcast()
        }
    }

    /// Waits until every event accepted before the call is committed.
    func flush() {
        condition.lock()
        defer { condition.unlock() }
        let target = accepted
        while completed < target { condition.wait() }
    }

    /// Accepts no more events; the writer drains what is queued, then `take` returns nil.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }
}
