import CertAuthority
import Foundation

/// The live console: one line per finished flow, errors marked so they stand out.
///
/// Best-effort, and the proxy never waits for it. `record(_:)` formats the line on the
/// connection's thread, appends it to a bounded queue and returns: it never blocks on I/O.
/// One writer (a serial dispatch queue) takes everything queued and writes it in one go (one
/// `write(2)` for a file descriptor, unless the kernel takes it in parts), so lines from
/// concurrent connections never interleave and come out in the order they were recorded.
///
/// The queue holds at most `maximumQueuedLines` (1,000) lines or `maximumQueuedBytes` (256 KiB),
/// whichever comes first (a single longer line is still taken when the queue is empty); memory
/// held is that queue plus the one batch being written. When the queue is full, because the
/// output stopped draining (a terminal paused with Ctrl-S, a pipe nobody reads), new lines are
/// dropped and counted until the writer gets through; then, after the lines it kept, it prints
/// `… N flow lines not shown (…)` where they went missing. When the output is gone (`EPIPE`,
/// `EBADF`: the process must ignore `SIGPIPE`, as the CLI and `ProxyServer` do), the console
/// stops writing and drops everything after.
public final class ConsoleFlowPrinter: FlowSink, @unchecked Sendable {
    // @unchecked: the mutable state below is only touched under `condition`; `destination` is
    // only used on `writer`, one batch at a time.

    /// How lines are decorated.
    public enum Style: Sendable {
        /// No escape codes: for pipes and files.
        case plain
        /// ANSI colours: errors red, 4xx/5xx statuses yellow/red, tunnels dim.
        case terminal
    }

    /// Where the writer puts lines.
    private enum Destination {
        /// Bytes to a file descriptor the printer does not own (standard output).
        case descriptor(Int32)
        /// One call per line, without the newline.
        case lines(@Sendable (String) -> Void)
    }

    /// The most lines the queue holds while the output is not keeping up.
    public static let maximumQueuedLines = 1_000
    /// The most bytes (lines with their newlines) the queue holds.
    public static let maximumQueuedBytes = 256 * 1024
    /// How long `close()` waits for a stalled output before giving up on what is queued.
    public static let closeTimeout: TimeInterval = 1

    public let style: Style
    public let timeZone: TimeZone
    private let destination: Destination
    private let writer = DispatchQueue(label: "devproxy.console")
    private let condition = NSCondition()
    private var queue: [String] = []
    private var queuedBytes = 0
    /// Lines dropped since the writer last took the queue.
    private var dropped = 0
    /// Set by the first drop; until the writer takes the queue, later lines are dropped too, so
    /// the notice stands exactly where lines went missing.
    private var dropping = false
    /// A drain is scheduled or running on `writer`.
    private var writing = false
    /// The output failed for good (`EPIPE`, `EBADF`, …): nothing more is queued.
    private var outputGone = false

    /// - Parameters:
    ///   - style: `.terminal` only when a person is watching (see `init(fileHandle:timeZone:)`).
    ///   - timeZone: for the time of day at the start of each line.
    ///   - output: receives each line, without a newline, on the printer's writer thread, one
    ///     line at a time and in order; the same bounded queue stands in front of it.
    ///   - keptBy: where the flows of dropped lines can still be seen, for the drop notice
    ///     (`the session store and --log have them`); nil when nowhere.
    public init(style: Style = .plain, timeZone: TimeZone = .current, keptBy: String? = nil,
                output: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.timeZone = timeZone
        self.keptBy = keptBy
        self.destination = .lines(output)
    }

    /// Prints to `fileHandle` (not closed by the printer), in colour only when it is a terminal.
    public init(fileHandle: FileHandle = .standardOutput, timeZone: TimeZone = .current, keptBy: String? = nil) {
        let fd = fileHandle.fileDescriptor
        self.style = isatty(fd) == 1 ? .terminal : .plain
        self.timeZone = timeZone
        self.keptBy = keptBy
        self.destination = .descriptor(fd)
    }

    /// Where the flows of dropped lines can still be seen (the drop notice says so).
    public let keptBy: String?

    public func record(_ flow: Flow) {
        enqueue(Self.line(for: flow, style: style, timeZone: timeZone))
    }

    /// A line that is not a flow (the CLI's `stopping: …`), queued like the flows' lines so it
    /// comes after them and never blocks either.
    public func note(_ text: String) {
        enqueue(text)
    }

    /// Lines waiting for the writer now (not counting the batch being written); never more
    /// than `maximumQueuedLines`.
    public var queuedLineCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// Waits until everything recorded so far is written (or dropped), at most `timeout` seconds.
    /// - Returns: whether the writer got through in time.
    @discardableResult
    public func flush(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while writing {
            guard condition.wait(until: deadline) else { return !writing }
        }
        return true
    }

    /// Writes what is queued, waiting at most `closeTimeout` for a stalled output: the proxy
    /// must be able to exit even when nobody reads its standard output.
    public func close() {
        flush(timeout: Self.closeTimeout)
    }

    private func enqueue(_ line: String) {
        let size = line.utf8.count + 1
        condition.lock()
        if outputGone {
            condition.unlock()
            return
        }
        let full = queue.count >= Self.maximumQueuedLines
            || (!queue.isEmpty && queuedBytes + size > Self.maximumQueuedBytes)
        if dropping || full {
            dropping = true
            dropped += 1
            condition.unlock()
            return
        }
        queue.append(line)
        queuedBytes += size
        let start = !writing
        writing = true
        condition.unlock()
        if start { writer.async { self.drain() } }
    }

    /// Runs on `writer` until the queue is empty: takes it whole, adds the dropped-lines notice
    /// after the lines kept, writes the batch.
    private func drain() {
        while true {
            condition.lock()
            guard !queue.isEmpty || dropped > 0, !outputGone else {
                writing = false
                condition.broadcast()
                condition.unlock()
                return
            }
            var batch = queue
            if dropped > 0 { batch.append(droppedNotice(dropped)) }
            queue = []
            queuedBytes = 0
            dropped = 0
            dropping = false
            condition.unlock()
            if !write(batch) {
                condition.lock()
                outputGone = true
                queue = []
                queuedBytes = 0
                dropped = 0
                condition.unlock()
            }
        }
    }

    /// `… 1234 flow lines not shown (…)`, dim in terminal style.
    private func droppedNotice(_ count: Int) -> String {
        let text = "… \(count) flow line\(count == 1 ? "" : "s") not shown "
            + "(the console could not keep up\(keptBy.map { "; " + $0 } ?? ""))"
        return style == .terminal ? "\u{1B}[2m\(text)\u{1B}[0m" : text
    }

    /// - Returns: false when the output is gone for good.
    private func write(_ batch: [String]) -> Bool {
        switch destination {
        case .lines(let output):
            batch.forEach(output)
            return true
        case .descriptor(let fd):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(batch.reduce(0) { $0 + $1.utf8.count + 1 })
            for line in batch {
                bytes += line.utf8
                bytes.append(UInt8(ascii: "\n"))
            }
            // EPIPE, EBADF, EIO…: the output is gone.
            return bytes.withUnsafeBytes { SecureFile.writeAll(fd, $0) } == nil
        }
    }
}
