/// What a response head says about the body and the connection, read straight from its bytes.
///
/// Only the status line and three fields matter to the load generator: `Content-Length`,
/// `Transfer-Encoding` and `Connection`. Lines end at CRLF (a bare LF stays inside its line) and
/// empty lines are skipped; field names and the tokens looked for are compared ignoring ASCII
/// case; values lose their leading and trailing spaces and tabs. Nothing is copied or allocated
/// unless the head is malformed and the error quotes it.
struct ResponseHead {
    /// Status code, 100...999.
    let status: Int
    /// Whether the server said it will close: HTTP/1.0 by default, then each `Connection`
    /// field in order — a value containing `close` sets it, one containing `keep-alive` clears it.
    let closesConnection: Bool
    /// Whether the last `Transfer-Encoding` field's final coding is `chunked`.
    let chunked: Bool
    /// The last `Content-Length` field's value, if any.
    let contentLength: UInt64?

    /// Parses `head`: the status line and the field lines, each ending in CRLF.
    /// - Throws: `LoadError(.io)` for an empty head, a bad status line or a bad Content-Length.
    init(parsing head: UnsafeRawBufferPointer) throws(LoadError) {
        var lines = Lines(head)
        guard let statusLine = lines.next() else { throw Self.malformed("empty response head") }
        guard let (isHTTP10, code) = Self.parseStatusLine(statusLine) else {
            throw Self.malformed("bad status line '\(String(decoding: statusLine, as: UTF8.self).prefix(80))'")
        }
        var closes = isHTTP10
        var chunked = false
        var contentLength: UInt64?
        while let line = lines.next() {
            guard let colon = line.firstIndex(of: 0x3A, from: 0) else { continue }
            let name = line.bytes(from: 0, to: colon)
            // Most fields are none of the three: their values are not even trimmed.
            let rawValue = line.bytes(from: colon + 1, to: line.count)
            if name.equalsIgnoringASCIICase("content-length") {
                let value = rawValue.trimmingSpacesAndTabs()
                guard let length = value.unsignedInteger(radix: 10) else {
                    throw Self.malformed("bad Content-Length '\(String(decoding: value, as: UTF8.self).lowercased())'")
                }
                contentLength = length
            } else if name.equalsIgnoringASCIICase("transfer-encoding") {
                chunked = Self.finalCodingIsChunked(rawValue.trimmingSpacesAndTabs())
            } else if name.equalsIgnoringASCIICase("connection") {
                if rawValue.containsIgnoringASCIICase("close") { closes = true }
                if rawValue.containsIgnoringASCIICase("keep-alive") { closes = false }
            }
        }
        status = code
        closesConnection = closes
        self.chunked = chunked
        self.contentLength = contentLength
    }

    /// Reads `HTTP/1.x <code> ...`: space-separated, runs of spaces count as one, the code being
    /// what `Int(_:)` accepts and within 100...999.
    /// - Returns: whether the version is exactly `HTTP/1.0`, and the code; nil when malformed.
    private static func parseStatusLine(_ line: UnsafeRawBufferPointer) -> (isHTTP10: Bool, code: Int)? {
        var index = 0
        func nextWord() -> UnsafeRawBufferPointer {
            while index < line.count, line[index] == 0x20 { index += 1 }
            let start = index
            while index < line.count, line[index] != 0x20 { index += 1 }
            return line.bytes(from: start, to: index)
        }
        let version = nextWord()
        let codeWord = nextWord()
        guard !codeWord.isEmpty, version.starts(with: "HTTP/1."),
              codeWord[0] != 0x2D,  // Int("-200") is negative, never in range
              let code = codeWord.unsignedInteger(radix: 10), (100...999).contains(code) else { return nil }
        return (version.equals("HTTP/1.0"), Int(code))
    }

    /// Whether the last non-empty element of the comma-separated `value`, trimmed, is `chunked`.
    private static func finalCodingIsChunked(_ value: UnsafeRawBufferPointer) -> Bool {
        var end = value.count
        while end > 0, value[end - 1] == 0x2C { end -= 1 }
        var start = end
        while start > 0, value[start - 1] != 0x2C { start -= 1 }
        return value.bytes(from: start, to: end).trimmingSpacesAndTabs().equalsIgnoringASCIICase("chunked")
    }

    private static func malformed(_ reason: String) -> LoadError {
        LoadError(kind: .io, reason: reason)
    }
}

extension ResponseHead {
    /// The non-empty CRLF-terminated lines of a head, in order, without their CRLF.
    private struct Lines {
        private let bytes: UnsafeRawBufferPointer
        private var position = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        /// The next non-empty line (the text after the last CRLF counts as one), or nil.
        mutating func next() -> UnsafeRawBufferPointer? {
            while position < bytes.count {
                let start = position
                var end = bytes.count
                var searchFrom = start
                while let lf = bytes.firstIndex(of: 0x0A, from: searchFrom) {
                    if lf > start, bytes[lf - 1] == 0x0D {
                        end = lf - 1
                        break
                    }
                    searchFrom = lf + 1
                }
                position = end == bytes.count ? end : end + 2
                if end > start { return bytes.bytes(from: start, to: end) }
            }
            return nil
        }
    }
}
