/// Parsing of the two start lines, `request-line` (RFC 9112 §3) and `status-line` (§4).
///
/// Separators are exactly one SP: §3 allows a lenient reading of other whitespace, but a proxy
/// that splits a line differently from the server behind it invites request smuggling.
enum StartLine {
    /// A parsed request line.
    struct Request: Sendable {
        var method: String
        var target: String
        var version: HTTPVersion
    }

    /// A parsed status line.
    struct Status: Sendable {
        var version: HTTPVersion
        var status: Int
        var reason: String
    }

    /// Parses `method SP request-target SP HTTP-version`, given without its CRLF.
    ///
    /// - Throws: `HTTP1ParseError`: 400 for a malformed line, method or target, 505 for a
    ///   well-formed version other than HTTP/1.0 and HTTP/1.1.
    static func parseRequest(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> Request {
        let side = MessageSide.request
        try FieldLine.rejectForbiddenBytes(line, in: "request line", side: side)
        guard let firstSpace = line.firstIndex(of: ASCII.space) else {
            throw HTTP1ParseError(.malformedStartLine, "request line has no request target", side: side)
        }
        let method = line[..<firstSpace]
        guard ASCII.isToken(method) else {
            throw HTTP1ParseError(.invalidMethod, "method is empty or not a token", side: side)
        }
        let rest = line[(firstSpace + 1)...]
        guard let secondSpace = rest.firstIndex(of: ASCII.space) else {
            throw HTTP1ParseError(.missingVersion, "request line has no HTTP version", side: side)
        }
        let target = rest[..<secondSpace]
        guard !target.isEmpty else {
            throw HTTP1ParseError(.malformedStartLine, "request line has two spaces before the target", side: side)
        }
        let version = try parseVersion(rest[(secondSpace + 1)...], side: side)
        // Named here, from the bytes: after decoding, a byte that is not UTF-8 is U+FFFD, and the
        // message named its first byte (0xEF) instead of the one the client sent (0xFF).
        // Raw UTF-8 (`curl 'http://host/café'`) is taken and forwarded as it came, as nginx and
        // mitmproxy take it (it was refused 400, though it worked without the proxy); DEL and
        // bytes that are not UTF-8 are not.
        if let bad = target.first(where: { $0 >= ASCII.del }),
           bad == ASCII.del || String(validating: target, as: UTF8.self) == nil {
            let first = target.first { $0 == ASCII.del || $0 >= 0x80 } ?? bad
            throw HTTP1ParseError(.invalidTarget, "request target contains an invalid character (\(ASCII.hex(bad == ASCII.del ? bad : first)))",
                                  side: side)
        }
        let request = Request(
            method: String(decoding: method, as: UTF8.self),
            target: String(decoding: target, as: UTF8.self),
            version: version)
        _ = try RequestTarget(parsing: request.target, method: request.method)
        return request
    }

    /// Parses `HTTP-version SP status-code SP [reason-phrase]`, given without its CRLF.
    ///
    /// A status line that ends right after the code (no SP) is accepted: servers send it and
    /// the reason phrase carries no meaning (§4).
    /// - Throws: `HTTP1ParseError` with status 502.
    static func parseStatus(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> Status {
        let side = MessageSide.response
        try FieldLine.rejectForbiddenBytes(line, in: "status line", side: side)
        guard let space = line.firstIndex(of: ASCII.space) else {
            throw HTTP1ParseError(.malformedStartLine, "status line has no status code", side: side)
        }
        let version = try parseVersion(line[..<space], side: side)
        let afterVersion = line[(space + 1)...]
        let code = afterVersion.prefix(3)
        guard code.count == 3, code.allSatisfy(ASCII.isDigit), code.first != UInt8(ascii: "0") else {
            throw HTTP1ParseError(.invalidStatusCode, "status code is not three digits from 100 to 999", side: side)
        }
        let afterCode = afterVersion.dropFirst(3)
        if let separator = afterCode.first, separator != ASCII.space {
            throw HTTP1ParseError(.invalidStatusCode, "status code is not followed by a space", side: side)
        }
        let status = code.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return Status(version: version, status: status, reason: ASCII.decodeText(afterCode.dropFirst()))
    }

    /// Parses `HTTP-version = "HTTP" "/" DIGIT "." DIGIT` and accepts only 1.0 and 1.1.
    ///
    /// HTTP/2 and later are not spoken over this framing, and HTTP/0.9 has no version at all,
    /// so any other well-formed version is `.unsupportedVersion` (505 for requests).
    static func parseVersion(_ bytes: ArraySlice<UInt8>, side: MessageSide) throws(HTTP1ParseError) -> HTTPVersion {
        let bytes = Array(bytes)
        guard bytes.count == 8, bytes.starts(with: "HTTP/".utf8), ASCII.isDigit(bytes[5]),
              bytes[6] == ASCII.dot, ASCII.isDigit(bytes[7])
        else {
            throw HTTP1ParseError(.malformedVersion, "malformed HTTP version (expected HTTP/1.1)", side: side)
        }
        let version = HTTPVersion(major: Int(bytes[5] - UInt8(ascii: "0")), minor: Int(bytes[7] - UInt8(ascii: "0")))
        guard version == .http11 || version == .http10 else {
            throw HTTP1ParseError(.unsupportedVersion, "HTTP version \(version) is not supported", side: side)
        }
        return version
    }
}
