/// A request head in HTTP's semantics (RFC 9110 §6–7), whatever version carried it: method,
/// the target's parts and the header fields.
///
/// HTTP/1.1's request line and `Host` and HTTP/2's pseudo-header fields both map here (the
/// conversions live with the codecs), so the engine's flow records, local routes and rewrites
/// are written once.
public struct HTTPRequest: Sendable, Equatable {
    /// The method token, case-sensitive (`GET`, `CONNECT`, …).
    public var method: String
    /// `http` or `https`; nil when the request did not say (an HTTP/1.1 origin-form target).
    public var scheme: String?
    /// `host[:port]`: HTTP/2's `:authority`, HTTP/1.1's `Host` or absolute-form authority.
    public var authority: String?
    /// The path and query (`/search?q=1`); nil for `CONNECT`.
    public var path: String?
    /// The header fields, in arrival order; never pseudo-header fields.
    public var fields: HTTPFields
    /// The pseudo-header fields exactly as an HTTP/2 peer sent them, in their order, for the
    /// record of what arrived (the flow's `pseudo_headers`); empty for a request that did not
    /// come over HTTP/2. `method`, `scheme`, `authority` and `path` are what the engine reads.
    public var pseudoHeaderFields: HTTPFields

    /// A request head from its parts.
    public init(method: String, scheme: String? = nil, authority: String? = nil, path: String? = nil,
                fields: HTTPFields = HTTPFields(), pseudoHeaderFields: HTTPFields = HTTPFields()) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.fields = fields
        self.pseudoHeaderFields = pseudoHeaderFields
    }
}

/// A response head in HTTP's semantics (RFC 9110 §15): the status, a reason phrase when the
/// version carries one, and the header fields.
public struct HTTPResponse: Sendable, Equatable {
    /// The three-digit status code.
    public var status: Int
    /// HTTP/1.1's reason phrase as received (possibly empty); nil when the message came over
    /// HTTP/2, which has none (RFC 9113 §8.3.2). `reasonPhrase` makes one up.
    public var reason: String?
    /// The header fields, in arrival order; never pseudo-header fields.
    public var fields: HTTPFields
    /// The pseudo-header fields exactly as an HTTP/2 peer sent them (`:status`), for the record;
    /// empty for a response that did not come over HTTP/2.
    public var pseudoHeaderFields: HTTPFields

    /// A response head from its parts.
    public init(status: Int, reason: String? = nil, fields: HTTPFields = HTTPFields(),
                pseudoHeaderFields: HTTPFields = HTTPFields()) {
        self.status = status
        self.reason = reason
        self.fields = fields
        self.pseudoHeaderFields = pseudoHeaderFields
    }

    /// Whether this is an interim (1xx) response other than 101, after which the final one follows.
    public var isInterim: Bool {
        (100..<200).contains(status) && status != 101
    }

    /// The reason phrase to send where the version needs one: the one received, else the
    /// standard phrase for the status (RFC 9110 §15).
    public var reasonPhrase: String {
        reason ?? Self.standardReason(status)
    }
}
