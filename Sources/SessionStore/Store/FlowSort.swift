/// A list sorted by a column rather than by arrival (the web UI's column headers, `sort=` in
/// `GET /api/flows`). Flows without a value (a pending flow's status, size or duration) come
/// last either way; ties go newest first.
public struct FlowSort: Sendable, Equatable {
    public enum Column: String, Sendable, CaseIterable {
        case time, method, host, path, status, type, size, duration, client

        /// The stored value sorted on, and whose value a cursor's flow is read by, its columns
        /// prefixed by `table` (`"f."` over `flows f`, `""` over `flows` unqualified).
        func value(in table: String) -> String {
            switch self {
            case .time: table + "seq"
            case .method: table + "method"
            case .host: table + "host"
            case .path: table + "url"
            case .status: table + "status"
            case .type: table + "content_type"
            case .size: table + "response_size"
            case .duration: table + "duration_ms"
            // What the list's Client cell shows: the process's name, else the client's address.
            case .client: "coalesce(nullif(\(table)client_process, ''), nullif(\(table)client, ''))"
            }
        }

        /// `value` over `flows f`.
        private var qualified: String { value(in: "f.") }

        /// The SQL expression sorted on (of `flows f`; hosts and clients without regard to case).
        var expression: String { qualified + (self == .host || self == .client ? " COLLATE NOCASE" : "") }

        /// The value, when its NULL means "no value yet" or none (`seq` and `host` are never NULL).
        var nullable: String? { self == .time || self == .host ? nil : qualified }
    }

    public var column: Column
    public var descending: Bool

    public init(column: Column, descending: Bool) {
        self.column = column
        self.descending = descending
    }

    /// Parses the API's `sort=` text: a column name, `-` before it for descending (`-size`).
    public init?(_ text: String) {
        let descending = text.hasPrefix("-")
        guard let column = Column(rawValue: descending ? String(text.dropFirst()) : text) else { return nil }
        self.init(column: column, descending: descending)
    }

    /// The API's spelling.
    public var description: String { (descending ? "-" : "") + column.rawValue }

    /// The condition for the flows after one whose value is `value` and whose `seq` is `sequence`,
    /// in `orderBy`'s order, with its bindings.
    func after(value: SQLValue, sequence: Int64) -> (sql: String, bindings: [SQLValue]) {
        let expression = column.expression
        guard column != .time else { return ("f.seq \(descending ? "<" : ">") ?", [.integer(sequence)]) }
        let beyond = descending ? "<" : ">"
        guard value != .null else {
            // Among the flows without a value, newest first.
            return ("\(column.nullable ?? expression) IS NULL AND f.seq < ?", [.integer(sequence)])
        }
        var sql = "\(expression) \(beyond) ? OR (\(expression) = ? AND f.seq < ?)"
        if let nullable = column.nullable { sql += " OR \(nullable) IS NULL" }
        return (sql, [value, value, .integer(sequence)])
    }

    /// The `ORDER BY` terms: values missing last, the column, then newest first.
    var orderBy: String {
        var terms: [String] = []
        if let nullable = column.nullable { terms.append("(\(nullable) IS NULL)") }
        terms.append("\(column.expression) \(descending ? "DESC" : "ASC")")
        if column != .time { terms.append("f.seq DESC") }
        return terms.joined(separator: ", ")
    }
}
