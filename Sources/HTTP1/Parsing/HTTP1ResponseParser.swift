/// Parses HTTP/1.1 responses from bytes, sans-IO: feed what the socket read, then pull events.
///
/// Whether a response has a body depends on the request it answers (HEAD, CONNECT), so call
/// `expectResponse(toMethod:)` for every request sent, in order; pipelined requests queue up.
/// - Interim 1xx responses (100, 103, …) yield only `.head`; the final response follows.
/// - 101 Switching Protocols and a 2xx answer to CONNECT yield `.head` and `.end`, then HTTP is
///   over: `next()` returns nil and `takeRemainingBytes()` hands over what followed.
/// - 204, 304 and answers to HEAD have no body; a response with neither Content-Length nor
///   chunked framing runs until `finish()`.
public struct HTTP1ResponseParser: Sendable {
    private var decoder: HTTP1MessageDecoder<ResponseRole>

    /// Creates a parser enforcing `limits`. Every error it throws has status 502.
    public init(limits: HTTP1Limits = .default) {
        decoder = HTTP1MessageDecoder(role: ResponseRole(), limits: limits)
    }

    /// Records that a request with `method` was sent, so the next unanswered response answers it.
    public mutating func expectResponse(toMethod method: String) {
        decoder.role.pendingMethods.append(method)
    }

    /// Appends bytes received from the server.
    public mutating func feed(_ bytes: some Collection<UInt8>) {
        decoder.feed(bytes)
    }

    /// Appends bytes received, without copying them when nothing else is buffered: a body
    /// that arrives a whole read at a time comes back out of `next()` as the same array.
    public mutating func feed(_ bytes: [UInt8]) {
        decoder.feed(bytes)
    }

    /// The next event from the bytes fed so far, or nil when more bytes are needed.
    ///
    /// - Throws: `HTTP1ParseError` with status 502; `.unexpectedResponse` when a response
    ///   arrives with no request waiting. The same error on every later call.
    public mutating func next() throws(HTTP1ParseError) -> HTTP1ResponseEvent? {
        try decoder.next()
    }

    /// Signals that the server closed the connection; call it (like `next()`) until it returns nil.
    ///
    /// Ends a close-delimited body with `.end`.
    /// - Throws: `.truncated` ("connection closed before the message was complete") when a
    ///   response had begun but not ended.
    public mutating func finish() throws(HTTP1ParseError) -> HTTP1ResponseEvent? {
        try decoder.finish()
    }

    /// Whether the connection stopped speaking HTTP (after 101 or a 2xx answer to CONNECT).
    public var isTunnel: Bool { decoder.isTunnel }

    /// Removes and returns the bytes fed but not parsed, e.g. tunnel bytes after CONNECT 200.
    public mutating func takeRemainingBytes() -> [UInt8] {
        decoder.takeRemainingBytes()
    }
}

/// The response side: status lines, the queue of request methods, and framing by RFC 9112 §6.3.
struct ResponseRole: HTTP1MessageRole {
    /// Methods of requests sent and not yet answered by a final response, oldest first.
    var pendingMethods: [String] = []

    static var side: MessageSide { .response }

    static func parseLine(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> StartLine.Status {
        try StartLine.parseStatus(bytes)
    }

    mutating func makeHead(
        _ line: StartLine.Status, headers: HTTPHeaders
    ) throws(HTTP1ParseError) -> (HTTPResponseHead, MessageFraming?) {
        guard let method = pendingMethods.first else {
            throw HTTP1ParseError(
                .unexpectedResponse, "response received with no request waiting for it", side: .response)
        }
        let head = HTTPResponseHead(version: line.version, status: line.status, reason: line.reason, headers: headers)
        // An interim response leaves its request waiting for the final one.
        if head.isInterim { return (head, nil) }
        pendingMethods.removeFirst()
        let message = MessageFraming.Message.response(status: line.status, requestMethod: method)
        return (head, try MessageFraming.of(message, version: line.version, headers: headers))
    }
}
