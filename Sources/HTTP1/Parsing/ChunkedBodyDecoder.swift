/// Decodes the chunked transfer coding (RFC 9112 §7.1) as bytes arrive, yielding data and trailers.
///
/// ```
/// chunked-body = *chunk last-chunk trailer-section CRLF
/// chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
/// ```
/// Chunk data is passed on as soon as it is buffered; only a size line or trailer line in
/// progress is ever held, and both are bounded by `HTTP1Limits`.
struct ChunkedBodyDecoder: Sendable {
    private enum State: Sendable {
        case sizeLine
        case data(remaining: UInt64)
        case dataCRLF
        case trailers(FieldSectionReader)
        case done
    }

    private let limits: HTTP1Limits
    private let side: MessageSide
    private var state = State.sizeLine
    private var scanner = LineScanner()

    /// Creates a decoder for a body in a message read from `side`.
    init(limits: HTTP1Limits, side: MessageSide) {
        self.limits = limits
        self.side = side
    }

    /// Decodes what `buffer` holds.
    ///
    /// - Returns: `.data` with every chunk byte buffered (up to the end of the current chunk),
    ///   `.end` with the trailers after the last chunk, or nil when more bytes are needed.
    /// - Throws: `HTTP1ParseError` for malformed framing.
    mutating func next(from buffer: inout InputBuffer) throws(HTTP1ParseError) -> BodyPart? {
        while true {
            switch state {
            case .sizeLine:
                guard let size = try readSizeLine(from: &buffer) else { return nil }
                state = size == 0 ? .trailers(FieldSectionReader(.trailer, limits: limits)) : .data(remaining: size)
            case .data(let remaining):
                guard !buffer.isEmpty else { return nil }
                let n = Int(min(UInt64(buffer.count), remaining))
                state = remaining == UInt64(n) ? .dataCRLF : .data(remaining: remaining - UInt64(n))
                return .data(buffer.read(n))
            case .dataCRLF:
                if buffer.count >= 1 && buffer[0] != ASCII.cr || buffer.count >= 2 && buffer[1] != ASCII.lf {
                    throw HTTP1ParseError(.missingChunkDataCRLF, "missing CRLF after chunk data", side: side)
                }
                guard buffer.count >= 2 else { return nil }
                buffer.consume(2)
                state = .sizeLine
            case .trailers(var reader):
                let trailers = try reader.read(from: &buffer, side: side)
                state = .trailers(reader)
                guard let trailers else { return nil }
                state = .done
                return .end(trailers: trailers)
            case .done:
                return nil
            }
        }
    }

    /// Reads `chunk-size [ chunk-ext ] CRLF`, returning the size once the whole line is buffered.
    private mutating func readSizeLine(from buffer: inout InputBuffer) throws(HTTP1ParseError) -> UInt64? {
        switch scanner.scan(buffer) {
        case .incomplete(let pending):
            // Fail as soon as the line in progress is over its limits, not when it ends.
            var line = buffer[0..<pending]
            if line.last == ASCII.cr { line.removeLast() }
            _ = try checkSizeLine(line, complete: false)
            return nil
        case .bareLF(let pending):
            _ = try checkSizeLine(buffer[0..<pending], complete: false)
            throw LineScanner.bareLF("chunk size line", side: side)
        case .line(let length):
            let size = try checkSizeLine(buffer[0..<length], complete: true)
            buffer.consume(length + 2)
            return size
        }
    }

    /// Validates a chunk size line (without CRLF) and returns the size; nil when `complete` is false.
    private func checkSizeLine(_ line: ArraySlice<UInt8>, complete: Bool) throws(HTTP1ParseError) -> UInt64? {
        let digits = line.prefix { ASCII.hexValue($0) != nil }
        if digits.count > limits.maxChunkSizeDigits {
            throw HTTP1ParseError(
                .chunkSizeTooLarge, "chunk size has more than \(limits.maxChunkSizeDigits) hex digits", side: side)
        }
        let extensionBytes = line[digits.endIndex...]
        if extensionBytes.count > limits.maxChunkExtensionLength {
            throw HTTP1ParseError(
                .chunkExtensionTooLong, "chunk extension longer than \(limits.maxChunkExtensionLength) bytes",
                side: side)
        }
        if let first = extensionBytes.first, !ASCII.isWhitespace(first), first != ASCII.semicolon || digits.isEmpty {
            throw HTTP1ParseError(
                .invalidChunkSize, first == ASCII.minus ? "chunk size is negative" : "chunk size is not hexadecimal",
                side: side)
        }
        guard complete else { return nil }
        guard !digits.isEmpty else {
            throw HTTP1ParseError(.invalidChunkSize, "chunk size is not hexadecimal", side: side)
        }
        try validateExtension(extensionBytes)
        var size: UInt64 = 0
        for digit in digits {
            guard size >> 60 == 0 else {
                throw HTTP1ParseError(.chunkSizeTooLarge, "chunk size overflows 64 bits", side: side)
            }
            size = size << 4 | UInt64(ASCII.hexValue(digit)!)
        }
        return size
    }

    /// Checks `chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )` loosely:
    /// it must start with `;` after optional whitespace and hold no control characters.
    ///
    /// Extensions have no defined meaning and are relayed untouched, so their inner grammar is
    /// not enforced; what matters is that no byte can end the line early on another parser.
    private func validateExtension(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) {
        let trimmed = bytes.drop(while: ASCII.isWhitespace)
        guard let first = trimmed.first else {
            return
        }
        guard first == ASCII.semicolon, !trimmed.contains(where: ASCII.isForbiddenControl) else {
            throw HTTP1ParseError(.invalidChunkExtension, "malformed chunk extension", side: side)
        }
    }
}

/// A piece of a message body, as the body readers hand it to the parsers.
enum BodyPart: Sendable, Equatable {
    /// Decoded body bytes, never empty.
    case data([UInt8])
    /// The body is complete, with the trailer section if any.
    case end(trailers: HTTPHeaders)
}
