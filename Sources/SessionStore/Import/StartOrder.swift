import Foundation

/// Puts imported flows into the store in the order they started, as the list shows a live
/// session's (and browsers' network panels theirs): a flow log is written as flows finish, so a
/// slow request came after the quick ones it overlapped. It is read a line at a time, so the
/// order is mended within a window:
/// the flows that started earliest go in once more than `records` (or `bytes` of records) wait,
/// which covers any overlap shorter than that many flows.
struct StartOrder {
    private struct Pending {
        let started: Date
        let record: FlowRecord
        let json: String
        let bodies: FlowBodies
        let size: Int
    }

    private let store: SessionStore
    private let records: Int
    private let bytes: Int
    private var pending: [Pending] = []
    private var pendingBytes = 0

    init(store: SessionStore, records: Int = 2_000, bytes: Int = 32 << 20) {
        self.store = store
        self.records = records
        self.bytes = bytes
    }

    /// Takes a flow; stores the earliest-started ones while the window is over its bounds.
    mutating func add(_ record: FlowRecord, json: String, bodies: FlowBodies) {
        let started = FlowTimestamps.date(record.summary.started) ?? .distantPast
        let size = json.utf8.count + bodies.byteCount
        // After every flow that started at the same time or before: ties keep the file's order.
        var low = 0, high = pending.count
        while low < high {
            let middle = (low + high) / 2
            if pending[middle].started <= started { low = middle + 1 } else { high = middle }
        }
        pending.insert(Pending(started: started, record: record, json: json, bodies: bodies, size: size), at: low)
        pendingBytes += size
        while pending.count > records || (pendingBytes > bytes && pending.count > 1) { storeFirst() }
    }

    /// Stores every flow still waiting.
    mutating func finish() {
        for flow in pending { store.importFinished(flow.record, json: flow.json, bodies: flow.bodies) }
        pending.removeAll()
        pendingBytes = 0
    }

    private mutating func storeFirst() {
        let first = pending.removeFirst()
        pendingBytes -= first.size
        store.importFinished(first.record, json: first.json, bodies: first.bodies)
    }
}
