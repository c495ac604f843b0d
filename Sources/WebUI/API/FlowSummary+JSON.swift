import SessionStore

extension FlowSummary {
    /// The API's summary object (docs/web-ui.md): every key present, `null` when unknown; `mark`,
    /// `comment`, `graphql` and `mapped` only when the flow has them.
    func write(to json: inout JSONText, replayOf: String?) {
        json.raw("{\"id\":")
        json.string(id)
        json.raw(",\"seq\":")
        json.raw(String(sequence))
        json.raw(",\"phase\":")
        json.string(phase.name)
        json.raw(",\"started\":")
        json.string(started)
        json.raw(",\"method\":")
        json.string(method)
        json.raw(",\"url\":")
        json.string(url)
        json.raw(",\"host\":")
        json.string(host)
        json.raw(",\"status\":")
        json.number(status)
        json.raw(",\"http_version\":")
        json.string(httpVersion)
        json.raw(",\"mode\":")
        json.string(mode)
        json.raw(",\"error_kind\":")
        json.string(errorKind)
        json.raw(",\"content_type\":")
        json.string(contentType)
        json.raw(",\"request_content_type\":")
        json.string(requestContentType)
        json.raw(",\"request_size\":")
        json.number(requestSize)
        json.raw(",\"response_size\":")
        json.number(responseSize)
        json.raw(",\"duration_ms\":")
        json.number(durationMs)
        json.raw(",\"persona\":")
        json.string(persona)
        json.raw(",\"signer_email\":")
        json.string(signerEmail)
        json.raw(",\"signer_serial\":")
        json.string(signerSerial)
        json.raw(",\"verdict\":")
        json.string(verdict)
        json.raw(",\"is_websocket\":")
        json.bool(isWebSocket)
        json.raw(",\"is_tunnel\":")
        json.bool(isTunnel)
        json.raw(",\"bodies_dropped\":")
        json.bool(bodiesDropped)
        json.raw(",\"grpc_status\":")
        json.number(grpcStatus)
        json.raw(",\"replay_of\":")
        json.string(replayOf)
        json.raw(",\"port\":")
        json.number(port)
        json.raw(",\"client\":")
        json.string(client)
        json.raw(",\"client_process\":")
        json.string(clientProcess)
        json.raw(",\"client_exe\":")
        json.string(clientExecutable)
        json.raw(",\"client_pid\":")
        json.number(clientPID)
        json.raw(",\"informational\":[")
        json.raw(informational.map(String.init).joined(separator: ","))
        json.raw("]")
        // Only when set: a list of thousands of unmarked flows stays as it was.
        if let mark {
            json.raw(",\"mark\":")
            json.string(mark.rawValue)
        }
        if let comment {
            json.raw(",\"comment\":")
            json.string(comment)
        }
        if let graphQL {
            json.raw(",\"graphql\":")
            graphQL.write(to: &json)
        }
        if let mapped {
            json.raw(",\"mapped\":")
            json.string(mapped)
        }
        json.raw("}")
    }

    /// A JSON array of summaries, each with its `replay_of` from `origins`.
    static func jsonArray(_ summaries: [FlowSummary], origins: [String: String]) -> String {
        var json = JSONText(capacity: summaries.count * 420 + 2)
        json.raw("[")
        for (index, summary) in summaries.enumerated() {
            if index > 0 { json.raw(",") }
            summary.write(to: &json, replayOf: origins[summary.id])
        }
        json.raw("]")
        return json.text
    }
}

extension GraphQLCall {
    /// `{"operations":[{"type":"query","name":"GetUser","persisted":false}],"errors":1}`: `type`
    /// null when the request sent no document (a persisted query by its hash), `name` null for an
    /// anonymous operation, `errors` null when there is no JSON response to count them in.
    func write(to json: inout JSONText) {
        json.raw("{\"operations\":[")
        for (index, operation) in operations.enumerated() {
            json.raw(index == 0 ? "{\"type\":" : ",{\"type\":")
            json.string(operation.kind?.rawValue)
            json.raw(",\"name\":")
            json.string(operation.name)
            json.raw(",\"persisted\":")
            json.bool(operation.persisted)
            json.raw("}")
        }
        json.raw("],\"errors\":")
        json.number(errors)
        json.raw("}")
    }
}

extension FlowPhase {
    /// `started`, `responded`, `finished`.
    var name: String {
        switch self {
        case .started: return "started"
        case .responded: return "responded"
        case .finished: return "finished"
        }
    }
}
