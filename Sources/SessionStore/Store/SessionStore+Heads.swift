/// A message's header fields read from where `~h` searches them (the flow's frame, or
/// `flow_heads`), without the flow's record: a record can carry megabytes of body text, and the
/// body route needs only two headers.
extension SessionStore {
    /// The request's or response's header fields of flow `id`, in order; nil when the store has no
    /// head row for it, [] when the message has no headers (or no response yet).
    public func headerFields(id: String, part: StoredBody.Part) throws -> [(name: String, value: String)]? {
        let column = part == .request ? "h.request_headers" : "h.response_headers"
        let index = part == .request ? 0 : 1
        // A finished flow's heads are in its record's frame (`flows.record`); a running flow's, and
        // those of a flow whose record is kept alone, in `flow_heads`.
        let rows = try read { database in
            try database.rows("""
                SELECT f.record IS NOT NULL, stored_head(f.record, \(index)), h.seq IS NOT NULL, stored_text(\(column))
                FROM flows f LEFT JOIN flow_heads h ON h.seq = f.seq WHERE f.id = ?
                """, [.text(id)]) { row -> String?? in
                if row.bool(0) { return .some(row.string(1)) }
                return row.bool(2) ? .some(row.string(3)) : .none
            }
        }
        guard case let text?? = rows.first else { return nil }
        // One `name: value` line per field (FlowRecord.headerText); values hold no line breaks.
        return (text ?? "").split(separator: "\n", omittingEmptySubsequences: true).map { line in
            guard let colon = line.firstIndex(of: ":") else { return (String(line), "") }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            return (String(line[..<colon]), String(value))
        }
    }
}
