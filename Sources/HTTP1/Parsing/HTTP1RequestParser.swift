/// Parses HTTP/1.1 requests from bytes, sans-IO: feed what the socket read, then pull events.
///
/// ```swift
/// var parser = HTTP1RequestParser()
/// parser.feed(bytesFromSocket)
/// while let event = try parser.next() { ... }   // .head, .body…, .end, then the next request
/// ```
/// Requests on one connection follow each other (pipelining) without any call in between.
/// After a CONNECT request or one asking to Upgrade, stop calling `next()` until the answer is
/// known: on success the bytes that follow are not HTTP, so take them with `takeRemainingBytes()`.
/// Bodies stream: each `.body` holds what is buffered, so memory stays bounded by what is fed.
public struct HTTP1RequestParser: Sendable {
    private var decoder: HTTP1MessageDecoder<RequestRole>

    /// Creates a parser enforcing `limits`.
    public init(limits: HTTP1Limits = .default) {
        decoder = HTTP1MessageDecoder(role: RequestRole(), limits: limits)
    }

    /// Appends bytes received from the client.
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
    /// - Throws: `HTTP1ParseError` with the status to answer with; the same error on every later call.
    public mutating func next() throws(HTTP1ParseError) -> HTTP1RequestEvent? {
        try decoder.next()
    }

    /// Signals that the client closed its side; call it (like `next()`) until it returns nil.
    ///
    /// - Throws: `.truncated` ("connection closed before the message was complete") when a
    ///   request had begun but not ended. A close between requests is not an error.
    public mutating func finish() throws(HTTP1ParseError) -> HTTP1RequestEvent? {
        try decoder.finish()
    }

    /// Removes and returns the bytes fed but not parsed, e.g. what follows a CONNECT request.
    public mutating func takeRemainingBytes() -> [UInt8] {
        decoder.takeRemainingBytes()
    }
}

/// The request side: request lines, and framing by RFC 9112 §6.3 rules 3–7.
struct RequestRole: HTTP1MessageRole {
    static var side: MessageSide { .request }

    static func parseLine(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> StartLine.Request {
        try StartLine.parseRequest(bytes)
    }

    func makeHead(
        _ line: StartLine.Request, headers: HTTPHeaders
    ) throws(HTTP1ParseError) -> (HTTPRequestHead, MessageFraming?) {
        let head = HTTPRequestHead(method: line.method, target: line.target, version: line.version, headers: headers)
        return (head, try MessageFraming.of(.request, version: line.version, headers: headers))
    }
}
