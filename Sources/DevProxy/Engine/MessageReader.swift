import Foundation
import HTTP1

/// The shape both HTTP/1 parsers share, so one reading loop serves requests and responses.
protocol HTTP1Parsing {
    associatedtype Head: Equatable & Sendable & HTTP1MessageHead
    mutating func feed(_ bytes: some Collection<UInt8>)
    mutating func feed(_ bytes: [UInt8])
    mutating func next() throws(HTTP1ParseError) -> HTTP1Event<Head>?
    mutating func finish() throws(HTTP1ParseError) -> HTTP1Event<Head>?
    mutating func takeRemainingBytes() -> [UInt8]
}

extension HTTP1RequestParser: HTTP1Parsing {}
extension HTTP1ResponseParser: HTTP1Parsing {}

/// What `MessageReader` reads of a head besides its framing.
protocol HTTP1MessageHead {
    var headers: HTTPHeaders { get }
    /// A 1xx response: no body, and the final head follows.
    var isInterimHead: Bool { get }
}

extension HTTPRequestHead: HTTP1MessageHead {
    var isInterimHead: Bool { false }
}

extension HTTPResponseHead: HTTP1MessageHead {
    var isInterimHead: Bool { isInterim }
}

/// Reads HTTP/1 events from a stream: asks the parser first, reads more bytes only when it
/// needs them. Memory stays bounded by one read buffer plus the parser's own limits.
final class MessageReader<Parser: HTTP1Parsing> {
    var parser: Parser
    let stream: ByteStream
    /// Allocated on first read and dropped by `releaseBuffer`: a thousand idle connections
    /// must not each pin a read buffer.
    private var buffer: [UInt8] = []
    private let bufferSize: Int
    /// Set when the stream reached EOF.
    private(set) var sawEOF = false
    /// Total bytes read from the stream.
    private(set) var bytesRead = 0
    /// An event parsed from buffered bytes by `hasBufferedInput`, returned by the next `next`.
    private var pendingEvent: HTTP1Event<Parser.Head>?
    /// Events `inject` handed back, returned after `pendingEvent`, before anything is read.
    private var injected: [HTTP1Event<Parser.Head>] = []

    /// Reads at least this long give the parser their array instead of a copy; shorter ones (a
    /// request head) are copied and the read buffer is kept for the next read.
    static var handOverSize: Int { 4096 }

    /// - Parameter bufferSize: bytes per read; 16 KiB is one full TLS record.
    init(stream: ByteStream, parser: Parser, bufferSize: Int = 16 * 1024) {
        self.stream = stream
        self.parser = parser
        self.bufferSize = bufferSize
    }

    /// Frees the read buffer (a CONNECT's plain reader once the tunnel or TLS takes over).
    func releaseBuffer() {
        buffer = []
    }

    /// The current message's transfer codings other than chunked (`Transfer-Encoding: gzip,
    /// chunked`, RFC 9112 §7), undone here: they are hop-by-hop, so the next hop gets the body
    /// decoded (the relays drop `Transfer-Encoding` and frame the body their own way). Without
    /// this a client got the gzip bytes as the body itself, with nothing saying so.
    private var transferDecoding: ContentDecodingStream?
    /// Whether the current transfer-coded message had body bytes (a HEAD's answer has none).
    private var transferCoded = false

    /// The next event, reading as needed; nil at a clean EOF between messages. Transfer codings
    /// other than chunked are undone (see `transferDecoding`).
    ///
    /// - Parameter deadline: when set, the whole wait must finish by then (a client
    ///   trickling one byte at a time cannot hold the connection past it).
    /// - Throws: `HTTP1ParseError`, `NetworkError` (`.timedOut` past the deadline), `TLSError`.
    func next(deadline: Date? = nil) throws -> HTTP1Event<Parser.Head>? {
        while true {
            let event = try nextCoded(deadline: deadline)
            switch event {
            case .head(let head)?:
                transferDecoding = nil
                transferCoded = false
                // Plain `chunked` (nearly every coded message) is the parser's alone.
                guard !head.isInterimHead, let first = head.headers["Transfer-Encoding"],
                      !first.equalsCaseInsensitive("chunked") else { return event }
                let codings = head.headers.transferCodings.filter { $0 != "chunked" }
                if !codings.isEmpty {
                    let list = codings.joined(separator: ", ")
                    guard let stream = ContentDecodingStream(contentEncoding: list, outputLimit: .max) else {
                        throw HTTP1ParseError(code: .unknownTransferCoding, status: status(for: .unknownTransferCoding),
                                              reason: "transfer coding \"\(list)\" cannot be decoded (gzip and deflate can)")
                    }
                    transferDecoding = stream
                }
                return event
            case .body(let bytes)? where transferDecoding != nil:
                transferCoded = true
                var decoded: [UInt8] = []
                let going = bytes.withUnsafeBytes { input in
                    transferDecoding?.write(input) { decoded.append(contentsOf: $0) } ?? false
                }
                if !going, let end = transferDecoding?.end, end != .complete {
                    throw transferFailure(end)
                }
                if decoded.isEmpty { continue }
                return .body(decoded)
            case .end? where transferDecoding != nil:
                let end = transferCoded ? transferDecoding?.finish() : .complete
                transferDecoding = nil
                if let end, end != .complete { throw transferFailure(end) }
                return event
            default:
                return event
            }
        }
    }

    /// Hands `events` out again before anything else is read: a request body a breakpoint read
    /// off the client (`HTTPExchange+Intercept`) goes on through the usual transfer as if it were
    /// still arriving. They go out through `pendingEvent`, so a reader given none pays nothing.
    /// Only between messages or within one without transfer codings other than chunked: `next`
    /// would decode the events again.
    func inject(_ events: [HTTP1Event<Parser.Head>]) {
        var queue = events
        if let pending = pendingEvent { queue.append(pending) }
        guard !queue.isEmpty else { return }
        pendingEvent = queue.removeFirst()
        injected = queue + injected
    }

    private func transferFailure(_ end: ContentDecoder.End) -> HTTP1ParseError {
        HTTP1ParseError(code: .invalidTransferEncoding, status: status(for: .invalidTransferEncoding),
                        reason: end == .inputEnded ? "the transfer-coded body (gzip or deflate) ended before its coded stream did"
                                                   : "the transfer-coded body (gzip or deflate) did not decode")
    }

    /// The status the parsers give `code`: a request's own (`requestStatus`), 502 for a response.
    private func status(for code: HTTP1ParseError.Code) -> Int {
        Parser.Head.self == HTTPRequestHead.self ? code.requestStatus : 502
    }

    private func nextCoded(deadline: Date?) throws -> HTTP1Event<Parser.Head>? {
        if let event = pendingEvent {
            pendingEvent = injected.isEmpty ? nil : injected.removeFirst()
            return event
        }
        while true {
            if let event = try parser.next() { return event }
            if sawEOF { return try parser.finish() }
            if let deadline {
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { throw NetworkError(.timedOut, "timed out") }
                // Only ever tighten, and only by more than a tenth: the socket's timeout already
                // bounds one read, and a head read at once (the usual case) then costs no
                // setsockopt calls here nor in the caller's reset afterwards.
                if remaining < stream.socket.timeout * 0.9 { stream.socket.setTimeout(max(0.001, remaining)) }
            }
            if buffer.isEmpty {
                // Every byte is written by the read before the parser sees it.
                buffer = [UInt8](unsafeUninitializedCapacity: bufferSize) { _, initialized in initialized = bufferSize }
            }
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 {
                sawEOF = true
            } else if count >= Self.handOverSize {
                // A full read (a streamed body's TLS record): the array itself goes to the parser,
                // which hands it on as the body part, so the bytes reach the client uncopied.
                bytesRead += count
                buffer.removeLast(buffer.count - count)
                parser.feed(buffer)
                buffer = []
            } else {
                bytesRead += count
                parser.feed(buffer[0..<count])
            }
        }
    }

    /// Whether input has arrived, without waiting: an event the parser holds, or bytes the stream
    /// or the socket received, read here (without blocking) into the parser; TLS's own messages
    /// (a TLS 1.3 server's session tickets) are not input. True at the peer's close too, which
    /// the next read reports.
    func hasArrivedInput() throws -> Bool {
        if try hasParsedEvent() { return true }
        guard stream.pending > 0 || stream.inputReady else { return false }
        var chunk = [UInt8](repeating: 0, count: bufferSize)
        let read = try? stream.socket.withoutBlocking {
            try chunk.withUnsafeMutableBytes { try stream.readAvailable(into: $0) }
        }
        guard let count = read else { return false }
        if count == 0 {
            sawEOF = true
            return true
        }
        bytesRead += count
        parser.feed(chunk[0..<count])
        return true
    }

    /// Whether the parser has an event ready from the bytes it holds (kept for the next `next`).
    private func hasParsedEvent() throws -> Bool {
        if pendingEvent != nil { return true }
        pendingEvent = try parser.next()
        return pendingEvent != nil
    }

    /// Whether the next message has already begun arriving: a pipelined request the parser
    /// holds, or bytes TLS has decrypted (neither shows up in poll()).
    func hasBufferedInput() throws -> Bool {
        if pendingEvent != nil || stream.pending > 0 { return true }
        pendingEvent = try parser.next()
        return pendingEvent != nil
    }
}
