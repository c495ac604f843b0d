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
        for value in headers.values("Content-Length") {
            for element in HTTPHeaders.commaSeparated(value) {
                let length = try parseElement(element, side: side)
                if let result, result != length {
                    throw HTTP1ParseError(
                        .conflictingContentLength, "several differing Content-Length values", side: side)
                }
                result = length
            }
        }
        guard let result else {
            throw HTTP1ParseError(.invalidContentLength, "Content-Length is empty", side: side)
        }
        return result
    }

    private static func parseElement(_ element: Substring, side: MessageSide) throws(HTTP1ParseError) -> UInt64 {
        guard !element.isEmpty, element.utf8.allSatisfy(ASCII.isDigit) else {
            throw HTTP1ParseError(.invalidContentLength, "Content-Length is not a decimal number", side: side)
        }
        var length: UInt64 = 0
        for digit in element.utf8 {
            let (times10, overflow1) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else {
                throw HTTP1ParseError(.invalidContentLength, "Content-Length overflows 64 bits", side: side)
            }
            length = sum
        }
        return length
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
