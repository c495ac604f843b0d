/// Parsing of one `field-line = field-name ":" OWS field-value OWS` (RFC 9112 §5).
enum FieldLine {
    /// Splits and validates one field line, given without its CRLF.
    ///
    /// - Parameters:
    ///   - line: the bytes of the line; the caller has already rejected a leading SP/HTAB.
    ///   - side: which kind of message this line belongs to, for the error status.
    /// - Returns: the name as sent and the value without surrounding whitespace.
    /// - Throws: `HTTP1ParseError` naming the first problem: missing colon, empty or non-token name,
    ///   whitespace before the colon, or a NUL, bare CR or other control character.
    static func parse(_ line: ArraySlice<UInt8>, side: MessageSide) throws(HTTP1ParseError) -> (String, String) {
        try rejectForbiddenBytes(line, side: side)
        guard let colon = line.firstIndex(of: ASCII.colon) else {
            throw HTTP1ParseError(.missingColon, "header line has no colon", side: side)
        }
        let name = line[..<colon]
        guard let last = name.last else {
            throw HTTP1ParseError(.invalidHeaderName, "header field name is empty", side: side)
        }
        // RFC 9112 §5.1: "No whitespace is allowed between the field name and colon ... A server
        // MUST reject [it] with 400"; a proxy must remove it from responses, and we reject instead.
        if ASCII.isWhitespace(last) {
            throw HTTP1ParseError(.whitespaceBeforeColon, "whitespace between header field name and colon", side: side)
        }
        if let bad = name.first(where: { !ASCII.isTokenChar($0) }) {
            throw HTTP1ParseError(
                .invalidHeaderName, "header field name contains an invalid character (\(ASCII.hex(bad)))", side: side)
        }
        let value = ASCII.trimmingWhitespace(line[(colon + 1)...])
        return (String(decoding: name, as: UTF8.self), ASCII.decodeText(value))
    }

    /// Rejects NUL, CR and other control characters (HTAB aside) anywhere in a line.
    ///
    /// RFC 9110 §5.5: "Field values containing CR, LF, or NUL characters are invalid and dangerous".
    static func rejectForbiddenBytes(
        _ line: ArraySlice<UInt8>, in what: String = "header line", side: MessageSide
    ) throws(HTTP1ParseError) {
        guard let bad = line.first(where: ASCII.isForbiddenControl) else { return }
        switch bad {
        case ASCII.nul:
            throw HTTP1ParseError(.nulCharacter, "NUL byte in \(what)", side: side)
        case ASCII.cr:
            throw HTTP1ParseError(.bareCR, "bare CR (not followed by LF) in \(what)", side: side)
        default:
            throw HTTP1ParseError(
                .invalidHeaderValue, "control character \(ASCII.hex(bad)) in \(what)", side: side)
        }
    }
}
