/// Reading of the two framing fields, Content-Length (RFC 9110 §8.6) and Transfer-Encoding (RFC 9112 §6.1).
enum ContentLength {
    /// The single length that every Content-Length field and list element states.
    ///
    /// RFC 9110 §8.6: a recipient may accept "a Content-Length header field value consisting of
    /// the same decimal value repeated as a comma-separated list" or repeated fields; any other
    /// value is invalid.
    /// - Throws: `.invalidContentLength` for a value that is not 1+ digits or overflows 64 bits,
    ///   `.conflictingContentLength` for values that differ.
    static func parse(_ headers: HTTPHeaders, side: MessageSide) throws(HTTP1ParseError) -> UInt64 {
        var result: UInt64?
        // Byte by byte: every response is framed by this, and String's split and trim work on
        // grapheme clusters.
        for value in headers.values("Content-Length") {
            var element = ElementParser()
            for byte in value.utf8 {
                if byte == ASCII.comma {
                    try element.finish(into: &result, side: side)
                    element = ElementParser()
                } else {
                    try element.take(byte, side: side)
                }
            }
            try element.finish(into: &result, side: side)
        }
        guard let result else {
            throw HTTP1ParseError(.invalidContentLength, "Content-Length is empty", side: side)
        }
        return result
    }

    /// One comma-separated element: optional whitespace, 1+ digits, optional whitespace.
    private struct ElementParser {
        private var length: UInt64 = 0
        private var digits = 0
        private var trailingSpace = false

        mutating func take(_ byte: UInt8, side: MessageSide) throws(HTTP1ParseError) {
            if ASCII.isWhitespace(byte) {
                if digits > 0 { trailingSpace = true }
                return
            }
            guard ASCII.isDigit(byte), !trailingSpace else {
                throw HTTP1ParseError(.invalidContentLength, "Content-Length is not a decimal number", side: side)
            }
            let (times10, overflow1) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else {
                throw HTTP1ParseError(.invalidContentLength, "Content-Length overflows 64 bits", side: side)
            }
            length = sum
            digits += 1
        }

        func finish(into result: inout UInt64?, side: MessageSide) throws(HTTP1ParseError) {
            guard digits > 0 else {
                throw HTTP1ParseError(.invalidContentLength, "Content-Length is not a decimal number", side: side)
            }
            if let result, result != length {
                throw HTTP1ParseError(.conflictingContentLength, "several differing Content-Length values", side: side)
            }
            result = length
        }
    }
}

/// The transfer codings of a message, as listed in its Transfer-Encoding fields.
enum TransferCodings {
    /// Codings registered with IANA that a request may carry (RFC 9112 §7). Anything else gets 501.
    private static let known: Set<String> = ["chunked", "compress", "deflate", "gzip", "x-compress", "x-gzip"]

    /// Whether the last transfer coding applied is chunked.
    ///
    /// - Throws: `.invalidTransferEncoding` when the list is empty or chunked is applied twice
    ///   (§6.1: "A sender MUST NOT apply the chunked transfer coding more than once"), and for
    ///   requests `.unknownTransferCoding` (501, §6.1: "A server that receives a request message
    ///   with a transfer coding it does not understand SHOULD respond with 501").
    static func finalIsChunked(_ headers: HTTPHeaders, side: MessageSide) throws(HTTP1ParseError) -> Bool {
        let codings = headers.transferCodings
        guard let last = codings.last else {
            throw HTTP1ParseError(.invalidTransferEncoding, "Transfer-Encoding is empty", side: side)
        }
        if codings.filter({ $0 == "chunked" }).count > 1 {
            throw HTTP1ParseError(
                .invalidTransferEncoding, "chunked transfer coding applied more than once", side: side)
        }
        if side == .request, let unknown = codings.first(where: { !known.contains($0) }) {
            throw HTTP1ParseError(.unknownTransferCoding, "unknown transfer coding \"\(unknown)\"", side: side)
        }
        return last == "chunked"
    }
}
