/// What one side of the exchange adds to the shared decoder: how its start line reads and how
/// its messages are framed.
protocol HTTP1MessageRole: Sendable {
    /// The parsed start line.
    associatedtype Line: Sendable
    /// The head the parser yields.
    associatedtype Head: Sendable & Equatable

    /// Which side's messages are read.
    static var side: MessageSide { get }

    /// Parses a start line given without its CRLF.
    static func parseLine(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> Line

    /// Builds the head from its parts and decides how its body is framed.
    ///
    /// - Returns: the head, and the framing or nil for an interim head after which another head follows.
    mutating func makeHead(_ line: Line, headers: HTTPHeaders) throws(HTTP1ParseError) -> (Head, MessageFraming?)
}

/// The machinery both parsers share: buffering, start-line and header-section reading, body
/// framing, end of input, and sticky errors.
///
/// `Role` supplies the start-line parser and the framing decision, and nothing else.
struct HTTP1MessageDecoder<Role: HTTP1MessageRole>: Sendable {
    private enum State: Sendable {
        /// Waiting for a start line; empty lines before it are skipped.
        case startLine
        /// Start line parsed, header section in progress.
        case fields(Role.Line, FieldSectionReader)
        /// Head delivered, body in progress.
        case body(BodyReader)
        /// The connection stopped speaking HTTP (CONNECT 2xx, 101); bytes are left for the caller.
        case tunnel
    }

    /// The side-specific part, reachable so the response parser can queue request methods.
    var role: Role
    private let limits: HTTP1Limits
    private var side: MessageSide { Role.side }
    private var buffer = InputBuffer()
    private var state = State.startLine
    private var scanner = LineScanner()
    private var atEOF = false
    private var failure: HTTP1ParseError?

    /// Creates a decoder bounded by `limits`.
    init(role: Role, limits: HTTP1Limits) {
        self.role = role
        self.limits = limits
    }

    /// Whether the connection stopped speaking HTTP after the last message (CONNECT 2xx or 101).
    var isTunnel: Bool {
        if case .tunnel = state { true } else { false }
    }

    /// Appends received bytes.
    mutating func feed(_ bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes, sharing the array when nothing else is buffered.
    mutating func feed(_ bytes: [UInt8]) {
        buffer.append(bytes)
    }

    /// Hands over every buffered, unparsed byte.
    mutating func takeRemainingBytes() -> [UInt8] {
        buffer.readAll()
    }

    /// The next event from the buffered bytes, or nil when more are needed.
    ///
    /// - Throws: the first parse error, and the same error on every later call.
    mutating func next() throws(HTTP1ParseError) -> HTTP1Event<Role.Head>? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    /// Marks the end of input, then returns the next event as `next()` does.
    ///
    /// A close-delimited body ends here; a message still missing bytes is `.truncated`.
    mutating func finish() throws(HTTP1ParseError) -> HTTP1Event<Role.Head>? {
        atEOF = true
        return try next()
    }

    private mutating func step() throws(HTTP1ParseError) -> HTTP1Event<Role.Head>? {
        switch state {
        case .startLine, .fields:
            guard let (line, headers) = try readHead() else { return nil }
            let (head, framing) = try role.makeHead(line, headers: headers)
            if let framing {
                state = .body(BodyReader(framing, limits: limits, side: side))
            }
            return .head(head)
        case .body(var reader):
            let part = try reader.next(from: &buffer, atEOF: atEOF)
            switch part {
            case .end where reader.framing == .tunnel: state = .tunnel
            case .end: state = .startLine
            default: state = .body(reader)
            }
            switch part {
            case .data(let bytes): return .body(bytes)
            case .end(let trailers): return .end(trailers: trailers)
            case nil:
                try throwIfTruncated()
                return nil
            }
        case .tunnel:
            return nil
        }
    }

    /// Reads a start line and header section; nil when more bytes are needed or, at the end of
    /// input, when no message has begun.
    private mutating func readHead() throws(HTTP1ParseError) -> (Role.Line, HTTPHeaders)? {
        if case .startLine = state {
            guard let line = try readStartLine() else { return nil }
            state = .fields(line, FieldSectionReader(.header, limits: limits))
        }
        guard case .fields(let line, var reader) = state else { return nil }
        let headers = try reader.read(from: &buffer, side: side)
        guard let headers else {
            state = .fields(line, reader)
            try throwIfTruncated()
            return nil
        }
        state = .startLine
        return (line, headers)
    }

    private mutating func readStartLine() throws(HTTP1ParseError) -> Role.Line? {
        if side == .response, !buffer.isEmpty, buffer[0] == 0, Self.startsWithSettingsFrame(buffer) {
            throw HTTP1ParseError(.http2Frames, "it answered with an HTTP/2 SETTINGS frame: it speaks only HTTP/2",
                                  side: side)
        }
        while true {
            if side == .request, !buffer.isEmpty { try checkForeignProtocol(buffer[0]) }
            let noun = side == .request ? "request line" : "status line"
            switch scanner.scan(buffer) {
            case .incomplete(let pending):
                // A trailing CR may be the first half of the CRLF that ends a line of exactly the limit.
                let length = pending > 0 && buffer[pending - 1] == ASCII.cr ? pending - 1 : pending
                try checkStartLineLength(length, noun: noun)
                if pending > 0 { try throwIfTruncated() }
                return nil
            case .bareLF(let pending):
                try checkStartLineLength(pending, noun: noun)
                throw LineScanner.bareLF(noun, side: side)
            case .line(let length):
                // RFC 9112 §2.2: "a server that is expecting to receive and parse a request-line
                // SHOULD ignore at least one empty line (CRLF) received prior to the request-line."
                if length == 0 {
                    buffer.consume(2)
                    continue
                }
                try checkStartLineLength(length, noun: noun)
                let line = try Role.parseLine(buffer[0..<length])
                buffer.consume(length + 2)
                return line
            }
        }
    }

    /// Refuses a request line whose first byte begins another protocol's opening (a method is a
    /// token, and these are control characters): a TLS handshake record (22, a ClientHello sent
    /// to a plain-HTTP port), a SOCKS5 greeting (5) or SOCKS4 request (4), whose clients wait
    /// for a reply rather than end a line. Only the first byte counts, checked where each line
    /// starts, so the answer does not depend on how the bytes arrive.
    private func checkForeignProtocol(_ first: UInt8) throws(HTTP1ParseError) {
        switch first {
        case 0x16:
            throw HTTP1ParseError(.tlsHandshake, "the client began a TLS handshake where an HTTP request belongs: "
                                  + "this port speaks plain HTTP", side: side)
        case 0x04, 0x05:
            throw HTTP1ParseError(.socksGreeting, "the client sent a SOCKS\(first) greeting where an HTTP request belongs",
                                  side: side)
        default:
            return
        }
    }

    /// Whether `buffer` starts with an HTTP/2 SETTINGS frame's header (RFC 9113 §6.5: type 4,
    /// flags 0 or ACK, stream 0, a length that is a multiple of 6), what an HTTP/2-only server
    /// sends first, where an HTTP/1.1 status line would start with `H`.
    static func startsWithSettingsFrame(_ buffer: InputBuffer) -> Bool {
        guard buffer.count >= 9 else { return false }
        let length = Int(buffer[0]) << 16 | Int(buffer[1]) << 8 | Int(buffer[2])
        return length % 6 == 0 && length <= 16_384 && buffer[3] == 0x04 && buffer[4] & 0xFE == 0
            && buffer[5] == 0 && buffer[6] == 0 && buffer[7] == 0 && buffer[8] == 0
    }

    private func checkStartLineLength(_ length: Int, noun: String) throws(HTTP1ParseError) {
        guard length > limits.maxStartLineLength else { return }
        throw HTTP1ParseError(.startLineTooLong, "\(noun) longer than \(limits.maxStartLineLength) bytes", side: side)
    }

    private func throwIfTruncated() throws(HTTP1ParseError) {
        guard atEOF else { return }
        throw HTTP1ParseError(.truncated, "connection closed before the message was complete", side: side)
    }
}
