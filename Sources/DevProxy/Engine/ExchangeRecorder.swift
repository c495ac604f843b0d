import Foundation
import GRPCWire
import HTTPTypes
import SessionStore

/// What one exchange records for its flow while it runs, whatever version either leg speaks: the
/// neutral request and response heads, both bodies (kept up to `--body-limit`, counted and
/// hashed whole), trailers, the gRPC view, and when each part passed.
///
/// The HTTP/1.1 exchange (`HTTPExchange`, `ExchangeTransfer`, `ResponseRelay`) and every HTTP/2
/// stream (`HTTP2StreamExchange`) feed one, so a flow's bodies, trailers, gRPC messages and
/// timings are put together by this code alone. One per exchange, used by the thread running it.
final class ExchangeRecorder {
    /// The request head as it arrived.
    let request: HTTPRequest
    /// The response head as the client gets it recorded (the origin's, or DevProxy's own
    /// answer); nil until there is one.
    private(set) var response: HTTPResponse?
    let requestCapture: BodyCapture
    let responseCapture: BodyCapture
    /// Response body bytes recorded (and passed on) so far.
    private(set) var responseBytes = 0
    private(set) var requestTrailers = HTTPFields()
    private(set) var responseTrailers = HTTPFields()
    /// The gRPC view (service, method, status, each message decoded) when asked for and the
    /// request is gRPC (`application/grpc…`), gRPC-Web (`application/grpc-web…`) or Connect (`application/connect+…`, or `application/proto`|`json` with `Connect-Protocol-Version`).
    private(set) var grpc: GRPCFlowRecorder?
    /// After a `2xx` to a WebSocket's extended CONNECT (RFC 8441): its messages each way, which
    /// the stream's DATA carries instead of bodies (`startWebSocket`).
    private(set) var webSocket: WebSocketRecording?
    /// When the request began to go upstream: the exchange's start unless the leg says later.
    var sendStarted: Date
    /// When the exchange began (its request head arrived).
    let started: Date
    /// When the whole request had gone upstream.
    var requestSent: Date?
    /// When the final response head arrived.
    var responseStarted: Date?

    /// - Parameters:
    ///   - spool: where the captures put body bytes past their in-memory head (`BodyCapture`).
    ///   - grpcView: record a gRPC view for a gRPC or gRPC-Web request.
    ///   - lowercaseNames: the request came over HTTP/2, whose field names are lower case: the
    ///     content type is found by an exact match; HTTP/1.1 names come as the client wrote them.
    ///   - protoSchema: `--proto` definitions for the gRPC view.
    init(request: HTTPRequest, bodyLimit: Int, spool: BodySpool? = nil, grpcView: Bool, lowercaseNames: Bool = true,
         protoSchema: ProtoSchema? = nil, started: Date = Date()) {
        self.request = request
        requestCapture = BodyCapture(limit: bodyLimit, spool: spool)
        responseCapture = BodyCapture(limit: bodyLimit, spool: spool)
        sendStarted = started
        self.started = started
        guard grpcView else { return }
        var format = Self.wireFormat(of: request, lowercaseNames: lowercaseNames)
        var connectGet: ConnectGetQuery?
        if format == nil, request.method == "GET", let query = ConnectGetQuery(target: request.path ?? "") {
            format = .connectUnary
            connectGet = query
        }
        guard let format else { return }
        grpc = GRPCFlowRecorder(path: request.path ?? "", requestHeaders: request.fields.map { ($0.name, $0.value) },
                                format: format, decompressor: GRPCContentDecompressor(), schema: protoSchema,
                                connectGet: connectGet)
    }

    /// The gRPC wire `request` uses, if any: by its content type, a Connect unary call by its
    /// `Connect-Protocol-Version` too (a GET, whose message is in its query: `ConnectGetQuery`).
    private static func wireFormat(of request: HTTPRequest, lowercaseNames: Bool) -> GRPCWireFormat? {
        func field(_ name: String) -> String? {
            lowercaseNames ? request.fields.first { $0.name == name }?.value : request.fields[name]
        }
        let contentType = field("content-type")
        if let format = GRPCFlowRecorder.wireFormat(contentType: contentType) { return format }
        return GRPCFlowRecorder.isConnectUnary(contentType: contentType) && field("connect-protocol-version") != nil
            ? .connectUnary : nil
    }

    /// A gRPC call proper (not gRPC-Web): it needs HTTP/2 end to end, and its failures are
    /// answered as gRPC statuses.
    var isGRPC: Bool { grpc?.format == .grpc }

    /// Request body bytes, as they pass.
    func recordRequestBody(_ bytes: [UInt8]) {
        if let webSocket {
            webSocket.consume(bytes, fromClient: true)
            return
        }
        requestCapture.append(bytes)
        grpc?.requestBody(bytes)
    }

    /// The request's trailers.
    func recordRequestTrailers(_ fields: HTTPFields) {
        requestTrailers = fields
    }

    /// The final response head as it arrived (a gRPC trailers-only response carries its status
    /// here): marks the response's start.
    func recordResponseHead(_ response: HTTPResponse) {
        self.response = response
        responseStarted = Date()
        grpc?.responseHead(headers: response.fields.map { ($0.name, $0.value) }, status: response.status)
    }

    /// A response head that replaces the recorded one without marking a start: DevProxy's own
    /// answer, or a head rewritten on its way (a pin set's fresh content-length).
    func replaceResponseHead(_ response: HTTPResponse) {
        self.response = response
    }

    /// Response body bytes, as they pass.
    func recordResponseBody(_ bytes: [UInt8]) {
        responseBytes += bytes.count
        if let webSocket {
            webSocket.consume(bytes, fromClient: false)
            return
        }
        responseCapture.append(bytes)
        grpc?.responseBody(bytes)
    }

    /// From here on, the stream's DATA is a WebSocket's frames (RFC 8441 §5): recorded as its
    /// messages (`Flow.websocket`), not as bodies.
    /// - Parameters:
    ///   - inflating: the response accepted permessage-deflate.
    ///   - dataBudget: message bytes kept whole (`--body-limit`).
    func startWebSocket(inflating: Bool, dataBudget: Int) {
        webSocket = WebSocketRecording(inflating: inflating, dataBudget: dataBudget)
    }

    /// The response's trailers (gRPC's status and message).
    func recordResponseTrailers(_ fields: HTTPFields) {
        responseTrailers = fields
        grpc?.responseTrailers(fields.map { ($0.name, $0.value) })
    }

    /// The client reset its HTTP/2 stream with `code` (`CANCEL`): a gRPC call without a status yet
    /// takes the one the client reports (`GRPCFlowRecorder.clientReset`).
    func recordClientReset(code: String, now: Date = Date()) {
        grpc?.clientReset(code: code, elapsed: now.timeIntervalSince(started))
    }

    /// The client's connection closed with the exchange still open: a gRPC call without a status
    /// yet takes the one a client that ends its calls so reports (`GRPCFlowRecorder.clientClosed`).
    func recordClientClosed(now: Date = Date()) {
        grpc?.clientClosed(elapsed: now.timeIntervalSince(started))
    }

    /// DevProxy reset the client's HTTP/2 stream with `code` (the origin's reset passed on): a gRPC
    /// call without a status yet takes the one the client reports (`GRPCFlowRecorder.streamReset`).
    func recordStreamReset(code: String) {
        grpc?.streamReset(code: code)
    }

    /// DevProxy's shutdown closed the client's connection with the exchange still open: a gRPC
    /// call without a status yet is UNAVAILABLE, as its client reports it.
    func recordShutdownCut() {
        grpc?.connectionCut("DevProxy shut down and closed the client's connection")
    }

    /// Puts the request body into the flow, decoded by the request's Content-Encoding for its
    /// text unless `decoding` is false (a body cut short by a failure).
    func finishRequestBody(into draft: inout FlowDraft, decoding: Bool = true) {
        let coding = decoding ? request.fields.combined("content-encoding") : nil
        let type = request.fields["content-type"]
        draft.flow.request?.body = requestCapture.finish(contentEncoding: coding, contentType: type)
    }

    /// Puts the response body into the flow, decoded by the recorded head's Content-Encoding.
    func finishResponseBody(into draft: inout FlowDraft) {
        draft.flow.response?.body = responseCapture.finish(contentEncoding: response?.fields.combined("content-encoding"),
                                                           contentType: response?.fields["content-type"])
    }

    /// Completes the flow: bodies, trailers (values of `redact`ed names masked), the gRPC view and
    /// the timings.
    func finish(into draft: inout FlowDraft, redact: [String]) {
        // A WebSocket's DATA was its messages: there are no bodies.
        if webSocket == nil {
            // A body an early answer cut (`request.body_cut`) is a prefix of a coded stream: kept
            // as the bytes that went, as the HTTP/1.1 exchange keeps it (`finishEarlyAnswer`).
            finishRequestBody(into: &draft, decoding: draft.flow.request?.bodyCut == nil)
            if draft.flow.response != nil { finishResponseBody(into: &draft) }
        }
        finishTrailers(into: &draft, redact: redact)
        finishGRPC(into: &draft)
        if let webSocket {
            draft.flow.websocket = webSocket.records
            draft.flow.websocketEnd = webSocket.end
        }
        finishTimings(into: &draft)
    }

    /// The flow as far as the exchange has gone, for sinks that show running flows: the bodies
    /// so far (`BodyCapture.preview`), trailers and the gRPC view so far (every whole message
    /// seen), and the timings until now. Leaves the recorder as it was.
    func snapshot(into draft: inout FlowDraft, redact: [String]) {
        // A body already finished into the draft (an HTTP/1.1 request's, sent whole) stays.
        if draft.flow.request != nil && draft.flow.request?.body == nil && webSocket == nil {
            draft.flow.request?.body = requestCapture.preview(contentEncoding: request.fields.combined("content-encoding"),
                                                              contentType: request.fields["content-type"])
        }
        if draft.flow.response != nil && draft.flow.response?.body == nil && webSocket == nil {
            draft.flow.response?.body = responseCapture.preview(contentEncoding: response?.fields.combined("content-encoding"),
                                                                contentType: response?.fields["content-type"])
        }
        finishTrailers(into: &draft, redact: redact)
        if let grpc { draft.flow.grpc = grpc.info }
        if let webSocket { draft.flow.websocket = webSocket.records }
        finishTimings(into: &draft)
    }

    /// How much the exchange has recorded: it grows with every message, body byte, head and
    /// trailer, so a running flow's record is handed on again only when it has more to show.
    var progressMark: Int {
        requestCapture.size + responseBytes + (response == nil ? 0 : 1) + requestTrailers.count + responseTrailers.count
            + (grpc.map { $0.info.messages.count + ($0.info.status == nil ? 0 : 1) } ?? 0)
            + (webSocket?.records.count ?? 0)
    }

    /// When the record so far is next due (`ProgressSchedule`).
    private var progressSchedule = ProgressSchedule()

    /// `draft` as far as the exchange has gone (`snapshot`) when it is due (`ProgressSchedule`),
    /// marked as handed on; nil when it is not.
    func progress(of draft: FlowDraft, redact: [String], now: Date = Date()) -> Flow? {
        guard progressSchedule.isDue(mark: progressMark, since: sendStarted, now: now) else { return nil }
        var copy = draft
        snapshot(into: &copy, redact: redact)
        return copy.flow
    }

    /// Puts the gRPC view, if there is one, into the flow (as far as the call went).
    func finishGRPC(into draft: inout FlowDraft) {
        if var grpc { draft.flow.grpc = grpc.finish() }
    }

    /// Puts the trailers recorded into the flow, values of `redact`ed names masked; response
    /// trailers only when the flow has a response.
    func finishTrailers(into draft: inout FlowDraft, redact: [String]) {
        if !requestTrailers.isEmpty {
            draft.flow.request?.trailers = FlowDraft.headerPairs(requestTrailers, redact: redact)
        }
        if draft.flow.response != nil, !responseTrailers.isEmpty {
            draft.flow.response?.trailers = FlowDraft.headerPairs(responseTrailers, redact: redact)
        }
    }

    /// The send / wait / receive timings from the marks that were set: send from `sendStarted`
    /// to `requestSent`, wait from there to `responseStarted`, receive from there to now.
    /// - Parameter openEnded: a wait whose response never started runs until now (an HTTP/2
    ///   stream's flow shows how long it waited in vain); false: only spans whose end was marked,
    ///   and no receive (an HTTP/1.1 exchange that failed before the response).
    func finishTimings(into draft: inout FlowDraft, openEnded: Bool = true) {
        let now = Date()
        // A response that began before the request ended (a bidirectional call, an early answer
        // to an upload) overlaps the send: its wait is 0 and its receive counts from the
        // request's end, so the phases still add up to the exchange (the wait was negative,
        // -999 ms in a bidi gRPC call).
        var received = responseStarted
        if let started = responseStarted, let requestSent { received = max(started, requestSent) }
        if let requestSent {
            draft.flow.timings.send = FlowDraft.milliseconds(from: sendStarted, to: requestSent)
            if openEnded || received != nil {
                draft.flow.timings.wait = FlowDraft.milliseconds(from: requestSent, to: received ?? now)
            }
        }
        if openEnded, let received {
            draft.flow.timings.receive = FlowDraft.milliseconds(from: received, to: now)
        }
    }
}

/// When a running flow's record so far is handed to the sinks that show running flows: once it
/// has run `interval` (shorter flows are shown when they end), then again at most every
/// `interval`, and only when it has recorded more (its mark changed). One rule for every kind of
/// flow: HTTP exchanges (`ExchangeRecorder.progress`) and WebSockets (`WebSocketSession`).
struct ProgressSchedule {
    static let interval: TimeInterval = 1

    /// When the record so far was last handed on, and the mark then.
    private var last: (at: Date, mark: Int)?

    /// Whether a flow that began at `started` and has recorded up to `mark` is due now; if so,
    /// it is taken as handed on.
    mutating func isDue(mark: Int, since started: Date, now: Date) -> Bool {
        guard now.timeIntervalSince(started) >= Self.interval else { return false }
        if let last {
            guard now.timeIntervalSince(last.at) >= Self.interval, mark != last.mark else { return false }
        }
        last = (now, mark)
        return true
    }
}
