import Foundation
import HTTP1
import HTTPTypes

/// Breakpoints on responses (`Intercepts`) for an HTTP/1.1 client, whatever the origin speaks. A
/// response whose head passes the filter is gathered whole (`gatherBody`), edited by any
/// `--modify-body` rule, and held, so the web UI shows what the client would get; this thread
/// waits for the decision, watching the client. Resumed, it goes as edited (status, header
/// fields, body, framed by its length); aborted, the client gets a 502 saying why. What cannot
/// be held goes on as it comes, and the flow's `intercept_response` says why.
extension ResponseRelay {
    /// How long a held response's body may send nothing before it goes on unheld: a long poll or
    /// a stream, which would hold the client until it ended.
    static var bodyPause: TimeInterval { 2 }

    /// The filter's text when the response with `head` (as the client would get it) is to be held
    /// on `board`: this is not a web UI replay, and the filter passes the flow.
    func breakpointFilter(for head: HTTPResponseHead, board: Intercepts, draft: FlowDraft) -> String? {
        guard !replayed else { return nil }
        let asked = LocalRequest(recorder.request, url: draft.flow.request?.url ?? "",
                                 httpVersion: draft.flow.request?.httpVersion ?? "HTTP/1.1", clientOf: draft.flow)
        return board.shouldHold(asked, status: head.status, fields: head.headers.map { ($0.name, $0.value) })
    }

    /// Holds the response with `head` at a breakpoint (`filter` passed it) and sends what is
    /// decided; `rules` are the `--modify-body` rules that match it.
    func relayHolding(_ head: HTTPResponseHead, filter: String, board: Intercepts, rules: [ModifyBodyRule],
                      leg: inout Leg, draft: inout FlowDraft) -> RelayOutcome {
        let noBody = Self.hasNoBody(head, request: requestHead)
        if let note = Self.refusal(of: head, noBody: noBody, board: board) {
            draft.flow.interceptResponse = Intercepts.notHeld(filter: filter, because: note)
            return relayUnheld(head, rules: rules, gathered: [], leg: &leg, draft: &draft)
        }
        var body: [UInt8] = []
        var reserved = 0
        let gathering = gatherBody(into: &body, limit: Intercepts.maxBody, pause: Self.bodyPause,
                                   gatherer: "a breakpoint", admit: { bytes in
                                       guard board.reserve(bytes.count) else { return false }
                                       reserved += bytes.count
                                       return true
                                   }, leg: &leg, draft: &draft)
        let trailers: HTTPFields
        switch gathering {
        case .end(let fields):
            // Kept in the board's budget until the decision.
            trailers = fields
        case .stopped(let stop):
            board.release(reserved)
            // What was gathered goes first, then the rest as it comes.
            let note = switch stop {
            case .paused(let seconds): "not held: the origin paused its body for \(seconds) s (a long poll or a "
                + "stream), so it goes on as it comes"
            case .tooLong: Intercepts.refusal(bodyBytes: Intercepts.maxBody + 1, board: board) ?? ""
            case .refused: board.fullNote
            }
            draft.flow.interceptResponse = Intercepts.notHeld(filter: filter, because: note)
            return relayUnheld(head, rules: rules, gathered: body, leg: &leg, draft: &draft)
        case .over(let outcome):
            board.release(reserved)
            return outcome
        }
        if noBody { body = [] }
        let fromOrigin = body
        // What the client would get: the body as --modify-body makes it.
        var shown = head
        var modified = false
        if !rules.isEmpty, BodyEdit.skipReason(method: requestHead.method, status: head.status,
                                               fields: head.headers.map { ($0.name, $0.value) }) == nil {
            let edit = BodyEdit.apply(rules, to: body, contentEncoding: head.headers["Content-Encoding"])
            draft.recordBodyChanges(edit.changes, note: edit.note)
            if let bytes = edit.bytes {
                body = bytes
                modified = true
                if edit.dropEncoding { shown.headers.remove("Content-Encoding") }
            }
        }
        if let note = Intercepts.refusal(bodyBytes: 0, board: board) {
            // The board filled while the body came.
            board.release(reserved)
            draft.flow.interceptResponse = Intercepts.notHeld(filter: filter, because: note)
            return send(shown, body: body, trailers: trailers, origin: head, recordHead: modified, leg: &leg,
                        draft: &draft)
        }
        // The fields as the client would get them, framed for the whole body: the connection's
        // own (hop-by-hop) fields are DevProxy's to set, so the editor does not offer them.
        var fields = framedWhole(shown, count: body.count, trailers: HTTPFields()).headers
        fields.removeHopByHop()
        let held = Intercepts.Held(id: draft.flow.id, method: recorder.request.method,
                                   url: draft.flow.request?.url ?? "", httpVersion: requestHead.version.description,
                                   status: shown.status,
                                   headers: fields.map { Intercepts.HeaderField(name: $0.name, value: $0.value) },
                                   body: body, filter: filter)
        context.server.responded(draft.flow)
        let clientSocket = context.client.stream.socket
        let decision = board.wait(held) { clientSocket.peerHasClosed }
        board.release(reserved)
        guard let decision else {
            draft.flow.interceptResponse = held.withdrawnRecord()
            recordOrigin(body: fromOrigin, trailers: trailers, noBody: noBody, draft: &draft)
            draft.fail(.clientClosed, "the client closed the connection while the response was held at a breakpoint")
            return RelayOutcome(clientKeepAlive: false, upstreamReusable: reusable(head, leg: leg))
        }
        draft.flow.interceptResponse = held.record(decision)
        switch decision {
        case .abort(let reason, _):
            recordOrigin(body: fromOrigin, trailers: trailers, noBody: noBody, draft: &draft)
            draft.fail(.interceptAborted, reason)
            // The client gets DevProxy's 502; the flow keeps the response the origin sent.
            let originResponse = draft.flow.response
            context.sendError(status: 502, detail: reason, kind: .interceptAborted, draft: &draft)
            draft.flow.response = originResponse
            return RelayOutcome(clientKeepAlive: false, upstreamReusable: reusable(head, leg: leg))
        case .respond:
            // Only a held request is answered at its breakpoint (`Intercepts.respond`).
            return send(shown, body: body, trailers: trailers, origin: head, recordHead: modified, leg: &leg,
                        draft: &draft)
        case .resume(let edit):
            let applied = held.applyingToResponse(edit)
            var sent = shown
            if applied.status != shown.status {
                sent.status = applied.status
                sent.reason = HTTPResponse.standardReason(applied.status)
            }
            // The fields shown, or as edited: the origin's connection fields were its connection's.
            sent.headers = HTTPHeaders(applied.headers.map { ($0.name, $0.value) })
            var sentBody = applied.body
            if Self.hasNoBody(sent, request: requestHead) {
                if !sentBody.isEmpty, edit?.body != nil {
                    draft.flow.interceptResponse?.note = "the edited body was not sent: a response "
                        + (requestHead.method == "HEAD" ? "to HEAD" : "with status \(sent.status)") + " has none"
                }
                sentBody = []
            }
            let edited = edit.map { $0.status != nil || $0.headers != nil || $0.body != nil } ?? false
            return send(sent, body: sentBody, trailers: trailers, origin: head, recordHead: edited || modified,
                        leg: &leg, draft: &draft)
        }
    }

    /// Why a response whose head passed the filter goes on at once, or nil when it may be held:
    /// its `Content-Length` is over `Intercepts.maxBody`, it is an event stream, or the board is full.
    private static func refusal(of head: HTTPResponseHead, noBody: Bool, board: Intercepts) -> String? {
        let type = (head.headers["Content-Type"] ?? "").lowercased().trimmingCharacters(in: .whitespaces)
        if !noBody, type.hasPrefix("text/event-stream") {
            return "not held: an event stream (text/event-stream) goes on as it comes"
        }
        let declared = noBody ? 0 : head.headers["Content-Length"].flatMap { Int($0) } ?? 0
        return Intercepts.refusal(bodyBytes: declared, board: board)
    }

    /// The response as it came, when a breakpoint does not hold it: `gathered` first, then the
    /// rest; edited by `rules` when there are any.
    private func relayUnheld(_ head: HTTPResponseHead, rules: [ModifyBodyRule], gathered: [UInt8], leg: inout Leg,
                             draft: inout FlowDraft) -> RelayOutcome {
        if !rules.isEmpty { return relayEditingBody(head, rules: rules, gathered: gathered, leg: &leg, draft: &draft) }
        return stream(head, framing: ClientFraming(request: requestHead, response: head), buffered: gathered,
                      leg: &leg, draft: &draft, reportResponded: true)
    }

    /// Sends `head` with the whole `body`, framed for it; the flow records the head as sent when
    /// `recordHead` (it differs from the origin's).
    private func send(_ head: HTTPResponseHead, body: [UInt8], trailers: HTTPFields, origin: HTTPResponseHead,
                      recordHead: Bool = true, leg: inout Leg, draft: inout FlowDraft) -> RelayOutcome {
        let framed = framedWhole(head, count: body.count, trailers: trailers)
        if recordHead { recordAsSent(framed, draft: &draft) }
        return sendWhole(framed, body: body, trailers: trailers, origin: origin, leg: &leg, draft: &draft)
    }

    /// Records the body and trailers as the origin sent them, for a held response that did not go.
    private func recordOrigin(body: [UInt8], trailers: HTTPFields, noBody: Bool, draft: inout FlowDraft) {
        if !noBody { recorder.recordResponseBody(body) }
        if !trailers.isEmpty { recorder.recordResponseTrailers(trailers) }
        recorder.finishResponseBody(into: &draft)
    }

    /// Whether the upstream connection can serve another request once the whole body was read.
    private func reusable(_ origin: HTTPResponseHead, leg: Leg) -> Bool {
        origin.keepAlive && ClientFraming(request: requestHead, response: origin).upstreamDelimited
            && leg.connectionReusable && leg.overrun == 0
    }
}
