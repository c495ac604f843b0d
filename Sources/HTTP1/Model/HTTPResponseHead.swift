/// A status line and its header section.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The version from the status line.
    public var version: HTTPVersion
    /// The three-digit status code.
    public var status: Int
    /// The reason phrase, possibly empty; RFC 9112 §4 says clients should ignore it.
    public var reason: String
    /// The header fields in arrival order.
    public var headers: HTTPHeaders

    /// Creates a response head.
    public init(version: HTTPVersion = .http11, status: Int, reason: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// Whether this is an interim (1xx) response other than 101, after which the final response follows.
    public var isInterim: Bool {
        (100..<200).contains(status) && status != 101
    }

    /// Whether the connection stays open after this exchange, as far as this response says.
    public var keepAlive: Bool {
        HTTPHeaders.keepAlive(version: version, headers: headers)
    }
}
