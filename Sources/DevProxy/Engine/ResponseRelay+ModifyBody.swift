import Foundation
import HTTP1
import HTTPTypes

/// `--modify-body` for an HTTP/1.1 client, whatever the origin speaks: the body of a response a
/// rule matched is gathered from the leg before anything is sent, edited (`BodyEdit`), and sent
/// with a `Content-Length` (chunked still when trailers came, to carry them). A body over
/// `BodyEdit.limit` goes on as it came: what was gathered first, then the rest as it comes.
extension ResponseRelay {
    /// The `--modify-body` rules that match `head` of this exchange; empty without any.
    func bodyRules(for head: HTTPResponseHead, draft: FlowDraft) -> [ModifyBodyRule] {
        let rules = context.mapRules
        guard !rules.body.isEmpty else { return [] }
        let asked = LocalRequest(recorder.request, url: draft.flow.request?.url ?? "",
                                 httpVersion: draft.flow.request?.httpVersion ?? "HTTP/1.1", clientOf: draft.flow)
        return rules.bodyRules(for: asked, status: head.status, fields: head.headers.map { ($0.name, $0.value) })
    }

    /// Relays `head` and its body edited by `rules`; the body as it came when it cannot be
    /// (the flow's `mapped.note` says why). `gathered`: the start of the body, read off the leg
    /// already (by a breakpoint that did not hold it).
    func relayEditingBody(_ head: HTTPResponseHead, rules: [ModifyBodyRule], gathered: [UInt8] = [], leg: inout Leg,
                          draft: inout FlowDraft) -> RelayOutcome {
        let origin = ClientFraming(request: requestHead, response: head)
        let fields = head.headers.map { ($0.name, $0.value) }
        if let reason = BodyEdit.skipReason(method: requestHead.method, status: head.status, fields: fields) {
            if !reason.isEmpty { draft.recordBodyChanges([], note: "body not modified: " + reason) }
            return stream(head, framing: origin, buffered: gathered, leg: &leg, draft: &draft, reportResponded: true)
        }
        var body = gathered
        let trailers: HTTPFields
        switch gatherBody(into: &body, limit: BodyEdit.limit, gatherer: "--modify-body", leg: &leg, draft: &draft) {
        case .end(let fields):
            trailers = fields
        case .stopped:
            draft.recordBodyChanges([], note: "body not modified: " + BodyEdit.overLimit)
            return stream(head, framing: origin, buffered: body, leg: &leg, draft: &draft, reportResponded: true)
        case .over(let outcome):
            return outcome
        }
        let edit = BodyEdit.apply(rules, to: body, contentEncoding: head.headers["Content-Encoding"])
        draft.recordBodyChanges(edit.changes, note: edit.note)
        var edited = head
        if let bytes = edit.bytes {
            body = bytes
            if edit.dropEncoding { edited.headers.remove("Content-Encoding") }
        }
        // The whole body is here: sent with its length, or chunked to carry trailers to a 1.1 client.
        edited = framedWhole(edited, count: body.count, trailers: trailers)
        // The flow records the head the client got.
        if edit.bytes != nil { recordAsSent(edited, draft: &draft) }
        return sendWhole(edited, body: body, trailers: trailers, origin: head, leg: &leg, draft: &draft)
    }
}
