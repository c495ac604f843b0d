/// One unit of work for the store's writer thread.
enum StoreEvent: Sendable {
    /// A lifecycle step: insert or update the flow; `json` and `bodies` come with `finished`.
    case flow(FlowRecord, phase: FlowPhase, json: String?, bodies: FlowBodies?)
    /// Delete every flow.
    case clear

    /// Memory the event's bodies hold.
    var bodyBytes: Int {
        guard case .flow(_, _, _, let bodies?) = self else { return 0 }
        return bodies.byteCount
    }
}
