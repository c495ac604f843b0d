import CSQLite

/// One prepared `sqlite3_stmt`: the only owner of the handle, finalized in `deinit`.
///
/// Bound with `bind(_:)`, stepped with `step()`, read with the typed column accessors. Belongs to
/// the connection that prepared it and is used on that connection's thread only.
///
/// Text and blob values up to `arenaValueLimit` are copied into the statement's own buffer and
/// bound in place (`SQLITE_STATIC`) rather than copied by SQLite into a buffer it allocates for
/// each (`SQLITE_TRANSIENT`: callgrind, 10 `malloc` and `free` per relayed h2 stream on the store's
/// writer). Every user of `bind` clears the bindings (`reset()`, or `run` itself) before the
/// buffer is written again.
final class SQLiteStatement {
    private let handle: OpaquePointer
    // The connection must outlive its statements; unowned because the connection owns the cache.
    private unowned let database: SQLiteDatabase
    /// The bytes of the values bound in place now.
    private var arena: UnsafeMutableRawPointer?
    private var arenaCapacity = 0
    /// A value larger than this is bound with `SQLITE_TRANSIENT` (SQLite copies it), so the arena
    /// stays small.
    static let arenaValueLimit = 16 * 1024

    init(takingOwnership handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
        arena?.deallocate()
    }

    /// Clears the previous run and its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to parameters 1…n in order. Bindings to the arena stay valid until the next
    /// `bind`: clear them (`reset()`) before then, or bind every parameter again.
    func bind(_ values: [SQLValue]) throws {
        prepareArena(for: values)
        var used = 0
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .real(let number): result = sqlite3_bind_double(handle, index, number)
            case .text(var text):
                // With its length: no strlen, and no C-string copy of a small (inline) string.
                result = text.withUTF8 { bind(index, UnsafeRawBufferPointer($0), text: true, arenaUsed: &used) }
            case .utf8(let bytes, let count):
                result = bytes.withUnsafeBytes { raw in
                    bind(index, UnsafeRawBufferPointer(rebasing: raw.prefix(count)), text: true, arenaUsed: &used)
                }
            case .zeroBlob(let count): result = sqlite3_bind_zeroblob64(handle, index, UInt64(count))
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { bind(index, $0, text: false, arenaUsed: &used) }
            }
            guard result == SQLITE_OK else {
                throw SessionStoreError(.sqlite, "cannot bind parameter \(index): \(database.errorMessage)")
            }
        }
    }

    /// The bytes `value` will take in the arena.
    private static func arenaBytes(of value: SQLValue) -> Int {
        let count: Int
        switch value {
        case .text(let text): count = text.utf8.count
        case .utf8(_, let length): count = length
        case .blob(let bytes): count = bytes.count
        case .null, .integer, .real, .zeroBlob: return 0
        }
        return count <= arenaValueLimit ? count : 0
    }

    /// Makes the arena large enough for `values` (nothing is bound to it in between: every
    /// binding is cleared or replaced before the next `bind`).
    private func prepareArena(for values: [SQLValue]) {
        var needed = 0
        for value in values { needed += Self.arenaBytes(of: value) }
        guard needed > arenaCapacity else { return }
        arena?.deallocate()
        arenaCapacity = max(needed, 2 * arenaCapacity, 1024)
        arena = UnsafeMutableRawPointer.allocate(byteCount: arenaCapacity, alignment: 16)
    }

    /// Binds `bytes` as text or a blob: copied into the arena and bound in place when small
    /// enough, copied by SQLite otherwise. An empty one is still text or a blob, not NULL.
    private func bind(_ index: Int32, _ bytes: UnsafeRawBufferPointer, text: Bool, arenaUsed: inout Int) -> Int32 {
        guard let source = bytes.baseAddress, !bytes.isEmpty else {
            return text ? sqlite3_bind_text(handle, index, "", 0, CSQLite_SQLITE_TRANSIENT())
                        : sqlite3_bind_zeroblob(handle, index, 0)
        }
        var pointer = source
        var destructor = CSQLite_SQLITE_TRANSIENT()
        if bytes.count <= Self.arenaValueLimit, let arena, arenaUsed + bytes.count <= arenaCapacity {
            let place = arena + arenaUsed
            place.copyMemory(from: source, byteCount: bytes.count)
            arenaUsed += bytes.count
            pointer = UnsafeRawPointer(place)
            destructor = nil  // SQLITE_STATIC
        }
        return text
            ? sqlite3_bind_text(handle, index, pointer.assumingMemoryBound(to: CChar.self), Int32(bytes.count), destructor)
            : sqlite3_bind_blob64(handle, index, pointer, UInt64(bytes.count), destructor)
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
            if message == MatchFunctions.timeoutMessage { throw SessionStoreError(.filterTimedOut, message) }
            throw SessionStoreError(.sqlite, "\(message) (SQLite result \(result))")
        }
    }

    /// Binds, runs to completion and resets, bindings cleared (for INSERT, UPDATE, DELETE).
    func run(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        // Nothing may stay bound to the arena past the run, whatever fails.
        defer { reset() }
        try bind(values)
        while try step() {}
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

    /// The column's value as it is stored (integer, real, text, blob or null).
    func value(_ column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: .string(string(column))
        case SQLITE_BLOB: .blob(bytes(column) ?? [])
        default: .null
        }
    }

    func bytes(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let blob = sqlite3_column_blob(handle, column), count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
