/// An HTTP/1.1 origin that sent bytes after the end of its response (more than its
/// `Content-Length`, or anything after the last chunk): the client gets the response as framed,
/// the bytes answer no request, so they are dropped with the connection (RFC 9112 §6.3: a longer
/// body is not the message's; reused, the connection would hand them to the next request as its
/// response). nginx logs the same as "upstream sent more data than specified".
enum UpstreamOverrun {
    /// The flow's `error.message` (kind `upstream_bad_response`, by the server).
    /// - Parameters:
    ///   - count: the bytes that had come after the end (at least: more may have followed).
    ///   - length: the response's `Content-Length`, if it had one.
    static func reason(_ count: Int, target: String, length: String?) -> String {
        "upstream \(target) sent \(count) bytes after the end of its response"
            + (length.map { " (Content-Length: \($0))" } ?? "")
            + ": the client got the response as framed, and the bytes were dropped with the connection (RFC 9112 §6.3)"
    }
}
