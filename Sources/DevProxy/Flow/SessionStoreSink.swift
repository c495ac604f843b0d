import SessionStore

/// Hands every flow to a session store (`--session FILE`): each running flow's summary when its
/// request head and its response head are known (so the web UI shows it pending), then the
/// finished flow as the same JSON the flow log writes. Only the summary is read on the caller's
/// thread; the store's own writer thread writes, so the proxy never waits on disk (a full queue
/// sheds bodies, then records, and the store counts what it shed).
///
/// Bodies past the flow log's part reach the store through `spool` (give it to the engine as
/// `ProxyConfiguration.bodySpool`): each finished flow's spool files go with its line, and the
/// store's writer copies them in, up to the store's body limit.
public final class SessionStoreSink: FlowSink {
    public let store: SessionStore
    /// The spool the engine's captures write to, for this store; nil keeps only the flow log's part.
    public let spool: BodySpool?

    public init(store: SessionStore, spool: BodySpool? = nil) {
        self.store = store
        self.spool = spool
    }

    /// A sink with a spool in `directory` sized for `store`'s body limit.
    /// - Throws: `SessionStoreError(.open)` when the directory cannot be made.
    public convenience init(store: SessionStore, spoolDirectory directory: String) throws {
        self.init(store: store, spool: try BodySpool(directory: directory, storeLimit: store.configuration.bodyLimit))
    }

    public var observesLifecycle: Bool { true }

    public func started(_ flow: Flow) {
        store.started(Self.record(flow))
    }

    public func responded(_ flow: Flow) {
        store.responded(Self.record(flow))
    }

    public func record(_ flow: Flow) {
        let spooled = SpooledBodies(request: flow.request?.body?.spooled, response: flow.response?.body?.spooled)
        store.finished(flowLogLine: flow.jsonBytes, spooled: spooled)
    }

    /// Closes the store (writing what is queued), then removes any spool file left.
    public func close() {
        store.close()
        spool?.removeAll()
    }

    /// What the store indexes of a flow that is still running: no bodies, sizes or duration yet.
    static func record(_ flow: Flow) -> FlowRecord {
        let requestHeaders = flow.request?.headers ?? []
        let responseHeaders = flow.response?.headers ?? []
        let summary = FlowSummary(
            id: flow.id, started: flow.started, host: flow.server.host, mode: flow.mode.rawValue,
            method: flow.request?.method, url: flow.request?.url, status: flow.response?.status,
            httpVersion: flow.response?.httpVersion ?? flow.request?.httpVersion, errorKind: flow.error?.kind,
            contentType: header("content-type", in: responseHeaders),
            requestContentType: header("content-type", in: requestHeaders),
            persona: flow.persona, signerEmail: flow.signer?.email, signerSerial: flow.signer?.serial,
            isWebSocket: flow.mode == .websocket, isTunnel: flow.mode == .tunnel)
        return FlowRecord(summary: summary, requestHeaders: requestHeaders, responseHeaders: responseHeaders)
    }

    private static func header(_ name: String, in headers: [[String]]) -> String? {
        headers.first { $0.first.map { $0.lowercased() == name } ?? false }?.last
    }
}
