import HTTPTypes

// HTTP/2 ⇄ HTTPTypes. Into the neutral types nothing changes but bytes becoming text (the
// record shows what arrived); out of them, towards an HTTP/2 hop, the forwarding rules of
// `HTTPFields+Forwarding` apply, then HTTP/2's own: lower-case names, no `Host`.

extension HTTPFields {
    /// HTTP/2 fields as neutral fields, unchanged (as text, invalid UTF-8 repaired).
    public init(_ fields: [HTTP2Field]) {
        self.init(fields) { _, _ in }
    }

    /// `init(_:)`, showing `each` every field's name and value as made, so a caller that reads
    /// some of them (a head's pseudo-header fields) shares the text instead of making it again.
    init(_ fields: [HTTP2Field], each: (_ name: String, _ value: String) -> Void) {
        var result = HTTPFields()
        result.reserveCapacity(fields.count)
        for field in fields {
            let name = field.nameString, value = field.valueString
            each(name, value)
            result.append(name: name, value: value)
        }
        self = result
    }
}

extension HTTPRequest {
    /// The request an HTTP/2 peer sent, as received: the pseudo-header fields read into their
    /// parts and kept in order for the record, the regular fields unchanged. Each pseudo-header
    /// value becomes text once, shared by its part and the record (the first of a repeated one
    /// is its part, as `HTTP2HeaderBlock.method` and the others read it).
    public init(_ block: HTTP2HeaderBlock) {
        var method: String?, scheme: String?, authority: String?, path: String?
        let pseudo = HTTPFields(block.pseudo) { name, value in
            switch name {
            case ":method": if method == nil { method = value }
            case ":scheme": if scheme == nil { scheme = value }
            case ":authority": if authority == nil { authority = value }
            case ":path": if path == nil { path = value }
            default: break
            }
        }
        self.init(method: method ?? "", scheme: scheme, authority: authority, path: path,
                  fields: HTTPFields(block.fields), pseudoHeaderFields: pseudo)
    }
}

extension HTTPResponse {
    /// The response an HTTP/2 peer sent, as received: `:status` (0 if missing or not a number,
    /// which the session does not let through), no reason phrase, the fields unchanged.
    public init(_ block: HTTP2HeaderBlock) {
        var status: String?
        let pseudo = HTTPFields(block.pseudo) { name, value in
            if status == nil && name == ":status" { status = value }
        }
        self.init(status: status.flatMap { Int($0) } ?? 0, reason: nil, fields: HTTPFields(block.fields),
                  pseudoHeaderFields: pseudo)
    }
}

extension Array where Element == HTTP2Field {
    /// Fields from another hop for an HTTP/2 hop: connection-specific fields and those
    /// `Connection` names dropped, `te` kept only as `trailers` (RFC 9113 §8.2.2), `host` dropped
    /// (it travels as `:authority`), names lower-cased (§8.2.1).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwarding fields: HTTPFields) throws(HTTPFieldError) {
        try fields.checkValues()
        var fields = fields
        fields.removeConnectionSpecific(keepingTrailersTE: true)
        self.init()
        reserveCapacity(fields.count)
        for field in fields where !field.hasName("host") && !field.name.hasPrefix(":") {
            append(HTTP2Field(field.name.lowercased(), field.value))
        }
    }

    /// A trailer section from another hop for an HTTP/2 hop: `init(forwarding:)`, and without
    /// `content-length`, a framing field RFC 9110 §6.5.1 keeps out of trailers: nghttp2 takes one
    /// there as the body's length and resets a stream whose body differs (curl: PROTOCOL_ERROR).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwardingTrailers fields: HTTPFields) throws(HTTPFieldError) {
        try self.init(forwarding: fields)
        removeAll { $0.hasName("content-length") }
    }
}

extension HTTP2HeaderBlock {
    /// `request` for an HTTP/2 hop: the pseudo-header fields from its parts (RFC 9113 §8.3.1),
    /// its fields forwarded (`[HTTP2Field](forwarding:)`).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwarding request: HTTPRequest) throws(HTTPFieldError) {
        self = .request(method: request.method, scheme: request.scheme, authority: request.authority,
                        path: request.path, fields: try [HTTP2Field](forwarding: request.fields))
    }

    /// `response` for an HTTP/2 hop: `:status` and its fields forwarded; a reason phrase has no
    /// place in HTTP/2 and is dropped. So is the `Content-Length` an HTTP/1.1 origin may send with
    /// a 1xx or 204 (RFC 9110 §8.6 forbids it): such a response has no content, and an h2 client
    /// (Python h2, nghttp2) takes a non-zero length with no DATA as a malformed stream.
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public init(forwarding response: HTTPResponse) throws(HTTPFieldError) {
        var fields = try [HTTP2Field](forwarding: response.fields)
        if response.status < 200 || response.status == 204 {
            fields.removeAll { $0.hasName("content-length") }
        }
        self = .response(status: response.status, fields: fields)
    }

    /// This block again on another HTTP/2 hop: the pseudo-header fields as they came (an
    /// extended CONNECT's `:protocol` included), the regular ones forwarded (nghttp2 does not
    /// check connection-specific fields on what it sends).
    ///
    /// - Throws: `HTTPFieldError` for a value with CR, LF or NUL.
    public func forwarded() throws(HTTPFieldError) -> HTTP2HeaderBlock {
        if let fields = Self.forwardedUnchanged(fields) { return HTTP2HeaderBlock(pseudo: pseudo, fields: fields) }
        return HTTP2HeaderBlock(pseudo: pseudo, fields: try [HTTP2Field](forwarding: HTTPFields(fields)))
    }

    /// `fields` as `[HTTP2Field](forwarding:)` would return them when it would change none of
    /// them, checked on the bytes; nil when one needs the full treatment.
    ///
    /// A head received over HTTP/2 is usually already fit to relay: lower-case names, no
    /// connection-specific field, ASCII values. Relaying it as is spares every field two text
    /// conversions per stream. Anything else — an upper-case or non-ASCII name, a value byte
    /// outside visible ASCII and HTAB (the text round trip would repair invalid UTF-8), `te`,
    /// `host`, a pseudo-header or connection-specific name — takes the full path.
    static func forwardedUnchanged(_ fields: [HTTP2Field]) -> [HTTP2Field]? {
        var result = fields
        for index in fields.indices {
            let field = fields[index]
            for byte in field.name where byte <= 0x20 || byte >= 0x7F || (0x41...0x5A).contains(byte) { return nil }
            for byte in field.value where byte >= 0x7F || (byte < 0x20 && byte != 0x09) { return nil }
            guard field.name.first != UInt8(ascii: ":") else { return nil }
            // Only names as long as one the rules drop are looked at as text.
            switch field.name.count {
            case 2, 4, 7, 10, 14, 16, 17, 18, 19:
                let name = String(decoding: field.name, as: UTF8.self)
                if name == "te" || name == "host" || HTTPFields.isConnectionSpecific(name) { return nil }
            default:
                break
            }
            // The full path builds each field afresh, without the never-index flag. Written only
            // when set: the first write copies the whole list (and retains every field's bytes).
            if field.neverIndex { result[index].neverIndex = false }
        }
        return result
    }
}
