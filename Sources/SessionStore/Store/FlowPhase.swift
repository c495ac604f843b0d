/// How far a flow has got: the three lifecycle events, in order.
public enum FlowPhase: Int, Sendable, Comparable {
    /// The request head is known; no response yet.
    case started = 0
    /// The response head is known.
    case responded = 1
    /// The exchange (or failure) is over; the record and bodies are stored.
    case finished = 2

    public static func < (lhs: FlowPhase, rhs: FlowPhase) -> Bool { lhs.rawValue < rhs.rawValue }
}
