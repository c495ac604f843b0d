@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The console is best-effort: `record` never waits for the output, the queue is bounded, lines
/// that do not fit are dropped and counted, and a stalled or closed standard output never holds
/// up the proxy or its exit.
@Suite struct ConsoleFlowPrinterQueueTests {
    let utc = TimeZone(identifier: "UTC")!

    /// A distinct flow per thread and index: `GET https://api.example.com/tT/iI?pad=…`.
    static func flow(thread: Int, index: Int, pad: Int = 0) -> Flow {
        var flow = FlowSamples.get
        let query = pad > 0 ? "?pad=" + String(repeating: "p", count: pad) : ""
        flow.request?.url = "https://api.example.com/t\(thread)/i\(index)" + query
        return flow
    }

    /// `(thread, index)` of a line `record`ed from `flow(thread:index:)`.
    static func origin(of line: String) -> (thread: Int, index: Int)? {
        guard let path = line.split(separator: " ").dropFirst(2).first?.split(separator: "/").dropFirst(2),
              path.count == 2, let thread = Int(path.first!.dropFirst()),
              let index = Int(path.last!.dropFirst().split(separator: "?").first ?? "") else { return nil }
        return (thread, index)
    }

    /// The number in `… N flow lines not shown (…)`, when `line` is that notice.
    static func droppedCount(_ line: String) -> Int? {
        guard line.hasPrefix("… "), line.contains(" not shown (the console could not keep up") else { return nil }
        return Int(line.dropFirst(2).prefix { $0 != " " })
    }

    /// 960 lines: under the queue's bound, so none may be dropped however slow the writer runs.
    @Test func linesFromManyThreadsComeOutWholeInOrderOncePerFlow() {
        let lines = PrintedLines()
        let printer = ConsoleFlowPrinter(timeZone: utc) { lines.append($0) }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<120 { printer.record(Self.flow(thread: thread, index: index)) }
        }
        #expect(printer.flush(timeout: 10))
        let all = lines.all
        #expect(all.count == 960)
        var next = [Int](repeating: 0, count: 8)
        for line in all {
            guard let (thread, index) = Self.origin(of: line) else {
                Issue.record("not a flow line: \(line)")
                continue
            }
            #expect(line == ConsoleFlowPrinter.line(for: Self.flow(thread: thread, index: index), timeZone: utc))
            #expect(index == next[thread], "thread \(thread): line \(index) after \(next[thread] - 1)")
            next[thread] = index + 1
        }
        #expect(next == [Int](repeating: 120, count: 8))
    }

    /// A printer whose output took line 0 and now blocks until `release` is signalled: from
    /// here on the queue alone decides what is kept.
    func stuckPrinter(keptBy: String? = nil) -> (ConsoleFlowPrinter, PrintedLines, release: DispatchSemaphore) {
        let lines = PrintedLines()
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let printer = ConsoleFlowPrinter(timeZone: utc, keptBy: keptBy) { line in
            lines.append(line)
            if lines.all.count == 1 {
                entered.signal()
                release.wait()
            }
        }
        printer.record(Self.flow(thread: 0, index: 0))
        #expect(entered.wait(timeout: .now() + 10) == .success)
        return (printer, lines, release)
    }

    @Test func aFullQueueDropsNewLinesAndSaysHowManyAfterTheLinesItKept() {
        let (printer, lines, release) = stuckPrinter(keptBy: "--log has them")
        for index in 1...1_500 { printer.record(Self.flow(thread: 0, index: index)) }
        #expect(printer.queuedLineCount == ConsoleFlowPrinter.maximumQueuedLines)
        #expect(!printer.flush(timeout: 0.05), "the writer is stuck in the output")
        release.signal()
        #expect(printer.flush(timeout: 10))
        let all = lines.all
        #expect(all.count == 1 + 1_000 + 1)
        #expect(all.prefix(1_001).map { Self.origin(of: $0)?.index } == Array(0...1_000))
        #expect(all.last == "… 500 flow lines not shown (the console could not keep up; --log has them)")
        printer.record(Self.flow(thread: 0, index: 1_501))
        #expect(printer.flush(timeout: 10))
        #expect(lines.all.last.flatMap(Self.origin(of:))?.index == 1_501, "lines are taken again once it drained")
    }

    @Test func theQueueHoldsAtMost256KiB() {
        let (printer, lines, release) = stuckPrinter()
        // Lines of 4,000 bytes or so; the index keeps them all the same length.
        for index in 100..<300 { printer.record(Self.flow(thread: 0, index: index, pad: 4_000)) }
        let longLine = ConsoleFlowPrinter.line(for: Self.flow(thread: 0, index: 100, pad: 4_000), timeZone: utc)
        let size = longLine.utf8.count + 1
        let fits = ConsoleFlowPrinter.maximumQueuedBytes / size
        #expect(printer.queuedLineCount == fits)
        release.signal()
        #expect(printer.flush(timeout: 10))
        #expect(lines.all.count == 1 + fits + 1)
        #expect(lines.all.last.flatMap(Self.droppedCount) == 200 - fits)
        // A single line longer than the whole bound still gets through an empty queue.
        printer.record(Self.flow(thread: 0, index: 1, pad: 300_000))
        #expect(printer.flush(timeout: 10))
        #expect(lines.all.last.flatMap(Self.origin(of:))?.index == 1)
    }

    /// A real pipe nobody reads: 5,000 flows from 5 threads.
    @Test func aStalledReaderNeverHoldsUpRecordAndTheKeptLinesArriveLater() throws {
        let pipe = Pipe()
        let printer = ConsoleFlowPrinter(fileHandle: pipe.fileHandleForWriting, timeZone: utc)
        #expect(printer.style == .plain)
        let peak = Peak()
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            for index in 0..<1_000 {
                printer.record(Self.flow(thread: thread, index: index))
                peak.observe(printer.queuedLineCount)
            }
        }
        let recording = Date().timeIntervalSince(started)
        #expect(recording < 2, "5,000 records took \(recording) s")
        #expect(peak.value == ConsoleFlowPrinter.maximumQueuedLines)
        let closing = Date()
        printer.close()
        let closeTime = Date().timeIntervalSince(closing)
        #expect(closeTime >= ConsoleFlowPrinter.closeTimeout * 0.9 && closeTime < ConsoleFlowPrinter.closeTimeout + 1,
                "close() with a stalled reader took \(closeTime) s")

        let received = PipeDrain(pipe.fileHandleForReading)
        #expect(printer.flush(timeout: 10))
        try pipe.fileHandleForWriting.close()
        let text = try #require(received.finish(timeout: 10))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(text.hasSuffix("\n"))
        let notices = lines.compactMap(Self.droppedCount)
        #expect(notices.count == 1, "\(lines.filter { Self.origin(of: $0) == nil }.prefix(3))")
        #expect(lines.last.flatMap(Self.droppedCount) != nil, "the notice follows the lines kept")
        let kept = lines.compactMap(Self.origin(of:))
        #expect(kept.count + notices.count == lines.count, "every line is a whole flow line or the notice")
        #expect(kept.count + (notices.first ?? 0) == 5_000, "\(kept.count) kept + \(notices) dropped")
        #expect(Set(kept.map { "\($0.thread)/\($0.index)" }).count == kept.count, "no line twice")
        #expect(kept.count >= ConsoleFlowPrinter.maximumQueuedLines)
    }

    @Test func aClosedReaderNeitherCrashesNorBlocks() throws {
        // As the CLI and ProxyServer do: a write to a closed pipe fails with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let printer = ConsoleFlowPrinter(fileHandle: pipe.fileHandleForWriting, timeZone: utc)
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<500 { printer.record(Self.flow(thread: thread, index: index)) }
        }
        printer.close()
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < ConsoleFlowPrinter.closeTimeout + 1, "2,000 records and close() took \(elapsed) s")
        #expect(printer.flush(timeout: 0), "the writer stopped once the output was gone")
        printer.record(Self.flow(thread: 0, index: 0))
        #expect(printer.queuedLineCount == 0, "nothing is queued for an output that is gone")
    }
}

/// The largest value seen, from any thread.
private final class Peak: @unchecked Sendable {
    // @unchecked: `maximum` is only touched under `lock`.
    private var maximum = 0
    private let lock = NSLock()
    var value: Int { lock.withLock { maximum } }
    func observe(_ value: Int) { lock.withLock { maximum = max(maximum, value) } }
}
