import CertAuthority
import Foundation

/// Opens what `devproxy web FILE` is given: a saved session, a `flows.jsonl` flow log or a HAR
/// file; the last two are imported into a temporary store.
public enum SessionImport {
    /// What an import read, and each record it could not use.
    public struct Report: Sendable, Equatable {
        /// Flows stored.
        public var flows: Int
        /// One per unusable line (flow log, 1-based) or entry (HAR, 1-based), with the reason.
        public var problems: [Problem]
    }

    /// A record an import skipped.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The line (flow log) or entry (HAR) number, 1-based.
        public var number: Int
        public var reason: String
        /// What `number` counts: `line` in a flow log, `entry` in a HAR file.
        public var unit = "line"

        public init(number: Int, reason: String, unit: String = "line") {
            self.number = number
            self.reason = reason
            self.unit = unit
        }

        /// `line 3: not valid JSON`, as `devproxy har` words its warnings.
        public var description: String { "\(unit) \(number): \(reason)" }
    }

    /// Why one line of a flow log (without its newline; `terminated` when a newline ended it) is
    /// not a flow, or nil when it is: `devproxy web` passes `FlowLogReader.problem(in:terminated:)`,
    /// so that it takes the lines `devproxy har` takes and skips the others for the same reasons.
    /// It is called on another thread than the import's, a batch of lines ahead (`CheckedBatch`).
    public typealias LineCheck = @Sendable (_ line: ArraySlice<UInt8>, _ terminated: Bool) -> String?

    /// The kinds of file `open(path:)` accepts.
    public enum Format: Sendable, Equatable {
        case session, flowLog, har
    }

    /// Which format the file at `path` is in, from its first bytes.
    /// - Throws: `SessionStoreError(.open)` when it cannot be read.
    public static func format(of path: String) throws -> Format {
        let head: [UInt8]
        do {
            head = try SecureFile.head(of: path, count: formatHead)
        } catch {
            throw SessionStoreError(.open, "cannot read \(path): \(error.reason)")
        }
        return format(ofHead: head)
    }

    /// UTF-8's byte order mark, skipped at the start of a flow log or HAR file.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The bytes `format(of:)` looks at.
    static let formatHead = 4096

    /// Which format a file whose first bytes are `head` is in.
    static func format(ofHead head: [UInt8]) -> Format {
        // A UTF-8 byte order mark (Windows tools, PowerShell 5's `-Encoding UTF8`) says nothing of the format.
        let head = head.starts(with: byteOrderMark) ? Array(head.dropFirst(3)) : head
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return .session }
        // A HAR file is one JSON object whose first key is usually "log"; a flow log is one per line.
        let text = String(decoding: head, as: UTF8.self)
        let firstLine = text.split(maxSplits: 1, whereSeparator: \.isNewline).first.map(String.init) ?? ""
        if firstLine.trimmingCharacters(in: .whitespaces) == "{" || text.range(of: #"^\s*\{\s*"log"\s*:"#, options: .regularExpression) != nil {
            return .har
        }
        return .flowLog
    }

    /// Opens `path` for viewing: a session read-only, a flow log or HAR imported into a temporary store.
    /// - Parameter check: what each flow-log line must pass besides being a JSON object with a
    ///   flow's summary fields (see `LineCheck`).
    /// - Returns: the store and, for imports, what was read.
    /// - Throws: `SessionStoreError` when the file is unreadable or in none of the formats.
    public static func open(path: String, checkingLines check: LineCheck? = nil) throws
        -> (store: SessionStore, report: Report?) {
        var status = stat()
        if stat(path, &status) == 0, [S_IFIFO, S_IFCHR, S_IFSOCK].contains(status.st_mode & S_IFMT) {
            return try openStream(path, check: check)
        }
        switch try format(of: path) {
        case .session:
            return (try SessionStore(path: path, readOnly: true), nil)
        case .flowLog:
            return try importing { try flowLog(at: path, into: $0, checkingLines: check) }
        case .har:
            return try importing { try har(at: path, into: $0) }
        }
    }

    /// A temporary store `body` imports into; closed (and so removed) when the import fails.
    private static func importing(_ body: (SessionStore) throws -> Report) throws -> (store: SessionStore, report: Report?) {
        let store = try SessionStore.temporary()
        do {
            return (store, try body(store))
        } catch {
            store.close()
            throw error
        }
    }

    /// A pipe (`devproxy web <(zcat flows.jsonl.gz)`, `/dev/stdin`) or device is read once: its
    /// first bytes tell the format and then come first in what is imported. A flow log is read a
    /// line at a time as it arrives; a HAR document is read whole (its JSON is parsed whole).
    private static func openStream(_ path: String, check: LineCheck?) throws -> (store: SessionStore, report: Report?) {
        let fd = try descriptor(reading: path)
        defer { close(fd) }
        var lines = LineStream(descriptor: fd)
        switch format(ofHead: Array(try lines.peek(formatHead))) {
        case .session:
            throw SessionStoreError(.open, "\(path) sends a saved session; open the session's file itself")
        case .flowLog:
            return try importing { try flowLog(&lines, into: $0, check: check) }
        case .har:
            return try importing { try har(Data(try lines.remainder()), path: path, into: $0) }
        }
    }

    /// The whole file at `path`, whatever its size, pipes included. Not FileManager's
    /// `contents(atPath:)`, which leaks a buffer on an empty file (LeakSanitizer, fuzz/run
    /// session-import) and reads no pipe.
    /// - Throws: `SessionStoreError(.open)` with the reason (`no such file`, `it is a directory`).
    static func contents(of path: String) throws -> [UInt8] {
        do {
            return try SecureFile.contents(of: path, limit: .max)
        } catch {
            throw SessionStoreError(.open, "cannot read \(path): \(error.reason)")
        }
    }

    /// `path` opened for reading, with `contents(of:)`'s reasons when it cannot be.
    static func descriptor(reading path: String) throws -> Int32 {
        do {
            return try SecureFile.openForReading(path)
        } catch {
            throw SessionStoreError(.open, "cannot read \(path): \(error.reason)")
        }
    }

    /// A flow id for an imported record: `id` when it is new in this import and safe in a URL
    /// path, else `fallback` (made unique). Two HAR entries with one `_flowId` (the UI's own export
    /// of `ids=A,A` wrote them) were one flow after import, and an id such as `..` or
    /// `../../api/clear` could not be opened (the browser resolves it out of `/api/flows/`).
    static func uniqueID(_ id: String?, fallback: String, seen: inout Set<String>) -> String {
        let safe = id.map { id in
            !id.isEmpty && id != "." && id != ".." && id.utf8.count <= 200
                && id.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.:~".unicodeScalars.contains($0)) }
        } ?? false
        let base = safe ? id! : fallback
        var candidate = base
        var suffix = 2
        while seen.contains(candidate) {
            candidate = base + "-\(suffix)"
            suffix += 1
        }
        seen.insert(candidate)
        return candidate
    }

    /// What JSON spacing looks like around a key (`": "` Python's default, `" : "` Foundation's
    /// pretty printing); DevProxy's own lines have none outside their strings.
    private static let spacedSeparators = [Array(#"": "#.utf8), Array(#"" :"#.utf8)]

    /// Stores every flow of the JSON Lines flow log at `path` in `store`, then flushes: blank lines
    /// are passed over and any JSON object with a flow's summary fields is taken.
    /// - Throws: `SessionStoreError(.open)` when unreadable; bad lines are reported, not thrown.
    public static func flowLog(at path: String, into store: SessionStore) throws -> Report {
        try flowLog(at: path, into: store, checkingLines: nil)
    }

    /// Stores every flow of the JSON Lines flow log at `path` in `store`, then flushes.
    /// - Parameter check: what each line must pass besides (see `LineCheck`); nil: as
    ///   `flowLog(at:into:)`.
    /// - Throws: `SessionStoreError(.open)` when unreadable; bad lines are reported, not thrown.
    public static func flowLog(at path: String, into store: SessionStore, checkingLines check: LineCheck?) throws
        -> Report {
        let fd = try descriptor(reading: path)
        defer { close(fd) }
        var lines = LineStream(descriptor: fd)
        return try flowLog(&lines, into: store, check: check)
    }

    /// Stores every flow of the flow log `lines` reads, then flushes.
    ///
    /// With a check, lines are read ahead in batches (`CheckedBatch`) and each batch is checked on
    /// another thread while the one before it is imported here: the check (`devproxy web`'s full
    /// decode of a flow) and the import's own parse of the same line run side by side on two cores
    /// instead of one after the other. Lines are still taken, skipped and reported in file order.
    /// - Throws: `SessionStoreError` when reading fails or a line is longer than `LineStream`
    ///   holds; bad lines are reported, not thrown.
    static func flowLog(_ lines: inout LineStream, into store: SessionStore, check: LineCheck? = nil) throws -> Report {
        var report = Report(flows: 0, problems: [])
        var ids = Set<String>()
        var order = StartOrder(store: store)
        defer {
            order.finish()
            store.flush()
        }
        guard let check else {
            while let next = try lines.next() {
                var line = next.line
                if lines.number == 1, line.starts(with: byteOrderMark) { line = line.dropFirst(3) }
                importLine(line, number: lines.number, into: &order, ids: &ids, report: &report)
            }
            return report
        }
        var batch = try CheckedBatch.read(&lines, check: check)
        while let current = batch {
            batch = try CheckedBatch.read(&lines, check: check)
            for (index, reason) in current.reasons().enumerated() {
                let line = current.lines[index]
                if let reason {
                    report.problems.append(Problem(number: line.number, reason: reason))
                } else {
                    importLine(line.bytes[...], number: line.number, into: &order, ids: &ids, report: &report)
                }
            }
        }
        return report
    }

    /// Stores the flow of one flow-log line (without its newline and byte order mark), or adds
    /// why it holds none to `report`; a blank line is passed over.
    private static func importLine(_ line: ArraySlice<UInt8>, number: Int, into order: inout StartOrder,
                                   ids: inout Set<String>, report: inout Report) {
        guard line.contains(where: { $0 > 0x20 }) else { return }
        do {
            guard var object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw SessionStoreError(.importFormat, "not a JSON object")
            }
            let given = object["id"] as? String
            let id = uniqueID(given, fallback: "import-\(number)", seen: &ids)
            var json = String(decoding: line, as: UTF8.self)
            // A line with JSON spacing (Python's json.dumps, jq without -c) is stored compact, as
            // DevProxy writes its own: `?preview=` finds a body's `"text":"` to cut it, and a
            // spaced record came back whole (megabytes) each time the flow was opened.
            if id != given || Self.spacedSeparators.contains(where: { line.firstRange(of: $0) != nil }) {
                object["id"] = id
                json = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes]),
                              as: UTF8.self)
            }
            let entry = try FlowLogEntry(object)
            order.add(entry.record, json: json, bodies: entry.bodies)
            report.flows += 1
        } catch let error as SessionStoreError {
            report.problems.append(Problem(number: number, reason: error.reason))
        } catch {
            report.problems.append(Problem(number: number, reason: "not valid JSON"))
        }
    }
}
