import Foundation

/// The bounded queue between the proxy's threads and the store's writer thread.
///
/// `offer` waits a little for a writer that is behind: when the queue is half full, or its body
/// bytes are at their budget, it waits up to `offerWait` for the writer to take a batch (body
/// bytes: to commit one, which frees them). A proxy busier than the writer then slows to the
/// writer's pace instead of losing flows (on a busy machine the writer is one thread among the
/// proxy's many, and the scheduler gives it no more than any of them: at 40,000 h2 streams a
/// second it kept 55–70 % of the flows before).
/// When the wait runs out (the writer is stuck, not behind: a disk that hangs), the event goes
/// in without its bodies, or is dropped when the queue is full, both counted; for the next
/// `waitPause` offers do not wait at all, so that a stuck writer never holds the proxy up for
/// more than one wait a second. `put` (imports) waits for room however long it takes. The
/// writer `take`s batches and reports them `done`.
///
/// `take` can gather: once an event is there it waits a little longer for more, so that a short
/// exchange's `started`, `responded` and `finished` steps share a batch (the writer then writes
/// its row once) and a commit serves many flows. The proxy's threads wake the writer only for the
/// event it waits for (the first, or the one that fills the batch), not for every event.
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
    /// The queue length at which `append` wakes the writer: 1 while it waits for anything,
    /// its batch size while it gathers.
    private var wakeAt = 1
    /// Callers of `flush()` waiting now: the writer stops gathering for them.
    private var flushing = 0
    /// Offers waiting for room now: `take` wakes them as soon as it makes some.
    private var offersWaiting = 0

    /// How long an offer waits for room (0: never).
    private let offerWait: TimeInterval
    /// When a wait last ran out (`DispatchTime` nanoseconds), and how long offers then do not wait.
    private var waitRanOutAt: UInt64?
    static let waitPause: UInt64 = 1_000_000_000

    init(capacity: Int, bodyBudget: Int, offerWait: TimeInterval = 0) {
        self.capacity = capacity
        self.bodyBudget = bodyBudget
        self.offerWait = offerWait
    }

    /// Whether the bodies of an event holding `bytes` of them are shed now: the queue half full,
    /// or past its body budget. Called with the lock held.
    private func sheds(_ bytes: Int) -> Bool {
        events.count >= capacity / 2 || bodyBytes + bytes > bodyBudget
    }

    /// `sheds`, where waiting for the writer can change it: not for bodies over the budget while
    /// the queue holds none.
    private func waitCanMakeRoom(_ bytes: Int) -> Bool {
        sheds(bytes) && (events.count >= capacity / 2 || bodyBytes > 0)
    }

    /// Waits, at most `offerWait`, while the queue is under pressure for an event holding `bytes`
    /// of bodies (not at all for a while after a wait ran out). Called with the lock held.
    private func waitForRoomLocked(adding bytes: Int) {
        guard offerWait > 0, !closed, waitCanMakeRoom(bytes) else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        if let ranOut = waitRanOutAt, now &- ranOut < Self.waitPause { return }
        let deadline = Date(timeIntervalSinceNow: offerWait)
        offersWaiting += 1
        defer { offersWaiting -= 1 }
        while !closed && waitCanMakeRoom(bytes) {
            if !condition.wait(until: deadline) {
                if waitCanMakeRoom(bytes) { waitRanOutAt = DispatchTime.now().uptimeNanoseconds }
                return
            }
        }
    }

    /// Whether a `flush()` is waiting: the writer holds nothing back from it.
    var isFlushRequested: Bool { condition.withLock { flushing > 0 } }

    /// Whether nothing waits for the writer.
    var isEmpty: Bool { condition.withLock { events.isEmpty } }

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

    /// Whether an event holding `bytes` of bodies would have its bodies shed, once `offer`'s wait
    /// for room (at most `offerWait`) is over.
    func isUnderPressure(adding bytes: Int) -> Bool {
        condition.withLock {
            waitForRoomLocked(adding: bytes)
            return sheds(bytes)
        }
    }

    /// Adds `event`, waiting at most `offerWait` for room, then shedding its bodies or the whole
    /// event under pressure.
    /// - Returns: false when the event was dropped (or the queue is closed).
    @discardableResult
    func offer(_ event: StoreEvent) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        waitForRoomLocked(adding: event.bodyBytes)
        guard !closed else { return false }
        guard events.count < capacity else {
            dropCounts.records += 1
            return false
        }
        var event = event
        if case .step(let step) = event, let bodies = step.bodies, sheds(bodies.byteCount) {
            let count = (bodies.request == nil ? 0 : 1) + (bodies.response == nil ? 0 : 1)
            dropCounts.bodies += count
            var record = step.record
            record.summary.bodiesDropped = count > 0
            event = .flow(record, phase: step.phase, json: step.json, bodies: nil)
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
        // Only the writer waits for events; waking it for each one would cost a context switch an event.
        // Nor to gather more once offers wait for room (the queue half full).
        if events.count >= wakeAt || events.count >= capacity / 2 || bodyBytes > bodyBudget / 2 { condition.broadcast() }
    }

    /// Up to `limit` events, waiting while the queue is empty, then up to `gather` seconds more
    /// while fewer than `limit` are there (not when closing, flushing, or half the body budget is
    /// queued, or the queue is half full and offers wait for room). Nil once closed and drained.
    /// - Parameter longest: how long to wait for a first event; none (`[]`) when it passes, or
    ///   when a flush is asked for meanwhile. Nil waits as long as it takes.
    func take(limit: Int, gather: TimeInterval = 0, waitingAtMost longest: TimeInterval? = nil) -> [StoreEvent]? {
        condition.lock()
        defer { condition.unlock() }
        wakeAt = 1
        if let longest {
            let deadline = Date(timeIntervalSinceNow: longest)
            while events.isEmpty && !closed && flushing == 0 {
                if !condition.wait(until: deadline) { break }
            }
            if events.isEmpty { return closed ? nil : [] }
        }
        while events.isEmpty && !closed { condition.wait() }
        if events.isEmpty { return nil }
        if gather > 0 {
            let deadline = Date(timeIntervalSinceNow: gather)
            wakeAt = limit
            while events.count < limit && events.count < capacity / 2 && !closed && flushing == 0
                    && bodyBytes <= bodyBudget / 2 {
                if !condition.wait(until: deadline) { break }
            }
            wakeAt = 1
        }
        // Offers waiting for room go on now, not once the batch is committed (`done`): committing
        // 2,000 events takes the writer milliseconds, and a busy proxy's connection threads waited
        // through it with room in the queue (h2 keep-alive: ~2,000–3,000 waits in 9 s;
        // docs/performance.md, run 44). An offer waiting for body bytes still waits for `done`,
        // which frees them.
        defer { if offersWaiting > 0 { condition.broadcast() } }
        // Take the whole array when it fits: removing a prefix of a long queue would move the rest.
        if events.count <= limit {
            defer { events = [] }
            return events
        }
        let batch = Array(events.prefix(limit))
        events.removeFirst(batch.count)
        return batch
    }

    /// The body bytes `batch` holds against the queue's budget.
    static func bodyBytes(of batch: [StoreEvent]) -> Int {
        batch.reduce(0) { $0 + $1.bodyBytes }
    }

    /// The writer has committed the `count` events it took last, holding `bodyBytes`, and let them
    /// go: their memory is free and flushes may return.
    func done(count: Int, bodyBytes released: Int) {
        condition.withLock {
            bodyBytes -= released
            completed += count
            condition.broadcast()
        }
    }

    /// Waits until every event accepted before the call is committed.
    func flush() {
        condition.lock()
        defer { condition.unlock() }
        let target = accepted
        flushing += 1
        defer { flushing -= 1 }
        // Wakes a writer that gathers: what the caller waits for is committed now.
        condition.broadcast()
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
