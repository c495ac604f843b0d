import HTTP1

/// The responses the proxy itself sends: errors with a body that says why, 407, 204.
enum ErrorResponse {
    /// A complete `text/plain` response whose body is `status reason: detail`, with
    /// `Connection: close` (after an error the connection's framing cannot be trusted).
    static func bytes(status: Int, detail: String, extraHeaders: [(String, String)] = [], keepAlive: Bool = false) -> [UInt8] {
        let body = Array("\(status) \(reasonPhrase(status)): \(detail)\n".utf8)
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count))])
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http11, status: status, reason: reasonPhrase(status), headers: headers)
        return HTTP1Serializer.serialize(head) + body
    }

    /// RFC 9110 §15 reason phrases for the statuses the proxy sends.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 421: return "Misdirected Request"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 414: return "URI Too Long"
        case 431: return "Request Header Fields Too Large"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
    }
}
