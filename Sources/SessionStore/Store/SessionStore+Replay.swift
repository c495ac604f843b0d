/// Which flows are replays: the flow log's `replay_of`, read from the stored records.
extension SessionStore {
    /// For each of `ids` that is a replay, the id of the flow it replays. Ids without a finished
    /// record, or that are no replay, are absent from the result.
    public func replayOrigins(ids: [String]) throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        var result: [String: String] = [:]
        // SQLite allows 32,766 parameters; pages and event batches are far smaller, but stay safe.
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let pairs = try read { database in
                try database.rows("""
                    SELECT id, json_extract(json, '$.replay_of') FROM
                        (SELECT f.id, stored_text(coalesce(f.record, r.json)) AS json FROM flows f
                         LEFT JOIN flow_records r ON r.seq = f.seq WHERE f.id IN (\(marks)))
                    WHERE instr(json, '"replay_of"') > 0
                    """, chunk.map { .text($0) }) { ($0.string(0), $0.string(1)) }
            }
            for case let (id?, origin?) in pairs { result[id] = origin }
        }
        return result
    }
}
