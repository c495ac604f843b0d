import CertAuthority
import Foundation

/// The `--log FILE` sink: one JSON object per line per finished flow, appended as each flow
/// finishes so `tail -f` shows it. The file is created (or tightened to) 0600.
///
/// Lines are appended whole to an `O_APPEND` descriptor, so records from concurrent connections
/// never interleave and a crash tears at most the last line. Writes are grouped under load:
/// - a record that comes after a quiet moment (no record in the last `quietGap`) and finds no
///   write under way writes its line at once, so a lone flow is in the file before `record`
///   returns;
/// - one that comes while flows are finishing back to back leaves its line in a shared buffer,
///   which the log's own flusher thread writes in one `write()` at most `maxDelay` after its first
///   line came (or the thread already writing takes it along).
/// A `write()` per line cost a fifth of the proxy's CPU at 20,000 flows/s over 16 connections, and
/// grouping only the lines that collided with another thread's write still left an eighth of it,
/// mostly ext4 zeroing the rest of a fresh block for each small append (docs/performance.md,
/// runs 18 and 32). The flusher thread starts when a burst first needs it and ends after a
/// second without one.
public final class JSONLinesFlowLog: FlowSink, @unchecked Sendable {
    // @unchecked: `fd`, `firstError`, `pending`, `spare`, `pendingSince`, `lastRecord`, `writing` and
    // `flusherRunning` are only touched under `lock`; `fd` is also used, without it, by the one
    // thread whose `writing` is set (`close` waits for that thread to finish).
    public let path: String
    private let lock = NSCondition()
    private var fd: Int32
    private var firstError: FlowLogError?
    /// Lines not written yet, in the order their records came.
    private var pending: [UInt8] = []
    /// The buffer `pending` is swapped with while it is written; empty, with room.
    private var spare: [UInt8] = []
    /// When the oldest line in `pending` came (`DispatchTime` nanoseconds).
    private var pendingSince: UInt64 = 0
    /// When the last record came.
    private var lastRecord: UInt64 = 0
    /// A thread is writing (outside the lock) and will write `pending` before it stops.
    private var writing = false
    /// The log is a regular file (not a FIFO or `/dev/stdout`): it can be read back and synced.
    private let regularFile: Bool
    /// The flusher thread is running (it ends after `flusherIdle` without lines).
    private var flusherRunning = false
    /// A failed write left a fragment of a line the file could not be cut back from: the next
    /// write begins with a newline (only the writing thread touches it).
    private var tornTail = false

    /// A record this long after the previous one is written at once.
    static let quietGap: UInt64 = 2_000_000
    /// The longest a line waits in `pending` (while no other write takes it along).
    static let maxDelay: UInt64 = 5_000_000
    /// How long the flusher thread waits for lines before it ends.
    static let flusherIdle: TimeInterval = 1

    /// Opens (or creates) the log for appending.
    /// - Throws: `FlowLogError` when the file cannot be created, opened or made 0600.
    public init(path: String) throws {
        self.path = path
        (fd, regularFile) = try FlowFile.openForAppending(path)
        // A torn last line from an earlier crash would swallow our first record; end it so the
        // reader reports that one line alone.
        var last: UInt8 = 0
        let size = regularFile ? lseek(fd, 0, SEEK_END) : 0
        if size > 0, pread(fd, &last, 1, size - 1) == 1, last != UInt8(ascii: "\n") {
            _ = [UInt8(ascii: "\n")].withUnsafeBytes { SecureFile.writeAll(fd, $0) }
        }
    }

    deinit {
        if fd >= 0 { Foundation.close(fd) }
    }

    /// Appends `flow` as one line. A failure is kept for `writeError`; the proxy goes on.
    public func record(_ flow: Flow) {
        record(flow, line: Self.line(for: flow))
    }

    public var recordsLogLine: Bool { true }

    /// Appends `line` (the flow's, already encoded by the engine for every sink that wants it).
    public func record(_ flow: Flow, line: [UInt8]) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        defer { lock.unlock() }
        guard fd >= 0 else { return }
        let quiet = now &- lastRecord >= Self.quietGap
        lastRecord = now
        if pending.isEmpty { pendingSince = now }
        pending.append(contentsOf: line)
        // A thread writing now takes the line along; a line already waiting for the flusher
        // keeps this one behind it.
        guard !writing else { return }
        if quiet && pending.count == line.count {
            writePendingLocked()
            return
        }
        if !flusherRunning {
            flusherRunning = true
            let thread = Thread { [self] in flusherLoop() }
            thread.name = "devproxy flow log"
            thread.start()
        } else if pending.count == line.count {
            // Broadcast: `close` or `flush` may be waiting on the same condition.
            lock.broadcast()
        }
    }

    /// Writes `pending`, and what gathers while it writes, on the calling thread. Called with the
    /// lock held and no write under way; returns with it held.
    private func writePendingLocked() {
        writing = true
        let fd = self.fd
        // Two buffers take turns: lines gather in one while the other is written, and neither is
        // given back between writes (growing a fresh one each time cost a twentieth of the
        // proxy's CPU: past malloc's mmap threshold every growth is a new mapping, faulted in).
        var batch: [UInt8] = []
        swap(&batch, &spare)
        while !pending.isEmpty {
            swap(&batch, &pending)
            lock.unlock()
            if tornTail {
                batch.insert(UInt8(ascii: "\n"), at: 0)
                tornTail = false
            }
            let before = regularFile ? lseek(fd, 0, SEEK_END) : -1
            let failure = batch.withUnsafeBytes { SecureFile.writeAll(fd, $0) }
            if failure != nil { endTornWrite(of: batch, startedAt: before) }
            batch.removeAll(keepingCapacity: true)
            lock.lock()
            if let failure { recordLocked(FlowFile.error(failure, writing: path)) }
            pendingSince = DispatchTime.now().uptimeNanoseconds
        }
        // Both buffers keep their room while lines keep coming: under load a write takes a few
        // hundred KiB, and a buffer given back after each one was grown again through two or three
        // fresh mappings, every page faulted in (0.2 page faults a flow, a tenth of an h2 stream's
        // CPU; docs/performance.md, run 36). The flusher gives large ones back once a burst is over;
        // a write with no flusher running (a record after a quiet spell) gives them back at once.
        spare = batch
        if !flusherRunning { releaseLargeBuffersLocked() }
        writing = false
        lock.broadcast()
    }

    /// After a write that failed part way (a full disk), takes the file back to its last whole
    /// line, so that once space is back the next record starts a line of its own: it was
    /// appended to the torn fragment, and that flow was lost in a line no reader could parse.
    /// Where that cannot be done (not a regular file, `ftruncate` refused), the next write begins
    /// with a newline instead, which leaves the fragment a line of its own.
    private func endTornWrite(of batch: [UInt8], startedAt before: off_t) {
        let after = before >= 0 ? lseek(fd, 0, SEEK_END) : -1
        let written = Int(after - before)
        guard before >= 0, after >= before, written < batch.count else { return }
        let whole = batch[..<written].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        if whole < written, ftruncate(fd, before + off_t(whole)) != 0 { tornTail = true }
    }

    /// The flusher thread: writes what gathered once its oldest line has waited `maxDelay`, and
    /// ends after `flusherIdle` with nothing to write (or when the log is closed).
    private func flusherLoop() {
        lock.lock()
        defer {
            flusherRunning = false
            lock.broadcast()
            lock.unlock()
        }
        while fd >= 0 {
            if pending.isEmpty || writing {
                if !lock.wait(until: Date(timeIntervalSinceNow: Self.flusherIdle)) && pending.isEmpty && !writing {
                    // The burst is over: its buffers are not kept for the quiet time after it.
                    releaseLargeBuffersLocked()
                    return
                }
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            let due = pendingSince &+ Self.maxDelay
            if now < due {
                _ = lock.wait(until: Date(timeIntervalSinceNow: Double(due - now) / 1e9))
                continue
            }
            writePendingLocked()
        }
    }

    /// Gives back a buffer whose room is past `keptPendingCapacity` (under the lock).
    private func releaseLargeBuffersLocked() {
        if spare.capacity > Self.keptPendingCapacity { spare = [] }
        if pending.isEmpty, pending.capacity > Self.keptPendingCapacity { pending = [] }
    }

    /// The most of each buffer's room kept between bursts.
    private static let keptPendingCapacity = 512 * 1024

    /// Writes every record already handed over (waiting for a write under way), then flushes the
    /// log to disk (fsync) and closes it. Later records are dropped.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        while writing { lock.wait() }
        guard fd >= 0 else { return }
        if !pending.isEmpty { writePendingLocked() }
        let fd = self.fd
        self.fd = -1
        // The flusher sees the log closed and ends.
        lock.broadcast()
        while flusherRunning { lock.wait() }
        // A FIFO or a terminal has nothing to sync (fsync says EINVAL).
        if regularFile && fsync(fd) != 0 { recordLocked(FlowFile.error(errno, writing: path)) }
        Foundation.close(fd)
    }

    /// Writes every line handed over so far (lines the flusher would write within `maxDelay`).
    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        while writing { lock.wait() }
        if fd >= 0 && !pending.isEmpty { writePendingLocked() }
    }

    /// The first write failure, if any: the CLI reports it at exit (`error:`, status 1).
    public var writeError: FlowLogError? {
        lock.lock()
        defer { lock.unlock() }
        return firstError
    }

    /// Whether a log at `path` is a file of its own in a directory of the user's (not `/dev/stdout`,
    /// a FIFO or a link), beside which other files (`reports.jsonl`) may go.
    public static func isPlainFile(_ path: String) -> Bool {
        FlowFile.isPlainFileOrAbsent(path)
    }

    /// The bytes of one record: compact JSON, keys sorted, slashes unescaped, then `\n`.
    static func line(for flow: Flow) -> [UInt8] {
        flow.lineBytes
    }

    /// Keeps the first write failure for `writeError` and says so on stderr at once: the flows
    /// that follow still reach the other sinks, and the exit status reports it.
    private func recordLocked(_ error: FlowLogError) {
        guard firstError == nil else { return }
        firstError = error
        StandardError.warn("the flow log failed: \(error.reason); later flows may be missing from it")
    }
}
