import CSQLite

/// Reads and writes the session file through a connection of the test's own, as another program
/// (or a newer devproxy) would: `PRAGMA user_version`, indexes, counts.
enum SQLitePeek {
    struct Failure: Error {}

    static func userVersion(_ path: String) throws -> Int {
        try integer(path, "PRAGMA user_version")
    }

    static func setUserVersion(_ path: String, _ version: Int) throws {
        try withDatabase(path) { database in
            guard sqlite3_exec(database, "PRAGMA user_version = \(version)", nil, nil, nil) == SQLITE_OK else { throw Failure() }
        }
    }

    /// Runs `sql` (no parameters), as an older devproxy's schema would have left the file.
    static func execute(_ path: String, _ sql: String) throws {
        try withDatabase(path) { database in
            guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else { throw Failure() }
        }
    }

    /// The first column of the first row of `sql` as an integer (a count, a sum).
    static func integer(_ path: String, _ sql: String) throws -> Int {
        var result = 0
        try withDatabase(path) { database in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { throw Failure() }
            defer { sqlite3_finalize(statement) }
            guard sqlite3_step(statement) == SQLITE_ROW else { throw Failure() }
            result = Int(sqlite3_column_int64(statement, 0))
        }
        return result
    }

    /// The names of the file's indexes on `table`.
    static func indexes(_ path: String, table: String) throws -> [String] {
        var names: [String] = []
        try withDatabase(path) { database in
            var statement: OpaquePointer?
            let sql = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name"
            guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { throw Failure() }
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_text(statement, 1, table, -1, CSQLite_SQLITE_TRANSIENT())
            while sqlite3_step(statement) == SQLITE_ROW {
                names.append(String(cString: sqlite3_column_text(statement, 0)))
            }
        }
        return names
    }

    private static func withDatabase(_ path: String, _ body: (OpaquePointer) throws -> Void) throws {
        var database: OpaquePointer?
        guard sqlite3_open(path, &database) == SQLITE_OK, let database else { throw Failure() }
        defer { sqlite3_close(database) }
        try body(database)
    }
}
