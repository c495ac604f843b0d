/// A batch of changes the writer committed, for the UI's live stream.
public struct StoreChanges: Sendable, Equatable {
    /// True when the store was emptied (`clear()`) before the flows below were written.
    public var cleared: Bool
    /// The summaries as written, in commit order; a flow can appear more than once in a batch.
    public var flows: [FlowSummary]
}
