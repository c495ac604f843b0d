import HTTP1
import HTTPTypes

/// The responses the proxy itself sends: errors with a body that says why, 407, 204.
enum ErrorResponse {
    /// A complete `text/plain` response whose body is `status reason: detail`, with
    /// `Connection: close` (after an error the connection's framing cannot be trusted).
    static func bytes(status: Int, detail: String, extraHeaders: [(String, String)] = [], keepAlive: Bool = false) -> [UInt8] {
        let (head, body) = message(status: status, detail: detail, extraHeaders: extraHeaders, keepAlive: keepAlive)
        return HTTP1Serializer.serialize(head) + body
    }

    /// DevProxy's own answer to an HTTP/1.1 client, as `bytes` writes it (with `X-DevProxy-Error:
    /// kind`, as the HTTP/2 side and local refusals send), recorded in `draft` as the flow's
    /// response: the client saw this answer, whatever the origin did or did not send. Returns the
    /// bytes to write; the caller records the failure itself (`draft.fail`).
    ///
    /// The answer to a HEAD (the draft's request) is the head alone, its `Content-Length` the one
    /// a GET would get: a response to HEAD has no content (RFC 9110 §9.3.2), and a client reads
    /// bytes after it as the start of the next response.
    static func answer(status: Int, detail: String, kind: FlowErrorKind, extraHeaders: [(String, String)] = [],
                       bodyLimit: Int, recordingIn draft: inout FlowDraft) -> [UInt8] {
        let (head, whole) = message(status: status, detail: detail,
                                    extraHeaders: [("X-DevProxy-Error", kind.rawValue)] + extraHeaders, keepAlive: false)
        let body = draft.flow.request?.method == "HEAD" ? [] : whole
        let capture = BodyCapture(limit: bodyLimit)
        capture.append(body)
        draft.flow.response = Flow.Response(status: status, reason: head.reason, httpVersion: "HTTP/1.1",
                                            headers: FieldPairs(head.headers.map { [$0.name, $0.value] }),
                                            body: capture.finish(contentEncoding: nil, contentType: textPlain))
        return HTTP1Serializer.serialize(head) + body
    }

    /// The one-line body of every error DevProxy answers itself, over either HTTP version.
    static func body(status: Int, detail: String) -> [UInt8] {
        Array("\(status) \(reasonPhrase(status)): \(detail)\n".utf8)
    }

    static let textPlain = "text/plain; charset=utf-8"

    /// RFC 9110 §15 reason phrases for the statuses the proxy sends (`HTTPResponse.standardReason`).
    static func reasonPhrase(_ status: Int) -> String {
        HTTPResponse.standardReason(status)
    }

    private static func message(status: Int, detail: String, extraHeaders: [(String, String)],
                                keepAlive: Bool) -> (HTTPResponseHead, [UInt8]) {
        let body = body(status: status, detail: detail)
        var headers = HTTPHeaders([("Content-Type", textPlain), ("Content-Length", String(body.count))])
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        return (HTTPResponseHead(version: .http11, status: status, reason: reasonPhrase(status), headers: headers), body)
    }
}
