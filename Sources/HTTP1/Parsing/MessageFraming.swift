/// How the end of a message body is found: the outcome of RFC 9112 §6.3.
enum MessageFraming: Sendable, Equatable {
    /// The message ends with its header section.
    case noBody
    /// The body is exactly this many bytes.
    case length(UInt64)
    /// The body uses the chunked transfer coding.
    case chunked
    /// The body runs until the connection closes (responses only).
    case untilClose
    /// The message ends with its header section and the connection stops speaking HTTP:
    /// a 2xx answer to CONNECT or 101 Switching Protocols.
    case tunnel

    /// The message being framed.
    enum Message {
        /// A request.
        case request
        /// A final (non-interim) response with `status`, answering a request with `method`.
        case response(status: Int, requestMethod: String)
    }

    /// Applies the message-length rules of RFC 9112 §6.3, in the RFC's order.
    ///
    /// Where the RFC lets a recipient choose, this picks the choice that keeps a proxy and the
    /// next hop from disagreeing on where a message ends: it rejects rather than guesses.
    /// - Throws: `HTTP1ParseError` (400/501 for requests, 502 for responses) when the framing
    ///   headers are contradictory or malformed.
    static func of(
        _ message: Message, version: HTTPVersion, headers: HTTPHeaders
    ) throws(HTTP1ParseError) -> MessageFraming {
        let side: MessageSide
        switch message {
        case .request:
            side = .request
        case .response(let status, let method):
            side = .response
            // 2. "Any 2xx (Successful) response to a CONNECT request implies that the connection
            //    will become a tunnel immediately after the empty line that concludes the header fields."
            //    Checked before rule 1 so that a 204 to CONNECT also opens the tunnel (RFC 9110
            //    §9.3.6: "Any 2xx (Successful) response indicates that the sender ... will switch
            //    to tunnel mode"); both rules agree that there is no body.
            if method == "CONNECT" && (200..<300).contains(status) { return .tunnel }
            // 1. "Any response to a HEAD request and any response with a 1xx (Informational),
            //    204 (No Content), or 304 (Not Modified) status code is always terminated by the
            //    first empty line after the header fields ... and thus cannot contain content."
            //    101 also ends HTTP on the connection (RFC 9110 §15.2.2).
            if status == 101 { return .tunnel }
            if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 {
                return .noBody
            }
        }
        let hasTransferEncoding = headers.contains("Transfer-Encoding")
        let hasContentLength = headers.contains("Content-Length")
        // 3. "If a message is received with both a Transfer-Encoding and a Content-Length header
        //    field ... [it] ought to be handled as an error." A proxy that picks one while the
        //    next hop picks the other is the classic smuggling setup, so reject.
        if hasTransferEncoding && hasContentLength {
            throw HTTP1ParseError(
                .contentLengthWithTransferEncoding, "both Content-Length and Transfer-Encoding present", side: side)
        }
        // 4. "If a Transfer-Encoding header field is present and the chunked transfer coding is
        //    the final encoding, the message body length is determined by reading and decoding the
        //    chunked data ... If [it] is present in a response and the chunked transfer coding is
        //    not the final encoding, the message body length is determined by reading the
        //    connection until it is closed by the server. If [it] is present in a request and the
        //    chunked transfer coding is not the final encoding, ... the server MUST respond with
        //    the 400 (Bad Request) status code and then close the connection."
        if hasTransferEncoding {
            // §6.1: "A server or client that receives an HTTP/1.0 message containing a
            // Transfer-Encoding header field MUST treat the message as if the framing is faulty".
            if version == .http10 {
                throw HTTP1ParseError(
                    .transferEncodingInHTTP10, "Transfer-Encoding in an HTTP/1.0 message", side: side)
            }
            let finalIsChunked = try TransferCodings.finalIsChunked(headers, side: side)
            if finalIsChunked { return .chunked }
            guard side == .response else {
                throw HTTP1ParseError(
                    .transferEncodingNotChunked, "Transfer-Encoding whose final coding is not chunked", side: side)
            }
            return .untilClose
        }
        // 5. "If a message is received without Transfer-Encoding and with an invalid
        //    Content-Length header field, then the message framing is invalid and the recipient
        //    MUST treat it as an unrecoverable error."
        // 6. "If a valid Content-Length header field is present without Transfer-Encoding, its
        //    decimal value defines the expected message body length in octets."
        if hasContentLength {
            let length = try ContentLength.parse(headers, side: side)
            return length == 0 ? .noBody : .length(length)
        }
        switch side {
        case .request:
            // 7. "If this is a request message and none of the above are true, then the message
            //    body length is zero (no message body is present)."
            return .noBody
        case .response:
            // 8. "Otherwise, this is a response message without a declared message body length,
            //    so the message body length is determined by the number of octets received prior
            //    to the server closing the connection."
            return .untilClose
        }
    }
}
