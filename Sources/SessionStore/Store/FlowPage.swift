/// One page of flow summaries, the number of flows the filter matches in all, and the cursor
/// for the next page (nil on the last page).
public struct FlowPage: Sendable, Equatable {
    public var flows: [FlowSummary]
    public var total: Int
    public var nextCursor: FlowCursor?
}
