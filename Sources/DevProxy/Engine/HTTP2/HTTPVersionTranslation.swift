import HTTP1
import HTTP2

/// How fields cross between HTTP/1.1 and HTTP/2, and between two HTTP/2 hops (RFC 9113 §8.2).
///
/// HTTP/2 forbids connection-specific fields (§8.2.2): `Connection` and every field it names,
/// `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`, and `TE` with any value
/// but `trailers`. A peer that receives one treats the stream as malformed, so they are dropped
/// on the way to an h2 hop whatever the other side sent. Values with CR, LF or NUL are refused
/// outright: passed to HTTP/1.1 they would split the message (request smuggling).
enum HTTPVersionTranslation {
    /// A field value that cannot be forwarded.
    struct UnsafeValue: Error, CustomStringConvertible {
        let name: String
        var description: String { "the value of \(name) holds CR, LF or NUL, which HTTP forbids in a field value" }
    }

    /// Fields to send on an HTTP/2 hop: names lowercased, connection-specific fields removed,
    /// `te` kept only as `trailers` (gRPC needs it: it is how a gRPC client detects a proxy that
    /// would lose trailers), `host` removed (it travels as `:authority`).
    ///
    /// - Throws: `UnsafeValue` for a value with CR, LF or NUL.
    static func h2Fields(from fields: [(name: String, value: String)]) throws -> [HTTP2Field] {
        let named = Set(HTTPHeaders(fields).listElements("Connection").map { $0.lowercased() })
        var result: [HTTP2Field] = []
        result.reserveCapacity(fields.count)
        for field in fields {
            let name = field.name.lowercased()
            guard !name.hasPrefix(":") else { continue }
            if isUnsafe(field.value) { throw UnsafeValue(name: field.name) }
            if name == "te" {
                if HTTPHeaders([field]).hasListElement("TE", "trailers") { result.append(HTTP2Field("te", "trailers")) }
                continue
            }
            if isConnectionSpecific(name) || named.contains(name) || name == "host" { continue }
            result.append(HTTP2Field(name, field.value))
        }
        return result
    }

    /// Fields to send on an HTTP/1.1 hop from an HTTP/2 message: cookie crumbs joined with `; `
    /// (RFC 9113 §8.2.3), connection-specific fields dropped.
    ///
    /// - Throws: `UnsafeValue` for a value with CR, LF or NUL.
    static func h1Headers(from fields: [HTTP2Field]) throws -> HTTPHeaders {
        var headers = HTTPHeaders()
        var cookies: [String] = []
        for field in fields where !field.isPseudo {
            let name = field.nameString
            let value = field.valueString
            if isUnsafe(value) { throw UnsafeValue(name: name) }
            if name == "cookie" {
                cookies.append(value)
                continue
            }
            if isConnectionSpecific(name) { continue }
            headers.add(name: name, value: value)
        }
        if !cookies.isEmpty { headers.add(name: "cookie", value: cookies.joined(separator: "; ")) }
        return headers
    }

    /// The fields of an h2 message again on another h2 hop: pseudo-headers as they came,
    /// connection-specific fields (which nghttp2 does not check on what it sends) dropped.
    static func relayedH2(_ block: HTTP2HeaderBlock) throws -> HTTP2HeaderBlock {
        if let fields = unchangedForRelay(block.fields) { return HTTP2HeaderBlock(pseudo: block.pseudo, fields: fields) }
        let fields = try h2Fields(from: block.fields.map { ($0.nameString, $0.valueString) })
        return HTTP2HeaderBlock(pseudo: block.pseudo, fields: fields)
    }

    /// The fields as `h2Fields` would return them when it would change none (the usual case for a
    /// head received over h2: lowercase ASCII names, nothing connection-specific), without the
    /// round trip through Strings; nil when any field needs `h2Fields`' full treatment (a name
    /// with uppercase or non-ASCII bytes, a value with a byte outside printable ASCII and tab,
    /// `te`, `host`, a pseudo-header field, any hop-by-hop or h2c name).
    private static func unchangedForRelay(_ fields: [HTTP2Field]) -> [HTTP2Field]? {
        var result = fields
        for index in result.indices {
            let field = fields[index]
            for byte in field.name where byte <= 0x20 || byte >= 0x7F || (byte >= 0x41 && byte <= 0x5A) { return nil }
            for byte in field.value where byte >= 0x7F || (byte < 0x20 && byte != 0x09) { return nil }
            if field.name.first == UInt8(ascii: ":") { return nil }
            switch field.name.count {
            case 2: if field.hasName("te") { return nil }
            case 4: if field.hasName("host") { return nil }
            case 7: if field.hasName("upgrade") { return nil }
            case 10: if field.hasName("connection") || field.hasName("keep-alive") { return nil }
            case 14: if field.hasName("http2-settings") { return nil }
            case 16: if field.hasName("proxy-connection") { return nil }
            case 17: if field.hasName("transfer-encoding") { return nil }
            case 18: if field.hasName("proxy-authenticate") { return nil }
            case 19: if field.hasName("proxy-authorization") { return nil }
            default: break
            }
            // `h2Fields` builds each field afresh, without the never-index flag.
            if field.neverIndex { result[index].neverIndex = false }
        }
        return result
    }

    /// RFC 9113 §8.2.2's connection-specific fields: the hop-by-hop fields HTTP/1.1 relaying
    /// removes (TE among them: `h2Fields` keeps it as `trailers` before asking), and the h2c
    /// upgrade's `HTTP2-Settings`.
    static func isConnectionSpecific(_ name: String) -> Bool {
        HTTPHeaders.isAlwaysHopByHop(name) || name.equalsCaseInsensitive("http2-settings")
    }

    private static func isUnsafe(_ value: String) -> Bool {
        value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// `[name, value]` pairs for the flow log, redacted as HTTP/1.1 headers are.
    static func pairs(_ fields: [HTTP2Field], redact: [String]) -> [[String]] {
        fields.map { FlowDraft.headerPair($0.nameString, $0.valueString, redact: redact) }
    }
}
