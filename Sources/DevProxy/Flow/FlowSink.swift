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
    /// A long-running flow's record so far (a gRPC stream's messages as they come, at most about
    /// once a second): what the flow log would write if it ended now, without its bodies and end.
    func progressed(_ flow: Flow)
    /// Called once per finished flow, from the thread that finished it.
    func record(_ flow: Flow)
    /// Whether the sink records the flow's log line (`record(_:line:)` instead of `record(_:)`):
    /// the engine then encodes the JSON once for every such sink.
    var recordsLogLine: Bool { get }
    /// `record(_:)` with the flow's line as the flow log writes it (`JSONLinesFlowLog.line(for:)`:
    /// the JSON, then `\n`), for sinks whose `recordsLogLine` is true.
    func record(_ flow: Flow, line: [UInt8])
    /// Called once at shutdown, after the last flow; flush and close here.
    func close()
}

extension FlowSink {
    public var observesLifecycle: Bool { false }
    public func started(_ flow: Flow) {}
    public func responded(_ flow: Flow) {}
    public func progressed(_ flow: Flow) {}
    public var recordsLogLine: Bool { false }
    public func record(_ flow: Flow, line: [UInt8]) { record(flow) }
    public func close() {}
}
