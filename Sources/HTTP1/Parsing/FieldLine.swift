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
        // Index loops rather than closures: this runs for every field line of every message.
        var colon = line.startIndex
        while colon < line.endIndex && line[colon] != ASCII.colon { colon += 1 }
        guard colon < line.endIndex else {
            throw HTTP1ParseError(.missingColon, "header line has no colon", side: side)
        }
        guard colon > line.startIndex else {
            throw HTTP1ParseError(.invalidHeaderName, "header field name is empty", side: side)
        }
        // RFC 9112 §5.1: "No whitespace is allowed between the field name and colon ... A server
        // MUST reject [it] with 400"; a proxy must remove it from responses, and we reject instead.
        if ASCII.isWhitespace(line[colon - 1]) {
            throw HTTP1ParseError(.whitespaceBeforeColon, "whitespace between header field name and colon", side: side)
        }
        for index in line.startIndex..<colon where !ASCII.isTokenChar(line[index]) {
            let reason = "header field name contains an invalid character (\(ASCII.hex(line[index])))"
            throw HTTP1ParseError(.invalidHeaderName, reason, side: side)
        }
        let value = ASCII.trimmingWhitespace(line[(colon + 1)...])
        return (String(decoding: line[..<colon], as: UTF8.self), ASCII.decodeText(value))
    }

    /// Rejects NUL, CR and other control characters (HTAB aside) anywhere in a line.
    ///
    /// RFC 9110 §5.5: "Field values containing CR, LF, or NUL characters are invalid and dangerous".
    static func rejectForbiddenBytes(
        _ line: ArraySlice<UInt8>, in what: String = "header line", side: MessageSide
    ) throws(HTTP1ParseError) {
        var index = line.startIndex
        while index < line.endIndex && !ASCII.isForbiddenControl(line[index]) { index += 1 }
        guard index < line.endIndex else { return }
        let bad = line[index]
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
