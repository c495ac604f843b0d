/// One flow as the list shows it: the columns the store indexes and filters on.
///
/// The engine fills it from what it knows at each lifecycle step (`FlowRecord`); the store gives
/// it back from `flows(filter:limit:cursor:order:)` with `sequence` and `phase` set. Field names
/// follow the API's JSON (`http_version` is `httpVersion`); optional fields are unknown yet or
/// do not apply (a tunnel has no method).
public struct FlowSummary: Sendable, Equatable {
    /// The engine's id for the flow (UUID-like); unique in a session.
    public var id: String
    /// Arrival order in the store (SQLite's rowid), assigned on the first write; 0 until then.
    /// Cursors are built from it.
    public var sequence: Int64
    /// How far the flow has got.
    public var phase: FlowPhase
    /// RFC 3339 with milliseconds, UTC, as in the flow log.
    public var started: String
    public var method: String?
    public var url: String?
    /// The server's host name (the request's host, or the tunnel's target).
    public var host: String
    public var status: Int?
    public var httpVersion: String?
    /// `http`, `https`, `tunnel` or `websocket`, as in the flow log.
    public var mode: String
    /// The flow log's `error.kind`.
    public var errorKind: String?
    /// The response's `Content-Type`.
    public var contentType: String?
    /// The request's `Content-Type`.
    public var requestContentType: String?
    /// Body sizes on the wire.
    public var requestSize: Int?
    public var responseSize: Int?
    public var durationMs: Double?
    public var persona: String?
    public var signerEmail: String?
    public var signerSerial: String?
    /// The pinning QA verdict for the flow's host and persona, when one was judged.
    public var verdict: String?
    public var isWebSocket: Bool
    public var isTunnel: Bool
    /// True when the bodies were not stored because the store's queue was full.
    public var bodiesDropped: Bool
    /// A gRPC or gRPC-Web call's `grpc-status` (0 OK; a failed call still has HTTP status 200).
    public var grpcStatus: Int?
    /// The server's port (the request's, or the tunnel's target's).
    public var port: Int?
    /// The codes of the informational (1xx) responses that came before the final one, each once,
    /// in the order they first came (`[103]`, `[102, 103]`); empty when none did.
    public var informational: [Int] = []
    /// The mark a person gave the flow (`SessionStore.setNote`); nil when none. Only the store's
    /// queries fill it (and `comment`): a summary from the engine has none yet.
    public var mark: FlowMark?
    /// The comment a person wrote on the flow; nil when none.
    public var comment: String?
    /// The GraphQL operations the request asked for and the errors its response reported; nil
    /// for a flow that is no GraphQL call. The store's writer fills it from the finished flow's
    /// bodies (`GraphQLCall.detect`), so a summary from the engine has none.
    public var graphQL: GraphQLCall?
    /// The rule that changed or answered the flow: its record's `mapped.rule` (`map-remote`,
    /// `map-local`, `mock`, `modify-headers` or `modify-body`); nil when none did, and for a flow
    /// stored before the store kept it (schema 12).
    public var mapped: String?
    /// The client's address, as the flow log's `client` (`127.0.0.1:53122`); nil when unknown (a
    /// flow of a session stored before the store kept it, schema 13, or a HAR without it).
    public var client: String?
    /// The flow this one replays (its record's `replay_of`: the web UI's Replay, Edit and resend,
    /// Repeat…); nil for any other flow, and for a flow of a session stored before the store kept
    /// it (schema 14).
    public var replayOf: String?
    /// The name of the process on this machine that made the flow (the flow log's
    /// `client_process.name`, `curl`); nil when unknown, and for a flow of a session stored
    /// before the store kept it (schema 15).
    public var clientProcess: String?
    /// That process's executable (`client_process.exe`, `/usr/bin/curl`), which `~proc` searches
    /// too; nil when unknown or unreadable.
    public var clientExecutable: String?
    /// That process's id (`client_process.pid`); nil when unknown, and for a flow of a session
    /// stored before the store kept it (schema 16).
    public var clientPID: Int?

    public init(id: String, started: String, host: String, mode: String, method: String? = nil, url: String? = nil,
                status: Int? = nil, httpVersion: String? = nil, errorKind: String? = nil, contentType: String? = nil,
                requestContentType: String? = nil, requestSize: Int? = nil, responseSize: Int? = nil,
                durationMs: Double? = nil, persona: String? = nil, signerEmail: String? = nil,
                signerSerial: String? = nil, verdict: String? = nil, isWebSocket: Bool = false,
                isTunnel: Bool = false, grpcStatus: Int? = nil) {
        self.id = id
        self.sequence = 0
        self.phase = .started
        self.started = started
        self.host = host
        self.mode = mode
        self.method = method
        self.url = url
        self.status = status
        self.httpVersion = httpVersion
        self.errorKind = errorKind
        self.contentType = contentType
        self.requestContentType = requestContentType
        self.requestSize = requestSize
        self.responseSize = responseSize
        self.durationMs = durationMs
        self.persona = persona
        self.signerEmail = signerEmail
        self.signerSerial = signerSerial
        self.verdict = verdict
        self.isWebSocket = isWebSocket
        self.isTunnel = isTunnel
        self.bodiesDropped = false
        self.grpcStatus = grpcStatus
    }
}

extension FlowSummary {
    /// `statuses` (the informational responses' codes, in the order they came) each once, in the
    /// order each first came: what `informational` holds.
    public static func informationalCodes(_ statuses: [Int]) -> [Int] {
        var codes: [Int] = []
        for status in statuses where !codes.contains(status) { codes.append(status) }
        return codes
    }
}
