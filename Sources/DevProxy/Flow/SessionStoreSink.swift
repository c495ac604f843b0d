import CertAuthority
import Foundation
import HTTP1
import HTTPTypes
import SessionStore

/// Hands every flow to a session store (`--session FILE`): each running flow's summary when its
/// request head and its response head are known (so the web UI shows it pending), then the
/// finished flow: its summary and bodies, read from the `Flow` itself, and the same JSON the flow
/// log writes. The store's own writer thread writes, so the proxy never waits on disk (a full
/// queue sheds bodies, then records, and the store counts what it shed).
///
/// The finished summary is built from the `Flow` rather than by parsing its JSON line back
/// (`SessionStore.finished(flowLogLine:)`, which imports still use): with `JSONSerialization`
/// that parse cost more instructions than the rest of a proxied HTTP/2 stream (callgrind of the
/// h2 keep-alive cell, docs/performance.md). `finishedEntry` gives what the parse gives, field
/// for field (`SessionStoreSinkTests` compare the two).
///
/// Bodies past the flow log's part reach the store through `spool` (give it to the engine as
/// `ProxyConfiguration.bodySpool`): each finished flow's spool files go with its bodies, and the
/// store's writer copies them in, up to the store's body limit.
public final class SessionStoreSink: FlowSink {
    public let store: SessionStore
    /// The spool the engine's captures write to, for this store; nil keeps only the flow log's part.
    public let spool: BodySpool?

    public init(store: SessionStore, spool: BodySpool? = nil) {
        self.store = store
        self.spool = spool
        let path = store.path
        store.reportWriteFailures { error in
            StandardError.warn("the session store \(path) failed: \(error.reason); flows are missing from it and "
                               + "from the web UI until it can write again")
        }
    }

    /// A sink with a spool in `directory` sized for `store`'s body limit.
    /// - Throws: `SessionStoreError(.open)` when the directory cannot be made.
    public convenience init(store: SessionStore, spoolDirectory directory: String) throws {
        self.init(store: store, spool: try BodySpool(directory: directory, storeLimit: store.configuration.bodyLimit))
    }

    public var observesLifecycle: Bool { true }

    /// The record is made on the store's writer thread, and only if the step is written (a short
    /// flow's `finished` usually comes first): the connection's thread copies the flow, no more.
    // The record is made here: its summary and header lists take ~20 references, where a
    // closure over a copy of the flow (the writer made the record only if it wrote the step) took
    // ~45, a closure context, and as many releases on the writer's thread.
    public func started(_ flow: Flow) {
        store.started(Self.record(flow))
    }

    public func responded(_ flow: Flow) {
        store.responded(Self.record(flow))
    }

    /// The record so far goes in as the web UI shows a running flow's detail.
    public func progressed(_ flow: Flow) {
        store.progressed(Self.record(flow), jsonLine: JSONLinesFlowLog.line(for: flow))
    }

    public func record(_ flow: Flow) {
        record(flow, line: JSONLinesFlowLog.line(for: flow))
    }

    public var recordsLogLine: Bool { true }

    /// Stores the finished flow; `line` is its flow-log line, whose JSON (without the `\n`) the
    /// store keeps as the flow's record. Spooled bodies go with the bodies they belong to.
    public func record(_ flow: Flow, line: [UInt8]) {
        var record = Self.finishedRecord(flow)
        let bodies = Self.finishedBodies(flow, spooled: true)
        Self.handOver(&record)
        store.finished(consume record, jsonLine: line, bodies: bodies)
    }

    /// Closes the store (writing what is queued), then removes any spool file left.
    public func close() {
        store.close()
        spool?.removeAll()
    }

    /// Writes `record`'s header blocks here and leaves its header arrays with the flow: the
    /// store's writer thread then frees two strings instead of every header's (a free of another
    /// thread's memory takes glibc's arena lock; docs/performance.md, "Run 15").
    static func handOver(_ record: inout FlowRecord) {
        record.headerText = FlowRecord.HeaderText(request: record.requestHeaders, response: record.responseHeaders)
        record.requestHeaders = []
        record.responseHeaders = []
    }

    /// What the store indexes of a flow that is still running: no bodies, sizes or duration yet.
    static func record(_ flow: Flow) -> FlowRecord {
        let requestHeaders = flow.request?.headers ?? []
        let responseHeaders = flow.response?.headers ?? []
        var summary = FlowSummary(
            id: flow.id, started: flow.started, host: flow.server.host, mode: flow.mode.rawValue,
            method: flow.request?.method, url: flow.request?.url, status: flow.response?.status,
            httpVersion: flow.response?.httpVersion ?? flow.request?.httpVersion, errorKind: flow.error?.kind,
            contentType: responseHeaders.first(named: "content-type"),
            requestContentType: requestHeaders.first(named: "content-type"),
            persona: flow.persona, signerEmail: flow.signer?.email, signerSerial: flow.signer?.serial,
            isWebSocket: flow.mode == .websocket, isTunnel: flow.mode == .tunnel, grpcStatus: flow.grpc?.status)
        summary.port = flow.server.port
        summary.mapped = flow.mapped?.rule
        summary.client = flow.client.isEmpty ? nil : flow.client
        summary.replayOf = flow.replayOf
        summary.clientProcess = flow.clientProcess?.name
        summary.clientExecutable = flow.clientProcess?.exe
        summary.clientPID = flow.clientProcess?.pid
        if let informational = flow.informational {
            summary.informational = FlowSummary.informationalCodes(informational.map(\.status))
        }
        return FlowRecord(summary: summary, requestHeaders: requestHeaders, responseHeaders: responseHeaders)
    }

    /// A finished flow as the store keeps it: what the store reads from the flow's log line
    /// (sizes, duration from the logged timestamps, `websocket` / `tunnel` present, bodies as
    /// logged: the text's UTF-8, else the base64 decoded).
    static func finishedEntry(_ flow: Flow) -> (FlowRecord, FlowBodies) {
        (finishedRecord(flow), finishedBodies(flow))
    }

    /// `finishedEntry`'s record (kept apart from the bodies so that each moves into the store
    /// without a copy).
    static func finishedRecord(_ flow: Flow) -> FlowRecord {
        var record = record(flow)
        record.summary.requestSize = flow.request?.body?.size
        record.summary.responseSize = flow.response?.body?.size
        record.summary.durationMs = milliseconds(from: flow.started, to: flow.ended)
        record.summary.isWebSocket = flow.mode == .websocket || flow.websocket != nil
        record.summary.isTunnel = flow.mode == .tunnel || flow.tunnel != nil
        record.summary.phase = .finished
        return record
    }

    /// `finishedEntry`'s bodies; `spooled`: with their spool files, for the store's writer.
    static func finishedBodies(_ flow: Flow, spooled: Bool = false) -> FlowBodies {
        // Each message's body is read once, through the flow's accessors (an optional chain a
        // body, for the bytes and again for the spool, copied each body twice more).
        var bodies = FlowBodies()
        if let body = flow.request?.body { bodies.request = storedBody(body, spooled: spooled) }
        if let body = flow.response?.body { bodies.response = storedBody(body, spooled: spooled) }
        return bodies
    }

    private static func storedBody(_ body: Flow.Body, spooled: Bool) -> StoredBody {
        // A decoded body keeps its wire bytes beside its text (what replay and export send).
        var stored = StoredBody(bytes: body.spooled == nil ? body.wireBytes ?? body.loggedBytes : body.loggedBytes,
                                size: body.size, sha256: body.sha256, text: body.text)
        if spooled { stored.spooled = body.spooled }
        return stored
    }

    /// `ended - started` in whole milliseconds, from the logged timestamps.
    private static func milliseconds(from started: String, to ended: String) -> Double? {
        if let same = ISO8601.millisecondsOfSameDay(from: started, to: ended) { return Double(same) }
        guard let start = ISO8601.date(started), let end = ISO8601.date(ended) else { return nil }
        return (end.timeIntervalSince(start) * 1000).rounded()
    }
}
