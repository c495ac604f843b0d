/// Where a page of flows continues: after the flow with this sequence number, in the page's order.
///
/// Stable while flows keep arriving: a cursor names a position, not an offset, so new flows never
/// shift the pages after it.
public struct FlowCursor: Sendable, Hashable, CustomStringConvertible {
    /// The last sequence number of the previous page.
    public var sequence: Int64

    public init(sequence: Int64) { self.sequence = sequence }

    /// Parses the API's `cursor=` text; nil when it is not one.
    public init?(_ text: String) {
        guard let sequence = Int64(text), sequence >= 0 else { return nil }
        self.sequence = sequence
    }

    /// The API's spelling: the sequence number in decimal.
    public var description: String { String(sequence) }
}

/// The order pages are listed in.
public enum FlowOrder: Sendable {
    /// Most recent first (the default: the first page shows what just happened).
    case newestFirst
    /// In arrival order (a live list that appends at the bottom).
    case oldestFirst
}

/// One page of flow summaries, the number of flows the filter matches in all, and the cursor
/// for the next page (nil on the last page).
public struct FlowPage: Sendable, Equatable {
    public var flows: [FlowSummary]
    public var total: Int
    public var nextCursor: FlowCursor?
}
