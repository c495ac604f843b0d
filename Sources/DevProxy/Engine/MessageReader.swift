import Foundation
import HTTP1

/// The shape both HTTP/1 parsers share, so one reading loop serves requests and responses.
protocol HTTP1Parsing {
    associatedtype Head: Equatable & Sendable
    mutating func feed(_ bytes: some Collection<UInt8>)
    mutating func feed(_ bytes: [UInt8])
    mutating func next() throws(HTTP1ParseError) -> HTTP1Event<Head>?
    mutating func finish() throws(HTTP1ParseError) -> HTTP1Event<Head>?
    mutating func takeRemainingBytes() -> [UInt8]
}

extension HTTP1RequestParser: HTTP1Parsing {}
extension HTTP1ResponseParser: HTTP1Parsing {}

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

    /// The next event, reading as needed; nil at a clean EOF between messages.
    ///
    /// - Parameter deadline: when set, the whole wait must finish by then (a client
    ///   trickling one byte at a time cannot hold the connection past it).
    /// - Throws: `HTTP1ParseError`, `NetworkError` (`.timedOut` past the deadline), `TLSError`.
    func next(deadline: Date? = nil) throws -> HTTP1Event<Parser.Head>? {
        if let event = pendingEvent {
            pendingEvent = nil
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

    /// Whether the next message has already begun arriving: a pipelined request the parser
    /// holds, or bytes TLS has decrypted (neither shows up in poll()).
    func hasBufferedInput() throws -> Bool {
        if pendingEvent != nil || stream.pending > 0 { return true }
        pendingEvent = try parser.next()
        return pendingEvent != nil
    }
}
