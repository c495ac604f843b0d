import SessionStore

/// Hands every finished flow to a session store (`--session FILE`): the same JSON the flow log
/// writes, read into the store's summary on the caller's thread and written by the store's own
/// writer thread, so the proxy never waits on disk (a full queue sheds bodies, then records, and
/// the store counts what it shed).
public final class SessionStoreSink: FlowSink {
    public let store: SessionStore

    public init(store: SessionStore) {
        self.store = store
    }

    public func record(_ flow: Flow) {
        store.finished(flowLogLine: flow.jsonBytes)
    }

    public func close() {
        store.close()
    }
}
