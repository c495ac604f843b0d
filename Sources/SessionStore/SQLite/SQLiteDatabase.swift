import CSQLite
import Foundation

/// One open `sqlite3` connection: the only owner of the handle, closed in `deinit`.
///
/// Not thread-safe: one thread at a time (the store's writer thread, or a reader under its lock).
/// Statements are prepared once per SQL text and kept (`statement(_:)`); the writer's fixed
/// statements are `StaticString`s, found by their text's address instead of hashing the text.
final class SQLiteDatabase {
    // Internal for `SQLiteBlob`, which opens blob handles on this connection.
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    // Keyed by the literal's address: hashing a ~1 KB SQL text per row write cost ~20k
    // instructions a flow (callgrind, docs/performance.md). Never evicted: a program has few literals.
    private var staticStatements: [UnsafeRawPointer: SQLiteStatement] = [:]
    // Objects whose pointers SQLite holds as function user data; kept alive as long as the handle.
    private var functionContexts: [AnyObject] = []

    /// Opens (or creates) the database at `path`.
    /// - Parameters:
    ///   - readOnly: open without write access (the file must exist).
    /// - Throws: `SessionStoreError(.open)` with SQLite's message.
    init(path: String, readOnly: Bool = false) throws {
        var pointer: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let result = sqlite3_open_v2(path, &pointer, flags, nil)
        guard result == SQLITE_OK, let pointer else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(pointer)
            throw SessionStoreError(.open, "cannot open \(path): \(message)")
        }
        handle = pointer
        sqlite3_extended_result_codes(handle, 1)
        // A reader meeting the writer's checkpoint waits instead of failing.
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        statements.removeAll()
        staticStatements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters (schema, pragmas, transactions).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        guard result == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(message)
            throw SessionStoreError(.sqlite, "\(text) (SQLite result \(result)) in: \(sql.prefix(80))")
        }
    }

    /// The prepared statement for `sql`, prepared on first use and reset for reuse after.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        let statement = try prepare(sql)
        // Filter queries are one text per distinct expression shape; keep the cache bounded.
        if statements.count >= 128 { statements.removeAll() }
        statements[sql] = statement
        return statement
    }

    /// The prepared statement for the literal `sql`, found by the literal's address.
    func statement(_ sql: StaticString) throws -> SQLiteStatement {
        precondition(sql.hasPointerRepresentation, "an SQL statement is more than one character")
        let key = UnsafeRawPointer(sql.utf8Start)
        // Left reset by every use (`run`, `rows`, a failed `step`); `run` and `bind` set every parameter.
        if let cached = staticStatements[key] { return cached }
        let statement = try prepare(sql.description)
        staticStatements[key] = statement
        return statement
    }

    private func prepare(_ sql: String) throws -> SQLiteStatement {
        var pointer: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard result == SQLITE_OK, let pointer else {
            throw SessionStoreError(.sqlite, "\(errorMessage) (SQLite result \(result)) preparing: \(sql.prefix(120))")
        }
        return SQLiteStatement(takingOwnership: pointer, database: self)
    }

    /// The single integer a query like `PRAGMA user_version` or `SELECT count(*)` returns.
    func integer(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int64 {
        try rows(sql, bindings) { $0.int64(0) ?? 0 }.first ?? 0
    }

    /// Runs a query and maps each row with `row`; the statement is reset afterwards, so no read
    /// transaction stays open (a reader left mid-query would keep seeing an old snapshot).
    func rows<T>(_ sql: String, _ bindings: [SQLValue] = [], _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        try rows(of: try statement(sql), bindings, row)
    }

    /// `rows(_:_:_:)` for a literal statement (`statement(_: StaticString)`).
    func rows<T>(_ sql: StaticString, _ bindings: [SQLValue] = [], _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        try rows(of: try statement(sql), bindings, row)
    }

    private func rows<T>(of statement: SQLiteStatement, _ bindings: [SQLValue],
                         _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        defer { statement.reset() }
        try statement.bind(bindings)
        var results: [T] = []
        while try statement.step() { results.append(try row(statement)) }
        return results
    }

    /// Caps this connection's page cache at `bytes` (`PRAGMA cache_size` in KiB, at least one).
    func setCacheSize(bytes: Int) throws {
        try execute("PRAGMA cache_size = -\(max(1, bytes / 1024))")
    }

    /// Bytes this connection's page cache holds now (`SQLITE_DBSTATUS_CACHE_USED`).
    var cacheBytes: Int {
        var current: Int32 = 0
        var highwater: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highwater, 0)
        return Int(current)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last row inserted on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// SQLite's message for the last failure on this connection.
    var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Registers a deterministic SQL function implemented in Swift.
    /// - Parameters:
    ///   - context: kept alive with the connection; its pointer is the function's user data.
    ///   - function: the C callback; it finds `context` through `sqlite3_user_data`.
    func createFunction(
        _ name: String, arguments: Int32, context: AnyObject,
        _ function: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void
    ) throws {
        functionContexts.append(context)
        let pointer = Unmanaged.passUnretained(context).toOpaque()
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        let result = sqlite3_create_function_v2(handle, name, arguments, flags, pointer, function, nil, nil, nil)
        guard result == SQLITE_OK else {
            throw SessionStoreError(.sqlite, "cannot register SQL function \(name): \(errorMessage)")
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
