/// The spooled bodies of one finished flow, handed to the store beside its flow-log line.
public struct SpooledBodies: Sendable, Equatable {
    public var request: SpooledBody?
    public var response: SpooledBody?

    public init(request: SpooledBody? = nil, response: SpooledBody? = nil) {
        self.request = request
        self.response = response
    }

    /// True when neither body was spooled.
    public var isEmpty: Bool { request == nil && response == nil }

    /// Bytes held in memory (heads not spooled to a file), for the queue's budget.
    var memoryBytes: Int { (request?.head.count ?? 0) + (response?.head.count ?? 0) }

    /// `bodies` with each spooled body attached to its stored body.
    func attached(to bodies: FlowBodies) -> FlowBodies {
        var bodies = bodies
        if let request { bodies.request?.spooled = request }
        if let response { bodies.response?.spooled = response }
        return bodies
    }
}
