import Foundation

/// The `--log FILE` sink: one JSON object per line per finished flow, appended as each flow
/// finishes so `tail -f` shows it. The file is created (or tightened to) 0600.
///
/// Lines are appended whole to an `O_APPEND` descriptor, so records from concurrent connections
/// never interleave and a crash tears at most the last line. Writes are grouped: a record that
/// finds no write under way writes its line at once (so a lone flow is in the file before
/// `record` returns); one that arrives while another connection's thread is writing leaves its
/// line with that thread, which writes everything that gathered in one `write()` before it
/// returns. At 20,000 flows/s over 16 connections a line each cost a `write()` and a turn on the
/// lock, and this file's share of the proxy's CPU was a fifth (docs/performance.md, "Run 18").
public final class JSONLinesFlowLog: FlowSink, @unchecked Sendable {
    // @unchecked: `fd`, `firstError`, `pending` and `writing` are only touched under `lock`;
    // `fd` is also used, without it, by the one thread whose `writing` is set (`close` waits
    // for that thread to finish).
    public let path: String
    private let lock = NSCondition()
    private var fd: Int32
    private var firstError: FlowLogError?
    /// Lines that arrived while a write was under way, for the writing thread to write next.
    private var pending: [UInt8] = []
    /// A thread is writing (outside the lock) and will write `pending` before it stops.
    private var writing = false

    /// Opens (or creates) the log for appending.
    /// - Throws: `FlowLogError` when the file cannot be created, opened or made 0600.
    public init(path: String) throws {
        self.path = path
        fd = try FlowFile.openForAppending(path)
        // A torn last line from an earlier crash would swallow our first record; end it so the
        // reader reports that one line alone.
        var last: UInt8 = 0
        let size = lseek(fd, 0, SEEK_END)
        if size > 0, pread(fd, &last, 1, size - 1) == 1, last != UInt8(ascii: "\n") {
            _ = [UInt8(ascii: "\n")].withUnsafeBytes { FlowFile.writeAll(fd, $0) }
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
        lock.lock()
        defer { lock.unlock() }
        guard fd >= 0 else { return }
        guard !writing else {
            pending.append(contentsOf: line)
            return
        }
        writing = true
        let fd = self.fd
        var batch = line
        while true {
            lock.unlock()
            let failure = batch.withUnsafeBytes { FlowFile.writeAll(fd, $0) }
            lock.lock()
            if let failure { recordLocked(FlowFile.error(failure, writing: path)) }
            guard !pending.isEmpty else { break }
            swap(&batch, &pending)
            pending.removeAll(keepingCapacity: true)
        }
        // What gathered is written; a large burst's buffer is not kept for the quiet times after.
        if pending.capacity > Self.keptPendingCapacity { pending = [] }
        writing = false
        lock.broadcast()
    }

    /// The most of `pending`'s buffer kept between bursts.
    private static let keptPendingCapacity = 256 * 1024

    /// Waits for every record already handed over to be written, then flushes the log to disk
    /// (fsync) and closes it. Later records are dropped.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        while writing { lock.wait() }
        guard fd >= 0 else { return }
        if fsync(fd) != 0 { recordLocked(FlowFile.error(errno, writing: path)) }
        Foundation.close(fd)
        fd = -1
    }

    /// The first write failure, if any: the CLI reports it at exit.
    public var writeError: FlowLogError? {
        lock.lock()
        defer { lock.unlock() }
        return firstError
    }

    /// The bytes of one record: compact JSON, keys sorted, slashes unescaped, then `\n`.
    static func line(for flow: Flow) -> [UInt8] {
        flow.lineBytes
    }

    private func recordLocked(_ error: FlowLogError) {
        if firstError == nil { firstError = error }
    }
}
