/// A filter compiled to a SQL condition on `flows f`, with the values to bind.
///
/// The SQL text comes only from the grammar; every pattern and name the user typed is a bound
/// parameter. Status and persona-like atoms are plain comparisons (a scan of the narrow `flows`);
/// regular expressions call `regexp()` (`MatchFunctions`). Header and body filters select from
/// their own tables once per query (`f.seq IN (SELECT …)`), never per row.
struct FilterSQL: Equatable {
    var sql: String
    var bindings: [SQLValue]

    /// The condition that keeps every flow.
    static let everything = FilterSQL(sql: "1", bindings: [])
}

extension FilterExpression {
    /// This expression as a SQL condition over the `flows` table aliased `f`.
    var sql: FilterSQL {
        switch self {
        case .all:
            return .everything
        case .not(let inner):
            let compiled = inner.sql
            return FilterSQL(sql: "NOT (\(compiled.sql))", bindings: compiled.bindings)
        case .and:
            return Self.chain(self, "AND")
        case .or:
            return Self.chain(self, "OR")
        case .matches(let field, let pattern):
            return Self.match(field, pattern)
        case .status(let code):
            // IS, not =: never NULL, so `!~c 200` keeps flows with no response.
            return FilterSQL(sql: "f.status IS ?", bindings: [.integer(Int64(code))])
        case .requestWithoutResponse:
            // A connection that carried no request (closed after the handshake, unused) is not one.
            return FilterSQL(sql: "(f.status IS NULL AND f.tunnel = 0 AND f.method IS NOT NULL)", bindings: [])
        case .hasResponse:
            return FilterSQL(sql: "f.status IS NOT NULL", bindings: [])
        case .error:
            return FilterSQL(sql: "f.error_kind IS NOT NULL", bindings: [])
        case .grpc:
            // By content type (a call cut short has no status), or by its status (a Connect unary
            // call's content type is plain `application/proto` or `json`).
            return FilterSQL(sql: "(f.request_content_type LIKE 'application/grpc%' OR f.request_content_type LIKE "
                             + "'application/connect%' OR f.grpc_status IS NOT NULL)", bindings: [])
        case .grpcStatus(let code):
            return FilterSQL(sql: "f.grpc_status IS ?", bindings: [.integer(Int64(code))])
        case .graphQL(nil):
            return FilterSQL(sql: "f.graphql IS NOT NULL", bindings: [])
        case .graphQL(let pattern?):
            // CASE, so that a damaged column (not JSON) matches nothing rather than failing the query.
            return FilterSQL(sql: "(CASE WHEN json_valid(f.graphql) THEN EXISTS (SELECT 1 FROM json_each(f.graphql) o "
                             + "WHERE regexp(?, json_extract(o.value, '$.name'))) ELSE 0 END)",
                             bindings: [.text(pattern)])
        case .graphQLErrors:
            return FilterSQL(sql: "(f.graphql IS NOT NULL AND f.graphql_errors > 0)", bindings: [])
        case .mapped(let kind):
            guard let kind else { return FilterSQL(sql: "f.mapped IS NOT NULL", bindings: []) }
            // `IS`, not `=`: a flow no rule touched is not the kind, so `!~mapped mock` lists it.
            return FilterSQL(sql: "f.mapped IS ?", bindings: [.text(kind)])
        case .replay:
            return FilterSQL(sql: "f.replay_of IS NOT NULL", bindings: [])
        case .serverReplay:
            return FilterSQL(sql: "0", bindings: [])
        case .websocket:
            return FilterSQL(sql: "f.websocket = 1", bindings: [])
        case .asset:
            // mitmproxy's list: JavaScript, CSS, images, fonts.
            return FilterSQL(sql: "regexp(?, f.content_type)",
                             bindings: [.text("^(text/javascript|application/(x-)?javascript|text/css|image/|font/|application/(x-)?font)")])
        case .http:
            return FilterSQL(sql: "f.tunnel = 0", bindings: [])
        case .tcp:
            return FilterSQL(sql: "f.tunnel = 1", bindings: [])
        case .persona(let name):
            return FilterSQL(sql: "(f.persona IS ? COLLATE NOCASE)", bindings: [.text(name)])
        case .signer(let name):
            // The engineer, or the intermediate's serial: a run that took a renewed intermediate
            // mid-run (`SignerWatch`) has flows of one engineer signed by two.
            return FilterSQL(sql: "(f.signer_email IS ? COLLATE NOCASE OR f.signer_serial IS ? COLLATE NOCASE)",
                             bindings: [.text(name), .text(name)])
        case .verdict(let name):
            return FilterSQL(sql: "(f.verdict IS ? COLLATE NOCASE)", bindings: [.text(name)])
        case .marked(let mark):
            // Notes are few (a person wrote each): their table is read once per query, not per flow.
            guard let mark else { return FilterSQL(sql: "f.seq IN (SELECT seq FROM flow_notes WHERE mark IS NOT NULL)",
                                                   bindings: []) }
            return FilterSQL(sql: "f.seq IN (SELECT seq FROM flow_notes WHERE mark = ?)",
                             bindings: [.text(mark.rawValue)])
        case .comment(let pattern):
            return FilterSQL(sql: "f.seq IN (SELECT seq FROM flow_notes WHERE regexp(?, comment))",
                             bindings: [.text(pattern)])
        case .ids(let ids):
            guard !ids.isEmpty else { return FilterSQL(sql: "0", bindings: []) }
            // One bound parameter each (the caller's list is bounded: the pinning window).
            return FilterSQL(sql: "f.id IN (" + Array(repeating: "?", count: ids.count).joined(separator: ",") + ")",
                             bindings: ids.map { .text($0) })
        }
    }

    /// A run of one operator (`a & b & c`, a left-deep tree from the parser) as one flat group,
    /// `(a AND b AND c)`: nested two by two, 100 terms overflowed SQLite's parser stack.
    private static func chain(_ expression: FilterExpression, _ operation: String) -> FilterSQL {
        var operands: [FilterExpression] = []
        var pending = [expression]
        while let next = pending.popLast() {
            switch (next, operation) {
            case (.and(let left, let right), "AND"), (.or(let left, let right), "OR"):
                pending.append(right)
                pending.append(left)
            default:
                operands.append(next)
            }
        }
        let compiled = operands.map(\.sql)
        return FilterSQL(sql: "(" + compiled.map(\.sql).joined(separator: " \(operation) ") + ")",
                         bindings: compiled.flatMap(\.bindings))
    }

    /// A header condition: a finished flow's heads are in its record's frame (`stored_head` of
    /// `flows.record`), a running flow's (and those of a flow whose record is kept alone) in
    /// `flow_heads`.
    /// - Parameter parts: 0 for the request's, 1 for the response's (`StoredBody.Part`).
    private static func heads(_ parts: [Int], _ value: SQLValue) -> FilterSQL {
        let rows = parts.map { "regexp_lines(?, stored_text(\(["request_headers", "response_headers"][$0])))" }
        let framed = parts.map { "regexp_lines(?, stored_head(f.record, \($0)))" }
        return FilterSQL(sql: "(f.seq IN (SELECT seq FROM flow_heads WHERE \(rows.joined(separator: " OR "))) OR "
                         + "\(framed.joined(separator: " OR ")))", bindings: Array(repeating: value, count: parts.count * 2))
    }

    /// A body condition: a small body of a finished flow is in its record's frame (`stored_body`
    /// of `flows.record`), any other in `bodies` (its text when it has one, else its bytes). A
    /// WebSocket's messages are its bodies too, as in mitmproxy: those the client sent for the
    /// request side (`~bq`), the server's for the response side (`~bs`), each searched alone
    /// (its text, or a binary message's bytes), from the record's `websocket` list (the record is in
    /// a frame, `flows.record`, or kept alone in `flow_records`, as a long-lived socket's is).
    private static func bodies(_ parts: [Int], _ value: SQLValue) -> FilterSQL {
        let part = parts.count == 1 ? "part = \(parts[0]) AND " : ""
        let framed = parts.map { "regexp(?, stored_body(f.record, \($0)))" }.joined(separator: " OR ")
        let direction = parts.count == 1
            ? "json_extract(m.value, '$.direction') = '\(parts[0] == 0 ? "client_to_server" : "server_to_client")' AND " : ""
        let record = "stored_text(coalesce(f.record, (SELECT json FROM flow_records r WHERE r.seq = f.seq)))"
        let messages = "(f.websocket = 1 AND EXISTS (SELECT 1 FROM json_each(\(record), '$.websocket') m WHERE "
            + "\(direction)regexp(?, coalesce(json_extract(m.value, '$.text'), base64_blob(json_extract(m.value, '$.base64'))))))"
        return FilterSQL(sql: "(f.seq IN (SELECT seq FROM bodies WHERE \(part)regexp(?, coalesce(text, body_file(file), data)))"
                         + " OR \(framed) OR \(messages))", bindings: Array(repeating: value, count: parts.count + 2))
    }

    private static func match(_ field: FilterField, _ pattern: String) -> FilterSQL {
        let value = SQLValue.text(pattern)
        switch field {
        case .domain: return FilterSQL(sql: "regexp(?, f.host)", bindings: [value])
        case .url: return FilterSQL(sql: "regexp(?, f.url)", bindings: [value])
        case .method: return FilterSQL(sql: "regexp(?, f.method)", bindings: [value])
        case .contentType:
            return FilterSQL(sql: "(regexp(?, f.request_content_type) OR regexp(?, f.content_type))",
                             bindings: [value, value])
        case .requestContentType: return FilterSQL(sql: "regexp(?, f.request_content_type)", bindings: [value])
        case .responseContentType: return FilterSQL(sql: "regexp(?, f.content_type)", bindings: [value])
        case .source:
            // A flow stored before `flows.client` (schema 13) has its client only in its record.
            return FilterSQL(sql: "regexp(?, coalesce(f.client, json_extract(stored_text(coalesce(f.record, "
                             + "(SELECT json FROM flow_records r WHERE r.seq = f.seq))), '$.client')))", bindings: [value])
        case .destination:
            // The host as the flow log's `server` has it (an IPv6 literal bare), its port after it.
            return FilterSQL(sql: "regexp(?, iif(instr(f.host, ':') > 0, '[' || f.host || ']', f.host) "
                             + "|| coalesce(':' || f.port, ''))", bindings: [value])
        case .process:
            return FilterSQL(sql: "(regexp(?, f.client_process) OR regexp(?, f.client_exe))", bindings: [value, value])
        case .header:
            return heads([0, 1], value)
        case .requestHeader:
            return heads([0], value)
        case .responseHeader:
            return heads([1], value)
        case .body:
            return bodies([0, 1], value)
        case .requestBody:
            return bodies([0], value)
        case .responseBody:
            return bodies([1], value)
        }
    }
}
