import HTTPTypes

/// What the engine hands the store at each lifecycle step: the summary as known so far, and the
/// header fields `~h`, `~hq` and `~hs` search.
///
/// Each step carries everything known so far; the store overwrites the previous step's values
/// (and never goes back from a later phase to an earlier one).
public struct FlowRecord: Sendable, Equatable {
    public var summary: FlowSummary
    /// Ordered `[name, value]` pairs, as in the flow log.
    public var requestHeaders: FieldPairs
    public var responseHeaders: FieldPairs

    /// The two header blocks already written as `headerText(_:)` writes them, or nil. The proxy
    /// writes them on the connection's thread for a finished flow and leaves the arrays empty, so
    /// the store's writer neither builds them nor frees the connection's header arrays (a free of
    /// memory another thread allocated takes glibc's arena lock: docs/performance.md).
    public var headerText: HeaderText?

    /// `FlowRecord.headerText` of a request's and a response's fields.
    public struct HeaderText: Sendable, Equatable {
        public var request: String?
        public var response: String?

        public init(request: FieldPairs, response: FieldPairs) {
            self.request = FlowRecord.headerText(request)
            self.response = FlowRecord.headerText(response)
        }
    }

    public init(summary: FlowSummary, requestHeaders: FieldPairs = [], responseHeaders: FieldPairs = []) {
        self.summary = summary
        self.requestHeaders = requestHeaders
        self.responseHeaders = responseHeaders
    }

    /// The request's and response's header blocks, made now unless `headerText` has them.
    var headerBlocks: HeaderText {
        headerText ?? HeaderText(request: requestHeaders, response: responseHeaders)
    }

    /// The header block as `~h` matches it: one `name: value` line per field (mitmproxy's form);
    /// nil for no fields. Written byte by byte into one allocation: interpolating and joining
    /// cost ~20k instructions a flow (callgrind).
    static func headerText(_ fields: FieldPairs) -> String? {
        guard !fields.isEmpty else { return nil }
        var count = 3 * fields.count - 1   // ": " in each line, "\n" between lines
        for part in fields.flat { count += part.utf8.count }
        return String(unsafeUninitializedCapacity: count) { buffer in
            guard var cursor = buffer.baseAddress else { return 0 }
            for index in fields.indices {
                if index > 0 { cursor = put(UInt8(ascii: "\n"), at: cursor) }
                cursor = put(fields.name(at: index), at: cursor)
                cursor = put(UInt8(ascii: ":"), at: cursor)
                cursor = put(UInt8(ascii: " "), at: cursor)
                cursor = put(fields.value(at: index), at: cursor)
            }
            return cursor - buffer.baseAddress!
        }
    }

    /// Copies `text`'s UTF-8 to `cursor`; returns the address after it. (A plain function: a
    /// nested one that moved a captured offset boxed it and checked every access.)
    private static func put(_ text: String, at cursor: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var text = text
        return text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return cursor }
            cursor.update(from: base, count: utf8.count)
            return cursor + utf8.count
        }
    }

    private static func put(_ byte: UInt8, at cursor: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        cursor.pointee = byte
        return cursor + 1
    }
}
