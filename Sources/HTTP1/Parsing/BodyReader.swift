/// Reads one message body as framed by `MessageFraming`, passing bytes on as they arrive.
struct BodyReader: Sendable {
    /// How this body ends.
    let framing: MessageFraming
    private var remaining: UInt64
    private var chunked: ChunkedBodyDecoder?
    private var ended = false

    /// Creates a reader for a body framed as `framing`.
    init(_ framing: MessageFraming, limits: HTTP1Limits, side: MessageSide) {
        self.framing = framing
        if case .length(let length) = framing { remaining = length } else { remaining = 0 }
        chunked = framing == .chunked ? ChunkedBodyDecoder(limits: limits, side: side) : nil
    }

    /// The next body part from `buffer`, or nil when more bytes are needed.
    ///
    /// Returns nil too when the end of input came first for a body that needed more; the
    /// caller turns that into a truncation error. A close-delimited body ends at `atEOF`.
    mutating func next(from buffer: inout InputBuffer, atEOF: Bool) throws(HTTP1ParseError) -> BodyPart? {
        guard !ended else { return nil }
        switch framing {
        case .noBody, .tunnel:
            return end(trailers: HTTPHeaders())
        case .length:
            if remaining == 0 { return end(trailers: HTTPHeaders()) }
            guard !buffer.isEmpty else { return nil }
            let n = Int(min(UInt64(buffer.count), remaining))
            remaining -= UInt64(n)
            return .data(buffer.read(n))
        case .chunked:
            let part = try chunked?.next(from: &buffer)
            if case .end = part { ended = true }
            return part
        case .untilClose:
            if !buffer.isEmpty { return .data(buffer.readAll()) }
            return atEOF ? end(trailers: HTTPHeaders()) : nil
        }
    }

    private mutating func end(trailers: HTTPHeaders) -> BodyPart {
        ended = true
        return .end(trailers: trailers)
    }
}
