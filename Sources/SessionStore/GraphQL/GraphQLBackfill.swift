/// Names the GraphQL calls of a session written before the store kept them (schema version 11,
/// `flows.graphql`): run once, by the migration that adds the columns, over the finished flows
/// that could be one (a POST of JSON or GraphQL, a GET with `query=` or `extensions=`), each read
/// as the writer reads a new flow (`GraphQLCall.detect`).
enum GraphQLBackfill {
    /// Fills `graphql` and `graphql_errors` of the rows of `database` that are GraphQL calls.
    /// The bodies are read from the frames and `bodies` rows (a body spooled to a file beside the
    /// session is left out: a GraphQL request that large is no summary's business).
    static func run(_ database: SQLiteDatabase) throws {
        try RecordDecoder.register(on: database)
        let candidates = try database.rows("""
            SELECT seq, method, url, request_content_type, content_type,
                coalesce((SELECT coalesce(text, data) FROM bodies b WHERE b.seq = f.seq AND b.part = 0),
                         stored_body(f.record, 0)),
                coalesce((SELECT coalesce(text, data) FROM bodies b WHERE b.seq = f.seq AND b.part = 1),
                         stored_body(f.record, 1))
            FROM flows f
            WHERE f.phase = \(FlowPhase.finished.rawValue) AND ((f.method = 'POST' AND
                (f.request_content_type LIKE '%json%' OR f.request_content_type LIKE '%graphql%'))
                OR (f.method = 'GET' AND (f.url LIKE '%query=%' OR f.url LIKE '%extensions=%')))
            """) { row -> (Int64, GraphQLCall?) in
            let call = GraphQLCall.detect(method: row.string(1), url: row.string(2), requestContentType: row.string(3),
                                          requestBody: row.bytes(5).map { StoredBody(bytes: $0) },
                                          responseContentType: row.string(4),
                                          responseBody: row.bytes(6).map { StoredBody(bytes: $0) })
            return (row.int64(0) ?? 0, call)
        }
        for case let (sequence, call?) in candidates {
            try database.statement("UPDATE flows SET graphql = ?, graphql_errors = ? WHERE seq = ?")
                .run([.text(call.storedOperations), .int(call.errors), .integer(sequence)])
        }
    }
}
