/// Incremental HTTP/1.1 response reader for GET: bytes in, "need more" or "complete" out.
///
/// Sans-IO: it never touches a socket. Body bytes are counted and dropped, never copied, so
/// streaming a 256 MiB body costs no memory. Message length follows RFC 9112 §6.3: "a response
/// to a HEAD request [or] any response with a 1xx, 204 or 304 status code" has no body; else
/// chunked when Transfer-Encoding's final coding is chunked; else Content-Length; else the body
/// runs until the server closes the connection.
struct ResponseParser {
    /// Limit on the status line plus headers, so a broken peer cannot grow memory without bound.
    static let maxHeadBytes = 64 * 1024

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
                let byte = bytes[index]
                index += 1
                line.append(byte)
                guard line.count <= Self.maxHeadBytes else { throw malformed("response head over 64 KiB") }
                if byte == 0x0A, line.count >= 4, line[line.count - 2] == 0x0D, line[line.count - 3] == 0x0A,
                   line[line.count - 4] == 0x0D {
                    try parseHead()
                }
            case .fixed(let remaining):
                let take = min(UInt64(bytes.count - index), remaining)
                index += Int(take)
                bodyBytes += take
                state = remaining == take ? .done : .fixed(remaining: remaining - take)
            case .untilClose:
                bodyBytes += UInt64(bytes.count - index)
                index = bytes.count
            case .chunkSize, .trailers:
                let byte = bytes[index]
                index += 1
                guard byte == 0x0A else {
                    line.append(byte)
                    guard line.count <= 4096 else { throw malformed("chunk line over 4 KiB") }
                    continue
                }
                try endOfChunkLine()
            case .chunkData(let remaining):
                let take = min(UInt64(bytes.count - index), remaining)
                index += Int(take)
                bodyBytes += take
                state = remaining == take ? .chunkDataEnd(remaining: 2) : .chunkData(remaining: remaining - take)
            case .chunkDataEnd(let remaining):
                let expected: UInt8 = remaining == 2 ? 0x0D : 0x0A
                guard bytes[index] == expected else { throw malformed("chunk data not followed by CRLF") }
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

    /// Parses the status line and the headers that frame the body.
    private mutating func parseHead() throws(LoadError) {
        let text = String(decoding: line, as: UTF8.self)
        line.removeAll(keepingCapacity: true)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true).makeIterator()
        guard let statusLine = lines.next() else { throw malformed("empty response head") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]), (100...999).contains(code) else {
            throw malformed("bad status line '\(statusLine.prefix(80))'")
        }
        var contentLength: UInt64?
        var chunked = false
        closesConnection = parts[0] == "HTTP/1.0"
        while let header = lines.next() {
            guard let colon = header.firstIndex(of: ":") else { continue }
            let name = header[..<colon].lowercased()
            let value = header[header.index(after: colon)...].trimmingCharacters(in: " \t").lowercased()
            switch name {
            case "content-length":
                guard let length = UInt64(value) else { throw malformed("bad Content-Length '\(value)'") }
                contentLength = length
            case "transfer-encoding":
                chunked = value.split(separator: ",").last?.trimmingCharacters(in: " \t") == "chunked"
            case "connection":
                if value.contains("close") { closesConnection = true }
                if value.contains("keep-alive") { closesConnection = false }
            default:
                break
            }
        }
        if (100...199).contains(code) {
            return  // interim response; the real one follows
        }
        status = code
        if code == 204 || code == 304 {
            state = .done
        } else if chunked {
            state = .chunkSize
        } else if let contentLength {
            state = contentLength == 0 ? .done : .fixed(remaining: contentLength)
        } else {
            state = .untilClose
            closesConnection = true
        }
    }

    /// Handles a complete chunk-size or trailer line (LF already consumed).
    private mutating func endOfChunkLine() throws(LoadError) {
        if line.last == 0x0D { line.removeLast() }
        defer { line.removeAll(keepingCapacity: true) }
        if case .trailers = state {
            if line.isEmpty { state = .done }
            return
        }
        let digits = line.prefix { $0 != 0x3B && $0 != 0x20 && $0 != 0x09 }  // drop ";ext" and spaces
        guard !digits.isEmpty, digits.count <= 15, let size = UInt64(String(decoding: digits, as: UTF8.self), radix: 16) else {
            throw malformed("bad chunk size line")
        }
        state = size == 0 ? .trailers : .chunkData(remaining: size)
    }

    private func malformed(_ reason: String) -> LoadError {
        LoadError(kind: .io, reason: reason)
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var view = self[...]
        while let first = view.first, set.contains(first) { view = view.dropFirst() }
        while let last = view.last, set.contains(last) { view = view.dropLast() }
        return String(view)
    }
}

private extension String {
    func trimmingCharacters(in set: String) -> String { self[...].trimmingCharacters(in: set) }
}
