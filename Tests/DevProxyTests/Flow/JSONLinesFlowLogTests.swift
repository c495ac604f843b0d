@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The `--log` file: private, one sorted-key JSON object per line as each flow finishes, and
/// read back (`FlowLogReader`) with every unusable line reported by number.
@Suite struct JSONLinesFlowLogTests {
    let dir = TemporaryDirectory()

    @Test func aNewLogIsCreated0600() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        log.close()
        #expect(dir.mode("flows.jsonl") == 0o600)
    }

    @Test func anExistingLogIsTightenedTo0600() throws {
        let path = dir.write("flows.jsonl", "")
        chmod(path, 0o644)
        let log = try JSONLinesFlowLog(path: path)
        log.close()
        #expect(dir.mode("flows.jsonl") == 0o600)
    }

    /// A record that comes after a quiet moment is on disk as soon as `record` returns, so
    /// `tail -f` shows it at once.
    @Test func aLoneFlowIsOneLineWrittenAtOnce() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        log.record(FlowSamples.get)
        #expect(dir.read("flows.jsonl").split(separator: "\n").count == 1)
        usleep(useconds_t(3 * JSONLinesFlowLog.quietGap / 1000))
        log.record(FlowSamples.tunnel)
        let lines = dir.read("flows.jsonl").split(separator: "\n", omittingEmptySubsequences: false)
        log.close()
        #expect(lines.count == 3 && lines[2].isEmpty)
        #expect(lines[0].hasPrefix("{\"client\":\"127.0.0.1:53122\",\"ended\":"))
        #expect(lines[0].contains("\"url\":\"https://api.example.com/v1/x?q=a%20b&lang=en\""))
        #expect(!lines[1].contains("\"request\""), "nil fields are left out")
        #expect(log.writeError == nil)
    }

    /// Flows that finish back to back are gathered and written together by the log's flusher
    /// thread within `maxDelay` of the first, with no further record or `close` needed; the
    /// flusher ends on its own once the burst is over.
    @Test func aBurstIsWrittenTogetherWithinTheDelay() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        Self.record(ids: (0..<20).map { "b\($0)" }, to: log)
        let atOnce = dir.read("flows.jsonl").split(separator: "\n").count
        #expect(atOnce < 20, "the burst after the first line waits to be written together")
        let deadline = Date().addingTimeInterval(2)
        var lines = 0
        while Date() < deadline {
            lines = dir.read("flows.jsonl").split(separator: "\n").count
            if lines == 20 { break }
            usleep(1_000)
        }
        #expect(lines == 20, "the flusher wrote the burst without a close")
        let ids = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.map(\.id)
        #expect(ids == (0..<20).map { "b\($0)" })
        log.close()
    }

    /// Records `FlowSamples.get` once per id, back to back.
    private static func record(ids: [String], to log: JSONLinesFlowLog) {
        for id in ids {
            var flow = FlowSamples.get
            flow.id = id
            log.record(flow)
        }
    }

    /// `flush` writes what waits for the flusher at once; `close` writes it too.
    @Test func flushAndCloseWriteWhatWaits() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        Self.record(ids: (0..<5).map { "f\($0)" }, to: log)
        log.flush()
        #expect(dir.read("flows.jsonl").split(separator: "\n").count == 5)
        Self.record(ids: (5..<9).map { "f\($0)" }, to: log)
        log.close()
        let ids = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.map(\.id)
        #expect(ids == (0..<9).map { "f\($0)" })
    }

    @Test func whatIsWrittenReadsBackEqual() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        FlowSamples.all.forEach(log.record)
        log.close()
        let read = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(read.flows == FlowSamples.all)
        #expect(read.problems.isEmpty)
    }

    /// From many threads at once no line interleaves with another or is lost, each thread's
    /// lines keep their order, and all are in the file once every `record` call has returned and
    /// the flusher's delay has passed.
    @Test func appendsFromManyThreadsNeverInterleave() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<50 {
                var flow = FlowSamples.get
                flow.id = "t\(thread)-\(index)"
                log.record(flow)
            }
        }
        var beforeClose = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        let deadline = Date().addingTimeInterval(2)
        while beforeClose.flows.count < 400 && Date() < deadline {
            usleep(1_000)
            beforeClose = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        }
        log.close()
        #expect(beforeClose.problems.isEmpty)
        #expect(Set(beforeClose.flows.map(\.id)).count == 400)
        for thread in 0..<8 {
            let ids = beforeClose.flows.map(\.id).filter { $0.hasPrefix("t\(thread)-") }
            #expect(ids == (0..<50).map { "t\(thread)-\($0)" }, "each thread's records stay in the order it made them")
        }
        log.record(FlowSamples.get)
        let afterClose = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(afterClose.flows.count == 400, "records after close are dropped")
    }

    /// `close` while other threads are recording waits for the write under way (lines gathered
    /// for it included): the file holds whole lines only, and each thread's lines form a prefix
    /// of what it recorded (nothing after a gap).
    @Test func closeDuringWritesLeavesWholeLinesInOrder() throws {
        let log = try JSONLinesFlowLog(path: dir.file("flows.jsonl"))
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            guard thread < 4 else {
                for _ in 0..<4 { started.wait() }
                log.close()
                return
            }
            for index in 0..<300 {
                if index == 20 { started.signal() }
                var flow = FlowSamples.get
                flow.id = "t\(thread)-\(index)"
                log.record(flow)
            }
        }
        let read = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(read.problems.isEmpty)
        #expect(read.flows.count >= 80)
        for thread in 0..<4 {
            let ids = read.flows.map(\.id).filter { $0.hasPrefix("t\(thread)-") }
            #expect(ids == (0..<ids.count).map { "t\(thread)-\($0)" })
        }
    }

    @Test func tornAndCorruptLinesAreReportedByNumber() throws {
        let good = String(decoding: JSONLinesFlowLog.line(for: FlowSamples.get), as: UTF8.self)
        let path = dir.write("flows.jsonl", good + "{\"id\":\"x\"}\n" + "\n" + "not json\n" + good
                            + String(good.prefix(40)))
        let read = try FlowLogReader.read(path: path)
        #expect(read.flows.count == 2)
        #expect(read.problems.map(\.line) == [2, 3, 4, 6])
        #expect(read.problems[0].reason.contains("missing field"))
        #expect(read.problems[1].reason == "empty line")
        #expect(read.problems[2].reason == "not valid JSON")
        #expect(read.problems[3].reason.hasPrefix("torn record"))
    }

    /// Appending after a crash must not glue the new record onto the torn line.
    @Test func reopeningAfterATornLineKeepsNewRecordsReadable() throws {
        let path = dir.write("flows.jsonl", "{\"id\":\"torn")
        let log = try JSONLinesFlowLog(path: path)
        log.record(FlowSamples.get)
        log.close()
        let read = try FlowLogReader.read(path: path)
        #expect(read.flows == [FlowSamples.get])
        #expect(read.problems.map(\.line) == [1])
    }

    /// A full disk in the middle of a write leaves the file at its last whole line: once space is
    /// back, the next flows are lines of their own. A partial write stayed in the file and the
    /// next record was appended to it, one line no reader could parse and a flow lost. On a
    /// 100 KiB tmpfs in a mount namespace of its own (root, as the CA's full-disk test).
    @Test func aFullDiskLeavesOnlyWholeLines() throws {
        let script = """
            set -u
            mkdir -p "$1/fs" && mount -t tmpfs -o size=100k tmpfs "$1/fs" || exit 3
            head -c 9000 /dev/zero | tr '\\0' a > "$1/body"
            "$0" run --ca-dir "$1/ca" --listen 127.0.0.1:0 --session off --no-web --log "$1/fs/flows.jsonl" > "$1/out" 2>&1 &
            pid=$!
            port=""
            for i in $(seq 100); do
              port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$1/out" | head -1 | cut -d: -f2)
              [ -n "$port" ] && break
              sleep 0.1
            done
            dd if=/dev/zero of="$1/fs/filler" bs=1k count=60 2>/dev/null
            for i in 1 2 3 4 5 6 7 8; do curl -s -o /dev/null -x "127.0.0.1:$port" --data-binary @"$1/body" http://127.0.0.1:1/big; done
            sleep 0.2
            rm "$1/fs/filler"
            for i in 1 2 3; do curl -s -o /dev/null -x "127.0.0.1:$port" "http://127.0.0.1:1/after$i"; done
            kill -INT $pid; wait $pid
            cp "$1/fs/flows.jsonl" "$1/flows.jsonl"
            umount "$1/fs"
            grep -c "No space left on device" "$1/out"
            """
        let dir = TemporaryDirectory()
        let result = try Subprocess.run("unshare", ["-m", "sh", "-c", script, Subprocess.devproxy, dir.path], timeout: 120)
        #expect(Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 1, "the disk filled: \(result.output)")
        let (flows, problems) = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(problems.isEmpty, "\(problems)")
        #expect(flows.filter { $0.request?.url.contains("/after") == true }.count == 3, "\(flows.map { $0.request?.url })")
    }

    @Test func aMissingLogIsNotFound() throws {
        #expect(throws: FlowLogError.self) { try FlowLogReader.read(path: dir.file("absent.jsonl")) }
        do {
            _ = try FlowLogReader.read(path: dir.file("absent.jsonl"))
        } catch let error as FlowLogError {
            #expect(error.code == .notFound)
        }
    }

    @Test func anUnwritablePathFailsAtOpen() {
        #expect(throws: FlowLogError.self) { try JSONLinesFlowLog(path: dir.file("no/such/dir/flows.jsonl")) }
    }
}
