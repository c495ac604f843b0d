/// A request line and its header section.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method token, case-sensitive as RFC 9110 §9.1 says (`GET`, `CONNECT`, …).
    public var method: String
    /// The request target exactly as sent; see `requestTarget()` for its parsed form.
    public var target: String
    /// The version from the request line.
    public var version: HTTPVersion
    /// The header fields in arrival order.
    public var headers: HTTPHeaders

    /// Creates a request head.
    public init(method: String, target: String, version: HTTPVersion = .http11, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The target in its RFC 9112 §3.2 form (origin, absolute, authority or asterisk).
    ///
    /// - Throws: `HTTP1ParseError` with code `.invalidTarget` when the target fits none of the forms
    ///   allowed for this method. Heads produced by `HTTP1RequestParser` never throw here.
    public func requestTarget() throws(HTTP1ParseError) -> RequestTarget {
        try RequestTarget(parsing: target, method: method)
    }

    /// Whether the connection stays open after this exchange, as far as this request says.
    public var keepAlive: Bool {
        HTTPHeaders.keepAlive(version: version, headers: headers)
    }
}
