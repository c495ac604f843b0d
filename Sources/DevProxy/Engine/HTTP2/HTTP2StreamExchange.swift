import Foundation
import GRPCWire
import HTTP2
import HTTPTypes

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
    let requestCapture: BodyCapture
    let responseCapture: BodyCapture
    var requestHead: HTTP2HeaderBlock
    var responseHead: HTTP2HeaderBlock?
    var requestEnded = false
    var responseEnded = false
    /// Response body bytes passed to the client so far.
    var responseBytes = 0
    /// The origin reset the stream while response bytes were still queued for the client: the
    /// reset follows them (`HTTP2ProxyConnection.resetClientAfterQueuedFrames`).
    var pendingReset: HTTP2ErrorCode?
    /// The request was answered by DevProxy (a local route, an error): nothing goes upstream.
    var answeredLocally = false
    /// The local route answering this stream once its body is in, and the request it answers.
    var local: (route: LocalRoute, request: LocalRequest)?
    var localBodyTooLong = false
    /// A `--pinset-rewrite` response held until its body is whole: the head as it would be
    /// relayed, and the body so far (`HTTP2ProxyConnection.releasePinSet`).
    var heldPinSet: (head: HTTP2HeaderBlock, body: [UInt8])?
    var requestTrailers: [HTTP2Field] = []
    var responseTrailers: [HTTP2Field] = []
    let started = Date()
    var requestSent: Date?
    var responseStarted: Date?
    /// The gRPC view of the exchange (service, method, status, each message decoded), when its
    /// content type is `application/grpc…`.
    var grpc: GRPCFlowRecorder?
    var isGRPC: Bool { grpc != nil }

    init(clientStream: Int32, draft: FlowDraft, requestHead: HTTP2HeaderBlock, bodyLimit: Int) {
        self.clientStream = clientStream
        self.draft = draft
        self.requestHead = requestHead
        self.requestCapture = BodyCapture(limit: bodyLimit)
        self.responseCapture = BodyCapture(limit: bodyLimit)
        let fields = requestHead.fields.map { (name: $0.nameString, value: $0.valueString) }
        if GRPCFlowRecorder.isGRPC(contentType: fields.first { $0.name == "content-type" }?.value) {
            grpc = GRPCFlowRecorder(path: requestHead.path ?? "", requestHeaders: fields, decompressor: GRPCContentDecompressor())
        }
    }

    /// Request body bytes from the client, kept for the flow.
    func recordRequest(_ bytes: [UInt8]) {
        requestCapture.append(bytes)
        grpc?.requestBody(bytes)
    }

    /// Request body bytes for a local route, up to its limit.
    func appendLocalBody(_ bytes: [UInt8]) {
        guard let (route, request) = local else { return }
        if request.body.count + bytes.count > route.bodyLimit {
            localBodyTooLong = true
        } else {
            local?.request.body += bytes
        }
    }

    /// Response body bytes from the origin, kept for the flow.
    func recordResponse(_ bytes: [UInt8]) {
        responseCapture.append(bytes)
        responseBytes += bytes.count
        grpc?.responseBody(bytes)
    }

    /// The response head, for the flow and the gRPC view (a trailers-only response carries its
    /// status here).
    func recordResponseHead(_ head: HTTP2HeaderBlock) {
        responseHead = head
        responseStarted = Date()
        grpc?.responseHead(headers: head.fields.map { (name: $0.nameString, value: $0.valueString) })
    }

    /// The response trailers (gRPC's status and message).
    func recordResponseTrailers(_ fields: [HTTP2Field]) {
        responseTrailers = fields
        grpc?.responseTrailers(fields.map { (name: $0.nameString, value: $0.valueString) })
    }

    /// The first value of a request field, by its lowercase name.
    func requestField(_ name: String) -> String? {
        requestHead.fields.first { $0.nameString == name }?.valueString
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
        responseHead?.fields.first { $0.nameString == name }?.valueString
    }

    /// Completes the flow record: bodies, trailers, timings.
    func finish(redact: [String]) -> Flow {
        draft.flow.request?.body = requestCapture.finish(contentEncoding: requestField("content-encoding"),
                                                         contentType: requestField("content-type"))
        if !requestTrailers.isEmpty { draft.flow.request?.trailers = FlowDraft.headerPairs(HTTPFields(requestTrailers), redact: redact) }
        if draft.flow.response != nil {
            draft.flow.response?.body = responseCapture.finish(contentEncoding: responseField("content-encoding"),
                                                               contentType: responseField("content-type"))
            if !responseTrailers.isEmpty {
                draft.flow.response?.trailers = FlowDraft.headerPairs(HTTPFields(responseTrailers), redact: redact)
            }
        }
        if var grpc { draft.flow.grpc = grpc.finish() }
        let now = Date()
        if let requestSent {
            draft.flow.timings.send = FlowDraft.milliseconds(from: started, to: requestSent)
            draft.flow.timings.wait = FlowDraft.milliseconds(from: requestSent, to: responseStarted ?? now)
        }
        if let responseStarted { draft.flow.timings.receive = FlowDraft.milliseconds(from: responseStarted, to: now) }
        let record = draft
        return record.finished()
    }
}
