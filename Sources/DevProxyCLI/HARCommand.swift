import DevProxy
import Foundation

/// `devproxy har FLOWS.jsonl [-o FILE]`: converts a `--log` flow log into a HAR 1.2 file.
enum HARCommand {
    static let usage = """
    Converts a flow log (written with --log) into an HTTP Archive (HAR 1.2) for Chrome DevTools,
    Firefox or Charles.

      devproxy har flows.jsonl -o session.har     write session.har (mode 0600: it holds decrypted traffic;
                                                  --output FILE is the same, and -o - is stdout)
      devproxy har flows.jsonl | jq '.log.entries | length'
                                                  HAR on stdout when -o is not given
      zcat flows.jsonl.gz | devproxy har - -o session.har
                                                  - reads the flow log from standard input

    Torn or corrupt lines (say, the proxy was killed mid-write) are reported as warnings with
    their line numbers; every other flow is still converted.
    Exit codes: 0 converted; 1 the log could not be read or the HAR not written; 2 wrong usage.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.isEmpty || raw.first == "--help" || raw.first == "-h" {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        let arguments = try Arguments(raw, valued: ["o", "output"], booleans: [])
        guard arguments.positionals.count == 1, let logPath = arguments.positionals.first else {
            throw UsageError("give exactly one flow log, as in `devproxy har flows.jsonl -o session.har`")
        }
        let outputPath = arguments.value("o") ?? arguments.value("output")
        // The HAR written over the log it was read from replaced the captured log (exit 0).
        if let outputPath, outputPath != "-", sameFile(outputPath, logPath) {
            throw UsageError("\(outputPath) is the flow log being read; give the HAR another name")
        }

        let log: (flows: [Flow], problems: [(line: Int, reason: String)])
        do {
            // `-` is standard input, as `-o -` is standard output (`zcat flows.jsonl.gz | devproxy har -`).
            log = try FlowLogReader.read(path: logPath == "-" ? "/dev/stdin" : logPath)
        } catch let error as FlowLogError {
            let hint = error.code == .notFound ? "; give the file the proxy wrote with --log" : ""
            throw CommandFailure(error.reason + hint)
        }
        try checkFlowLog(log, path: logPath, rest: "unreadable line(s)")

        guard let outputPath, outputPath != "-" else {
            let bytes = try HARWriter.encode(log.flows)
            Output.raw(bytes)
            // Said on stderr, as with -o FILE on the summary line (`devproxy web` says it alike).
            if !log.problems.isEmpty {
                let lines = log.problems.count == 1 ? "1 unreadable line" : "\(log.problems.count) unreadable lines"
                let flows = log.flows.count == 1 ? "1 flow" : "\(log.flows.count) flows"
                Output.warning("\(lines) of \(logPath) skipped, see the warnings; the HAR holds the \(flows) of the others")
            }
            return 0
        }
        do {
            try HARWriter.write(log.flows, to: outputPath)
        } catch let error as FlowLogError {
            throw CommandFailure(error.reason)
        }
        let count = log.problems.count
        let skipped = count == 0 ? "" : " (\(count) unreadable line\(count == 1 ? "" : "s") skipped, see the warnings)"
        let entries = log.flows.count == 1 ? "1 entry" : "\(log.flows.count) entries"
        Output.wrote(to: outputPath, "Wrote \(entries) to \(outputPath) (mode 0600)\(skipped).",
                     "Next: import it in Chrome DevTools (Network → Import HAR file…), "
                        + "or `jq '.log.entries[].request.url' \(outputPath)`")
        return 0
    }

    /// Whether `a` and `b` name one existing file (one device and inode, through links too).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// What DevProxy file other than a flow log `path` holds, when it is one: a HAR (a JSON
    /// object with `log.entries`) or a saved session (an SQLite database).
    private static func otherCapture(at path: String) -> String? {
        // A regular file only: a FIFO's bytes are gone, and opening it again would wait for a writer.
        let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
        guard path != "-", type == .typeRegular, let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        // The header first: a session's database may be large, and is known by its first 16 bytes.
        let head = (try? file.read(upToCount: 16)) ?? Data()
        if head.starts(with: Array("SQLite format 3\u{0}".utf8)) { return "a saved session (SQLite)" }
        let data = head + ((try? file.readToEnd()) ?? Data())
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              (object["log"] as? [String: Any])?["entries"] is [Any] else { return nil }
        return "a HAR file"
    }

    /// Warns of a flow log's unreadable lines (the first ten; `rest` names the count of the others)
    /// and refuses a log none of whose lines is a flow: the wrong file (a HAR, a session, anything
    /// else), not a torn log. `har` and `qa verdict` read logs alike.
    /// - Throws: `CommandFailure` for a file with no flow in it.
    static func checkFlowLog(_ log: (flows: [Flow], problems: [(line: Int, reason: String)]), path: String,
                             rest: String) throws {
        // A HAR or a saved session given where the flow log goes: its lines are no flows, and ten
        // warnings of `line N: not valid JSON` said nothing of what the file is.
        if log.flows.isEmpty, !log.problems.isEmpty, let kind = otherCapture(at: path) {
            throw CommandFailure("\(path) is \(kind), not a flow log: `devproxy web \(path)` opens it; "
                                 + "give the flow log devproxy wrote with --log")
        }
        Output.warnings(log.problems.map { "\(path) line \($0.line): \($0.reason)" }, rest: rest)
        if log.flows.isEmpty, !log.problems.isEmpty {
            throw CommandFailure("\(path) holds no flow: none of its lines is a flow record; give the flow log "
                                 + "devproxy wrote with --log")
        }
    }
}
