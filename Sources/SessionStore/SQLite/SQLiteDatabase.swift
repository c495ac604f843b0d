import CSQLite
import Foundation

/// One open `sqlite3` connection: the only owner of the handle, closed in `deinit`.
///
/// Not thread-safe: one thread at a time (the store's writer thread, or a reader under its lock).
/// Statements are prepared once per SQL text and kept (`statement(_:)`).
final class SQLiteDatabase {
    // Internal for `SQLiteBlob`, which opens blob handles on this connection.
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
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
        var pointer: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard result == SQLITE_OK, let pointer else {
            throw SessionStoreError(.sqlite, "\(errorMessage) (SQLite result \(result)) preparing: \(sql.prefix(120))")
        }
        let statement = SQLiteStatement(takingOwnership: pointer, database: self)
        // Filter queries are one text per distinct expression shape; keep the cache bounded.
        if statements.count >= 128 { statements.removeAll() }
        statements[sql] = statement
        return statement
    }

    /// The single integer a query like `PRAGMA user_version` or `SELECT count(*)` returns.
    func integer(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int64 {
        try rows(sql, bindings) { $0.int64(0) ?? 0 }.first ?? 0
    }

    /// Runs a query and maps each row with `row`; the statement is reset afterwards, so no read
    /// transaction stays open (a reader left mid-query would keep seeing an old snapshot).
    func rows<T>(_ sql: String, _ bindings: [SQLValue] = [], _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        var results: [T] = []
        while try statement.step() { results.append(try row(statement)) }
        return results
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

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
