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
        // The request first; the response only for the calls it shows (most JSON POSTs are none).
        let requests = try database.rows("""
            SELECT seq, method, url, request_content_type, content_type,
                coalesce((SELECT coalesce(text, data) FROM bodies b WHERE b.seq = f.seq AND b.part = 0),
                         stored_body(f.record, 0))
            FROM flows f
            WHERE f.phase = \(FlowPhase.finished.rawValue) AND ((f.method = 'POST' AND
                (f.request_content_type LIKE '%json%' OR f.request_content_type LIKE '%graphql%'))
                OR (f.method = 'GET' AND (f.url LIKE '%query=%' OR f.url LIKE '%extensions=%')))
            """) { row -> (Int64, String?, String?, String?, String?, [UInt8]?) in
            (row.int64(0) ?? 0, row.string(1), row.string(2), row.string(3), row.string(4), row.bytes(5))
        }
        for (sequence, method, url, requestType, responseType, requestBody) in requests {
            let request = requestBody.map { StoredBody(bytes: $0) }
            // Read without the response first: most candidates are no GraphQL call.
            guard GraphQLCall.detect(method: method, url: url, requestContentType: requestType, requestBody: request,
                                     responseContentType: nil, responseBody: nil) != nil else { continue }
            let response = try database.rows("""
                SELECT coalesce((SELECT coalesce(text, data) FROM bodies b WHERE b.seq = f.seq AND b.part = 1),
                                stored_body(f.record, 1))
                FROM flows f WHERE f.seq = ?
                """, [.integer(sequence)]) { $0.bytes(0) }.first ?? nil
            guard let call = GraphQLCall.detect(method: method, url: url, requestContentType: requestType,
                                                requestBody: request, responseContentType: responseType,
                                                responseBody: response.map { StoredBody(bytes: $0) }) else { continue }
            try database.statement("UPDATE flows SET graphql = ?, graphql_errors = ? WHERE seq = ?")
                .run([.text(call.storedOperations), .int(call.errors), .integer(sequence)])
        }
    }
}
