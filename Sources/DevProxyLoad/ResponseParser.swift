/// Incremental HTTP/1.1 response reader for GET: bytes in, "need more" or "complete" out.
///
/// Sans-IO: it never touches a socket. Body bytes are counted and dropped, never copied, so
/// streaming a 256 MiB body costs no memory. Message length follows RFC 9112 §6.3: "a response
/// to a HEAD request [or] any response with a 1xx, 204 or 304 status code" has no body; else
/// chunked when Transfer-Encoding's final coding is chunked; else Content-Length; else the body
/// runs until the server closes the connection.
///
/// Heads and chunk lines are found with `memchr` and read in place as bytes (`ResponseHead`);
/// only the part of one that is split across reads is copied, to be completed by the next feed.
struct ResponseParser {
    /// Limit on the status line plus headers, so a broken peer cannot grow memory without bound.
    static let maxHeadBytes = 64 * 1024
    /// Limit on one chunk-size or trailer line, for the same reason.
    static let maxChunkLineBytes = 4096

    private enum State {
        case head
        case fixed(remaining: UInt64)
        case chunkSize
        case chunkData(remaining: UInt64)
        case chunkDataEnd(remaining: Int)
        case trailers
        case untilClose
        case done
    }

    private var state = State.head
    /// The start of a head or chunk line whose end has not arrived yet. A head or line that
    /// arrives whole in one `feed` is parsed where it lies and never copied here.
    private var line: [UInt8] = []
    /// Status code, once the head has been read.
    private(set) var status = 0
    /// Whether the server said it will close the connection after this response.
    private(set) var closesConnection = false
    /// Body bytes seen so far (chunk framing excluded).
    private(set) var bodyBytes: UInt64 = 0
    /// Whether any byte of the response has arrived (time to first byte).
    private(set) var started = false

    /// Whether the whole response has been read.
    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Consumes `bytes`.
    /// - Returns: how many bytes belong to this response (the rest, if any, would be a
    ///   response nobody asked for).
    /// - Throws: `LoadError(.io)` on a malformed response.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(LoadError) -> Int {
        if !bytes.isEmpty { started = true }
        var index = 0
        while index < bytes.count {
            switch state {
            case .done:
                return index
            case .head:
                index = try feedHead(bytes, from: index)
            case .fixed(let remaining):
                let take = min(UInt64(bytes.count - index), remaining)
                index += Int(take)
                bodyBytes += take
                state = remaining == take ? .done : .fixed(remaining: remaining - take)
            case .untilClose:
                bodyBytes += UInt64(bytes.count - index)
                index = bytes.count
            case .chunkSize, .trailers:
                index = try feedChunkLine(bytes, from: index)
            case .chunkData(let remaining):
                let take = min(UInt64(bytes.count - index), remaining)
                index += Int(take)
                bodyBytes += take
                state = remaining == take ? .chunkDataEnd(remaining: 2) : .chunkData(remaining: remaining - take)
            case .chunkDataEnd(let remaining):
                let expected: UInt8 = remaining == 2 ? 0x0D : 0x0A
                guard bytes[index] == expected else { throw Self.malformed("chunk data not followed by CRLF") }
                index += 1
                state = remaining == 2 ? .chunkDataEnd(remaining: 1) : .chunkSize
            }
        }
        return index
    }

    /// Tells the parser the peer closed; completes a read-until-close body.
    /// - Returns: whether the response is now complete.
    mutating func finishOnClose() -> Bool {
        if case .untilClose = state { state = .done }
        return isComplete
    }

    /// Takes head bytes from `bytes[start...]` up to the blank line that ends the head, and
    /// parses the head when that line is there.
    /// - Returns: the index after the bytes taken.
    private mutating func feedHead(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(LoadError) -> Int {
        let end = headEnd(in: bytes, from: start)
        guard let head = try gatherLine(bytes, from: start, end: end, limit: Self.maxHeadBytes, tooLong: "response head over 64 KiB",
                                        parse: { whole throws(LoadError) in try ResponseHead(parsing: whole) }),
              let end else { return bytes.count }
        begin(head)
        return end
    }

    /// Gathers one line (a head, a chunk line) that continues `line` with `bytes[start..<end]`,
    /// within `limit` bytes. `end` is where the line stops, nil while its terminator has not come.
    /// - Returns: `parse` of the whole line once it is complete (uncopied when it all arrived in
    ///   `bytes`); nil while it is not, its bytes then kept in `line`.
    private mutating func gatherLine<T>(_ bytes: UnsafeRawBufferPointer, from start: Int, end: Int?, limit: Int, tooLong: String,
                                        parse: (UnsafeRawBufferPointer) throws(LoadError) -> T) throws(LoadError) -> T? {
        guard line.count + (end ?? bytes.count) - start <= limit else { throw Self.malformed(tooLong) }
        guard let end else {
            line.append(contentsOf: bytes.bytes(from: start, to: bytes.count))
            return nil
        }
        if line.isEmpty { return try parse(bytes.bytes(from: start, to: end)) }
        line.append(contentsOf: bytes.bytes(from: start, to: end))
        defer { line.removeAll(keepingCapacity: true) }
        return try line.withUnsafeBytes { whole in Result { () throws(LoadError) in try parse(whole) } }.get()
    }

    /// Index in `bytes` just past the CRLFCRLF that ends the head, which continues `line`
    /// with `bytes[start...]`; nil when the head does not end in `bytes`.
    private func headEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        // The first bytes of CRLFCRLF may have arrived in an earlier feed, at the end of `line`.
        func byte(at index: Int) -> UInt8? {
            if index >= start { return bytes[index] }
            let inLine = line.count - (start - index)
            return inLine >= 0 ? line[inLine] : nil
        }
        var from = start
        while let lf = bytes.firstIndex(of: 0x0A, from: from) {
            if lf >= start + 3 {
                if bytes[lf - 1] == 0x0D && bytes[lf - 2] == 0x0A && bytes[lf - 3] == 0x0D { return lf + 1 }
            } else if byte(at: lf - 1) == 0x0D && byte(at: lf - 2) == 0x0A && byte(at: lf - 3) == 0x0D {
                return lf + 1
            }
            from = lf + 1
        }
        return nil
    }

    /// Frames the body per the head just parsed (RFC 9112 §6.3); an interim 1xx head only
    /// says another head follows.
    private mutating func begin(_ head: ResponseHead) {
        closesConnection = head.closesConnection
        if (100...199).contains(head.status) {
            return  // interim response; the real one follows
        }
        status = head.status
        if head.status == 204 || head.status == 304 {
            state = .done
        } else if head.chunked {
            state = .chunkSize
        } else if let contentLength = head.contentLength {
            state = contentLength == 0 ? .done : .fixed(remaining: contentLength)
        } else {
            state = .untilClose
            closesConnection = true
        }
    }

    /// Takes a chunk-size or trailer line from `bytes[start...]`, and acts on it when its LF is there.
    /// - Returns: the index after the bytes taken.
    private mutating func feedChunkLine(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(LoadError) -> Int {
        let lf = bytes.firstIndex(of: 0x0A, from: start)
        let inTrailers: Bool
        if case .trailers = state { inTrailers = true } else { inTrailers = false }
        guard let next = try gatherLine(bytes, from: start, end: lf, limit: Self.maxChunkLineBytes, tooLong: "chunk line over 4 KiB",
                                        parse: { whole throws(LoadError) in try Self.state(afterChunkLine: whole, inTrailers: inTrailers) }),
              let lf else { return bytes.count }
        state = next
        return lf + 1
    }

    /// The state after a complete chunk-size or trailer line (without its LF): the chunk's data,
    /// the trailers after the last chunk, or the end after the blank line.
    private static func state(afterChunkLine bytes: UnsafeRawBufferPointer,
                              inTrailers: Bool) throws(LoadError) -> State {
        let content = bytes.last == 0x0D ? bytes.bytes(from: 0, to: bytes.count - 1) : bytes
        if inTrailers { return content.isEmpty ? .done : .trailers }
        var digitsEnd = 0  // drop ";ext" and spaces
        while digitsEnd < content.count, content[digitsEnd] != 0x3B, content[digitsEnd] != 0x20,
              content[digitsEnd] != 0x09 {
            digitsEnd += 1
        }
        let digits = content.bytes(from: 0, to: digitsEnd)
        guard !digits.isEmpty, digits.count <= 15, let size = digits.unsignedInteger(radix: 16) else {
            throw malformed("bad chunk size line")
        }
        return size == 0 ? .trailers : .chunkData(remaining: size)
    }

    private static func malformed(_ reason: String) -> LoadError {
        LoadError(kind: .io, reason: reason)
    }
}
