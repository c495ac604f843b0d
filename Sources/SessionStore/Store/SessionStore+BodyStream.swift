/// Stored bodies read a piece at a time: serving a 64 MiB body never holds it whole. A body kept
/// as a file beside the session (`BodyFiles`) is read from there.
extension SessionStore {
    /// What a stored body holds, read without its bytes.
    public struct BodyExtent: Sendable, Equatable {
        /// Bytes stored (up to the store's body limit).
        public var stored: Int
        /// The size of the whole body on the wire.
        public var size: Int
        /// SHA-256 of the whole body, hex; nil when the source did not say.
        public var sha256: String?
        /// Bytes of the body's text stored beside its bytes (decoded from its content coding, as
        /// the flow log has it); nil when there is none or the bytes are their own text.
        public var textBytes: Int?
        /// True when the stored bytes are their own text (the flow log had them whole as text).
        public var bytesAreText = false
    }

    /// The extent of a stored body of flow `id`; nil when it has none stored.
    public func bodyExtent(id: String, part: StoredBody.Part) throws -> BodyExtent? {
        try read { database in
            if let (framed, bytesAreText) = try Self.framedBody(of: id, part: part, in: database) {
                return BodyExtent(stored: framed.bytes.count, size: framed.size, sha256: framed.sha256,
                                  textBytes: bytesAreText ? nil : framed.text?.utf8.count, bytesAreText: bytesAreText)
            }
            let rows = try database.rows(Self.bodyRow, [.text(id), .integer(Int64(part.rawValue))]) { row in
                (row.int64(0) ?? 0, row.int(1) ?? 0, row.string(2), row.bool(3), row.bool(4), row.string(5))
            }
            guard let (rowid, size, sha256, bytesAreText, hasText, file) = rows.first else {
                // An empty body has no row (`StoredBody.empty`): its bytes are its text.
                return try Self.emptyBody(of: id, part: part, in: database).map { body in
                    BodyExtent(stored: 0, size: 0, sha256: body.sha256, bytesAreText: true)
                }
            }
            let stored = try file.map { try bodyFiles.size(of: $0) }
                ?? SQLiteBlob(database: database, table: "bodies", column: "data", rowid: rowid, readOnly: true).count
            var extent = BodyExtent(stored: stored, size: size, sha256: sha256, bytesAreText: bytesAreText)
            if hasText {
                extent.textBytes = try SQLiteBlob(database: database, table: "bodies", column: "text", rowid: rowid,
                                                  readOnly: true).count
            }
            return extent
        }
    }

    /// Calls `body` with the stored bytes of flow `id`'s body in pieces of at most `chunkSize`,
    /// read on a read-only connection of its own (a slow download does not hold the shared reader).
    /// With `text`, the text stored beside the bytes (`BodyExtent.textBytes`) instead. To stop
    /// early, `body` throws.
    /// - Returns: false when the flow has no stored body (or, with `text`, no stored text).
    /// - Throws: `SessionStoreError` from SQLite, or what `body` throws.
    @discardableResult
    public func streamBody(id: String, part: StoredBody.Part, text: Bool = false, chunkSize: Int = 256 * 1024,
                           _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        let database = try SQLiteDatabase(path: path, readOnly: true)
        // Read once, in order: a small page cache and no mapping keep the pieces out of the RSS.
        try database.execute("PRAGMA mmap_size = 0")
        try database.setCacheSize(bytes: 256 * 1024)
        // One read transaction: the pieces come from one snapshot, whatever the writer does meanwhile.
        try database.execute("BEGIN")
        defer { try? database.execute("COMMIT") }
        try RecordDecoder.register(on: database)
        if let (framed, bytesAreText) = try Self.framedBody(of: id, part: part, in: database) {
            // A small body kept in its flow's frame: whole, in pieces all the same.
            if text && (bytesAreText || framed.text == nil) { return false }
            let piece = text ? Array(framed.text!.utf8) : framed.bytes
            try piece.withUnsafeBytes { whole in
                for start in stride(from: 0, to: whole.count, by: max(1, chunkSize)) {
                    try body(UnsafeRawBufferPointer(rebasing: whole[start..<min(start + chunkSize, whole.count)]))
                }
            }
            return true
        }
        let rows = try database.rows(Self.bodyRow, [.text(id), .integer(Int64(part.rawValue))]) { row in
            (row.int64(0) ?? 0, row.bool(4), row.string(5))
        }
        guard let (rowid, hasText, file) = rows.first else {
            // An empty body (no row) has no pieces, and no text beside its bytes.
            return try !text && Self.emptyBody(of: id, part: part, in: database) != nil
        }
        guard hasText || !text else { return false }
        if !text, let file {
            try bodyFiles.chunks(of: file, chunkSize: chunkSize, body)
            return true
        }
        let blob = try SQLiteBlob(database: database, table: "bodies", column: text ? "text" : "data", rowid: rowid,
                                  readOnly: true)
        var buffer = [UInt8](repeating: 0, count: max(1, min(chunkSize, blob.count)))
        var offset = 0
        while offset < blob.count {
            let count = min(buffer.count, blob.count - offset)
            try buffer.withUnsafeMutableBytes {
                try blob.read(into: UnsafeMutableRawBufferPointer(rebasing: $0.prefix(count)), at: offset)
            }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            offset += count
        }
        return true
    }

    private static let bodyRow = """
        SELECT b.rowid, b.size, b.sha256, typeof(b.data) = 'text', b.text IS NOT NULL, b.file FROM bodies b
        JOIN flows f ON f.seq = b.seq WHERE f.id = ? AND b.part = ?
        """
}
