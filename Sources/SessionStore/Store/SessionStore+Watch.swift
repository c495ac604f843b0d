import Foundation

extension SessionStore {
    /// For a session another process writes (`devproxy web FILE` beside the `devproxy run` that
    /// writes it): every `interval` looks for flows written since and for flows that were running
    /// and have finished, and tells the observers as if this store had written them, so the web
    /// UI's list follows the file (it said "live" and never changed until a reload). Fewer flows
    /// than before is a `clear()` over there. Ends when the store is closed.
    public func watchExternalWrites(interval: TimeInterval = 1) {
        let thread = Thread { [weak self] in
            var last: Int64 = 0
            // Flows not finished when last seen, and their phase then.
            var running: [String: FlowPhase] = [:]
            var total = 0
            if let self, let newest = try? flows(limit: 500, order: .newestFirst) {
                last = newest.flows.first?.sequence ?? 0
                total = newest.total
                for flow in newest.flows where flow.phase != .finished { running[flow.id] = flow.phase }
            }
            while true {
                Thread.sleep(forTimeInterval: interval)
                // Closed (or gone): the reads fail and the watch ends.
                guard let self, let now = try? count() else { return }
                do {
                    let cleared = now < total
                    if cleared {
                        last = 0
                        running.removeAll()
                    }
                    var changed: [FlowSummary] = []
                    var cursor: FlowCursor? = FlowCursor(sequence: last)
                    while let after = cursor {
                        let page = try flows(limit: 500, cursor: after, order: .oldestFirst)
                        changed += page.flows
                        cursor = page.flows.count == 500 ? page.nextCursor : nil
                    }
                    let seen = Set(changed.map(\.id))
                    for (id, phase) in running where !seen.contains(id) {
                        if let summary = try summary(id: id), summary.phase != phase { changed.append(summary) }
                    }
                    total = now
                    last = max(last, changed.map(\.sequence).max() ?? last)
                    for summary in changed {
                        running[summary.id] = summary.phase == .finished ? nil : summary.phase
                    }
                    if cleared || !changed.isEmpty { observers.deliver(StoreChanges(cleared: cleared, flows: changed)) }
                } catch {
                    continue
                }
            }
        }
        thread.name = "devproxy.session-watch"
        thread.start()
    }
}
