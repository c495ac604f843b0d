import Foundation

/// The `--log FILE` sink: one JSON object per line per finished flow, appended as each flow
/// finishes so `tail -f` shows it. The file is created (or tightened to) 0600.
///
/// Each record is one `write()` of a whole line to an `O_APPEND` descriptor, under a lock, so
/// records from concurrent connections never interleave and a crash tears at most the last line.
public final class JSONLinesFlowLog: FlowSink, @unchecked Sendable {
    // @unchecked: `fd` and `firstError` are only touched under `lock`.
    public let path: String
    private let lock = NSLock()
    private var fd: Int32
    private var firstError: FlowLogError?

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
        if let code = line.withUnsafeBytes({ FlowFile.writeAll(fd, $0) }) {
            recordLocked(FlowFile.error(code, writing: path))
        }
    }

    /// Flushes the log to disk (fsync) and closes it. Later records are dropped.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
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
        var bytes = flow.jsonBytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private func remember(_ error: FlowLogError) {
        lock.lock()
        defer { lock.unlock() }
        recordLocked(error)
    }

    private func recordLocked(_ error: FlowLogError) {
        if firstError == nil { firstError = error }
    }
}
