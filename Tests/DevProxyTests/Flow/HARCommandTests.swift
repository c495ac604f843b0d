@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy har FLOWS.jsonl [-o FILE]` as a user runs it.
@Suite struct HARCommandTests {
    let dir = TemporaryDirectory()

    func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, arguments)
    }

    func writeLog(tornLine: Bool = false) throws -> String {
        var text = ""
        for flow in FlowSamples.all {
            text += String(decoding: JSONLinesFlowLog.line(for: flow), as: UTF8.self)
            if tornLine && flow == FlowSamples.get { text += "{\"id\":\"half\n" }
        }
        return dir.write("flows.jsonl", text)
    }

    @Test func convertsToStdout() throws {
        let result = try devproxy(["har", try writeLog()])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.isEmpty)
        let har = try JSONDecoder().decode(HARDocument.self, from: Data(result.stdout.utf8))
        #expect(har.log.entries.count == 4)
    }

    /// `devproxy har flows.jsonl | head`: the reader goes away before the HAR is written, and
    /// the command ends quietly with 0 (Foundation's FileHandle.write had trapped on EPIPE: exit
    /// 132 and a backtrace on stderr).
    @Test func aReaderThatStopsEarlyEndsTheCommandQuietly() throws {
        var text = ""
        for _ in 0..<200 {
            for flow in FlowSamples.all { text += String(decoding: JSONLinesFlowLog.line(for: flow), as: UTF8.self) }
        }
        let log = dir.write("many.jsonl", text)
        let script = "\"$0\" har \"$1\" | head -c 10 > /dev/null; exit ${PIPESTATUS[0]}"
        let result = try Subprocess.run("bash", ["-c", script, Subprocess.devproxy, log])
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
    }

    @Test func writesAPrivateFileAndSaysWhatsNext() throws {
        let result = try devproxy(["har", try writeLog(), "-o", dir.file("session.har")])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("Wrote 4 entries to \(dir.file("session.har")) (mode 0600)."))
        #expect(result.stdout.contains("Next:"))
        #expect(dir.mode("session.har") == 0o600)
    }

    /// `-o` naming the log itself (or a link to it) is refused, the log untouched: the HAR
    /// replaced the captured log and the command said it wrote it (exit 0).
    @Test func theHARIsNeverWrittenOverTheLog() throws {
        let log = try writeLog()
        let before = dir.read("flows.jsonl")
        try FileManager.default.createSymbolicLink(atPath: dir.file("alias.jsonl"), withDestinationPath: log)
        for output in [log, dir.file("alias.jsonl")] {
            let result = try devproxy(["har", log, "-o", output])
            #expect(result.status == 2, "\(result.output)")
            #expect(result.stderr == "error: \(output) is the flow log being read; give the HAR another name\n")
        }
        #expect(dir.read("flows.jsonl") == before)
    }

    /// `-` reads the log from standard input, as `-o -` writes to standard output.
    @Test func aDashReadsTheLogFromStandardInput() throws {
        let log = try writeLog()
        let result = try Subprocess.run("bash", ["-c", "\"$0\" har - < \"$1\"", Subprocess.devproxy, log])
        #expect(result.status == 0, "\(result.output)")
        let har = try JSONDecoder().decode(HARDocument.self, from: Data(result.stdout.utf8))
        #expect(har.log.entries.count == 4)
    }

    @Test func tornLinesAreWarnedAboutAndTheRestConverted() throws {
        let log = try writeLog(tornLine: true)
        let result = try devproxy(["har", log])
        #expect(result.status == 0)
        #expect(result.stderr.hasPrefix("warning: \(log) line 2: "))
        let har = try JSONDecoder().decode(HARDocument.self, from: Data(result.stdout.utf8))
        #expect(har.log.entries.count == 4)
    }

    @Test func aMissingLogIsOneErrorLineAndExitOne() throws {
        let result = try devproxy(["har", dir.file("absent.jsonl")])
        #expect(result.status == 1)
        let hint = "give the file the proxy wrote with --log"
        #expect(result.stderr == "error: \(dir.file("absent.jsonl")) does not exist; \(hint)\n")
        #expect(result.stdout.isEmpty)
    }

    /// A file none of whose lines is a flow is the wrong file: one error, exit 1, and at most ten
    /// warnings (it wrote an empty HAR, exit 0, after a warning for every line).
    @Test func aFileWithNoFlowIsAnError() throws {
        let path = dir.write("notes.txt", (1...30).map { "not a flow \($0)" }.joined(separator: "\n") + "\n")
        let result = try devproxy(["har", path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 12, "\(result.stderr)")
        #expect(lines.last.map(String.init) == "error: \(path) holds no flow: none of its lines is a flow record; give the flow log "
                + "devproxy wrote with --log")
        #expect(String(lines[10]) == "warning: 20 more unreadable line(s)")
    }

    @Test func wrongUsageExitsTwo() throws {
        #expect(try devproxy(["har"]).status == 2)
        #expect(try devproxy(["har", "a.jsonl", "b.jsonl"]).status == 2)
        #expect(try devproxy(["har", "a.jsonl", "--bogus"]).status == 2)
        #expect(try devproxy(["har", "--help"]).status == 0)
    }
}
