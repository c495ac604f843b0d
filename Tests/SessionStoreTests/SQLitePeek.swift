import CSQLite

/// Reads and writes `PRAGMA user_version` through a connection of the test's own, as another
/// program (or a newer devproxy) would.
enum SQLitePeek {
    struct Failure: Error {}

    static func userVersion(_ path: String) throws -> Int {
        var result = 0
        try withDatabase(path) { database in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(database, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK else { throw Failure() }
            defer { sqlite3_finalize(statement) }
            guard sqlite3_step(statement) == SQLITE_ROW else { throw Failure() }
            result = Int(sqlite3_column_int64(statement, 0))
        }
        return result
    }

    static func setUserVersion(_ path: String, _ version: Int) throws {
        try withDatabase(path) { database in
            guard sqlite3_exec(database, "PRAGMA user_version = \(version)", nil, nil, nil) == SQLITE_OK else { throw Failure() }
        }
    }

    private static func withDatabase(_ path: String, _ body: (OpaquePointer) throws -> Void) throws {
        var database: OpaquePointer?
        guard sqlite3_open(path, &database) == SQLITE_OK, let database else { throw Failure() }
        defer { sqlite3_close(database) }
        try body(database)
    }
}
