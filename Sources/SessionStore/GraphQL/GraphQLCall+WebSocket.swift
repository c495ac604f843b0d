import Foundation

extension GraphQLCall {
    /// The two subprotocols GraphQL subscriptions are carried over a WebSocket with.
    enum WebSocketProtocol: String {
        /// `graphql-transport-ws`, the graphql-ws library's: the client sends `subscribe`, the
        /// server answers with `next`, `error` and `complete`.
        case transport = "graphql-transport-ws"
        /// `graphql-ws`, the older subscriptions-transport-ws library's: the client sends `start`
        /// and `stop`, the server `data`, `error`, `complete` and `ka`.
        case legacy = "graphql-ws"
    }

    /// The GraphQL subprotocol the handshake settled on: the 101 response's
    /// `Sec-WebSocket-Protocol` in `responseHeaders` (`FlowRecord.headerText`'s `name: value`
    /// lines); nil for any other socket, which is then not read at all.
    static func webSocketProtocol(responseHeaders: String?) -> WebSocketProtocol? {
        guard let responseHeaders, contains(responseHeaders, "graphql") else { return nil }
        for line in responseHeaders.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"),
                  line[..<colon].lowercased() == "sec-websocket-protocol" else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            return WebSocketProtocol(rawValue: value)
        }
        return nil
    }

    /// The GraphQL call a WebSocket that speaks `kind` is, read from its record's `websocket`
    /// messages (the flow log's record, `record` its UTF-8): each operation a client `subscribe`
    /// (`start`) asked for, in order, once each however often it was sent again; as errors, the
    /// entries of the `errors` of the server's `next` (`data`) payloads plus one per entry of
    /// each `error` message. A message cut short or not JSON is read past.
    static func detect(webSocket kind: WebSocketProtocol, record: ArraySlice<UInt8>) -> GraphQLCall? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(record)) as? [String: Any],
              let messages = object["websocket"] as? [[String: Any]] else { return nil }
        let start = kind == .transport ? "subscribe" : "start"
        let result = kind == .transport ? "next" : "data"
        var operations: [GraphQLOperation] = []
        var errors = 0
        for message in messages {
            guard message["truncated"] as? Bool != true, let text = message["text"] as? String,
                  text.utf8.first == UInt8(ascii: "{"),
                  let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                  let type = parsed["type"] as? String else { continue }
            if message["direction"] as? String == "client_to_server" {
                guard type == start, let payload = parsed["payload"] as? [String: Any],
                      let operation = operation(payload) else { continue }
                if !operations.contains(operation) { operations.append(operation) }
            } else if type == result {
                errors += ((parsed["payload"] as? [String: Any])?["errors"] as? [Any])?.count ?? 0
            } else if type == "error" {
                // graphql-transport-ws sends a list of errors; subscriptions-transport-ws one error.
                if let list = parsed["payload"] as? [Any] { errors += list.count } else { errors += 1 }
            }
        }
        guard !operations.isEmpty else { return nil }
        return GraphQLCall(operations: operations, errors: errors)
    }

    /// The operation of a `subscribe` or `start` payload (`{query, operationName, variables,
    /// extensions}`, as a request over HTTP).
    private static func operation(_ payload: [String: Any]) -> GraphQLOperation? {
        operation(document: (payload["query"] as? String).map { Array($0.utf8) },
                  operationName: payload["operationName"] as? String,
                  persisted: ((payload["extensions"] as? [String: Any])?["persistedQuery"] as? [String: Any])?["sha256Hash"]
                      is String)
    }
}
