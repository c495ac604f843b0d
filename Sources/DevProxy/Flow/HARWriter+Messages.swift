import Foundation
import HTTPTypes

extension HARWriter {
    /// The request side of an entry; a `CONNECT` to the server for flows that have no request.
    /// `sizes`: those the flow's HAR gave, which replace the ones counted here.
    static func request(for flow: Flow, sizes: HARSizes.Message? = nil) -> HARDocument.Request {
        guard let request = flow.request else {
            let authority = "\(flow.server.host):\(flow.server.port)"
            return HARDocument.Request(method: "CONNECT", url: "https://\(authority)/", httpVersion: "HTTP/1.1",
                                       cookies: [], headers: [], queryString: [], postData: nil,
                                       headersSize: -1, bodySize: 0)
        }
        let headers = nameValues(request.headers)
        var postData: HARDocument.PostData?
        if let body = request.body, body.size > 0 {
            let mimeType = header("content-type", in: headers) ?? "application/octet-stream"
            postData = body.text.map { HARDocument.PostData(mimeType: mimeType, text: $0, encoding: nil) }
                ?? HARDocument.PostData(mimeType: mimeType, text: body.base64 ?? "", encoding: "base64")
            postData?.params = formParams(body, contentType: mimeType)
            if body.truncated {
                postData?.comment = cutNote(body)
                postData?.truncated = true
            }
        }
        let target = request.target ?? requestTarget(of: request.url, method: request.method)
        // An HTTP/2 request lists its pseudo-header fields first, as received, as Chrome's
        // DevTools export them (tools that diff HARs by header compare them); its head has no
        // text whose size HAR could give (HPACK), so `headersSize` is -1 as Chrome writes it.
        let pseudo = request.pseudoHeaders.map(nameValues) ?? []
        let http2 = !pseudo.isEmpty || isHTTP2(request.httpVersion)
        var result = HARDocument.Request(
            method: request.method, url: request.url, httpVersion: version(request.httpVersion),
            cookies: values(of: "cookie", in: headers).flatMap(requestCookies),
            headers: pseudo + headers,
            queryString: queryString(of: request.url), postData: postData,
            headersSize: http2 ? -1 : headersSize(
                startLine: "\(request.method) \(target) \(version(request.httpVersion))", headers: headers),
            bodySize: request.body?.size ?? 0)
        result.trailers = request.trailers.map(nameValues)
        if let sizes {
            result.headersSize = sizes.headersSize ?? result.headersSize
            result.bodySize = sizes.bodySize ?? result.bodySize
        }
        return result
    }

    /// What a cut body's `comment` says.
    static func cutNote(_ body: Flow.Body) -> String {
        if let cut = body.decodedCut {
            return "DevProxy decoded only the first \(cut) bytes of this body (\(body.decoded ?? "decoded")); "
                + "\(body.size) bytes went over the wire"
        }
        return "DevProxy kept only the start of this body (--body-limit); \(body.size) bytes went over the wire"
    }

    /// A form body's fields as HAR `params` (from the logged part of the body); nil for other bodies.
    static func formParams(_ body: Flow.Body, contentType: String) -> [HARDocument.Param]? {
        guard FormBody.isForm(contentType: contentType) else { return nil }
        guard let form = FormBody.parse(contentType: contentType, body: body.loggedBytes, whole: !body.truncated)
        else { return nil }
        return form.fields.map { field in
            // A text field's whole value, or a file's name and type; a value the form cut is left out.
            HARDocument.Param(name: field.name, value: field.isCut || field.valueCut ? nil : field.value,
                              fileName: field.fileName, contentType: field.contentType)
        }
    }

    /// The response side of an entry: status 0 and `_error` when there was none (failures),
    /// `200 Connection established` for a tunnel. `sizes`: those the flow's HAR gave, which
    /// replace the ones counted here (`compression` and `_transferSize` as it gave them or not).
    static func response(for flow: Flow, sizes: HARSizes.Message? = nil) -> HARDocument.Response {
        guard let response = flow.response else {
            let tunnelled = flow.mode == .tunnel && flow.error == nil
            let failure = flow.error.map { "\($0.kind): \($0.message)" }
            return HARDocument.Response(
                status: tunnelled ? 200 : 0, statusText: tunnelled ? "Connection established" : "",
                httpVersion: tunnelled ? "HTTP/1.1" : "", cookies: [], headers: [],
                content: .init(size: 0, compression: nil, mimeType: "x-unknown", text: nil, encoding: nil),
                redirectURL: "", headersSize: -1, bodySize: tunnelled ? 0 : -1, error: failure)
        }
        let headers = nameValues(response.headers)
        let mimeType = header("content-type", in: headers) ?? "x-unknown"
        var content = HARDocument.Content(size: response.body?.size ?? 0, compression: nil, mimeType: mimeType,
                                          text: nil, encoding: nil)
        if let body = response.body {
            if let text = body.text {
                content.text = text
                // Only a whole decoded body tells how large the content really is.
                if body.decoded != nil && body.charset == nil && !body.truncated {
                    content.size = text.utf8.count
                    content.compression = max(0, content.size - body.size)
                }
            } else if let base64 = body.base64 {
                content.text = base64
                content.encoding = "base64"
            }
            if body.truncated && content.text != nil {
                content.comment = cutNote(body)
                content.truncated = true
            }
        }
        var result = HARDocument.Response(
            status: response.status, statusText: response.reason, httpVersion: version(response.httpVersion),
            cookies: values(of: "set-cookie", in: headers).compactMap(responseCookie),
            // Chrome lists no `:status` among an HTTP/2 response's headers (the status is `status`),
            // and gives its size as -1, as for the request.
            headers: headers, content: content, redirectURL: header("location", in: headers) ?? "",
            headersSize: isHTTP2(response.httpVersion) || response.pseudoHeaders != nil ? -1 : headersSize(
                startLine: "\(version(response.httpVersion)) \(response.status) \(response.reason)", headers: headers),
            bodySize: response.body?.size ?? 0, error: flow.error.map { "\($0.kind): \($0.message)" })
        result.trailers = response.trailers.map(nameValues)
        if let sizes {
            result.headersSize = sizes.headersSize ?? result.headersSize
            result.bodySize = sizes.bodySize ?? result.bodySize
            result.content.size = sizes.contentSize ?? result.content.size
            result.content.compression = sizes.compression
            result.transferSize = sizes.transferSize
        }
        return result
    }

    /// Header pairs as HAR name/value objects.
    static func nameValues(_ pairs: FieldPairs) -> [HARDocument.NameValue] {
        pairs.indices.map { HARDocument.NameValue(name: pairs.name(at: $0), value: pairs.value(at: $0)) }
    }

    /// The first value of header `name` (lower case) in `headers`, any case.
    static func header(_ name: String, in headers: [HARDocument.NameValue]) -> String? {
        headers.first { $0.name.lowercased() == name }?.value
    }

    /// Every value of header `name` (lower case) in `headers`, any case, in order.
    static func values(of name: String, in headers: [HARDocument.NameValue]) -> [String] {
        headers.compactMap { $0.name.lowercased() == name ? $0.value : nil }
    }

    /// Whether a flow's version is HTTP/2 (or 3): a head of fields, not of text.
    public static func isHTTP2(_ version: String) -> Bool {
        let upper = version.uppercased()
        return upper.hasPrefix("HTTP/2") || upper.hasPrefix("HTTP/3") || upper == "2" || upper == "3"
    }

    /// `HTTP/1.1` whether the flow says `HTTP/1.1` or `1.1`.
    static func version(_ text: String) -> String {
        text.uppercased().hasPrefix("HTTP/") ? text : "HTTP/" + text
    }

    /// Bytes from the start line through the blank line, as the head is serialised:
    /// `line CRLF (name: value CRLF)* CRLF`.
    static func headersSize(startLine: String, headers: [HARDocument.NameValue]) -> Int {
        headers.reduce(startLine.utf8.count + 4) { $0 + $1.name.utf8.count + 2 + $1.value.utf8.count + 2 }
    }

    /// The origin-form target (`/v1/x?q=1`) of an absolute URL, as written there (not re-encoded);
    /// `*` for an `OPTIONS` whose URL has no path (asterisk-form, RFC 9112 §3.2.4).
    public static func requestTarget(of url: String, method: String = "GET") -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else {
            return method == "OPTIONS" ? "*" : "/"
        }
        let target = String(rest[slash...].prefix { $0 != "#" })
        return target.hasPrefix("?") ? "/" + target : target
    }

    /// The query parameters of `url`, percent-decoded, `+` read as a space (form encoding).
    static func queryString(of url: String) -> [HARDocument.NameValue] {
        guard let question = url.firstIndex(of: "?") else { return [] }
        let query = url[url.index(after: question)...].prefix { $0 != "#" }
        return query.split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return HARDocument.NameValue(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The cookies of a `Cookie` header: `a=1; b=2` (an HTTP/2 request may split them over
    /// several `cookie` fields, RFC 9113 §8.2.3, as Chromium does: the entry takes every field's).
    static func requestCookies(_ header: String) -> [HARDocument.Cookie] {
        header.split(separator: ";").compactMap { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            return HARDocument.Cookie(name: name, value: value)
        }
    }

    /// The cookie a `Set-Cookie` header sets, with its attributes (RFC 6265 §4.1).
    static func responseCookie(_ header: String) -> HARDocument.Cookie? {
        let items = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = items.first, let equals = first.firstIndex(of: "=") else { return nil }
        // Name and value without the blanks around `=` (RFC 6265 §5.2, steps 5 and 6).
        var cookie = HARDocument.Cookie(name: first[..<equals].trimmingCharacters(in: .whitespaces),
                                        value: first[first.index(after: equals)...].trimmingCharacters(in: .whitespaces))
        for attribute in items.dropFirst() {
            let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
            let value = parts.count > 1 ? parts[1] : ""
            switch parts.first?.lowercased() {
            case "path": cookie.path = value
            case "domain": cookie.domain = value
            // HAR's `expires` is ISO 8601; a date no browser reads stays out of it, kept in the comment.
            case "expires":
                cookie.expires = CookieDate.iso8601(value)
                if cookie.expires == nil { cookie.comment = "Expires=\(value) (not a date a browser reads)" }
            case "httponly": cookie.httpOnly = true
            case "secure": cookie.secure = true
            default: continue
            }
        }
        return cookie
    }
}
