/// An observer of finished flows. The engine hands every flow to every sink and knows nothing
/// about what they do; sinks must be thread-safe (flows finish on connection threads).
public protocol FlowSink: Sendable {
    /// Whether the sink wants `started` and `responded` (the engine skips the copies otherwise).
    var observesLifecycle: Bool { get }
    /// The request head is known (the flow has its request, no response, no end yet). Called from
    /// the connection's thread; must not block.
    func started(_ flow: Flow)
    /// The response head is known (the flow has its response head; the body is still on its way).
    func responded(_ flow: Flow)
    /// Called once per finished flow, from the thread that finished it.
    func record(_ flow: Flow)
    /// Called once at shutdown, after the last flow; flush and close here.
    func close()
}

extension FlowSink {
    public var observesLifecycle: Bool { false }
    public func started(_ flow: Flow) {}
    public func responded(_ flow: Flow) {}
    public func close() {}
}
