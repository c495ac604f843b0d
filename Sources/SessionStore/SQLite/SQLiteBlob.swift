import CSQLite

/// An open `sqlite3_blob` for incremental I/O on one row's BLOB or TEXT: a body copied in from its
/// spool file, or served, a piece at a time. The only owner of the handle, closed in `deinit`.
///
/// Used on its connection's thread only (a writer inside its transaction).
final class SQLiteBlob {
    private let handle: OpaquePointer
    private unowned let database: SQLiteDatabase
    /// Bytes in the blob (fixed when the row was written, as `zeroblob(N)`).
    let count: Int

    /// Opens column `column` of row `rowid` in `table`, for writing unless `readOnly`.
    /// - Throws: `SessionStoreError(.sqlite)` with SQLite's message.
    init(database: SQLiteDatabase, table: String, column: String, rowid: Int64, readOnly: Bool = false) throws {
        var pointer: OpaquePointer?
        let result = sqlite3_blob_open(database.handle, "main", table, column, rowid, readOnly ? 0 : 1, &pointer)
        guard result == SQLITE_OK, let pointer else {
            let message = database.errorMessage
            sqlite3_blob_close(pointer)
            throw SessionStoreError(.sqlite, "cannot open \(table).\(column) of row \(rowid): \(message)")
        }
        handle = pointer
        self.database = database
        count = Int(sqlite3_blob_bytes(pointer))
    }

    deinit { sqlite3_blob_close(handle) }

    /// Writes `bytes` at `offset` (which, with them, must lie within `count`).
    /// - Throws: `SessionStoreError(.sqlite)` with SQLite's message.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let result = sqlite3_blob_write(handle, base, Int32(bytes.count), Int32(offset))
        guard result == SQLITE_OK else {
            throw SessionStoreError(.sqlite, "cannot write a blob at \(offset): \(database.errorMessage)")
        }
    }

    /// Reads `buffer.count` bytes at `offset` (which, with them, must lie within `count`).
    /// - Throws: `SessionStoreError(.sqlite)` with SQLite's message.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        let result = sqlite3_blob_read(handle, base, Int32(buffer.count), Int32(offset))
        guard result == SQLITE_OK else {
            throw SessionStoreError(.sqlite, "cannot read a blob at \(offset): \(database.errorMessage)")
        }
    }
}
