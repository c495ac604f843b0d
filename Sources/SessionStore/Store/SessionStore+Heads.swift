/// A message's header fields read from `flow_heads` (what `~h` searches), without the flow's
/// record: a record can carry megabytes of body text, and the body route needs only two headers.
extension SessionStore {
    /// The request's or response's header fields of flow `id`, in order; nil when the store has no
    /// head row for it, [] when the message has no headers (or no response yet).
    public func headerFields(id: String, part: StoredBody.Part) throws -> [(name: String, value: String)]? {
        let column = part == .request ? "h.request_headers" : "h.response_headers"
        let rows = try read { database in
            try database.rows("SELECT stored_text(\(column)) FROM flow_heads h JOIN flows f ON f.seq = h.seq WHERE f.id = ?",
                              [.text(id)]) { $0.string(0) }
        }
        guard let text = rows.first else { return nil }
        // One `name: value` line per field (FlowRecord.headerText); values hold no line breaks.
        return (text ?? "").split(separator: "\n", omittingEmptySubsequences: true).map { line in
            guard let colon = line.firstIndex(of: ":") else { return (String(line), "") }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            return (String(line[..<colon]), String(value))
        }
    }
}
