/// One unit of work for the store's writer thread.
enum StoreEvent: Sendable {
    /// A lifecycle step: insert or update the flow; `json` and `bodies` come with `finished`.
    case flow(FlowRecord, phase: FlowPhase, json: String?, bodies: FlowBodies?)
    /// A finished flow as the flow log writes it, read by the writer thread (so the proxy's
    /// threads only copy bytes), with its bodies' spool files, if any.
    case flowLogLine([UInt8], spooled: SpooledBodies?)
    /// Delete every flow.
    case clear

    /// Memory the event's bodies hold.
    var bodyBytes: Int {
        switch self {
        case .flow(_, _, _, let bodies?): return bodies.byteCount
        case .flowLogLine(let line, let spooled): return line.count + (spooled?.memoryBytes ?? 0)
        default: return 0
        }
    }
}
