import CSQLite

/// One prepared `sqlite3_stmt`: the only owner of the handle, finalized in `deinit`.
///
/// Bound with `bind(_:)`, stepped with `step()`, read with the typed column accessors. Belongs to
/// the connection that prepared it and is used on that connection's thread only.
final class SQLiteStatement {
    private let handle: OpaquePointer
    // The connection must outlive its statements; unowned because the connection owns the cache.
    private unowned let database: SQLiteDatabase

    init(takingOwnership handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Clears the previous run and its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to parameters 1…n in order.
    func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .real(let number): result = sqlite3_bind_double(handle, index, number)
            case .text(var text):
                // With its length: no strlen, and no C-string copy of a small (inline) string.
                result = text.withUTF8 { bindText(index, UnsafeRawBufferPointer($0)) }
            case .utf8(let bytes, let count):
                result = bytes.withUnsafeBytes { raw in
                    bindText(index, UnsafeRawBufferPointer(rebasing: raw.prefix(count)))
                }
            case .zeroBlob(let count): result = sqlite3_bind_zeroblob64(handle, index, UInt64(count))
            case .blob(let bytes):
                result = bytes.withUnsafeBytes {
                    // A zero-length blob must still be a blob, not NULL: bind a zeroblob.
                    $0.baseAddress == nil || bytes.isEmpty
                        ? sqlite3_bind_zeroblob(handle, index, 0)
                        : sqlite3_bind_blob64(handle, index, $0.baseAddress, UInt64(bytes.count), CSQLite_SQLITE_TRANSIENT())
                }
            }
            guard result == SQLITE_OK else {
                throw SessionStoreError(.sqlite, "cannot bind parameter \(index): \(database.errorMessage)")
            }
        }
    }

    /// Binds UTF-8 `text` (copied by SQLite); an empty one is still text, not NULL.
    private func bindText(_ index: Int32, _ text: UnsafeRawBufferPointer) -> Int32 {
        guard let base = text.baseAddress, !text.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, CSQLite_SQLITE_TRANSIENT())
        }
        return sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), Int32(text.count),
                                 CSQLite_SQLITE_TRANSIENT())
    }

    /// Steps once. - Returns: true when a row is available, false when done.
    @discardableResult
    func step() throws -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = database.errorMessage
            sqlite3_reset(handle)
            throw SessionStoreError(.sqlite, "\(message) (SQLite result \(result))")
        }
    }

    /// Binds, runs to completion and resets (for INSERT, UPDATE, DELETE). Bindings left from a
    /// previous run are cleared only when `values` does not bind every parameter.
    func run(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        if Int(sqlite3_bind_parameter_count(handle)) != values.count { sqlite3_clear_bindings(handle) }
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64? { isNull(column) ? nil : sqlite3_column_int64(handle, column) }

    func int(_ column: Int32) -> Int? { int64(column).map(Int.init) }

    func double(_ column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(handle, column) }

    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(handle, column) != 0 }

    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func bytes(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let blob = sqlite3_column_blob(handle, column), count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
