import Foundation
import HTTP2
import HTTPTypes

/// `--modify-body` for an HTTP/2 client's streams, whatever the origin speaks: a response a rule
/// matches is held as a pin set is (`heldPinSet`: its head and body, not acknowledged upstream)
/// until its body is whole, then edited (`BodyEdit`) and sent with a fresh content-length. What
/// may be held is what the origin may send unacknowledged: the stream window DevProxy gives an
/// HTTP/2 origin, the response queue of an HTTP/1.1 leg (256 KiB each); a longer body goes on as
/// it came, what was held first.
extension HTTP2ProxyConnection {
    /// Holds the response `head` (as it goes to the client) of `exchange` when a `--modify-body`
    /// rule matches it and its body can be edited; records why not when one matches and it cannot.
    /// - Returns: whether the head is held (the caller sends nothing yet).
    func holdsForBodyRules(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, endStream: Bool) -> Bool {
        guard !context.mapRules.body.isEmpty, !endStream, exchange.heldPinSet == nil,
              exchange.draft.flow.pinset == nil || context.configuration.pinSetRewrite == nil else { return false }
        let response = HTTPResponse(head)
        guard !bodyRules(for: exchange, response: response).isEmpty else { return false }
        let fields = response.fields.map { ($0.name, $0.value) }
        var reason = BodyEdit.skipReason(method: exchange.recorder.request.method, status: response.status,
                                         fields: fields)
        if exchange.isWebSocket || exchange.isExtendedConnect {
            reason = "a WebSocket's messages are relayed as they come"
        }
        if let length = response.fields["content-length"].flatMap(Int.init), length > bodyHoldLimit(exchange) {
            reason = reason ?? "its body (\(length) bytes) is over the \(bodyHoldLimit(exchange)) bytes held for an "
                + "HTTP/2 client's stream"
        }
        if let reason {
            if !reason.isEmpty { exchange.draft.recordBodyChanges([], note: "body not modified: " + reason) }
            return false
        }
        exchange.heldPinSet = (head, [])
        return true
    }

    /// The most body bytes held for `exchange`: what its origin may send unacknowledged
    /// (`Intercepts.maxBody` for a response a breakpoint gathers, whose window is widened to it).
    func bodyHoldLimit(_ exchange: HTTP2StreamExchange) -> Int {
        if exchange.responseBreakpoint != nil { return min(BodyEdit.limit, Intercepts.maxBody) }
        let window = exchange.http1Leg != nil ? HTTP1StreamLeg.responseQueueLimit : Int(limits.initialWindowSize) - 1
        return min(BodyEdit.limit, window)
    }

    /// Sends a held response on: a pin set's as `releasePinSet` does; one held for `--modify-body`
    /// edited when its body is `whole`, else as it came with a note, the rest to follow.
    func releaseHeld(_ exchange: HTTP2StreamExchange, whole: Bool, endStream: Bool) {
        if exchange.draft.flow.pinset != nil, context.configuration.pinSetRewrite != nil {
            releasePinSet(exchange, whole: whole, endStream: endStream)
            return
        }
        guard let (head, body) = exchange.heldPinSet else { return }
        exchange.heldPinSet = nil
        guard whole else {
            exchange.draft.recordBodyChanges([], note: "body not modified: its body went over the "
                                             + "\(bodyHoldLimit(exchange)) bytes held for an HTTP/2 client's stream, "
                                             + "and was relayed as it came")
            serveHeld(exchange, head: head, body: body, endStream: endStream)
            return
        }
        let edited = editedByBodyRules(exchange, head: head, body: body)
        serveHeld(exchange, head: edited.head, body: edited.body, endStream: endStream)
    }

    /// A whole response as the `--modify-body` rules that match it make it (`BodyEdit`): a fresh
    /// content-length, a content-encoding DevProxy cannot write dropped; the flow's `mapped` says
    /// what changed.
    func editedByBodyRules(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock,
                           body: [UInt8]) -> (head: HTTP2HeaderBlock, body: [UInt8]) {
        var fields = head.fields
        let coding = fields.first { $0.nameString == "content-encoding" }?.valueString
        let edit = BodyEdit.apply(bodyRules(for: exchange, response: HTTPResponse(head)), to: body,
                                  contentEncoding: coding)
        exchange.draft.recordBodyChanges(edit.changes, note: edit.note)
        guard let bytes = edit.bytes else { return (HTTP2HeaderBlock(pseudo: head.pseudo, fields: fields), body) }
        fields.removeAll {
            $0.nameString == "content-length" || (edit.dropEncoding && $0.nameString == "content-encoding")
        }
        fields.append(HTTP2Field("content-length", "\(bytes.count)"))
        return (HTTP2HeaderBlock(pseudo: head.pseudo, fields: fields), bytes)
    }

    /// The `--modify-body` rules that match `response` of `exchange`'s request as it was sent.
    private func bodyRules(for exchange: HTTP2StreamExchange, response: HTTPResponse) -> [ModifyBodyRule] {
        let asked = LocalRequest(exchange.recorder.request, url: exchange.draft.flow.request?.url ?? "",
                                 httpVersion: "HTTP/2", clientOf: exchange.draft.flow)
        return context.mapRules.bodyRules(for: asked, status: response.status,
                                                        fields: response.fields.map { ($0.name, $0.value) })
    }
}
