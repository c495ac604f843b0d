import CertAuthority
import Foundation

/// The `sessions/` directory under the data directory: one session file per run, the newest
/// `keep` kept.
public struct SessionDirectory: Sendable {
    /// One saved session, as `devproxy sessions` lists it.
    public struct Entry: Sendable, Equatable {
        public var path: String
        /// Flows stored; nil when the file could not be read as a session.
        public var flowCount: Int?
        /// Bytes on disk, its WAL and body files included.
        public var size: Int
        public var modified: Date
    }

    /// The directory (`<data dir>/sessions`).
    public let path: String
    /// How many sessions `prune()` keeps. Default 20.
    public let keep: Int

    public init(path: String, keep: Int = 20) {
        self.path = path
        self.keep = keep
    }

    /// A new session file path for a run starting at `date`: `session-20260301T120102Z.sqlite`
    /// (a `-2`, `-3`… suffix if taken). Creates the directory (0700) if needed.
    /// - Throws: `SessionStoreError(.open)` when the directory cannot be created.
    public func newSessionPath(at date: Date = Date()) throws -> String {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw SessionStoreError(.open, "cannot create \(path): \(error.localizedDescription)")
        }
        // RFC 3339's UTC form without separators, written without a DateFormatter: setting one up
        // loads ICU's calendar and time-zone data, ~1 MiB of an idle proxy's memory.
        let stamp = ISO8601.string(date).filter { $0 != "-" && $0 != ":" }
        let stem = "\(path)/session-\(stamp)"
        var candidate = stem + ".sqlite"
        var attempt = 1
        while FileManager.default.fileExists(atPath: candidate) {
            attempt += 1
            candidate = "\(stem)-\(attempt).sqlite"
        }
        return candidate
    }

    /// Session files, newest first (by modification time, then name).
    public func sessionPaths() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let files = names.filter { $0.hasPrefix("session-") && $0.hasSuffix(".sqlite") }.map { "\(path)/\($0)" }
        return files.map { ($0, Self.modified($0)) }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 > $1.0 }
            .map(\.0)
    }

    /// Deletes all but the newest `keep` sessions (and their WAL files and body files), except `sparing`
    /// and any that a running devproxy is writing to.
    /// - Returns: the paths removed.
    @discardableResult
    public func prune(sparing: String? = nil) -> [String] {
        let old = sessionPaths().filter { $0 != sparing }.dropFirst(max(keep - (sparing == nil ? 0 : 1), 0))
            .filter { !SessionLock.isHeld(sessionPath: $0) }
        for file in old { Self.remove(file) }
        return Array(old)
    }

    /// Deletes the session at `file`: the database, its WAL, lock and body files.
    public static func remove(_ file: String) {
        for suffix in ["", "-wal", "-shm", "-journal", "-lock"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        BodyFiles(sessionPath: file).removeAll()
    }

    /// Every session, newest first, with its flow count (each opened read-only) and size.
    public func list() -> [Entry] {
        sessionPaths().map { file in
            let count = (try? SessionStore(path: file, readOnly: true)).flatMap { store -> Int? in
                defer { store.close() }
                return try? store.count()
            }
            let size = ["", "-wal"].reduce(0) { $0 + Self.size(file + $1) } + BodyFiles(sessionPath: file).size()
            return Entry(path: file, flowCount: count, size: size, modified: Self.modified(file))
        }
    }

    private static func modified(_ file: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: file))?[.modificationDate] as? Date) ?? .distantPast
    }

    private static func size(_ file: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
