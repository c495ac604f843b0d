/// Queries: pages of summaries under a filter, one flow's record, a body, counts.
extension SessionStore {
    /// The largest page `flows(filter:limit:cursor:order:)` returns.
    public static let maximumPageSize = 10_000

    /// A page of flows matching `filter`, with the total that match.
    ///
    /// The filter runs in SQLite once per call (over bodies too, for `~b`): the matching sequence
    /// numbers are collected, counted and cut to the page, then the page's summaries are read by key.
    /// - Parameters:
    ///   - filter: nil for every flow.
    ///   - limit: flows per page, 1…`maximumPageSize`.
    ///   - cursor: the previous page's `nextCursor`; nil for the first page.
    ///   - order: `.newestFirst` (default) or `.oldestFirst`.
    ///   - sort: a column to sort by instead of arrival (`order` is then not used); the cursor
    ///     then names the last flow of the previous page, and the next page starts after it
    ///     wherever it is now (a flow whose value changed meanwhile may show twice or be passed).
    public func flows(filter: FilterExpression? = nil, limit: Int = 100, cursor: FlowCursor? = nil,
                      order: FlowOrder = .newestFirst, sort: FlowSort? = nil) throws -> FlowPage {
        let limit = min(max(limit, 1), Self.maximumPageSize)
        let condition = filter?.sql ?? .everything
        let direction = order == .newestFirst ? "DESC" : "ASC"
        if let sort {
            return try sortedPage(condition: condition, limit: limit, cursor: cursor, sort: sort)
        }
        if filter == nil {
            return try unfilteredPage(limit: limit, cursor: cursor, order: order)
        }
        return try read { database in
            // One read transaction: the page and the total come from the same snapshot.
            try database.execute("BEGIN")
            defer { try? database.execute("COMMIT") }
            let sequences = try database.rows("SELECT f.seq FROM flows f WHERE \(condition.sql) ORDER BY f.seq \(direction)",
                                              condition.bindings) { $0.int64(0) ?? 0 }
            var start = 0
            if let cursor {
                start = Self.firstIndex(in: sequences, after: cursor.sequence, order: order)
            }
            var page = try Self.page(of: sequences, from: start, limit: limit, in: database)
            page.newestSequence = try Self.newestSequence(in: database)
            return page
        }
    }

    /// The page of `sequences` (all the flows that match, in the list's order) from `start`: its
    /// summaries read by key, the total, and the cursor after it.
    private static func page(of sequences: [Int64], from start: Int, limit: Int, in database: SQLiteDatabase) throws
        -> FlowPage {
        let page = sequences[start..<min(start + limit, sequences.count)]
        var summaries: [FlowSummary] = []
        summaries.reserveCapacity(page.count)
        for sequence in page {
            if let summary = try database.rows(summaryBySequence, [.integer(sequence)], summary).first {
                summaries.append(summary)
            }
        }
        let next = start + limit < sequences.count ? page.last.map(FlowCursor.init(sequence:)) : nil
        return FlowPage(flows: summaries, total: sequences.count, nextCursor: next)
    }

    /// A page in `sort`'s order, from the flow after the cursor's (by its value now): SQLite keeps
    /// the page's rows while it scans (`ORDER BY … LIMIT`, a top-N sort, not a sort of every
    /// matching flow), and counts the matches in the same snapshot.
    private func sortedPage(condition: FilterSQL, limit: Int, cursor: FlowCursor?, sort: FlowSort) throws -> FlowPage {
        try read { database in
            try database.execute("BEGIN")
            defer { try? database.execute("COMMIT") }
            let total = Int(try database.integer("SELECT count(*) FROM flows f WHERE \(condition.sql)", condition.bindings))
            var bindings = condition.bindings
            var after = ""
            if let cursor {
                // The cursor's flow's value; a flow that is gone (cleared) starts the list over.
                let values = try database.rows("SELECT \(sort.column.value(in: "")) FROM flows WHERE seq = ?",
                                               [.integer(cursor.sequence)]) { $0.value(0) }
                if let value = values.first {
                    let (sql, values) = sort.after(value: value, sequence: cursor.sequence)
                    after = " AND (\(sql))"
                    bindings += values
                }
            }
            bindings.append(.integer(Int64(limit + 1)))
            let rows = try database.rows("""
                SELECT \(Self.summaryColumns) FROM flows f
                WHERE \(condition.sql)\(after) ORDER BY \(sort.orderBy) LIMIT ?
                """, bindings, Self.summary)
            let flows = Array(rows.prefix(limit))
            let next = rows.count > limit ? flows.last.map { FlowCursor(sequence: $0.sequence) } : nil
            return FlowPage(flows: flows, total: total, nextCursor: next,
                            newestSequence: try Self.newestSequence(in: database))
        }
    }

    /// The largest `seq` in the store (0 when it is empty): SQLite reads it off the rowid's B-tree.
    private static func newestSequence(in database: SQLiteDatabase) throws -> Int64 {
        try database.integer("SELECT coalesce(max(seq), 0) FROM flows")
    }

    /// A page of every flow: the count from SQLite's count, the page straight from the primary key.
    private func unfilteredPage(limit: Int, cursor: FlowCursor?, order: FlowOrder) throws -> FlowPage {
        let newest = order == .newestFirst
        let sql = "SELECT \(Self.summaryColumns) FROM flows f WHERE seq \(newest ? "<" : ">") ? ORDER BY seq "
            + "\(newest ? "DESC" : "ASC") LIMIT ?"
        let after = cursor?.sequence ?? (newest ? Int64.max : 0)
        return try read { database in
            try database.execute("BEGIN")
            defer { try? database.execute("COMMIT") }
            let total = Int(try database.integer("SELECT count(*) FROM flows"))
            let rows = try database.rows(sql, [.integer(after), .integer(Int64(limit + 1))], Self.summary)
            let flows = Array(rows.prefix(limit))
            let next = rows.count > limit ? flows.last.map { FlowCursor(sequence: $0.sequence) } : nil
            return FlowPage(flows: flows, total: total, nextCursor: next,
                            newestSequence: try Self.newestSequence(in: database))
        }
    }

    /// The index of the first sequence number past `cursor` in `sequences` (sorted in `order`).
    private static func firstIndex(in sequences: [Int64], after cursor: Int64, order: FlowOrder) -> Int {
        var low = 0
        var high = sequences.count
        while low < high {
            let middle = (low + high) / 2
            let isPast = order == .newestFirst ? sequences[middle] < cursor : sequences[middle] > cursor
            if isPast { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The number of flows matching `filter` (all flows when nil).
    public func count(filter: FilterExpression? = nil) throws -> Int {
        let condition = filter?.sql ?? .everything
        return try read { Int(try $0.integer("SELECT count(*) FROM flows f WHERE \(condition.sql)", condition.bindings)) }
    }

    /// The summary of flow `id`, nil when there is none.
    public func summary(id: String) throws -> FlowSummary? {
        try read { try $0.rows(Self.summaryByID, [.text(id)], Self.summary).first }
    }

    /// The flow's record as the flow log wrote it (JSON text); nil until it has finished.
    public func flowJSON(id: String) throws -> String? {
        try read { database in
            // A finished flow's record is in a frame (`flows.record`), or kept alone in `flow_records`,
            // where a running flow's record so far also is (`partialJSON`).
            try database.rows("""
                SELECT stored_text(coalesce(f.record, r.json)) FROM flows f LEFT JOIN flow_records r ON r.seq = f.seq
                WHERE f.id = ? AND (f.phase = \(FlowPhase.finished.rawValue) OR f.record IS NOT NULL)
                """, [.text(id)]) { $0.string(0) }.first ?? nil
        }
    }

    /// The record so far of flow `id` while it runs (`progressed`); nil when it has none or has
    /// finished (then `flowJSON(id:)` has its record).
    public func partialJSON(id: String) throws -> String? {
        try read { database in
            try database.rows("""
                SELECT stored_text(r.json) FROM flows f JOIN flow_records r ON r.seq = f.seq
                WHERE f.id = ? AND f.phase < \(FlowPhase.finished.rawValue) AND f.record IS NULL
                """, [.text(id)]) { $0.string(0) }.first ?? nil
        }
    }

    /// A stored body of flow `id`; nil when it has none stored (none sent, not finished, or dropped).
    public func body(id: String, part: StoredBody.Part) throws -> StoredBody? {
        try read { database in
            if let framed = try Self.framedBody(of: id, part: part, in: database) { return framed.body }
            let found = try database.rows("""
                SELECT b.size, b.sha256, b.data, b.text, typeof(b.data) = 'text', b.file FROM bodies b
                JOIN flows f ON f.seq = b.seq WHERE f.id = ? AND b.part = ?
                """, [.text(id), .integer(Int64(part.rawValue))]) { row in
                let bytes = row.bytes(2) ?? []
                // A body stored as TEXT is its own text (see StoreWriter.store).
                let text = row.bool(4) ? row.string(2) : row.string(3)
                return (StoredBody(bytes: bytes, size: row.int(0) ?? bytes.count, sha256: row.string(1), text: text),
                        row.string(5))
            }.first
            guard case (var body, let file)? = found else { return try Self.emptyBody(of: id, part: part, in: database) }
            if let file { body.bytes = try bodyFiles.read(file) }
            return body
        }
    }

    /// Flow `id`'s body when it is kept in the flow's frame (`FramedBody`), and whether its bytes
    /// are its text; nil when it is not.
    /// - Throws: `SessionStoreError` when the frame or the section cannot be read.
    static func framedBody(of id: String, part: StoredBody.Part, in database: SQLiteDatabase) throws
        -> (body: StoredBody, bytesAreText: Bool)? {
        let sections = try database.rows("SELECT stored_body_section(record, ?) FROM flows WHERE id = ?",
                                         [.integer(Int64(part.rawValue)), .text(id)]) { $0.bytes(0) }
        guard case let section?? = sections.first else { return nil }
        guard let body = section.withUnsafeBytes({ FramedBody.decode($0) }) else {
            throw SessionStoreError(.sqlite, "flow record cannot be read: a damaged body section")
        }
        return body
    }

    /// `StoredBody.empty` when flow `id` is finished and its `part` was empty (size 0): the
    /// writer stores no row for an empty body. Nil otherwise (no body stored).
    static func emptyBody(of id: String, part: StoredBody.Part, in database: SQLiteDatabase) throws -> StoredBody? {
        let column = part == .request ? "request_size" : "response_size"
        let sizes = try database.rows("SELECT \(column) FROM flows WHERE id = ? AND phase = \(FlowPhase.finished.rawValue)",
                                      [.text(id)]) { $0.int(0) }
        return sizes.first == 0 ? StoredBody.empty : nil
    }

    private static let summaryColumns = """
        seq, id, phase, started, method, url, host, status, http_version, mode, error_kind, content_type,
        request_content_type, request_size, response_size, duration_ms, persona, signer_email, signer_serial, verdict,
        websocket, tunnel, bodies_dropped, grpc_status, port, informational,
        (SELECT mark FROM flow_notes n WHERE n.seq = f.seq), (SELECT comment FROM flow_notes n WHERE n.seq = f.seq),
        graphql, graphql_errors, mapped, client, replay_of, client_process, client_exe, client_pid
        """
    private static let summaryBySequence = "SELECT \(summaryColumns) FROM flows f WHERE seq = ?"
    private static let summaryByID = "SELECT \(summaryColumns) FROM flows f WHERE id = ?"

    /// A summary from a row of `summaryColumns` (over `flows f`: its note is read by `f.seq`).
    private static func summary(_ row: SQLiteStatement) -> FlowSummary {
        var summary = FlowSummary(
            id: row.string(1) ?? "", started: row.string(3) ?? "", host: row.string(6) ?? "", mode: row.string(9) ?? "",
            method: row.string(4), url: row.string(5), status: row.int(7), httpVersion: row.string(8),
            errorKind: row.string(10), contentType: row.string(11), requestContentType: row.string(12),
            requestSize: row.int(13), responseSize: row.int(14), durationMs: row.double(15), persona: row.string(16),
            signerEmail: row.string(17), signerSerial: row.string(18), verdict: row.string(19),
            isWebSocket: row.bool(20), isTunnel: row.bool(21))
        summary.sequence = row.int64(0) ?? 0
        summary.phase = FlowPhase(rawValue: row.int(2) ?? 0) ?? .started
        summary.bodiesDropped = row.bool(22)
        summary.grpcStatus = row.int(23)
        summary.port = row.int(24)
        summary.informational = (row.string(25) ?? "").split(separator: " ").compactMap { Int($0) }
        summary.mark = row.string(26).flatMap(FlowMark.init(name:))
        summary.comment = row.string(27)
        summary.graphQL = GraphQLCall(stored: row.string(28), errors: row.int(29))
        summary.mapped = row.string(30)
        summary.client = row.string(31)
        summary.replayOf = row.string(32)
        summary.clientProcess = row.string(33)
        summary.clientExecutable = row.string(34)
        summary.clientPID = row.int(35)
        return summary
    }
}
