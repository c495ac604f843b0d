import HTTPTypes

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
        // Every field line of every message passes here: one pass over the raw bytes for the
        // forbidden ones, the colon and whether the value is ASCII, no bounds checks, no
        // intermediate slices. ~1,000 instructions a line when it went through ArraySlice's
        // subscripts and four loops (callgrind, HTTP/1.1 keep-alive).
        try line.withUnsafeBufferPointer { bytes throws(HTTP1ParseError) in try parse(bytes, side: side) }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, side: MessageSide) throws(HTTP1ParseError) -> (String, String) {
        var colon = -1
        var nonASCII = false
        if isPrintableASCII(bytes) {
            colon = bytes.firstIndex(of: ASCII.colon) ?? -1
        } else {
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if ASCII.isForbiddenControl(byte) { throw forbidden(byte, in: "header line", side: side) }
                if byte == ASCII.colon && colon < 0 { colon = index }
                if byte >= 0x80 { nonASCII = true }
            }
        }
        guard colon >= 0 else {
            throw HTTP1ParseError(.missingColon, "header line has no colon", side: side)
        }
        guard colon > 0 else {
            throw HTTP1ParseError(.invalidHeaderName, "header field name is empty", side: side)
        }
        // RFC 9112 §5.1: "No whitespace is allowed between the field name and colon ... A server
        // MUST reject [it] with 400"; a proxy must remove it from responses, and we reject instead.
        if ASCII.isWhitespace(bytes[colon - 1]) {
            throw HTTP1ParseError(.whitespaceBeforeColon, "whitespace between header field name and colon", side: side)
        }
        for index in 0..<colon where !ASCII.isTokenChar(bytes[index]) {
            let reason = "header field name contains an invalid character (\(ASCII.hex(bytes[index])))"
            throw HTTP1ParseError(.invalidHeaderName, reason, side: side)
        }
        var start = colon + 1
        var end = bytes.count
        while start < end && ASCII.isWhitespace(bytes[start]) { start += 1 }
        while end > start && ASCII.isWhitespace(bytes[end - 1]) { end -= 1 }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<colon]), as: UTF8.self)
        let value = UnsafeBufferPointer(rebasing: bytes[start..<end])
        // A name is all tchar (ASCII); a value with a byte past ASCII takes decodeText's rules.
        return (name, nonASCII ? ASCII.decodeText(ArraySlice(value)) : String(decoding: value, as: UTF8.self))
    }

    /// Whether every byte is printable ASCII (0x20–0x7E), eight bytes at a time: nearly every
    /// field line is, and then no byte needs a closer look. A tab, a control byte, DEL or a byte
    /// past ASCII answers false, and the caller looks at each byte.
    static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !WordScan.any(bytes, word: {
            WordScan.hasByte(below: 0x20, in: $0) || WordScan.hasByte(0x7F, in: $0) || WordScan.hasNonASCII(in: $0)
        }, byte: { $0 < 0x20 || $0 >= 0x7F })
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
        throw forbidden(line[index], in: what, side: side)
    }

    /// The error for forbidden byte `bad` in `what`.
    private static func forbidden(_ bad: UInt8, in what: String, side: MessageSide) -> HTTP1ParseError {
        switch bad {
        case ASCII.nul:
            return HTTP1ParseError(.nulCharacter, "NUL byte in \(what)", side: side)
        case ASCII.cr:
            return HTTP1ParseError(.bareCR, "bare CR (not followed by LF) in \(what)", side: side)
        default:
            return HTTP1ParseError(.invalidHeaderValue, "control character \(ASCII.hex(bad)) in \(what)", side: side)
        }
    }
}
