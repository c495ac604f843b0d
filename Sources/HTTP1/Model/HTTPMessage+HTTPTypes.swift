import HTTPTypes

// HTTP/1.1 ⇄ HTTPTypes. Into the neutral types nothing changes (the record shows what arrived);
// out of them, towards an HTTP/1.1 hop, the forwarding rules of `HTTPFields+Forwarding` apply.

extension HTTPFields {
    /// An HTTP/1.1 header or trailer section as neutral fields, unchanged.
    public init(_ headers: HTTPHeaders) {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for field in headers { fields.append(name: field.name, value: field.value) }
        self = fields
    }
}

extension HTTPHeaders {
    /// Neutral fields as an HTTP/1.1 section, unchanged.
    public init(_ fields: HTTPFields) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        for field in fields { headers.add(name: field.name, value: field.value) }
        self = headers
    }

    /// Fields from another hop (HTTP/2's above all) for an HTTP/1.1 hop: connection-specific
    /// fields and those `Connection` names dropped, cookie crumbs joined with `; ` (RFC 9113
    /// §8.2.3).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwarding fields: HTTPFields) throws(HTTPFieldError) {
        try fields.checkValues()
        var fields = fields
        fields.removeConnectionSpecific(keepingTrailersTE: false)
        fields.joinCookieCrumbs()
        self.init(fields)
    }
}

extension HTTPRequest {
    /// An HTTP/1.1 request head as received: its method and header fields unchanged, the
    /// target's parts as the caller resolved them (from an absolute-form target, `Host`, or the
    /// CONNECT tunnel the request came through).
    public init(_ head: HTTPRequestHead, scheme: String?, authority: String?, path: String?) {
        self.init(method: head.method, scheme: scheme, authority: authority, path: path,
                  fields: HTTPFields(head.headers))
    }
}

extension HTTPRequestHead {
    /// `request` for an HTTP/1.1 hop: an origin-form target from its path (`/` without one),
    /// `Host` from its authority (RFC 9113 §8.3.1: `:authority` takes the place of `Host`; first
    /// when the request had none, as RFC 9110 §7.2 has a user agent send it), and its fields
    /// forwarded (`HTTPHeaders(forwarding:)`).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwarding request: HTTPRequest) throws(HTTPFieldError) {
        var headers = try HTTPHeaders(forwarding: request.fields)
        if let authority = request.authority {
            if headers.contains("Host") {
                headers.replaceOrAdd(name: "Host", value: authority)
            } else {
                headers.addFirst(name: "Host", value: authority)
            }
        }
        self.init(method: request.method, target: request.path ?? "/", version: .http11, headers: headers)
    }
}

extension HTTPResponse {
    /// An HTTP/1.1 response head as received: status, reason phrase and fields unchanged.
    public init(_ head: HTTPResponseHead) {
        self.init(status: head.status, reason: head.reason, fields: HTTPFields(head.headers))
    }
}

extension HTTPResponseHead {
    /// `response` for an HTTP/1.1 hop: a reason phrase made up when it came without one (RFC
    /// 9110 §15), its fields forwarded (`HTTPHeaders(forwarding:)`).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwarding response: HTTPResponse) throws(HTTPFieldError) {
        self.init(version: .http11, status: response.status, reason: response.reasonPhrase,
                  headers: try HTTPHeaders(forwarding: response.fields))
    }
}
