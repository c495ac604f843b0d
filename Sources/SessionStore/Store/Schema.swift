/// The session store's schema: one list of forward-only migrations, the file's version in
/// `PRAGMA user_version`.
///
/// `flows` is narrow (the summary columns, and `record`, a 25-byte reference into
/// `record_frames`) so listing and summary filters scan little; header text, the flow JSON and
/// the bodies live in their own tables (a finished flow's JSON and header text in a frame shared
/// with the flows finished beside it; a large record, and a running flow's heads, in
/// `flow_records` and `flow_heads`), keyed by the flow's `seq`, and are read only by the filters
/// and look-ups that need them. `seq` is AUTOINCREMENT so a cursor
/// never points at a number reused after `clear()`.
enum Schema {
    /// The version this build writes. A file with a higher one is refused, never downgraded.
    static var version: Int { migrations.count }

    /// Migration `n` takes a file from version `n` to `n + 1`. Append only; never edit one that shipped.
    static let migrations: [String] = [
        """
        CREATE TABLE flows (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            phase INTEGER NOT NULL,
            started TEXT NOT NULL,
            method TEXT,
            url TEXT,
            host TEXT NOT NULL,
            status INTEGER,
            http_version TEXT,
            mode TEXT NOT NULL,
            error_kind TEXT,
            content_type TEXT,
            request_content_type TEXT,
            request_size INTEGER,
            response_size INTEGER,
            duration_ms REAL,
            persona TEXT,
            signer_email TEXT,
            signer_serial TEXT,
            verdict TEXT,
            websocket INTEGER NOT NULL DEFAULT 0,
            tunnel INTEGER NOT NULL DEFAULT 0,
            bodies_dropped INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX flows_host ON flows(host COLLATE NOCASE);
        CREATE INDEX flows_status ON flows(status);
        CREATE TABLE flow_heads (
            seq INTEGER PRIMARY KEY,
            request_headers TEXT,
            response_headers TEXT
        );
        CREATE TABLE flow_records (
            seq INTEGER PRIMARY KEY,
            json TEXT NOT NULL
        );
        CREATE TABLE bodies (
            seq INTEGER NOT NULL,
            part INTEGER NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT,
            data NOT NULL,
            text TEXT,
            PRIMARY KEY (seq, part)
        );
        """,
        // No query reads `flows_host` (`~d` is a regular expression over every host): the index
        // cost a B-tree insert per flow for nothing (docs/performance.md, "Run 15").
        "DROP INDEX IF EXISTS flows_host;",
        // Flow records compressed against earlier records (`RecordCompression.swift`); AUTOINCREMENT
        // so that an id never names another dictionary after `clear()` (readers cache them by id).
        """
        CREATE TABLE record_dictionaries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            data BLOB NOT NULL
        );
        """,
        // A body the proxy spooled is kept as a file beside the session (`BodyFiles`): `file`
        // names it, and `data` is then empty.
        "ALTER TABLE bodies ADD COLUMN file TEXT;",
        // Finished flows' records and header texts, several flows to a compressed frame
        // (`RecordFrames.swift`); `flows.record` says where a flow's are. AUTOINCREMENT so that an
        // id never names another frame after `clear()` (readers cache frames by id).
        """
        ALTER TABLE flows ADD COLUMN record BLOB;
        CREATE TABLE record_frames (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            data NOT NULL
        );
        """,
        // `~c` scans `flows` instead (70 ms over a million flows, and a page of matches stops at
        // its 100th): the index cost ~5k instructions of every flow's insert (docs/performance.md,
        // "Run 25").
        "DROP INDEX IF EXISTS flows_status;",
        // A gRPC call's `grpc-status` (`~gs`, and the list shows a failed call whose HTTP status is 200).
        "ALTER TABLE flows ADD COLUMN grpc_status INTEGER;",
        // The server's port (a tunnel's row names it: a tunnel has no URL) and the codes of the
        // informational responses before the final one, `102 103` (the list marks Early Hints).
        "ALTER TABLE flows ADD COLUMN port INTEGER; ALTER TABLE flows ADD COLUMN informational TEXT;",
        // What `devproxy run --grpc-reflection` learnt from servers: a `FileDescriptorSet` per
        // answer, so that `devproxy web FILE` types the calls recorded before the answer came
        // (`SessionStore+GRPCSchemas.swift`). AUTOINCREMENT: a reader keeps the rows it has read by id.
        """
        CREATE TABLE grpc_schemas (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            host TEXT NOT NULL,
            port INTEGER NOT NULL,
            service TEXT NOT NULL,
            learned TEXT NOT NULL,
            descriptor_set BLOB NOT NULL
        );
        """,
        // What a person noted on a flow (`FlowNote`): its mark and comment, by the flow's `seq`, in
        // a table of their own that the notes' connection writes (`NoteWriter`), never the writer.
        """
        CREATE TABLE flow_notes (
            seq INTEGER PRIMARY KEY,
            mark TEXT,
            comment TEXT
        );
        """,
        // A GraphQL call's operations (a JSON array of `{"type", "name", "persisted"}`, one per
        // operation of a batch) and the entries of its response's top-level `errors`: the list
        // names the operation, `~graphql`, `~graphql REGEX` and `~gqlerr` select by them. NULL
        // for any other flow. A session written before this version is read again for them once
        // (`GraphQLBackfill`).
        "ALTER TABLE flows ADD COLUMN graphql TEXT; ALTER TABLE flows ADD COLUMN graphql_errors INTEGER;",
        // The rule that changed or answered the flow (its record's `mapped.rule`: `map-remote`,
        // `map-local`, `mock`, `modify-headers`, `modify-body`): the list marks it, `~mapped`
        // selects by it. NULL for any other flow, and for the flows of a session written before
        // this version (not read again: the rule is only in their records).
        "ALTER TABLE flows ADD COLUMN mapped TEXT;",
        // The client's address as the flow log's `client` writes it (`127.0.0.1:53122`, `[::1]:53122`,
        // a WireGuard device's `10.0.0.3:41234`): `~src` selects by it, as mitmproxy's does. NULL for
        // the flows of a session written before this version: `~src` reads theirs from the record.
        "ALTER TABLE flows ADD COLUMN client TEXT;",
        // The flow a replay repeats (the record's `replay_of`, known from the request's start): `~replay`
        // selects by it, as mitmproxy's does. NULL for any other flow, and for the flows of a session
        // written before this version (not read again: it is only in their records).
        "ALTER TABLE flows ADD COLUMN replay_of TEXT;",
        // The process on this machine that made the flow: its name and executable (the record's
        // `client_process.name` and `.exe`, `curl` and `/usr/bin/curl`). The list's Client column
        // shows the name, `~proc` searches both. NULL when unknown, and for the flows of a session
        // written before this version (whose records never had a `client_process`).
        "ALTER TABLE flows ADD COLUMN client_process TEXT; ALTER TABLE flows ADD COLUMN client_exe TEXT;",
        // That process's id (the record's `client_process.pid`), for the list's Client tooltip. NULL
        // when unknown, and for the flows of a session written before this version (a version-15
        // session's tooltip names the process without it).
        "ALTER TABLE flows ADD COLUMN client_pid INTEGER;",
    ]

    /// The version that added `flows.graphql` (`GraphQLBackfill`).
    static let graphQLVersion = 11

    /// Brings the open database up to `version`, one migration per transaction.
    /// - Throws: `SessionStoreError(.schema)` when the file is newer than this build.
    static func migrate(_ database: SQLiteDatabase) throws {
        let current = Int(try database.integer("PRAGMA user_version"))
        guard current <= version else {
            throw SessionStoreError(.schema, "the session file has schema version \(current); this devproxy reads up to "
                                    + "\(version): open it with a newer devproxy")
        }
        for index in current..<version {
            try database.transaction {
                try database.execute(migrations[index])
                // The columns are filled for the flows already kept, which no SQL can read for them.
                if index + 1 == graphQLVersion { try GraphQLBackfill.run(database) }
                // PRAGMA takes no bound parameters; the value is our own integer.
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}
