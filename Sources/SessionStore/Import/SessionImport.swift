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

    /// The kinds of file `open(path:)` accepts.
    public enum Format: Sendable, Equatable {
        case session, flowLog, har
    }

    /// Which format the file at `path` is in, from its first bytes.
    /// - Throws: `SessionStoreError(.open)` when it cannot be read.
    public static func format(of path: String) throws -> Format {
        let head: [UInt8]
        do {
            head = try SecureFile.head(of: path, count: 4096)
        } catch {
            throw SessionStoreError(.open, "cannot read \(path): \(error.reason)")
        }
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
    /// - Returns: the store and, for imports, what was read.
    /// - Throws: `SessionStoreError` when the file is unreadable or in none of the formats.
    public static func open(path: String) throws -> (store: SessionStore, report: Report?) {
        var status = stat()
        if stat(path, &status) == 0, [S_IFIFO, S_IFCHR, S_IFSOCK].contains(status.st_mode & S_IFMT) {
            return try openStream(path)
        }
        switch try format(of: path) {
        case .session:
            return (try SessionStore(path: path, readOnly: true), nil)
        case .flowLog:
            let store = try SessionStore.temporary()
            return (store, try flowLog(at: path, into: store))
        case .har:
            let store = try SessionStore.temporary()
            return (store, try har(at: path, into: store))
        }
    }

    /// A pipe (`devproxy web <(zcat flows.jsonl.gz)`, `/dev/stdin`) is read once: its first bytes
    /// cannot be looked at and then read again (the import lost them), so it is copied to a
    /// private temporary file, imported from there, and the copy removed.
    private static func openStream(_ path: String) throws -> (store: SessionStore, report: Report?) {
        let copy = try temporaryCopy(of: path)
        defer { unlink(copy) }
        guard try format(of: copy) != .session else {
            throw SessionStoreError(.open, "\(path) sends a saved session; open the session's file itself")
        }
        return try open(path: copy)
    }

    /// What the stream at `path` sends, in a new private temporary file. Its bytes are let go
    /// before the import reads the copy, which would otherwise hold them twice.
    private static func temporaryCopy(of path: String) throws -> String {
        let bytes = try contents(of: path)
        let copy = NSTemporaryDirectory() + "devproxy-import-\(UUID().uuidString).input"
        do {
            try SecureFile.write(bytes, to: copy, mode: SecureFile.privateMode)
        } catch let error as CAError {
            throw SessionStoreError(.open, "cannot keep what \(path) sent: \(error.reason)")
        }
        return copy
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

    /// Stores every flow of the JSON Lines flow log at `path` in `store`, then flushes.
    /// - Throws: `SessionStoreError(.open)` when unreadable; bad lines are reported, not thrown.
    public static func flowLog(at path: String, into store: SessionStore) throws -> Report {
        let bytes = try contents(of: path)
        var report = Report(flows: 0, problems: [])
        var ids = Set<String>()
        var start = 0
        var number = 0
        while start < bytes.count {
            number += 1
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let line = bytes[start..<end]
            start = end + 1
            guard line.contains(where: { $0 > 0x20 }) else { continue }
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
                store.importFinished(entry.record, json: json, bodies: entry.bodies)
                report.flows += 1
            } catch let error as SessionStoreError {
                report.problems.append(Problem(number: number, reason: error.reason))
            } catch {
                report.problems.append(Problem(number: number, reason: "not valid JSON"))
            }
        }
        store.flush()
        return report
    }
}
