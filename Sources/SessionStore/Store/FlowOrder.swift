/// The order pages are listed in.
public enum FlowOrder: Sendable {
    /// Most recent first (the default: the first page shows what just happened).
    case newestFirst
    /// In arrival order (a live list that appends at the bottom).
    case oldestFirst
}
