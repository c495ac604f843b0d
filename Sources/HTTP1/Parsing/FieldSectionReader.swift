/// Reads a header or trailer section line by line as bytes arrive, enforcing its size and count limits.
///
/// Each complete field line is validated, stored and consumed at once, so only the line in
/// progress stays buffered and a section over its limit fails before it is all received.
struct FieldSectionReader: Sendable {
    /// Which section is read; it picks limits and error wording.
    enum Kind: Sendable {
        /// The header section after a start line.
        case header
        /// The trailer section after a last chunk.
        case trailer
    }

    private let kind: Kind
    private let maxBytes: Int
    private let maxCount: Int
    private var scanner = LineScanner()
    private var fields = HTTPHeaders()
    private var byteCount = 0

    /// Creates a reader for a `kind` section bounded by `limits`.
    init(_ kind: Kind, limits: HTTP1Limits) {
        self.kind = kind
        switch kind {
        case .header: (maxBytes, maxCount) = (limits.maxHeaderBlockSize, limits.maxHeaderCount)
        case .trailer: (maxBytes, maxCount) = (limits.maxTrailerBlockSize, limits.maxTrailerCount)
        }
    }

    /// Consumes complete field lines from `buffer`.
    ///
    /// - Returns: the fields once the empty line ending the section is consumed; nil while more bytes are needed.
    /// - Throws: `HTTP1ParseError` for a malformed line or a section over its limits.
    mutating func read(from buffer: inout InputBuffer, side: MessageSide) throws(HTTP1ParseError) -> HTTPHeaders? {
        while true {
            switch scanner.scan(buffer) {
            case .incomplete(let pending):
                // The line in progress will count at least `pending` bytes (the LF is still to come).
                try checkSize(byteCount + pending, side: side)
                return nil
            case .bareLF(let pending):
                try checkSize(byteCount + pending, side: side)
                throw LineScanner.bareLF("header line", side: side)
            case .line(let length):
                byteCount += length + 2
                try checkSize(byteCount, side: side)
                if length == 0 {
                    buffer.consume(2)
                    return fields
                }
                try addField(buffer[0..<length], side: side)
                buffer.consume(length + 2)
            }
        }
    }

    private mutating func addField(_ line: ArraySlice<UInt8>, side: MessageSide) throws(HTTP1ParseError) {
        if let first = line.first, ASCII.isWhitespace(first) {
            // RFC 9112 §5.2: obs-fold is deprecated; a proxy "MUST either reject the message ... or
            // replace each received obs-fold with one or more SP". §2.2 says the same of whitespace
            // between the start line and the first field. Rejecting keeps both hops in agreement.
            let reason = kind == .header && fields.isEmpty
                ? "whitespace between the start line and the first header field"
                : "obsolete line folding (obs-fold) in \(noun) section"
            throw HTTP1ParseError(.obsoleteLineFolding, reason, side: side)
        }
        guard fields.count < maxCount else {
            throw HTTP1ParseError(
                kind == .header ? .tooManyHeaders : .tooManyTrailers,
                "more than \(maxCount) \(noun) fields", side: side)
        }
        // Room for a typical response's fields at once: growing 1, 2, 4, 8, 16 copied them four times.
        if fields.isEmpty { fields.reserveCapacity(16) }
        let (name, value) = try FieldLine.parse(line, side: side)
        fields.add(name: name, value: value)
    }

    private func checkSize(_ size: Int, side: MessageSide) throws(HTTP1ParseError) {
        guard size > maxBytes else { return }
        throw HTTP1ParseError(
            kind == .header ? .headerBlockTooLarge : .trailerBlockTooLarge,
            "\(noun) section larger than \(maxBytes) bytes", side: side)
    }

    private var noun: String { kind == .header ? "header" : "trailer" }
}
