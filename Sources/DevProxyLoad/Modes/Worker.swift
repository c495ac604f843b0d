import CTLS
import Foundation
import Glibc

/// One OS thread driving its share of the connections with `poll`, until the window ends.
///
/// Owns its slots, scratch buffer and counters; nothing is shared with other workers while
/// running, so there are no locks on the hot path. Runs on a Foundation `Thread` it owns —
/// never on the Swift concurrency pool or a GCD global queue, since it blocks in `poll`.
final class Worker: @unchecked Sendable {  // touched by main only before start and after `done` is signalled
    /// Connections one worker sets up at once in idle mode.
    static let idleSetupLimit = 16

    private let slots: [any LoadSlot]
    private let settings: SlotSettings
    private let done = DispatchSemaphore(value: 0)
    /// Counters; read them only after `join()`.
    private(set) var stats = RunStats()

    /// - Parameters:
    ///   - connections: how many slots this worker drives.
    ///   - settings: the run's shared constants.
    init(connections: Int, settings: SlotSettings) {
        self.settings = settings
        slots = (0..<connections).map { _ -> any LoadSlot in
            settings.plan.http2 == nil ? Slot(settings: settings) : HTTP2Slot(settings: settings)
        }
    }

    /// Starts the worker's thread.
    func start(name: String) {
        let thread = Thread { [self] in
            run()
            // The thread's OpenSSL state is freed here, while OpenSSL's global state exists. Left
            // to the thread's exit, it can run while the main thread's exit() runs OpenSSL's
            // atexit cleanup, which frees what it uses: the generator died of a segmentation
            // fault once, with its report unwritten (docs/performance.md, "Run 30").
            OPENSSL_thread_stop()
            done.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Waits for the thread to finish (it always does, at the window's end at the latest).
    func join() {
        done.wait()
    }

    /// The event loop: step slots whose socket or timer is ready, fail those past their deadline.
    private func run() {
        let bufferSize = settings.mode == .stream ? 256 * 1024 : 16 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        // Counted in a local and stored once at the end: passing the property inout to every
        // step costs a runtime exclusivity check per call.
        var stats = RunStats()
        defer { self.stats = stats }
        let end = settings.window.end
        var fds: [pollfd] = []
        var owners: [Int] = []
        fds.reserveCapacity(slots.count)
        owners.reserveCapacity(slots.count)

        // Idle mode opens hundreds of connections: ramp up a few at a time, so a slow proxy
        // finishes handshakes instead of timing all of them out together.
        let setupLimit = settings.mode == .idle ? Self.idleSetupLimit : Int.max
        var busy = 0
        for slot in slots where busy < setupLimit {
            slot.step(buffer: buffer, stats: &stats)
            if slot.isBusy { busy += 1 }
        }
        while true {
            var now = MonotonicClock.now()
            if now >= end || slots.allSatisfy({ $0.isFinished }) { break }
            fds.removeAll(keepingCapacity: true)
            owners.removeAll(keepingCapacity: true)
            var wake = end
            busy = setupLimit == Int.max ? 0 : slots.reduce(0) { $0 + ($1.isBusy ? 1 : 0) }
            let mayStart = busy < setupLimit
            for (index, slot) in slots.enumerated() {
                if let request = slot.pollRequest {
                    fds.append(request)
                    owners.append(index)
                    wake = min(wake, slot.deadline)
                } else if let time = slot.wakeTime, mayStart {
                    wake = min(wake, time)
                }
            }
            let waitMs = wake > now ? min(100, Int32((wake - now + 999_999) / 1_000_000)) : 0
            let ready = poll(&fds, nfds_t(fds.count), waitMs)
            now = MonotonicClock.now()
            if ready > 0 {
                for (position, pfd) in fds.enumerated() where pfd.revents != 0 {
                    slots[owners[position]].step(buffer: buffer, stats: &stats)
                }
            }
            busy = setupLimit == Int.max ? 0 : slots.reduce(0) { $0 + ($1.isBusy ? 1 : 0) }
            for slot in slots {
                if let time = slot.wakeTime, time <= now, busy < setupLimit {
                    slot.step(buffer: buffer, stats: &stats)
                    if slot.isBusy { busy += 1 }
                }
                slot.checkTimeout(now: now, stats: &stats)
            }
        }
        for slot in slots { slot.finishRun(stats: &stats) }
    }
}
