import Foundation

extension GraphQLCall {
    /// The operations as the `flows.graphql` column keeps them: a JSON array of
    /// `{"type", "name", "persisted"}` objects (`type` and `name` left out when unknown or
    /// anonymous), which the filters read with SQLite's `json_each` (`~graphql REGEX`).
    var storedOperations: String {
        let objects: [[String: Any]] = operations.map { operation in
            var object: [String: Any] = [:]
            if let kind = operation.kind { object["type"] = kind.rawValue }
            if let name = operation.name { object["name"] = name }
            if operation.persisted { object["persisted"] = true }
            return object
        }
        guard let data = try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]) else {
            return "[]"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The call a row's `graphql` and `graphql_errors` columns describe; nil when `stored` is
    /// NULL or not such an array (a damaged file: the flow then lists as any other).
    init?(stored: String?, errors: Int?) {
        guard let stored, let array = try? JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [[String: Any]]
        else { return nil }
        self.init(operations: array.map { object in
            GraphQLOperation(kind: (object["type"] as? String).flatMap(GraphQLOperation.Kind.init(rawValue:)),
                             name: object["name"] as? String, persisted: object["persisted"] as? Bool ?? false)
        }, errors: errors)
    }
}
