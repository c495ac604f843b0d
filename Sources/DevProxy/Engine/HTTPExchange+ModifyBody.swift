import Foundation
import HTTP1
import HTTPTypes

extension HTTPExchange {
    /// What `--modify-body` made of an HTTP/1.1 request (`modifyingRequestBody`).
    enum RequestBodyEdit {
        /// No rule passes the request, or it has no body: it goes on as it is.
        case unchanged
        /// The exchange to go on with (its head framed for the body, which the client's reader
        /// hands out again) and the request as it goes upstream.
        case read(HTTPExchange, HTTPRequest)
        /// Reading the body failed; the client was answered if it could be. Whether the client
        /// connection can carry another request.
        case failed(Bool)
    }

    /// `--modify-body` on the request, as mitmproxy's modify_body runs in its request hook: the
    /// rules whose filters pass the request as it would be sent, applied in order to its decoded
    /// body (read whole off the client, up to `BodyEdit.limit`; a client that sent `Expect:
    /// 100-continue` is told to go on here), re-encoded in its coding and sent with its new
    /// `Content-Length`. A body that cannot be edited (over the limit, a transfer coding besides
    /// chunked, an unknown Content-Encoding, a gRPC call) goes on as it comes, and the flow's
    /// `mapped.note` says why. Not for a CONNECT or an `Upgrade`.
    func modifyingRequestBody(_ request: HTTPRequest, draft: inout FlowDraft) -> RequestBodyEdit {
        guard head.method != "CONNECT", head.headers["Upgrade"] == nil else { return .unchanged }
        let rules = context.mapRules.requestBodyRules(
            for: LocalRequest(request, url: destination.url, httpVersion: head.version.description,
                              clientOf: draft.flow))
        guard !rules.isEmpty else { return .unchanged }
        let fields = head.headers.map { (name: $0.name, value: $0.value) }
        if let reason = BodyEdit.requestSkipReason(fields: fields) {
            if !reason.isEmpty { draft.recordBodyChanges([], note: "request body not modified: \(reason)") }
            return .unchanged
        }
        var exchange = self
        // `requestSkipReason` let only a request that may have a body through.
        exchange.answerExpectation(hasBody: true)
        var body: [UInt8] = []
        switch readWholeBody(into: &body, limit: BodyEdit.limit) {
        case .whole:
            break
        case .partial(let bytes, let stop):
            // What was read goes up first, then the rest as it comes.
            if !bytes.isEmpty { context.client.inject([.body(bytes)]) }
            let why = switch stop {
            case .paused(let seconds): "the client paused its body for \(seconds) s, and it was relayed as it came"
            case .tooLong, .refused: BodyEdit.overLimit
            }
            draft.recordBodyChanges([], note: "request body not modified: \(why)")
            return .read(exchange, exchange.outgoingRequest())
        case .failed(let kind, let message, let status, let bytes):
            recordFailedRead(request, kind: kind, message: message, status: status, read: bytes, draft: &draft)
            return .failed(false)
        }
        let edit = BodyEdit.apply(rules, to: body, contentEncoding: head.headers["Content-Encoding"], on: "request")
        let sent = edit.bytes ?? body
        if edit.dropEncoding { exchange.head.headers.remove("Content-Encoding") }
        Self.frame(&exchange.head.headers, bodyLength: sent.count)
        context.client.inject([.body(sent), .end(trailers: HTTPHeaders())])
        draft.recordBodyChanges(edit.changes, note: edit.note.map { "request body: \($0)" })
        let outgoing = exchange.outgoingRequest()
        if edit.bytes != nil { exchange.describe(outgoing, in: &draft, urlEdited: false) }
        return .read(exchange, outgoing)
    }
}
