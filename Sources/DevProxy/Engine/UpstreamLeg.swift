import Foundation
import HTTP1
import HTTPTypes

/// The origin's side of one exchange, whatever version the origin speaks: the request goes up as
/// a neutral head, body chunks and an end with trailers; the response comes back as neutral
/// events. `ExchangeTransfer` (request up) and `ResponseRelay` (response back to an HTTP/1.1
/// client) are written once against it; `HTTP1OriginLeg` and `HTTP2OriginLeg` implement it.
///
/// Blocking, one exchange at a time, on the thread serving the client connection. Used as a
/// generic parameter (never as an existential), so the HTTP/1.1 → HTTP/1.1 hot path calls its
/// leg directly.
protocol UpstreamLeg {
    /// The connection to the origin (its address, TLS details, socket).
    var upstream: UpstreamConnection { get }

    /// Whether the origin itself answers `Expect: 100-continue` (the body is held until its
    /// `100`); false: DevProxy tells the client to go on and sends the body at once.
    static var relaysContinue: Bool { get }
    /// Whether bytes from the origin while the request body goes up can only be its response
    /// (HTTP/1.1), so the upload watches for an answer that comes before the body is in
    /// (`ExchangeTransfer.originAnsweredEarly`); an HTTP/2 leg's are frames it handles itself
    /// (window updates; an early answer ends the stream with RST_STREAM NO_ERROR).
    static var answersWhileBodyGoesUp: Bool { get }
    /// With `answersWhileBodyGoesUp`: whether response bytes (or the origin's close) arrived,
    /// without waiting; what the socket holds is taken in, and TLS's own messages do not count.
    mutating func responseArrived() -> Bool

    /// Sends the request head; `request.hasBody` says whether body chunks and an end follow.
    mutating func sendHead(_ request: UpstreamRequest) throws
    /// Sends request body bytes, waiting while the origin is not taking them.
    mutating func sendBody(_ bytes: [UInt8]) throws
    /// Ends the request body, with the client's trailers (if any).
    mutating func endRequest(trailers: HTTPFields) throws

    /// The next response event, blocking up to the upstream timeout. A reset, a GOAWAY or a
    /// broken response is thrown; `failureBeforeResponse` and `failureMidBody` describe it.
    mutating func next() throws -> UpstreamEvent
    /// The client took `count` response body bytes: the origin may send as many more.
    mutating func consumed(_ count: Int) throws
    /// Whether the next event is already here (reading it will not wait).
    mutating func hasBufferedResponse() -> Bool
    /// Whether response bytes are here or waiting on the socket.
    mutating func responsePending() -> Bool
    /// When no event is buffered: sends what the leg owes the origin (an HTTP/2 leg's window
    /// updates), then waits up to `limit` for the origin's next bytes or for `client`'s peer to
    /// close its connection.
    mutating func awaitResponse(watching client: Socket, limit: TimeInterval) throws -> Socket.InputOrClose
    /// After `.end`: whether the connection may carry another exchange (a response that left
    /// bytes behind, or an HTTP/2 connection this exchange owns, may not).
    var connectionReusable: Bool { get }
    /// After `.end`: bytes that had come after the response's end (an origin that sent more than
    /// its `Content-Length`); 0 where the leg's framing cannot overrun.
    var overrun: Int { get }

    /// How a failure before the final response head is recorded and answered.
    /// - Parameter sending: the request was still going up.
    func failureBeforeResponse(_ error: Error, sending: Bool) -> LegFailure
    /// How a failure after the final response head, `relayed` body bytes in, is recorded.
    func failureMidBody(_ error: Error, relayed: Int) -> LegFailure
}

/// A request on its way to the origin.
struct UpstreamRequest {
    /// The request as the client sent it, neutral (what the flow records).
    let request: HTTPRequest
    /// The head as an HTTP/1.1 client sent it: an HTTP/1.1 leg relays it with its own fields
    /// (`Upgrade` for WebSocket, the order and case as sent); other legs translate `request`.
    let http1: HTTPRequestHead
    let destination: Destination
    /// Whether body chunks and an end follow the head.
    let hasBody: Bool
    /// The body arrives with no declared length (chunked): an HTTP/1.1 leg re-chunks it.
    let chunked: Bool
}

/// A response head as a leg read it.
struct UpstreamResponseHead {
    /// As the origin sent it (what the flow records).
    let response: HTTPResponse
    /// The origin's version (`HTTP/1.1`, `HTTP/1.0`, `HTTP/2`), for the flow.
    let httpVersion: String
    /// The head as an HTTP/1.1 origin sent it; nil from other versions. An HTTP/1.1 → HTTP/1.1
    /// relay keeps its fields as they came, and reads its framing and `Connection`.
    let http1: HTTPResponseHead?

    /// The head in HTTP/1.1 terms: as received, or translated (RFC 9113 §8.2 fields, a reason
    /// phrase made up). A head whose fields cannot cross (CR, LF, NUL) keeps none of them.
    var asHTTP1: HTTPResponseHead {
        if let http1 { return http1 }
        return (try? HTTPResponseHead(forwarding: response))
            ?? HTTPResponseHead(version: .http11, status: response.status, reason: response.reasonPhrase)
    }
}

/// What a leg reads from the origin.
enum UpstreamEvent {
    /// An interim (1xx) response other than 101.
    case interim(UpstreamResponseHead)
    /// The final response head (101 included).
    case final(UpstreamResponseHead)
    /// Response body bytes; not acknowledged to the origin until `consumed`.
    case body([UInt8])
    /// The response ended, with the origin's trailers (empty when none).
    case end(trailers: HTTPFields)
}

/// A failed exchange as its flow records it and the client hears it (when nothing of the
/// response has reached the client yet).
struct LegFailure {
    let kind: FlowErrorKind
    let message: String
    /// The status of the answer to the client (502, 504, 400).
    var status = 502
    /// The answer's one-line reason; the flow's message when nil.
    var detail: String? = nil
    /// An HTTP/2 error code the origin sent (`error.code`, `error.by` "server").
    var code: String? = nil
    /// Response body bytes relayed before the failure, for `error.after_bytes`.
    var afterBytes: Int? = nil

    /// Records the failure in `draft`.
    func record(in draft: inout FlowDraft) {
        draft.fail(kind, message)
        if let code {
            draft.flow.error?.code = code
            draft.flow.error?.by = "server"
        }
        if let afterBytes { draft.flow.error?.afterBytes = afterBytes }
    }

    /// An origin that said nothing within the upstream timeout, before its response: a 504.
    static func noResponse(_ target: String, timeout: TimeInterval) -> LegFailure {
        LegFailure(kind: .upstreamTimeout, message: "upstream \(target) did not respond within \(Int(timeout)) s",
                   status: 504)
    }

    /// How an origin that went silent in the middle of its body is described (a mid-body failure
    /// adds how many bytes had passed).
    static func silenceMidBody(_ target: String, timeout: TimeInterval) -> String {
        "upstream \(target) went silent for \(Int(timeout)) s in the middle of the body"
    }

    /// Records the failure and sends the client its error response.
    func answer(_ context: ExchangeContext, draft: inout FlowDraft) {
        record(in: &draft)
        context.sendError(status: status, detail: detail ?? message, kind: kind, draft: &draft)
    }
}
