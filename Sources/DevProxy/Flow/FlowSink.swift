/// An observer of finished flows. The engine hands every flow to every sink and knows nothing
/// about what they do; sinks must be thread-safe (flows finish on connection threads).
public protocol FlowSink: Sendable {
    /// Called once per finished flow, from the thread that finished it.
    func record(_ flow: Flow)
    /// Called once at shutdown, after the last flow; flush and close here.
    func close()
}

extension FlowSink {
    public func close() {}
}
