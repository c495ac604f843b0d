import DevProxy
import Foundation
import SessionStore

/// Turns the store's committed batches into Server-Sent Events (`GET /api/events`).
///
/// The store's writer thread only appends to `pending` (short, under a lock). A flusher thread
/// wakes when something arrives, waits 100 ms more, folds what came into one message (a flow
/// changed several times appears once, in its latest state), numbers it and keeps the last 64
/// messages (at most 8 MiB of them); each event-stream connection's own thread waits for new
/// numbers and writes them. So the page gets at most 10 messages a second however many flows
/// arrive, a slow page never holds up the store, and a page that reconnects with `Last-Event-ID`
/// gets what it missed (or `reset`).
///
/// With no stream open, and none closed in the last `resumeWindow`, nothing is built: a batch
/// only advances the message number, so a page that comes back later gets `reset` (and fetches
/// its list again) instead of the batches it missed. A proxy run without a page open then pays
/// nothing here (callgrind: ~20–40k instructions a flow for messages nobody read; docs/performance.md).
///
/// A stream opened with a filter (`GET /api/events?filter=EXPR`, what a filtered list uses) gets
/// in each `flows` message only the flows of the batch that match now, and under `unmatched` the
/// ids of the others, so the page adds a flow that starts matching late (a pending flow that gets
/// its status) and drops one that stops matching. The store evaluates the filter over the
/// batch's ids only (`SessionStore.matchingIDs`), once per message and connection.
///
/// Beside a proxy, the breakpoints' board (`Intercepts`) is observed too: a change (a request
/// held, resumed, aborted, its client gone; the filter set) is folded by the same flusher into
/// one `intercept` message with the board as it is then, `{"filter", "held": [ids]}`. The map
/// rules' board (`RuleBoard`) likewise: changes made in any page or by a script are folded into one
/// `rules` message (`{}`), on which every open page's Rules view fetches `/api/rules` again.
final class EventHub: @unchecked Sendable {
    /// One numbered message.
    struct Message: Sendable {
        let id: Int
        let event: String
        /// The data of any event but `flows`.
        var data: String = ""
        /// A `flows` message's summaries, each as its JSON object.
        var flows: [FlowJSON] = []

        /// The number of bytes the message keeps.
        var size: Int { data.utf8.count + flows.reduce(0) { $0 + $1.json.utf8.count } }
    }

    /// One flow's summary in a `flows` message.
    struct FlowJSON: Sendable {
        let id: String
        let json: String
    }

    static let interval: TimeInterval = 0.1
    static let heartbeat: TimeInterval = 15
    static let kept = 64
    /// The kept messages' text stays under this (a flood makes big messages): 8 MiB.
    static let keptBytes = 8 << 20
    /// How long after the last stream closed messages are still built, for a page that reconnects
    /// (EventSource retries after 2 s; a page that changes its filter reopens its stream at once).
    static let resumeWindow: TimeInterval = 60

    private let store: SessionStore
    /// The proxy's breakpoints, observed while started; nil beside no proxy.
    private let intercepts: Intercepts?
    private var interceptObserver: Int?
    /// The proxy's map rules, observed while started; nil beside no proxy.
    private let rules: RuleBoard?
    private var rulesObserver: Int?
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pendingOrder: [String] = []
    private var pending: [String: FlowSummary] = [:]
    private var pendingCleared = false
    /// The board changed since the last message.
    private var pendingIntercept = false
    /// The map rules changed since the last message.
    private var pendingRules = false
    private var recent: [Message] = []
    private var lastID = 0
    private var stopped = false
    private var observer: Int?
    private var started = false
    /// Streams open now.
    private var listeners = 0
    /// When the last stream closed (`DispatchTime` nanoseconds); nil while one is open or none ever was.
    private var lastListenerLeft: UInt64?
    private let flusherDone = DispatchSemaphore(value: 0)

    init(store: SessionStore, intercepts: Intercepts? = nil, rules: RuleBoard? = nil) {
        self.store = store
        self.intercepts = intercepts
        self.rules = rules
    }

    func start() {
        started = true
        observer = store.addObserver { [weak self] changes in self?.receive(changes) }
        interceptObserver = intercepts?.observe { [weak self] in self?.interceptChanged() }
        rulesObserver = rules?.observe { [weak self] _ in self?.rulesChanged() }
        let thread = Thread { [self] in flushLoop() }
        thread.name = "devproxy-web-events"
        thread.start()
    }

    /// Stops the flusher; a second call does nothing (it waited for a flusher already gone, forever).
    func stop() {
        guard started else { return }
        started = false
        if let observer { store.removeObserver(observer) }
        if let interceptObserver { intercepts?.unobserve(interceptObserver) }
        if let rulesObserver { rules?.unobserve(rulesObserver) }
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
        flusherDone.wait()
    }

    /// Whether a stream is open or closed within `resumeWindow`. Under `condition`.
    private var isFollowed: Bool {
        if listeners > 0 { return true }
        guard let left = lastListenerLeft else { return false }
        return DispatchTime.now().uptimeNanoseconds - left < UInt64(Self.resumeWindow * 1e9)
    }

    /// Called on the store's writer thread after each commit: only queues.
    private func receive(_ changes: StoreChanges) {
        condition.withLock {
            guard isFollowed else {
                // Nobody to tell: a number for the batch, so a stream resuming from before it gets `reset`.
                lastID += 1
                recent.removeAll()
                return
            }
            let wasIdle = isIdle
            defer { if wasIdle { condition.broadcast() } }
            if changes.cleared {
                pendingCleared = true
                pendingOrder.removeAll()
                pending.removeAll()
            }
            for summary in changes.flows {
                if pending.updateValue(summary, forKey: summary.id) == nil { pendingOrder.append(summary.id) }
            }
        }
    }

    /// Called on whatever thread changed the intercept board (no lock of the board held): only marks it.
    private func interceptChanged() { boardChanged { $0.pendingIntercept = true } }

    /// Called on whatever thread changed the map rules (no lock of the board held): only marks it.
    private func rulesChanged() { boardChanged { $0.pendingRules = true } }

    /// Marks what `mark` sets as waiting to be sent, waking the flusher if it slept.
    private func boardChanged(_ mark: (EventHub) -> Void) {
        condition.withLock {
            guard isFollowed else {
                // Nobody to tell: a number for the change, so a stream resuming from before it gets `reset`.
                lastID += 1
                recent.removeAll()
                return
            }
            let wasIdle = isIdle
            mark(self)
            if wasIdle { condition.broadcast() }
        }
    }

    /// Nothing waits to be sent. Under `condition`.
    private var isIdle: Bool { pendingOrder.isEmpty && !pendingCleared && !pendingIntercept && !pendingRules }

    private func flushLoop() {
        defer { flusherDone.signal() }
        while true {
            // Asleep until something arrives (no wake-ups while the proxy is idle), then one
            // interval more to gather the batch.
            let running = condition.withLock { () -> Bool in
                while isIdle && !stopped { condition.wait() }
                return !stopped
            }
            guard running else { return }
            Thread.sleep(forTimeInterval: Self.interval)
            let (cleared, flows, board, ruled, done) = condition.withLock {
                () -> (Bool, [FlowSummary], Bool, Bool, Bool) in
                let batch = (pendingCleared, pendingOrder.compactMap { pending[$0] }, pendingIntercept, pendingRules,
                             stopped)
                pendingCleared = false
                pendingIntercept = false
                pendingRules = false
                pendingOrder.removeAll(keepingCapacity: true)
                pending.removeAll(keepingCapacity: true)
                return batch
            }
            if done { return }
            guard cleared || !flows.isEmpty || board || ruled else { continue }
            var messages: [(String, [FlowJSON])] = []
            if cleared { messages.append(("cleared", [])) }
            // The board as it is now, after the flows: a flow that ended is in the list before its
            // row stops being marked held.
            let interceptData = board ? intercepts.map(WebUI.boardEventJSON) : nil
            if !flows.isEmpty {
                // A query per batch only when the batch has a replay (a statement prepared and every
                // record read back cost ~100k instructions per flow at h2 rates otherwise).
                let replays = flows.map(\.id).filter(Replayer.isReplayID)
                let origins = replays.isEmpty ? [:] : (try? store.replayOrigins(ids: replays)) ?? [:]
                // The writer's summaries carry no note (a flow marked while it runs keeps its mark
                // when it ends): the notes as they are now, read from their small table.
                let notes = (try? store.hasNotes()) == true ? (try? store.notes(ids: flows.map(\.id))) ?? [:] : [:]
                messages.append(("flows", flows.map { summary in
                    var summary = summary
                    summary.mark = notes[summary.id]?.mark
                    summary.comment = notes[summary.id]?.comment
                    var json = JSONText(capacity: 480)
                    summary.write(to: &json, replayOf: origins[summary.id])
                    return FlowJSON(id: summary.id, json: json.text)
                }))
            }
            condition.withLock {
                for (event, flows) in messages {
                    lastID += 1
                    recent.append(event == "flows" ? Message(id: lastID, event: event, flows: flows)
                                                   : Message(id: lastID, event: event, data: "{}"))
                }
                if let interceptData {
                    lastID += 1
                    recent.append(Message(id: lastID, event: "intercept", data: interceptData))
                }
                if ruled {
                    lastID += 1
                    recent.append(Message(id: lastID, event: "rules", data: "{}"))
                }
                if recent.count > Self.kept { recent.removeFirst(recent.count - Self.kept) }
                var bytes = recent.reduce(0) { $0 + $1.size }
                while recent.count > 1 && bytes > Self.keptBytes {
                    bytes -= recent.removeFirst().size
                }
                condition.broadcast()
            }
        }
    }

    /// The messages after `seen`, or nil when some of them are no longer kept (the client must
    /// refetch). Waits up to `timeout` for one to arrive; [] on timeout or when stopped.
    func messages(after seen: Int, timeout: TimeInterval) -> (messages: [Message]?, stopped: Bool) {
        condition.withLock {
            let deadline = Date().addingTimeInterval(timeout)
            while lastID <= seen && !stopped {
                if !condition.wait(until: deadline) { break }
            }
            if stopped { return ([], true) }
            guard lastID > seen else { return ([], false) }
            // The oldest message kept; with none kept, every number up to `lastID` went unbuilt.
            if (recent.first?.id ?? lastID + 1) > seen + 1 { return (nil, false) }
            return (recent.filter { $0.id > seen }, false)
        }
    }

    var currentID: Int { condition.withLock { lastID } }

    /// A stream opened: batches are built from now on. Returns the current message number.
    private func listen() -> Int {
        condition.withLock {
            listeners += 1
            lastListenerLeft = nil
            return lastID
        }
    }

    /// A stream closed; with none left, batches are built for `resumeWindow` more.
    private func leave() {
        condition.withLock {
            listeners -= 1
            if listeners == 0 { lastListenerLeft = DispatchTime.now().uptimeNanoseconds }
        }
    }

    /// The `GET /api/events` answer: a stream that runs on the connection's thread until the
    /// client goes or the UI stops.
    /// - Parameters:
    ///   - lastEventID: the `Last-Event-ID` header (or `last_event_id` query parameter).
    ///   - filter: nil for every flow; else `flows` messages carry the matching flows and `unmatched`.
    func stream(lastEventID: String?, filter: FilterExpression? = nil) -> WebResponse {
        let resumeFrom = lastEventID.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let format: @Sendable (Message) -> String = { [store] message in
            Self.format(message, filter: filter, store: store)
        }
        return WebResponse(status: 200, headers: [("Content-Type", "text/event-stream; charset=utf-8"),
                                                  ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")]) {
            [self] stream in
            var seen = listen()
            defer { leave() }
            var opening = "retry: 2000\n\n" + Self.format(Message(id: seen, event: "hello",
                                                                   data: "{\"last_event_id\":\(seen)}"))
            if let resumeFrom, resumeFrom < seen {
                if let missed = messages(after: resumeFrom, timeout: 0).messages {
                    opening += missed.map(format).joined()
                    seen = max(seen, missed.last?.id ?? seen)
                } else {
                    opening += Self.format(Message(id: seen, event: "reset", data: "{}"))
                }
            }
            do {
                try stream.write(Array(opening.utf8))
                while true {
                    let (batch, stopped) = messages(after: seen, timeout: Self.heartbeat)
                    if stopped { return }
                    guard let batch else {
                        seen = currentID
                        try stream.write(Array(Self.format(Message(id: seen, event: "reset", data: "{}")).utf8))
                        continue
                    }
                    if batch.isEmpty {
                        try stream.write(Array(": heartbeat\n\n".utf8))
                        continue
                    }
                    seen = batch.last?.id ?? seen
                    try stream.write(Array(batch.map(format).joined().utf8))
                }
            } catch {
                return   // the page went away
            }
        }
    }

    /// `id:`, `event:` and one `data:` line (the JSON has no raw newlines).
    static func format(_ message: Message) -> String {
        "id: \(message.id)\nevent: \(message.event)\ndata: \(message.data)\n\n"
    }

    /// A message as one stream sends it: a `flows` message under `filter` keeps the flows that
    /// match now and names the others under `unmatched`. When the store cannot say, `reset`
    /// (the page refetches its list).
    static func format(_ message: Message, filter: FilterExpression?, store: SessionStore) -> String {
        guard message.event == "flows" else { return format(message) }
        var json = JSONText(capacity: message.flows.reduce(32) { $0 + $1.json.utf8.count + 1 })
        json.raw("{\"flows\":[")
        guard let filter else {
            json.raw(message.flows.map(\.json).joined(separator: ","))
            json.raw("]}")
            return format(Message(id: message.id, event: message.event, data: json.text))
        }
        guard let matching = try? store.matchingIDs(message.flows.map(\.id), filter: filter) else {
            return format(Message(id: message.id, event: "reset", data: "{}"))
        }
        json.raw(message.flows.filter { matching.contains($0.id) }.map(\.json).joined(separator: ","))
        json.raw("],\"unmatched\":[")
        for (index, flow) in message.flows.filter({ !matching.contains($0.id) }).enumerated() {
            if index > 0 { json.raw(",") }
            json.string(flow.id)
        }
        json.raw("]}")
        return format(Message(id: message.id, event: message.event, data: json.text))
    }
}
