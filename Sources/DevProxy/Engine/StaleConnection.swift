import HTTP1

/// A request that went out on a pooled connection the server had already closed. Servers close
/// idle keep-alive connections whenever they like (RFC 9112 §9.8); one closed just as the request
/// went out reads as a reset or an empty response, and RFC 9110 §9.2.2 lets a proxy send an
/// idempotent request again. Used by the HTTP/1.1 client's exchange (`ExchangeTransfer`) and an
/// HTTP/2 client's stream to an HTTP/1.1 origin (`HTTP1StreamExchange`) alike.
enum StaleConnection {
    /// Whether `error`, before any response byte, means `head` goes again on a fresh connection:
    /// the connection was a reused one the server closed, the request may be resent, it is not
    /// already a resend, and DevProxy is not shutting down (then the cut is shutdown's own).
    static func allowsResend(after error: any Error, of head: HTTPRequestHead, reused: Bool, resending: Bool,
                             stopping: Bool) -> Bool {
        guard !resending, !stopping else { return false }
        // An HTTP/2 origin that refused the stream (REFUSED_STREAM) or sent GOAWAY below it did
        // not process the request, whatever its method (RFC 9113 §8.7): it goes again, as an
        // HTTP/2 client's stream does, when nothing of it is buffered to send twice. An HTTP/1.1
        // client got a 502 where an HTTP/2 client's same request was resent.
        if isUnprocessed(error) { return isBodiless(head) }
        return reused && mayResend(head) && isServerClose(error)
    }

    private static func isUnprocessed(_ error: any Error) -> Bool {
        switch error as? HTTP2StreamFailure {
        case .goAway?, .reset(.refusedStream)?: true
        default: false
        }
    }

    /// Whether a request with this method may be sent again when its connection closed before
    /// any answer (RFC 9110 §9.2.2); an HTTP/2 stream's bodiless request is resent on these terms
    /// (`HTTP2ProxyConnection.closeLeg`).
    static func isIdempotent(_ method: String) -> Bool {
        idempotentMethods.contains(method)
    }

    /// Whether `head` may go again on a fresh connection: idempotent and bodiless (so nothing is
    /// buffered to send twice), and not waiting for `100 Continue`.
    private static func mayResend(_ head: HTTPRequestHead) -> Bool {
        isIdempotent(head.method) && isBodiless(head)
    }

    private static func isBodiless(_ head: HTTPRequestHead) -> Bool {
        head.headers["Transfer-Encoding"] == nil && (head.headers["Content-Length"] ?? "0") == "0"
            && !head.headers.expectsContinue
    }

    /// Whether `error`, before any response byte on a reused connection, is the server's close.
    private static func isServerClose(_ error: any Error) -> Bool {
        switch error {
        case is UpstreamClosed: return true
        case let error as NetworkError: return error.kind == .reset || error.kind == .closed
        default: return false
        }
    }

    /// RFC 9110 §9.2.2.
    private static var idempotentMethods: Set<String> { ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"] }
}
