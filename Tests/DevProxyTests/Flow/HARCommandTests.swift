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

    /// `devproxy har` and `devproxy web` read one damaged log alike: the same flows, the same
    /// lines skipped for the same reasons, and each says how many and which came first (the web
    /// UI in `/api/info`'s `import`). `devproxy web` took a record without `timings` (which the
    /// UI then could not export or replay), passed over an empty line without a word and said
    /// nothing of the lines it skipped but the warnings.
    @Test func harAndWebSkipTheSameLinesAndSaySo() throws {
        let good = { (id: String) in
            String(decoding: JSONLinesFlowLog.line(for: { var flow = FlowSamples.get; flow.id = id; return flow }()),
                   as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        var record = try #require(try JSONSerialization.jsonObject(with: Data(good("u1").utf8)) as? [String: Any])
        #expect(record.removeValue(forKey: "timings") != nil)
        let untimed = String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]), as: UTF8.self)
        let lines = ["\u{FEFF}" + good("g1"), "", "not json at all", #"{"foo":1}"#, untimed, good("g2"), #"{"id":"torn""#]
        let log = dir.write("mixed.jsonl", lines.joined(separator: "\n"))
        let skipped = [2, 3, 4, 5, 7]

        let har = try devproxy(["har", log, "-o", dir.file("mixed.har")])
        #expect(har.status == 0, "\(har.output)")
        #expect(har.stdout.contains("Wrote 2 entries to \(dir.file("mixed.har")) (mode 0600) (5 unreadable lines skipped"),
                "\(har.stdout)")
        let harWarnings = har.stderr.split(separator: "\n").map(String.init)
        #expect(harWarnings.map { $0.hasPrefix("warning: \(log) line ") } == Array(repeating: true, count: 5), "\(har.stderr)")
        #expect(harWarnings.first == "warning: \(log) line 2: empty line")
        let entries = try JSONDecoder().decode(HARDocument.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file("mixed.har"))))
            .log.entries
        #expect(entries.map(\.flowID) == ["g1", "g2"])
        let toStdout = try devproxy(["har", log])
        #expect(toStdout.stderr.hasSuffix("warning: 5 unreadable lines of \(log) skipped, see the warnings; "
                                          + "the HAR holds the 2 flows of the others\n"), "\(toStdout.stderr)")

        let stderr = dir.file("web.err")
        let viewer = try DevProxyViewer(log, stderr: stderr)
        #expect(viewer.printed == ["imported 2 flow(s) from \(log) (5 unreadable lines skipped, see the warnings)"],
                "\(viewer.printed)")
        #expect(dir.read("web.err").split(separator: "\n").map(String.init) == harWarnings, "\(dir.read("web.err"))")
        func get(_ path: String) throws -> [String: Any] {
            let answer = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(viewer.token)",
                                                     viewer.base + path])
            return try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any] ?? [:]
        }
        let flows = try get("/api/flows?order=oldest")["flows"] as? [[String: Any]] ?? []
        #expect(flows.compactMap { $0["id"] as? String } == ["g1", "g2"])
        let imported = try get("/api/info")["import"] as? [String: Any]
        #expect(imported?["file"] as? String == log && imported?["flows"] as? Int == 2)
        #expect(imported?["skipped"] as? Int == skipped.count, "\(imported ?? [:])")
        let first = imported?["first_skipped"] as? [String: Any]
        #expect(first?["line"] as? Int == 2 && first?["reason"] as? String == "empty line", "\(first ?? [:])")
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

    /// A HAR given where the flow log goes (its own output, a browser's export) is named as one, in
    /// one line, with the command that opens it: it got ten `line N: not valid JSON` warnings (a
    /// HAR is JSON, only not a line at a time) and `holds no flow`. `qa verdict --log` alike.
    @Test func aHARGivenAsTheLogIsNamedAsOne() throws {
        let har = dir.file("session.har")
        #expect(try devproxy(["har", try writeLog(), "-o", har]).status == 0)
        for arguments in [["har", har], ["har", har, "-o", dir.file("again.har")], ["qa", "verdict", "--log", har]] {
            let result = try devproxy(arguments)
            #expect(result.status == 1, "\(arguments): \(result.output)")
            #expect(result.stderr == "error: \(har) is a HAR file, not a flow log: `devproxy web \(har)` opens it; "
                    + "give the flow log devproxy wrote with --log\n", "\(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("again.har")))
    }

    @Test func wrongUsageExitsTwo() throws {
        #expect(try devproxy(["har"]).status == 2)
        #expect(try devproxy(["har", "a.jsonl", "b.jsonl"]).status == 2)
        #expect(try devproxy(["har", "a.jsonl", "--bogus"]).status == 2)
        #expect(try devproxy(["har", "--help"]).status == 0)
    }
}
