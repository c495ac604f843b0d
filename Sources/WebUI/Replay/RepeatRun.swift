import Foundation

/// One "Repeat…" of a captured request: `count` sends, at most `concurrency` at once, each lane
/// pausing `delay` between its sends, as Charles's and Proxyman's "Repeat Advanced" do.
///
/// The sends run on threads of its own (never the web server's), one per lane, so no more than
/// `concurrency` are ever in flight. What it keeps is bounded by `count` (at most 1000): a count
/// per status and per error kind, and each send's time and flow id.
final class RepeatRun: @unchecked Sendable {
    /// How one send ended.
    enum Outcome: Sendable {
        /// The request became flow `flow` and its response had `status`.
        case status(Int, flow: String)
        /// It failed: the flow log's `error.kind` (`connect_failed`, `timeout`…) or DevProxy's
        /// own (`proxy_unreachable`, `refused`); `flow` when it became a flow.
        case error(kind: String, flow: String?)
    }

    /// Limits of `POST /api/flows/ID/repeat`.
    static let counts = 1...1000
    static let concurrencies = 1...50
    static let delays = 0...60000

    let id: String
    /// The flow repeated.
    let flow: String
    let count: Int
    let concurrency: Int
    let delayMs: Int
    let started = Date()

    private let condition = NSCondition()
    private var taken = 0
    private var done = 0
    private var lanes = 0
    private var cancelled = false
    private var finished: Date?
    private var statuses: [Int: Int] = [:]
    private var errors: [String: Int] = [:]
    private var times: [Double] = []
    private var flows: [String] = []

    init(id: String, flow: String, count: Int, concurrency: Int, delayMs: Int) {
        self.id = id
        self.flow = flow
        self.count = count
        self.concurrency = min(concurrency, count)
        self.delayMs = delayMs
    }

    /// Starts the lanes; `send(index)` sends repetition `index` (0-based) and says how it ended.
    func start(_ send: @escaping @Sendable (Int) -> Outcome) {
        condition.withLock { lanes = concurrency }
        for lane in 0..<concurrency {
            let thread = Thread { [self] in run(send) }
            thread.name = "devproxy-repeat-\(id)-\(lane)"
            thread.start()
        }
    }

    /// Sends no more: the sends in flight end as they end, the rest are not sent.
    func cancel() {
        condition.withLock {
            cancelled = true
            condition.broadcast()
        }
    }

    /// Whether lanes are still sending.
    var isRunning: Bool { condition.withLock { lanes > 0 } }

    /// Blocks until every lane has ended, or `timeout` passed; whether they all ended.
    @discardableResult
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while lanes > 0 { if !condition.wait(until: deadline) { return lanes == 0 } }
            return true
        }
    }

    private func run(_ send: @Sendable (Int) -> Outcome) {
        var first = true
        while true {
            let index: Int? = condition.withLock {
                if !first && delayMs > 0 {
                    let until = Date().addingTimeInterval(Double(delayMs) / 1000)
                    while !cancelled && condition.wait(until: until) {}
                }
                guard !cancelled, taken < count else { return nil }
                taken += 1
                return taken - 1
            }
            guard let index else { break }
            first = false
            let start = Date()
            let outcome = send(index)
            let elapsed = Date().timeIntervalSince(start) * 1000
            condition.withLock {
                done += 1
                times.append(elapsed)
                switch outcome {
                case .status(let status, let flow):
                    statuses[status, default: 0] += 1
                    flows.append(flow)
                case .error(let kind, let flow):
                    errors[kind, default: 0] += 1
                    if let flow { flows.append(flow) }
                }
            }
        }
        condition.withLock {
            lanes -= 1
            if lanes == 0 { finished = Date() }
            condition.broadcast()
        }
    }

    /// `GET /api/repeats/ID`'s answer (docs/web-ui.md).
    var json: [String: Any] {
        condition.withLock {
            let state = lanes > 0 ? (cancelled ? "cancelling" : "running") : (done < count ? "cancelled" : "done")
            var object: [String: Any] = [
                "id": id, "flow": flow, "count": count, "concurrency": concurrency, "delay_ms": delayMs,
                "state": state, "sent": taken, "done": done,
                "statuses": Dictionary(uniqueKeysWithValues: statuses.map { (String($0.key), $0.value) }),
                "errors": errors, "flows": flows,
                "elapsed_ms": Self.rounded((finished ?? Date()).timeIntervalSince(started) * 1000),
            ]
            if !times.isEmpty {
                let sorted = times.sorted()
                let middle = sorted.count / 2
                let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
                object["time_ms"] = ["min": Self.rounded(sorted[0]), "median": Self.rounded(median),
                                     "max": Self.rounded(sorted[sorted.count - 1])]
            }
            return object
        }
    }

    private static func rounded(_ milliseconds: Double) -> Double { (milliseconds * 10).rounded() / 10 }
}

/// The repeats of one web UI: the running ones and the last finished ones, by id.
final class RepeatBoard: @unchecked Sendable {
    /// Repeats running at once, across the page's tabs and scripts.
    static let runningLimit = 8
    /// Finished repeats kept for `GET /api/repeats/ID`.
    private static let kept = 32

    private let lock = NSLock()
    private var runs: [RepeatRun] = []
    private var stopped = false

    /// Adds and starts `run`; false when `runningLimit` repeats are running or the UI stopped.
    func start(_ run: RepeatRun, _ send: @escaping @Sendable (Int) -> RepeatRun.Outcome) -> Bool {
        let admitted = lock.withLock {
            guard !stopped, runs.filter(\.isRunning).count < Self.runningLimit else { return false }
            runs.append(run)
            while runs.count > Self.kept, let old = runs.firstIndex(where: { !$0.isRunning }) { runs.remove(at: old) }
            return true
        }
        if admitted { run.start(send) }
        return admitted
    }

    func run(id: String) -> RepeatRun? { lock.withLock { runs.first { $0.id == id } } }

    /// Cancels every repeat (DevProxy is stopping) and waits a little for their sends in flight.
    func stop() {
        let all = lock.withLock {
            stopped = true
            return runs
        }
        all.forEach { $0.cancel() }
        let deadline = Date().addingTimeInterval(2)
        for run in all { run.wait(timeout: max(0, deadline.timeIntervalSinceNow)) }
    }
}
