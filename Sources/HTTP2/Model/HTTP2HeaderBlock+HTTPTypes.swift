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
        // Read in place: `for field in fields` retained and released each field's two arrays.
        fields.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                let name = fields[index].nameString, value = fields[index].valueString
                each(name, value)
                result.append(name: name, value: value)
            }
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
        if let fields = Self.forwardedUnchanged(fields) {
            var block = HTTP2HeaderBlock(pseudo: pseudo, fields: fields)
            block.fieldsChecked = true
            block.pseudoChecked = pseudoChecked
            return block
        }
        var block = HTTP2HeaderBlock(pseudo: pseudo, fields: try [HTTP2Field](forwarding: HTTPFields(fields)))
        block.pseudoChecked = pseudoChecked
        // A request that named its host with `host` alone (RFC 9113 §8.3.1 allows either) keeps
        // it as `:authority`, which an intermediary must build from it: the `host` field is
        // dropped above, and the origin got a request with no authority at all (nghttpd reset it).
        if method != nil, authority == nil, let host = firstValue("host") {
            block.pseudo.append(HTTP2Field(":authority", host))
            block.pseudoChecked = false
        }
        return block
    }

    /// `fields` as `[HTTP2Field](forwarding:)` would return them when it would change none of
    /// them, checked on the bytes; nil when one needs the full treatment.
    ///
    /// A head received over HTTP/2 is usually already fit to relay: lower-case names, no
    /// connection-specific field, ASCII values. Relaying it as is spares every field two text
    /// conversions per stream. Anything else — an empty, upper-case or non-ASCII name, a colon in
    /// a name, a value byte outside visible ASCII and HTAB (the text round trip would repair
    /// invalid UTF-8), a value starting or ending with whitespace, `te`, `host`, a pseudo-header
    /// or connection-specific name — takes the full path. What passes here passes every check of
    /// `checkedForSending` too (RFC 9113 §8.2.1, §8.2.2), so the block is marked checked.
    static func forwardedUnchanged(_ fields: [HTTP2Field]) -> [HTTP2Field]? {
        // Through a buffer pointer: subscripting the array copies each field out (two retains).
        var neverIndexed = false
        let fit = fields.withUnsafeBufferPointer { list in
            for index in list.indices {
                guard nameFitToRelay(list[index].name), valueFitToRelay(list[index].value) else { return false }
                if list[index].neverIndex { neverIndexed = true }
            }
            return true
        }
        guard fit else { return nil }
        guard neverIndexed else { return fields }
        // The full path builds each field afresh, without the never-index flag. Written only when
        // set: the first write copies the whole list (and retains every field's bytes).
        var result = fields
        for index in result.indices where result[index].neverIndex { result[index].neverIndex = false }
        return result
    }

    /// A name relayed as it is: not empty, lower-case visible ASCII without a colon, and none of
    /// the names the rules drop (`host`, and the connection-specific ones, `te` among them),
    /// compared as bytes.
    private static func nameFitToRelay(_ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { bytes in
            guard !bytes.isEmpty else { return false }
            for byte in bytes where byte <= 0x20 || byte >= 0x7F || (byte >= 0x41 && byte <= 0x5A) || byte == 0x3A {
                return false
            }
            let host = bytes.count == 4 && StaticString("host").withUTF8Buffer { bytes.elementsEqual($0) }
            return !host && !HTTPFields.isConnectionSpecific(utf8: bytes)
        }
    }

    /// A value relayed as it is: visible ASCII, spaces and HTABs, not starting or ending with
    /// whitespace. Eight bytes at a time (values are most of a head's bytes).
    private static func valueFitToRelay(_ value: [UInt8]) -> Bool {
        value.withUnsafeBufferPointer { bytes in
            if let edge = bytes.first, edge == 0x20 || edge == 0x09 { return false }
            if let edge = bytes.last, edge == 0x20 || edge == 0x09 { return false }
            let unfit = { (byte: UInt8) in byte >= 0x7F || (byte < 0x20 && byte != 0x09) }
            return !WordScan.any(bytes, word: { word in
                if WordScan.hasNonASCII(in: word) || WordScan.hasByte(0x7F, in: word) { return true }
                // A control byte in the word: an HTAB is allowed, so those words are read byte by byte.
                guard WordScan.hasByte(below: 0x20, in: word) else { return false }
                return (0..<8).contains { unfit(UInt8(truncatingIfNeeded: word >> ($0 * 8))) }
            }, byte: unfit)
        }
    }
}
