/// The bodies of one finished flow.
public struct FlowBodies: Sendable, Equatable {
    public var request: StoredBody?
    public var response: StoredBody?

    public init(request: StoredBody? = nil, response: StoredBody? = nil) {
        self.request = request
        self.response = response
    }

    /// Bytes the bodies hold in memory (for the queue's budget).
    var byteCount: Int { (request?.bytes.count ?? 0) + (response?.bytes.count ?? 0) + (request?.text?.utf8.count ?? 0)
        + (response?.text?.utf8.count ?? 0) + (request?.spooled?.head.count ?? 0)
        + (response?.spooled?.head.count ?? 0) }
}
