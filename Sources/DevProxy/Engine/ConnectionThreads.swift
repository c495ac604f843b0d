import Dispatch
import Foundation
import Synchronization

/// The threads client connections run on: a connection still gets a thread of its own, but a
/// thread whose connection ended waits a while for the next one instead of exiting.
///
/// Creating a thread per connection and letting it exit cost ~7 % of the proxy's CPU in the
/// new-connection cell (`perf`: `clone3`, the `madvise` glibc makes on an exiting thread's stack,
/// the thread's malloc cache handed back under the arena locks; docs/performance.md, "Run 37").
/// At most `maxIdle` threads wait, each for `keepIdle` seconds, the newest taken first (its stack
/// and caches are the warmest); a burst's extra threads exit as before, and a proxy that goes
/// quiet is back to its own few threads within `keepIdle`.
final class ConnectionThreads: @unchecked Sendable {  // `idle` and `closed` under `lock`; a worker's job handed over under it
    typealias Job = @Sendable () -> Void

    let stackSize: Int
    let keepIdle: TimeInterval
    let maxIdle: Int

    private final class Worker: @unchecked Sendable {  // `job` under the pool's lock
        let wake = DispatchSemaphore(value: 0)
        var job: Job?
        init(_ job: @escaping Job) { self.job = job }
    }

    private let lock = NSLock()
    private var idle: [Worker] = []
    private var closed = false
    private let started = Atomic<Int>(0)

    init(stackSize: Int, keepIdle: TimeInterval = 2, maxIdle: Int = 64) {
        self.stackSize = stackSize
        self.keepIdle = keepIdle
        self.maxIdle = maxIdle
    }

    /// Runs `job` on a waiting thread, or on a new one.
    func run(_ job: @escaping Job) {
        lock.lock()
        if let worker = idle.popLast() {
            worker.job = job
            lock.unlock()
            worker.wake.signal()
            return
        }
        lock.unlock()
        let worker = Worker(job)
        let thread = Thread { [self] in serve(worker) }
        thread.stackSize = stackSize
        thread.name = "devproxy-connection"
        started.add(1, ordering: .relaxed)
        thread.start()
    }

    /// Threads started so far (tests: whether a connection reused one).
    var threadsStarted: Int { started.load(ordering: .relaxed) }

    /// Threads waiting for a connection now.
    var idleCount: Int { lock.withLock { idle.count } }

    /// Lets the waiting threads exit, and any thread whose job ends from now on.
    func close() {
        let parked = lock.withLock {
            closed = true
            defer { idle.removeAll() }
            return idle
        }
        for worker in parked { worker.wake.signal() }   // no job: the thread exits
    }

    private func serve(_ worker: Worker) {
        while take(worker) {
            guard park(worker) else { return }
        }
    }

    /// Runs the worker's job (released before the thread waits again); false when it has none:
    /// the pool closed.
    private func take(_ worker: Worker) -> Bool {
        guard let job = lock.withLock({ () -> Job? in
            defer { worker.job = nil }
            return worker.job
        }) else { return false }
        job()
        return true
    }

    /// Waits for the next job; false when the thread should exit instead.
    private func park(_ worker: Worker) -> Bool {
        let parked = lock.withLock { () -> Bool in
            guard !closed, idle.count < maxIdle else { return false }
            idle.append(worker)
            return true
        }
        guard parked else { return false }
        if worker.wake.wait(timeout: .now() + keepIdle) == .timedOut {
            let stillIdle = lock.withLock { () -> Bool in
                guard let index = idle.firstIndex(where: { $0 === worker }) else { return false }
                idle.remove(at: index)
                return true
            }
            if stillIdle { return false }
            // Taken for a job (or by `close`) just as the wait ran out: its signal is on its way.
            worker.wake.wait()
        }
        return true
    }
}
