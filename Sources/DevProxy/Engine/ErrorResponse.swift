import HTTP1
import HTTPTypes

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

    /// RFC 9110 §15 reason phrases for the statuses the proxy sends (`HTTPResponse.standardReason`).
    static func reasonPhrase(_ status: Int) -> String {
        HTTPResponse.standardReason(status)
    }
}
