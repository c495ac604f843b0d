import HTTPTypes

// The flow record's request and response parts, built from the neutral heads: one function for
// HTTP/1.1 and HTTP/2 alike, so what a flow shows never depends on which codec read the message.

extension Flow.Request {
    /// The request part of a flow for `request` as it arrived, before its body: the header
    /// fields as pairs (values of `redact`ed names masked), and the pseudo-header fields apart
    /// when the request came over HTTP/2 (never masked).
    /// - Parameters:
    ///   - url: the absolute URL the flow shows.
    ///   - httpVersion: the version of the hop it arrived on (`HTTP/1.1`, `HTTP/2`).
    init(_ request: HTTPRequest, url: String, httpVersion: String, redact: [String]) {
        self.init(method: request.method, url: url, httpVersion: httpVersion,
                  headers: FlowDraft.headerPairs(request.fields, redact: redact), body: nil,
                  pseudoHeaders: request.pseudoHeaderFields.isEmpty
                      ? nil : FlowDraft.headerPairs(request.pseudoHeaderFields, redact: []))
    }
}

extension Flow.Response {
    /// The response part of a flow for `response` as it arrived, before its body: the reason
    /// phrase received or made up (`HTTPResponse.reasonPhrase`), the fields as for a request.
    init(_ response: HTTPResponse, httpVersion: String, redact: [String]) {
        self.init(status: response.status, reason: ObsText.readable(response.reasonPhrase), httpVersion: httpVersion,
                  headers: FlowDraft.headerPairs(response.fields, redact: redact), body: nil,
                  pseudoHeaders: response.pseudoHeaderFields.isEmpty
                      ? nil : FlowDraft.headerPairs(response.pseudoHeaderFields, redact: []))
    }
}

extension FlowDraft {
    /// Fields as the log stores them: ordered `[name, value]` pairs, redacted names masked.
    /// The section's own storage when no name is masked (nearly always): no copy of its fields.
    static func headerPairs(_ fields: HTTPFields, redact: [String]) -> FieldPairs {
        // A value with bytes that are not UTF-8 (`ObsText`) is shown as the Latin-1 letters they
        // most likely are; the bytes themselves went on unchanged.
        guard fields.indices.contains(where: { isMasked(fields.name(at: $0), redact: redact)
                                                || ObsText.mayHoldRawBytes(fields.value(at: $0)) }) else {
            return fields.fieldPairs
        }
        var pairs = FieldPairs()
        pairs.reserveCapacity(fields.count)
        for index in fields.indices { appendPair(fields.name(at: index), fields.value(at: index), redact: redact, to: &pairs) }
        return pairs
    }
}

extension LocalRequest {
    /// The request a local route sees for `request` as it arrived: header fields as sent (HTTP/2:
    /// lower case, without pseudo-header fields), the body still to be read; `client` the address
    /// it came from (`~src` in a rule's filter), `process` the client's process (`~proc`).
    init(_ request: HTTPRequest, url: String, httpVersion: String, client: String, process: Flow.ClientProcess?) {
        self.init(method: request.method, url: url, httpVersion: httpVersion,
                  headers: request.fields.map { ($0.name, $0.value) })
        self.client = client
        self.clientProcess = process
    }

    /// `request` from the client of `flow` (its address and process), as the rules see it.
    init(_ request: HTTPRequest, url: String, httpVersion: String, clientOf flow: Flow) {
        self.init(request, url: url, httpVersion: httpVersion, client: flow.client, process: flow.clientProcess)
    }

    /// `request` from `context`'s client connection, before the exchange has a flow (map rules).
    init(_ request: HTTPRequest, url: String, httpVersion: String, clientOf context: ExchangeContext) {
        self.init(request, url: url, httpVersion: httpVersion, client: context.clientAddress,
                  process: context.connection.clientProcess)
    }
}
