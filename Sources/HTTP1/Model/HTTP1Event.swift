/// One part of a parsed message: its head, a piece of its body, or its end.
///
/// A message yields exactly one `.head`, zero or more `.body`, then one `.end` — except interim
/// 1xx responses, which yield only `.head` before the final response's head.
public enum HTTP1Event<Head: Sendable & Equatable>: Sendable, Equatable {
    /// The start line and header section.
    case head(Head)
    /// Body bytes, already stripped of chunk framing; never empty.
    case body([UInt8])
    /// The message is complete; `trailers` holds a chunked body's trailer section, else is empty.
    case end(trailers: HTTPHeaders)
}

/// An event from `HTTP1RequestParser`.
public typealias HTTP1RequestEvent = HTTP1Event<HTTPRequestHead>

/// An event from `HTTP1ResponseParser`.
public typealias HTTP1ResponseEvent = HTTP1Event<HTTPResponseHead>
