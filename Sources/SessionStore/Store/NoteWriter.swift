import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The connection that writes flows' notes (`flow_notes`): its own, beside the writer's, so
/// that marking a flow never waits in the writer's queue nor touches the `flows` rows it writes,
/// and so that a session opened read-only (`devproxy web FILE`) can still be marked.
///
/// Opened on the first note, closed with the store. SQLite takes the file's write lock for the
/// few microseconds a note's transaction lasts; the writer waits for it (busy timeout), as this
/// connection waits for the writer's batch.
final class NoteWriter: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    // Guarded by `lock`.
    private var database: SQLiteDatabase?
    private var closed = false
    /// Why notes cannot be written to the file, or nil when they can.
    let refusal: String?

    /// - Parameter readOnly: the store was opened for queries only: notes are written when the
    ///   file and its folder (where SQLite puts its journal) are writable, and refused otherwise.
    init(path: String, readOnly: Bool) {
        self.path = path
        refusal = readOnly ? Self.refusal(path) : nil
    }

    private static func refusal(_ path: String) -> String? {
        let folder = (path as NSString).deletingLastPathComponent
        if access(path, W_OK) != 0 {
            return "\(path) is not writable, so marks and comments cannot be saved in it: copy it somewhere "
                + "writable and open the copy"
        }
        if access(folder.isEmpty ? "." : folder, W_OK) != 0 {
            return "the folder of \(path) is not writable (SQLite writes its journal there), so marks and comments "
                + "cannot be saved: copy the session somewhere writable and open the copy"
        }
        return nil
    }

    /// Runs `body` in a write transaction on the notes connection, one caller at a time.
    /// - Throws: `SessionStoreError(.note)` when the file is not writable, `.closed` after `close()`,
    ///   or what `body` throws (the transaction is then rolled back).
    func write<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock {
            if let refusal { throw SessionStoreError(.note, refusal) }
            guard !closed else { throw SessionStoreError(.closed, "the session store is closed") }
            let database = try self.database ?? SQLiteDatabase(path: path)
            self.database = database
            return try database.transaction { try body(database) }
        }
    }

    /// Closes the connection; later writes are refused.
    func close() {
        lock.withLock {
            closed = true
            database = nil
        }
    }
}
