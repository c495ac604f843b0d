import Foundation
import HTTP2

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
    /// The request was answered by DevProxy (`--sink-reports`, an error): nothing goes upstream.
    var answeredLocally = false
    var requestTrailers: [HTTP2Field] = []
    var responseTrailers: [HTTP2Field] = []
    let started = Date()
    var requestSent: Date?
    var responseStarted: Date?
    /// The gRPC view of the exchange, when its content type is `application/grpc…`.
    var isGRPC: Bool { requestHead.fields.contains { $0.nameString == "content-type" && $0.valueString.hasPrefix("application/grpc") } }

    init(clientStream: Int32, draft: FlowDraft, requestHead: HTTP2HeaderBlock, bodyLimit: Int) {
        self.clientStream = clientStream
        self.draft = draft
        self.requestHead = requestHead
        self.requestCapture = BodyCapture(limit: bodyLimit)
        self.responseCapture = BodyCapture(limit: bodyLimit)
    }

    /// The first value of a request field, by its lowercase name.
    func requestField(_ name: String) -> String? {
        requestHead.fields.first { $0.nameString == name }?.valueString
    }

    /// The first value of a response field, by its lowercase name.
    func responseField(_ name: String) -> String? {
        responseHead?.fields.first { $0.nameString == name }?.valueString
    }

    /// Completes the flow record: bodies, trailers, timings.
    func finish(redact: [String]) -> Flow {
        draft.flow.request?.body = requestCapture.finish(contentEncoding: requestField("content-encoding"),
                                                         contentType: requestField("content-type"))
        if !requestTrailers.isEmpty { draft.flow.request?.trailers = HTTPVersionTranslation.pairs(requestTrailers, redact: redact) }
        if draft.flow.response != nil {
            draft.flow.response?.body = responseCapture.finish(contentEncoding: responseField("content-encoding"),
                                                               contentType: responseField("content-type"))
            if !responseTrailers.isEmpty {
                draft.flow.response?.trailers = HTTPVersionTranslation.pairs(responseTrailers, redact: redact)
            }
        }
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
