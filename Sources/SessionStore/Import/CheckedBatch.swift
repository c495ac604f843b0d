import Foundation

/// Flow-log lines read ahead of the import, with a `SessionImport.LineCheck`'s verdict on each
/// worked out on another thread meanwhile.
final class CheckedBatch: @unchecked Sendable {  // `verdicts` is written once, before `done` is left, and read after waiting on it
    /// Lines read at a time: enough that handing a batch to another thread costs little beside
    /// checking it, and bounded in bytes too, so that read-ahead holds a few MiB of a log of
    /// megabyte bodies, not hundreds.
    static let lineCount = 256
    static let byteCount = 4 << 20

    /// Each line's bytes (without its newline, and the first without a byte order mark), 1-based number.
    let lines: [(bytes: [UInt8], number: Int)]
    private let terminated: [Bool]
    private var verdicts: [String?] = []
    private let done = DispatchGroup()

    private init(lines: [(bytes: [UInt8], number: Int)], terminated: [Bool]) {
        self.lines = lines
        self.terminated = terminated
    }

    /// The next lines of `stream`, whose checks are started on another thread; nil at the end.
    /// - Throws: what `LineStream.next()` throws.
    static func read(_ stream: inout LineStream, check: @escaping SessionImport.LineCheck) throws -> CheckedBatch? {
        var lines: [(bytes: [UInt8], number: Int)] = []
        var terminated: [Bool] = []
        var bytes = 0
        while lines.count < lineCount, bytes < byteCount, let next = try stream.next() {
            var line = next.line
            if stream.number == 1, line.starts(with: SessionImport.byteOrderMark) { line = line.dropFirst(3) }
            // Copied: a slice would keep the stream's buffer alive, and its next refill would copy it whole.
            lines.append((Array(line), stream.number))
            terminated.append(next.terminated)
            bytes += line.count
        }
        guard !lines.isEmpty else { return nil }
        let batch = CheckedBatch(lines: lines, terminated: terminated)
        batch.done.enter()
        DispatchQueue.global().async {
            batch.verdicts = zip(batch.lines, batch.terminated).map { check($0.bytes[...], $1) }
            batch.done.leave()
        }
        return batch
    }

    /// Why each line is not a flow (nil: it is one), in order, once the check has run.
    func reasons() -> [String?] {
        done.wait()
        return verdicts
    }
}
