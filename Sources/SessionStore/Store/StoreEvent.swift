/// One unit of work for the store's writer thread.
enum StoreEvent: Sendable {
    /// A lifecycle step: insert or update the flow; `json` and `bodies` come with `finished`.
    /// Boxed: the queue, the writer's batch and its coalescing pass an event along several times,
    /// and copying a summary with its header fields retains and releases ~25 references each time
    /// (callgrind: ~45k instructions a flow).
    case step(FlowStep)
    /// A finished flow as the flow log writes it, read by the writer thread (so the proxy's
    /// threads only copy bytes), with its bodies' spool files, if any.
    case flowLogLine([UInt8], spooled: SpooledBodies?)
    /// Delete every flow.
    case clear
    /// The descriptor set a gRPC server described a service with (`devproxy run --grpc-reflection`):
    /// one row of `grpc_schemas`, which `clear` leaves (it describes the server, not a flow).
    case grpcSchema(StoredGRPCSchema)

    /// A lifecycle step of `record`.
    static func flow(_ record: consuming FlowRecord, phase: FlowPhase, json: FlowJSON?,
                     bodies: consuming FlowBodies?, partial: FlowJSON? = nil) -> StoreEvent {
        .step(FlowStep(record: record, phase: phase, json: json, bodies: bodies, partial: partial))
    }

    /// Memory the event's bodies hold.
    var bodyBytes: Int {
        switch self {
        case .step(let step): return (step.bodies?.byteCount ?? 0) + (step.partial?.count ?? 0)
        case .flowLogLine(let line, let spooled): return line.count + (spooled?.memoryBytes ?? 0)
        case .clear: return 0
        case .grpcSchema(let schema): return schema.descriptorSet.count
        }
    }
}

/// A flow as one lifecycle step left it (`StoreEvent.step`). A `started` or `responded` step
/// that a later `finished` of the same flow makes stale within the writer's batch is not written
/// (`StoreWriter.kept`).
final class FlowStep: Sendable {
    let id: String
    let phase: FlowPhase
    let record: FlowRecord
    /// The flow log's JSON record; with `finished` only.
    let json: FlowJSON?
    let bodies: FlowBodies?
    /// A running flow's record so far (`SessionStore.progressed`), shown while it runs; never
    /// with `finished`.
    let partial: FlowJSON?

    // Consuming: the record and bodies move into the step; a copy would retain each of their
    // ~25 strings and arrays here and release them again in the caller.
    init(record: consuming FlowRecord, phase: FlowPhase, json: FlowJSON?, bodies: consuming FlowBodies?,
         partial: FlowJSON? = nil) {
        id = record.summary.id
        self.record = record
        self.phase = phase
        self.json = json
        self.bodies = bodies
        self.partial = partial
    }
}

/// A finished flow's JSON record, as UTF-8: the flow log's line itself (shared with the log, not
/// copied), of which the first `count` bytes are the record (the newline left out).
struct FlowJSON: Sendable {
    let bytes: [UInt8]
    let count: Int

    init(_ text: String) {
        bytes = Array(text.utf8)
        count = bytes.count
    }

    /// `line` without one trailing newline.
    init(line: [UInt8]) {
        bytes = line
        count = line.last == UInt8(ascii: "\n") ? line.count - 1 : line.count
    }

    var sqlValue: SQLValue { .utf8(bytes, count: count) }

    var text: String { String(decoding: bytes.prefix(count), as: UTF8.self) }
}
