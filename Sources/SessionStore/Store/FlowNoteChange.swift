/// One change to a flow's note (`SessionStore.setNote`): leave a part as it is, or set it (nil
/// removes it).
public enum FlowNoteChange<Value: Sendable & Equatable>: Sendable, Equatable {
    case keep
    case set(Value?)

    /// The value after the change of `current`.
    func applied(to current: Value?) -> Value? {
        switch self {
        case .keep: current
        case .set(let value): value
        }
    }
}
