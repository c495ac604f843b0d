import Foundation
import GRPCWire
import HTTP2
import HTTPTypes
import SessionStore

/// One request/response exchange on one stream of an HTTP/2 client connection: what has passed
/// so far, captured for its flow, and where its upstream half runs.
final class HTTP2StreamExchange {
    let clientStream: Int32
    var draft: FlowDraft
    /// The upstream connection carrying this stream's request, and the stream id there.
    var leg: HTTP2UpstreamLeg?
    var upstreamStream: Int32?
    /// Instead, for an HTTP/1.1-only origin: the thread carrying the request there.
    var http1Leg: HTTP1StreamLeg?
    /// Where `--map-remote` sent the request when it is not this connection's origin: an HTTP/2
    /// connection there, or an HTTP/1.1 leg, carries it (`HTTP2ProxyConnection.mappedLeg`).
    var mappedDestination: Destination?
    /// The flow's bodies, trailers, gRPC view and timings (shared with the HTTP/1.1 exchange); a
    /// new one when a breakpoint's edit changed the request (`HTTP2ProxyConnection+Intercept`).
    var recorder: ExchangeRecorder
    var requestHead: HTTP2HeaderBlock
    /// The response head as relayed to the client, once there is one.
    var responseHead: HTTP2HeaderBlock?
    var requestEnded = false {
        didSet { if requestEnded && !oldValue { upstreamHeard = Date() } }
    }
    var responseEnded = false
    /// The request had no body (END_STREAM on its HEADERS): it may go again after its origin
    /// dropped the connection unanswered (`HTTP2ProxyConnection.closeLeg`), as well as after a
    /// refusal (`HTTP2ProxyConnection.resend`).
    var bodiless = false
    /// How many times it went again; past `HTTP2ProxyConnection.maxResends` a refusal reaches the client.
    var resends = 0
    /// When the origin last sent something on this stream (or the request ended, or the client
    /// was still taking the response): the upstream timeout counts from here
    /// (`HTTP2ProxyConnection.expireSilentUpstreams`).
    var upstreamHeard = Date()
    /// The origin reset the stream while response bytes were still queued for the client: the
    /// reset follows them (`HTTP2ProxyConnection.resetClientAfterQueuedFrames`).
    var pendingReset: HTTP2ErrorCode?
    /// The request was answered by DevProxy (a local route, an error): nothing goes upstream.
    var answeredLocally = false
    /// An upstream failure's answer held until the request's body is in (or `--body-limit` of
    /// it), so that the flow keeps what the client sent: answered at once, the stream was reset
    /// with NO_ERROR and the body never read (a pin report to a collector that is down was lost).
    var heldFailure: (status: Int, kind: FlowErrorKind, message: String, since: Date)?
    /// Request body bytes the client sent on this stream.
    var requestBytes = 0
    /// The local route answering this stream once its body is in, and the request it answers.
    var local: (route: LocalRoute, request: LocalRequest)?
    var localBodyTooLong = false
    /// A `--pinset-rewrite` response held until its body is whole: the head as it would be
    /// relayed, and the body so far (`HTTP2ProxyConnection.releasePinSet`).
    var heldPinSet: (head: HTTP2HeaderBlock, body: [UInt8])?
    /// The stream stopped at a breakpoint (`--intercept`): its body gathered, then held on the
    /// board until the web UI decides (`HTTP2ProxyConnection+Intercept`).
    var breakpoint: StreamBreakpoint?
    /// The response stopped at a breakpoint: gathered in `heldPinSet`, then held on the board
    /// until the web UI decides (`HTTP2ProxyConnection+ResponseIntercept`).
    var responseBreakpoint: ResponseBreakpoint?
    /// At a breakpoint, the request's or the response's.
    var atBreakpoint: Bool { breakpoint != nil || responseBreakpoint != nil }

    /// - Parameter request: `requestHead` as a neutral head.
    init(clientStream: Int32, draft: FlowDraft, requestHead: HTTP2HeaderBlock, request: HTTPRequest, bodyLimit: Int,
         spool: BodySpool? = nil, protoSchema: ProtoSchema? = nil) {
        self.clientStream = clientStream
        self.draft = draft
        self.requestHead = requestHead
        recorder = ExchangeRecorder(request: request, bodyLimit: bodyLimit, spool: spool, grpcView: true,
                                    protoSchema: protoSchema)
    }

    /// An extended CONNECT (RFC 8441) opening a WebSocket: `:method` CONNECT, `:protocol` websocket.
    var isWebSocket: Bool {
        requestHead[pseudo: ":method"] == "CONNECT"
            && requestHead[pseudo: ":protocol"]?.lowercased() == "websocket"
    }

    /// A WebSocket whose close handshake went both ways: it ended cleanly, whatever becomes of
    /// its stream or connection afterwards.
    var webSocketClosed: Bool { recorder.webSocket?.closedBothWays == true }

    /// An extended CONNECT (RFC 8441) of any protocol: it needs an origin that enabled it.
    var isExtendedConnect: Bool {
        requestHead[pseudo: ":method"] == "CONNECT" && requestHead[pseudo: ":protocol"] != nil
    }

    var responseCapture: BodyCapture { recorder.responseCapture }
    /// Response body bytes passed to the client so far.
    var responseBytes: Int { recorder.responseBytes }
    var isGRPC: Bool { recorder.isGRPC }
    var requestSent: Date? {
        get { recorder.requestSent }
        set { recorder.requestSent = newValue }
    }
    var responseStarted: Date? {
        get { recorder.responseStarted }
        set { recorder.responseStarted = newValue }
    }

    /// Request body bytes from the client, kept for the flow.
    func recordRequest(_ bytes: [UInt8]) {
        requestBytes += bytes.count
        recorder.recordRequestBody(bytes)
    }

    /// Request body bytes for a local route, up to its limit.
    func appendLocalBody(_ bytes: [UInt8]) {
        guard let limit = local?.route.bodyLimit else { return }
        if local?.request.appendBody(bytes, upTo: limit) == false { localBodyTooLong = true }
    }

    /// Response body bytes from the origin, kept for the flow.
    func recordResponse(_ bytes: [UInt8]) {
        recorder.recordResponseBody(bytes)
    }

    /// The response head as relayed, and as the neutral head the flow records.
    func recordResponseHead(_ head: HTTP2HeaderBlock, _ response: HTTPResponse) {
        responseHead = head
        recorder.recordResponseHead(response)
    }

    /// Whether every response byte went to the client: the stream ended, or the body reached the
    /// length the origin declared (a client may hang up then, before the END_STREAM that follows).
    var responseDelivered: Bool {
        if responseEnded { return true }
        guard let declared = responseField("content-length").flatMap(Int.init) else { return false }
        return responseBytes >= declared
    }

    /// The first value of a response field, by its lowercase name.
    func responseField(_ name: String) -> String? {
        recorder.response?.fields[name]
    }

    /// Completes the flow record: bodies, trailers, timings.
    func finish(redact: [String]) -> Flow {
        recorder.finish(into: &draft, redact: redact)
        return draft.takeFinished()
    }
}

/// A stream at a breakpoint: the filter that stopped it, the body and trailers gathered so far,
/// and, once the request ended, what the board holds.
struct StreamBreakpoint {
    /// The breakpoint's filter; nil when the stream gathers its body for `--modify-body` only.
    var filter: String?
    /// The `--modify-body` rules that passed the request, applied once its body is in.
    var rules: [ModifyBodyRule] = []
    /// What the gathered bytes are taken from: the board's budget, or `BodyEdit.requestBodies`.
    let budget: ByteBudget
    /// When the head arrived: a body not ended `HTTP2ProxyConnection.breakpointWait` later goes on.
    let since = Date()
    /// The body so far.
    var body: [UInt8] = []
    /// The bytes taken from `budget`, given back when the breakpoint ends
    /// (`HTTP2ProxyConnection.endBreakpoint`).
    var reserved = 0
    var trailers: [HTTP2Field]?
    var held: Intercepts.Held?
}
