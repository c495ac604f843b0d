/// One page of flow summaries, the number of flows the filter matches in all, and the cursor
/// for the next page (nil on the last page).
public struct FlowPage: Sendable, Equatable {
    public var flows: [FlowSummary]
    public var total: Int
    public var nextCursor: FlowCursor?
    /// The largest `seq` in the store when the page was read (0 for none), from the same snapshot
    /// as `total`: a flow numbered above it came later and is not in `total`.
    public var newestSequence: Int64 = 0
}
