import Foundation
import HTTP2
import HTTPTypes

/// Breakpoints (`--intercept`, `Intercepts`) on the responses of an HTTP/2 client's streams,
/// whatever the origin speaks. A response head the filter passes (as `--modify-headers` made it
/// for the client) is held as `--modify-body` holds one (`heldPinSet`): nothing reaches the client
/// while its body is gathered; the origin may send the whole of it, up to `Intercepts.maxBody`,
/// since the held stream's window (an HTTP/2 origin) or response queue (an HTTP/1.1 leg) is
/// widened to that, the bytes counted in the board's budget. Once the body (and its trailers)
/// ended, `--modify-body` edits it, and it goes on the board; the decision arrives on the web UI's
/// thread (`BreakpointInbox`) while the connection's other streams flow. A body that has not ended
/// `breakpointWait` after its head (a gRPC server stream, a long download), one over
/// `Intercepts.maxBody`, or one the budget has no room for goes on unheld: what was gathered, then
/// the rest as it comes, its flow's `intercept_response` saying why; an event stream
/// (`text/event-stream`) goes on at once.
extension HTTP2ProxyConnection {
    /// Holds the response `head` (as it goes to the client) of `exchange` for `--modify-body`
    /// (`holdsForBodyRules`) or a breakpoint; records why not when the breakpoint's filter passes
    /// it and it cannot be held.
    /// - Returns: whether the head is held (the caller sends nothing yet).
    func holdsResponse(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, endStream: Bool) -> Bool {
        let stops = context.configuration.intercepts?.isActive == true && stopsAtBreakpoint(exchange, head: head)
        let forRules = holdsForBodyRules(exchange, head: head, endStream: endStream)
        guard stops else { return forRules }
        exchange.responseBreakpoint?.rules = forRules
        if !forRules { exchange.heldPinSet = (head, []) }
        if endStream {
            holdResponseOnBoard(exchange)
            return true
        }
        gatheringResponses.insert(exchange.clientStream)
        // Room for the whole body gathered, and a frame past it (`gatherResponse` stops there).
        if let leg = exchange.leg, let upstream = exchange.upstreamStream {
            leg.openWindow(of: upstream, to: UInt32(Intercepts.maxBody + 16_384))
        }
        exchange.http1Leg?.setQueueLimit(Intercepts.maxBody)
        return true
    }

    /// Whether the board's filter passes the response `head` of `exchange` and it may be held;
    /// sets `responseBreakpoint` when it does. Not a WebSocket's (extended CONNECT), nor a pin set
    /// `--pinset-rewrite` rewrites.
    private func stopsAtBreakpoint(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock) -> Bool {
        guard let board = context.configuration.intercepts, !exchange.isExtendedConnect,
              exchange.draft.flow.pinset == nil || context.configuration.pinSetRewrite == nil else { return false }
        let response = HTTPResponse(head)
        let asked = LocalRequest(exchange.recorder.request, url: exchange.draft.flow.request?.url ?? "",
                                 httpVersion: "HTTP/2", clientOf: exchange.draft.flow)
        guard let filter = board.shouldHold(asked, status: response.status,
                                            fields: response.fields.map { ($0.name, $0.value) }) else { return false }
        // A HEAD's, a 204's or a 304's length binds no body (RFC 9110 §8.6).
        let bodiless = exchange.recorder.request.method == "HEAD" || response.status == 204 || response.status == 304
        let declared = bodiless ? 0 : response.fields["content-length"].flatMap { Int($0) } ?? 0
        let type = (response.fields["content-type"] ?? "").lowercased().trimmingCharacters(in: .whitespaces)
        // An event stream never ends while it is useful: it goes on at once, as over HTTP/1.1.
        let eventStream = !bodiless && type.hasPrefix("text/event-stream")
            ? "not held: an event stream (text/event-stream) goes on as it comes" : nil
        if let note = eventStream ?? Intercepts.refusal(bodyBytes: declared, board: board) {
            exchange.draft.flow.interceptResponse = Intercepts.notHeld(filter: filter, because: note)
            return false
        }
        exchange.responseBreakpoint = ResponseBreakpoint(filter: filter)
        return true
    }

    /// Response body bytes of a stream whose response a breakpoint gathers; `endStream`: they
    /// end it (an HTTP/2 origin's last DATA).
    func gatherResponse(_ exchange: HTTP2StreamExchange, _ bytes: [UInt8], endStream: Bool) {
        guard let board = context.configuration.intercepts, exchange.responseBreakpoint != nil else { return }
        exchange.heldPinSet?.body += bytes
        guard board.reserve(bytes.count) else {
            goOnUnheldResponse(exchange, because: board.fullNote, rulesNote: "DevProxy keeps \(board.bodies.limitText) "
                               + "of bodies at breakpoints already", ended: endStream)
            return
        }
        exchange.responseBreakpoint?.reserved += bytes.count
        if exchange.heldPinSet?.body.count ?? 0 > Intercepts.maxBody {
            goOnUnheldResponse(exchange, because: "not held: its body is over \(Intercepts.maxBody >> 20) MiB, more "
                               + "than a breakpoint holds", rulesNote: "its body went over the "
                               + "\(Intercepts.maxBody >> 20) MiB gathered at a breakpoint", ended: endStream)
        } else if endStream {
            holdResponseOnBoard(exchange)
        }
    }

    /// The response of a stream at a breakpoint ended with `trailers` (relayed to the client as
    /// `relayed`); false when no breakpoint holds it.
    func endsResponseAtBreakpoint(_ exchange: HTTP2StreamExchange, trailers: HTTPFields,
                                  relayed: [HTTP2Field]) -> Bool {
        guard let stop = exchange.responseBreakpoint, exchange.heldPinSet != nil else { return false }
        // An HTTP/1.1 origin that answered before the whole request: the client is told to stop
        // sending once the response has reached it, as when nothing holds it (`.end`).
        exchange.responseBreakpoint?.stopsRequest = exchange.http1Leg != nil && !exchange.requestEnded
        // Held by its head already (an HTTP/1.1 origin's response without content, whose end
        // follows): it stays held.
        guard stop.held == nil else { return true }
        exchange.responseBreakpoint?.trailers = trailers
        exchange.responseBreakpoint?.relayedTrailers = relayed
        holdResponseOnBoard(exchange)
        return true
    }

    /// The response's origin failed (a reset, a closed connection) before its body ended: what
    /// was gathered goes to the client, for the failure to follow as it would without a breakpoint.
    func responseFailedAtBreakpoint(_ exchange: HTTP2StreamExchange) {
        guard exchange.responseBreakpoint != nil, exchange.responseBreakpoint?.held == nil else { return }
        goOnUnheldResponse(exchange, because: "not held: the origin's response failed before its body ended",
                           rulesNote: "the origin's response failed before its body ended", ended: false)
    }

    /// Streams whose response body did not end `breakpointWait` after its head go on unheld.
    func releaseStalledResponses(now: Date) {
        for stream in gatheringResponses {
            guard let exchange = streams[stream], let stop = exchange.responseBreakpoint, stop.held == nil else {
                gatheringResponses.remove(stream)
                continue
            }
            guard now.timeIntervalSince(stop.since) >= Self.breakpointWait else { continue }
            let wait = Int(Self.breakpointWait)
            goOnUnheldResponse(exchange, because: "not held: its body had not ended \(wait) s after its head (a "
                               + "streaming response, a gRPC server stream), so it goes on as it comes",
                               rulesNote: "its body had not ended \(wait) s after its head", ended: false)
        }
    }

    /// The whole response (its body ended) goes on the board, `--modify-body` having edited it;
    /// or to the client when the board has no room.
    private func holdResponseOnBoard(_ exchange: HTTP2StreamExchange) {
        gatheringResponses.remove(exchange.clientStream)
        exchange.http1Leg?.setQueueLimit(nil)
        guard let stop = exchange.responseBreakpoint, var (head, body) = exchange.heldPinSet,
              let board = context.configuration.intercepts else { return }
        if stop.rules {
            (head, body) = editedByBodyRules(exchange, head: head, body: body)
            exchange.heldPinSet = (head, body)
        }
        if let note = Intercepts.refusal(bodyBytes: body.count, board: board) {
            _ = endResponseBreakpoint(exchange)
            exchange.heldPinSet = nil
            exchange.draft.flow.interceptResponse = Intercepts.notHeld(filter: stop.filter, because: note)
            deliverResponse(exchange, head: head, body: body, stop: stop)
            return
        }
        let held = Intercepts.Held(id: exchange.draft.flow.id, method: exchange.recorder.request.method,
                                   url: exchange.draft.flow.request?.url ?? "", httpVersion: "HTTP/2",
                                   status: HTTPResponse(head).status,
                                   headers: head.fields.map {
                                       Intercepts.HeaderField(name: $0.nameString, value: $0.valueString)
                                   },
                                   body: body, filter: stop.filter)
        exchange.responseBreakpoint?.held = held
        heldAtBreakpoint.insert(exchange.clientStream)
        let inbox = breakpointInbox
        let stream = exchange.clientStream
        board.hold(held) { inbox.post(stream, phase: .response, $0) }
    }

    /// Acts on the web UI's decision on a held response: resumed (as it came or edited), or
    /// aborted (the client gets a 502, a gRPC client `UNAVAILABLE`, saying why).
    func decideResponse(_ exchange: HTTP2StreamExchange, _ decision: Intercepts.Decision) {
        guard let stop = exchange.responseBreakpoint, let held = stop.held, let (head, body) = exchange.heldPinSet
        else { return }
        _ = endResponseBreakpoint(exchange)
        exchange.heldPinSet = nil
        exchange.draft.flow.interceptResponse = held.record(decision)
        switch decision {
        case .abort(let reason, _):
            // The client gets DevProxy's answer; the flow keeps the response as it was held, as
            // over HTTP/1.1, its error saying why the client did not get it.
            record(exchange, head: head, body: body, trailers: stop.trailers)
            exchange.draft.fail(.interceptAborted, reason)
            exchange.draft.flow.error?.by = "proxy"
            exchange.answeredLocally = true
            if let leg = exchange.leg, let upstream = exchange.upstreamStream, leg.clientStreams[upstream] != nil {
                try? leg.session.resetStream(upstream, code: .cancel)
                leg.clientStreams[upstream] = nil
            }
            let answer = ownAnswer(exchange, status: 502, kind: .interceptAborted, message: reason)
            exchange.responseHead = answer.head
            sendOwnAnswer(exchange, head: answer.head, body: answer.body)
        case .respond:
            // Only a held request is answered at its breakpoint (`Intercepts.respond`).
            deliverResponse(exchange, head: head, body: body, stop: stop)
        case .resume(let edit):
            guard let edit else {
                deliverResponse(exchange, head: head, body: body, stop: stop)
                return
            }
            let applied = held.applyingToResponse(edit)
            guard (200...999).contains(applied.status) else {
                abortEdited(exchange, "the edited status \(applied.status) is not a final status (200 to 999)")
                return
            }
            var fields = applied.headers.map { HTTP2Field($0.name.lowercased(), $0.value) }
            var served = applied.body
            let bodiless = exchange.recorder.request.method == "HEAD" || applied.status == 204 || applied.status == 304
            if bodiless, !served.isEmpty, edit.body != nil {
                exchange.draft.flow.interceptResponse?.note = "the edited body was not sent: a response "
                    + (exchange.recorder.request.method == "HEAD" ? "to HEAD" : "with status \(applied.status)")
                    + " has none"
            }
            if bodiless { served = [] }
            // RFC 9110 §8.6: no content-length in a 204.
            if applied.status == 204 { fields.removeAll { $0.nameString == "content-length" } }
            if edit.body != nil {
                // The length is the edited body's.
                fields.removeAll { $0.nameString == "content-length" }
                if !bodiless { fields.append(HTTP2Field("content-length", "\(served.count)")) }
            }
            let block: HTTP2HeaderBlock
            do {
                block = try HTTP2HeaderBlock.response(status: applied.status, fields: fields).forwarded()
            } catch {
                abortEdited(exchange, "the edited response head cannot be sent over HTTP/2: \(error)")
                return
            }
            if applied.status != held.status {
                let response = HTTPResponse(block)
                exchange.draft.flow.response?.status = response.status
                exchange.draft.flow.response?.reason = ObsText.readable(response.reasonPhrase)
                exchange.draft.flow.response?.pseudoHeaders = FlowDraft.headerPairs(response.pseudoHeaderFields,
                                                                                    redact: [])
            }
            deliverResponse(exchange, head: block, body: served, stop: stop)
        }
    }

    /// The flow records `head`, `body` and `trailers` as the response (one the client did not get).
    private func record(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, body: [UInt8],
                        trailers: HTTPFields?) {
        let response = HTTPResponse(head)
        exchange.recorder.replaceResponseHead(response)
        exchange.draft.flow.response?.headers = FlowDraft.headerPairs(response.fields,
                                                                      redact: context.configuration.redactHeaders)
        exchange.recordResponse(body)
        if let trailers, !trailers.isEmpty { exchange.recorder.recordResponseTrailers(trailers) }
    }

    /// A held response edited into one that cannot be sent: the client gets a 502 saying why.
    private func abortEdited(_ exchange: HTTP2StreamExchange, _ message: String) {
        exchange.responseHead = nil
        exchange.draft.flow.response = nil
        answer(exchange, status: 502, kind: .badRequest, message: message)
    }

    /// The client reset the stream or closed the connection while its response was at a
    /// breakpoint: a held response is withdrawn, its flow saying `client_gone`.
    func leaveResponseBreakpoint(_ exchange: HTTP2StreamExchange) {
        gatheringResponses.remove(exchange.clientStream)
        guard let stop = endResponseBreakpoint(exchange) else { return }
        exchange.heldPinSet = nil
        guard let held = stop.held else {
            exchange.draft.flow.interceptResponse = Flow.Intercept(pausedMs: 0, outcome: "client_gone", edited: [],
                                                                   filter: stop.filter)
            return
        }
        context.configuration.intercepts?.withdraw(held.id)
        exchange.draft.flow.interceptResponse = held.withdrawnRecord()
        // The origin's response had ended, so nothing else says the client never got it.
        if exchange.draft.flow.error == nil {
            exchange.draft.fail(.clientClosed, "the client connection closed while the response was held at a "
                                + "breakpoint")
        }
    }

    /// Sends the response on without holding it: what was gathered (edited by `--modify-body` only
    /// when whole), then the rest as it comes; the flow says why (`intercept_response`, and
    /// `mapped.note` when `--modify-body` rules matched).
    private func goOnUnheldResponse(_ exchange: HTTP2StreamExchange, because note: String, rulesNote: String,
                                    ended: Bool) {
        gatheringResponses.remove(exchange.clientStream)
        guard let stop = endResponseBreakpoint(exchange), let (head, body) = exchange.heldPinSet else { return }
        exchange.heldPinSet = nil
        exchange.draft.flow.interceptResponse = Intercepts.notHeld(filter: stop.filter, because: note)
        if stop.rules {
            exchange.draft.recordBodyChanges([], note: "body not modified: \(rulesNote), and was relayed as it came")
        }
        if !ended {
            // What the origin sends from now on waits for the client, as for any stream.
            if let leg = exchange.leg, let upstream = exchange.upstreamStream { leg.narrowWindow(of: upstream) }
            exchange.http1Leg?.setQueueLimit(nil)
        }
        serveHeld(exchange, head: head, body: body, endStream: ended)
    }

    /// Sends a whole response to the client (`serveHeld`): `head`, `body`, and the origin's
    /// trailers, which the flow records.
    private func deliverResponse(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, body: [UInt8],
                                 stop: ResponseBreakpoint) {
        if let trailers = stop.trailers, !trailers.isEmpty { exchange.recorder.recordResponseTrailers(trailers) }
        serveHeld(exchange, head: head, body: body, endStream: true,
                  trailers: stop.relayedTrailers.isEmpty ? nil : stop.relayedTrailers)
        if stop.stopsRequest {
            exchange.http1Leg = nil
            resetClientAfterQueuedFrames(exchange, code: .noError)
        }
    }

    /// Ends the stream's response breakpoint, giving its body's bytes back to the board's budget;
    /// the breakpoint as it was, or nil when there was none.
    private func endResponseBreakpoint(_ exchange: HTTP2StreamExchange) -> ResponseBreakpoint? {
        guard let stop = exchange.responseBreakpoint else { return nil }
        exchange.responseBreakpoint = nil
        heldAtBreakpoint.remove(exchange.clientStream)
        context.configuration.intercepts?.release(stop.reserved)
        return stop
    }
}

/// A response at a breakpoint: the filter that stopped it, what its body took from the board's
/// budget, its trailers once it ended, and then what the board holds. The head and body gathered
/// are the stream's `heldPinSet`.
struct ResponseBreakpoint {
    let filter: String
    /// When the head arrived: a body not ended `HTTP2ProxyConnection.breakpointWait` later goes on.
    let since = Date()
    /// `--modify-body` rules matched too: they edit the body once it is whole, before it is held.
    var rules = false
    /// The bytes taken from the board's budget, given back when the breakpoint ends.
    var reserved = 0
    /// The origin's trailers, as the flow records them, and as they go to the client.
    var trailers: HTTPFields?
    var relayedTrailers: [HTTP2Field] = []
    /// An HTTP/1.1 origin answered before the client's request ended: the client's stream is
    /// reset with NO_ERROR once the response reached it (RFC 9113 §8.1).
    var stopsRequest = false
    var held: Intercepts.Held?
}
