/// What the engine hands the store at each lifecycle step: the summary as known so far, and the
/// header fields `~h`, `~hq` and `~hs` search.
///
/// Each step carries everything known so far; the store overwrites the previous step's values
/// (and never goes back from a later phase to an earlier one).
public struct FlowRecord: Sendable, Equatable {
    public var summary: FlowSummary
    /// Ordered `[name, value]` pairs, as in the flow log.
    public var requestHeaders: [[String]]
    public var responseHeaders: [[String]]

    public init(summary: FlowSummary, requestHeaders: [[String]] = [], responseHeaders: [[String]] = []) {
        self.summary = summary
        self.requestHeaders = requestHeaders
        self.responseHeaders = responseHeaders
    }

    /// The header block as `~h` matches it: one `name: value` line per field (mitmproxy's form).
    static func headerText(_ headers: [[String]]) -> String? {
        guard !headers.isEmpty else { return nil }
        return headers.map { pair in pair.count >= 2 ? "\(pair[0]): \(pair[1])" : pair.joined() }.joined(separator: "\n")
    }
}
