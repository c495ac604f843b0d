/// Which of a few given flows match a filter: what a live list needs for the flows a batch of
/// changes names, without running the filter over the whole session.
extension SessionStore {
    /// The ids among `ids` whose flows match `filter` now.
    ///
    /// The filter's header and body conditions select from `flow_heads` and `bodies` as a whole
    /// (`f.seq IN (SELECT …)`, which SQLite materialises once per statement: a scan of every body
    /// for `~b`). Here, common table expressions of the same names shadow those tables with only
    /// the rows of the given flows, so the cost follows the number of ids, not the session's size.
    /// - Parameters:
    ///   - ids: flow ids (a live batch); unknown ids are simply absent from the result.
    ///   - filter: the expression the list shows.
    public func matchingIDs(_ ids: [String], filter: FilterExpression) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let condition = filter.sql
        var result: Set<String> = []
        // Three copies of the id list are bound per statement; SQLite allows 32,766 parameters.
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)].map { SQLValue.text($0) }
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let sql = """
                WITH flow_heads AS (SELECT * FROM main.flow_heads WHERE seq IN
                                    (SELECT seq FROM main.flows WHERE id IN (\(marks)))),
                     bodies AS (SELECT * FROM main.bodies WHERE seq IN
                                (SELECT seq FROM main.flows WHERE id IN (\(marks))))
                SELECT f.id FROM main.flows f WHERE f.id IN (\(marks)) AND (\(condition.sql))
                """
            let found = try read { database in
                try database.rows(sql, chunk + chunk + chunk + condition.bindings) { $0.string(0) }
            }
            for case let id? in found { result.insert(id) }
        }
        return result
    }
}
