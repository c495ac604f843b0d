import Foundation
import HTTP2
import HTTPTypes
import Synchronization

/// Breakpoints (`--intercept`, `Intercepts`) on an HTTP/2 client's streams. A stream the filter
/// passes gathers its body (DATA is taken but its stream window is not reopened: the window is
/// widened instead, so the origin's taking the bytes later reopens it as for any stream), and is
/// held once END_STREAM came. The decision arrives on the web UI's thread, goes into
/// `breakpointInbox` and wakes the loop, which acts on it; the connection's other streams flow
/// meanwhile. A body that has not ended `breakpointWait` after its head (a gRPC stream, a long
/// upload) or that passes `Intercepts.maxBody` goes on as it comes, so a streaming call never
/// waits for a decision it cannot get. Responses are held by `HTTP2ProxyConnection+ResponseIntercept`.
extension HTTP2ProxyConnection {
    /// How long a stream at a breakpoint may take to end its body before it goes on unheld.
    static let breakpointWait: TimeInterval = 2

    /// Gathers `exchange`'s body when a breakpoint's filter passes its request (to hold it) or
    /// `--modify-body` rules do (to edit it); false when it goes on at once (the flow says why
    /// when either passed it).
    func gathers(_ exchange: HTTP2StreamExchange, request: HTTPRequest, url: String, endStream: Bool) -> Bool {
        guard !exchange.isExtendedConnect else { return false }
        let asked = LocalRequest(request, url: url, httpVersion: "HTTP/2", clientOf: context)
        let declared = request.fields["content-length"].flatMap { Int($0) } ?? 0
        let board = context.configuration.intercepts
        var filter = board?.isActive == true ? board?.shouldHold(asked) : nil
        if let board, let held = filter, let note = Intercepts.refusal(bodyBytes: declared, board: board) {
            exchange.draft.flow.intercept = Intercepts.notHeld(filter: held, because: note)
            filter = nil
        }
        var rules = context.mapRules.requestBodyRules(for: asked)
        if !rules.isEmpty {
            let fields = request.fields.map { (name: $0.name, value: $0.value) }
            if let reason = BodyEdit.requestSkipReason(fields: fields) ?? (declared > Intercepts.maxBody
                ? "its body is over the 4 MiB an HTTP/2 request is gathered to" : nil) {
                if !reason.isEmpty {
                    exchange.draft.recordBodyChanges([], note: "request body not modified: \(reason)")
                }
                rules = []
            }
        }
        guard filter != nil || !rules.isEmpty else { return false }
        let budget = filter != nil ? board?.bodies ?? BodyEdit.requestBodies : BodyEdit.requestBodies
        exchange.breakpoint = StreamBreakpoint(filter: filter, rules: rules, budget: budget)
        exchange.answeredLocally = true
        if endStream {
            holdAtBreakpoint(exchange)
        } else {
            gathering.insert(exchange.clientStream)
            // Room for the whole body gathered, and a frame past it.
            try? session.setReceiveWindow(stream: exchange.clientStream, size: UInt32(Intercepts.maxBody + 16_384))
        }
        return true
    }

    /// Request body bytes of a stream gathering its body.
    func gatherAtBreakpoint(_ exchange: HTTP2StreamExchange, _ bytes: [UInt8], endStream: Bool) {
        guard let stop = exchange.breakpoint else { return }
        guard stop.budget.reserve(bytes.count) else {
            // Past the budget every such stream shares: what was gathered goes on, then these bytes.
            goOnUnheld(exchange, because: .budget(stop.budget), then: bytes)
            return
        }
        exchange.breakpoint?.reserved += bytes.count
        exchange.breakpoint?.body += bytes
        if stop.body.count + bytes.count > Intercepts.maxBody {
            goOnUnheld(exchange, because: .tooLong)
        } else if endStream {
            holdAtBreakpoint(exchange)
        }
    }

    /// The request ended: `--modify-body` edits its body, then it goes on the board (unless the
    /// board is full), or on upstream when no breakpoint holds it.
    func holdAtBreakpoint(_ exchange: HTTP2StreamExchange) {
        gathering.remove(exchange.clientStream)
        guard var stop = exchange.breakpoint else { return }
        if !stop.rules.isEmpty {
            stop.body = editBody(exchange, stop.body, rules: stop.rules)
            stop.rules = []
            exchange.breakpoint = stop
        }
        guard let filter = stop.filter, let board = context.configuration.intercepts else {
            _ = endBreakpoint(exchange)
            exchange.answeredLocally = false
            send(exchange, body: stop.body, trailers: stop.trailers, ended: true)
            return
        }
        if let note = Intercepts.refusal(bodyBytes: stop.body.count, board: board) {
            goOnUnheld(exchange, because: .note(note))
            return
        }
        let held = Intercepts.Held(id: exchange.draft.flow.id, method: exchange.requestHead.method ?? "",
                                   url: exchange.draft.flow.request?.url ?? "", httpVersion: "HTTP/2",
                                   headers: exchange.requestHead.fields.map {
                                       Intercepts.HeaderField(name: String(decoding: $0.name, as: UTF8.self),
                                                              value: String(decoding: $0.value, as: UTF8.self))
                                   },
                                   body: stop.body, filter: filter)
        exchange.breakpoint?.held = held
        heldAtBreakpoint.insert(exchange.clientStream)
        let inbox = breakpointInbox
        let stream = exchange.clientStream
        board.hold(held) { inbox.post(stream, phase: .request, $0) }
    }

    /// `body` as `rules` make it (`BodyEdit`), the stream's head and recorded request following
    /// it (`content-length`, a `content-encoding` DevProxy cannot write dropped); the flow's
    /// `mapped` says what changed.
    private func editBody(_ exchange: HTTP2StreamExchange, _ body: [UInt8], rules: [ModifyBodyRule]) -> [UInt8] {
        let edit = BodyEdit.apply(rules, to: body, contentEncoding: exchange.requestHead.firstValue("content-encoding"),
                                  on: "request")
        exchange.draft.recordBodyChanges(edit.changes, note: edit.note.map { "request body: \($0)" })
        guard let edited = edit.bytes else { return body }
        var head = exchange.requestHead
        head.fields.removeAll { field in
            field.name == Array("content-length".utf8) || edit.dropEncoding && field.name == Array("content-encoding".utf8)
        }
        head.fields.append(HTTP2Field("content-length", String(edited.count)))
        exchange.requestHead = head
        rerecord(exchange, head: head, body: edited, url: exchange.draft.flow.request?.url ?? "",
                 destination: exchange.mappedDestination)
        return edited
    }

    /// Streams whose body did not end `breakpointWait` after their head go on unheld.
    func releaseStalledBreakpoints(now: Date) {
        for stream in gathering {
            guard let exchange = streams[stream], let stop = exchange.breakpoint else {
                gathering.remove(stream)
                continue
            }
            guard now.timeIntervalSince(stop.since) >= Self.breakpointWait else { continue }
            goOnUnheld(exchange, because: .stalled)
        }
    }

    /// Why a stream that gathered its body goes on without it being held or edited.
    enum GatherStop {
        case tooLong, stalled
        case budget(ByteBudget)
        /// The board's own refusal (`Intercepts.refusal`).
        case note(String)
    }

    /// The stream goes upstream as if nothing had stopped it: what it gathered first, then the
    /// rest as it comes; its flow says why (`intercept` for a breakpoint, `mapped.note` for
    /// `--modify-body`).
    private func goOnUnheld(_ exchange: HTTP2StreamExchange, because stop: GatherStop, then more: [UInt8] = []) {
        guard var gathered = endBreakpoint(exchange) else { return }
        gathered.body += more
        gathering.remove(exchange.clientStream)
        exchange.answeredLocally = false
        let wait = Int(Self.breakpointWait)
        if let filter = gathered.filter {
            let note = switch stop {
            case .tooLong: "not held: its body is over \(Intercepts.maxBody >> 20) MiB, more than a breakpoint holds"
            case .stalled: "not held: its body had not ended \(wait) s after its head (a streaming call or a long "
                + "upload), so it goes on as it comes"
            case .budget(let budget): budget === context.configuration.intercepts?.bodies
                ? context.configuration.intercepts?.fullNote ?? ""
                : "not held: DevProxy keeps \(budget.limitText) of request bodies already, the most it keeps at once"
            case .note(let note): note
            }
            exchange.draft.flow.intercept = Intercepts.notHeld(filter: filter, because: note)
        }
        if !gathered.rules.isEmpty {
            let why = switch stop {
            case .tooLong: "its body is over the 4 MiB an HTTP/2 request is gathered to"
            case .stalled: "its body had not ended \(wait) s after its head (a streaming call or a long upload)"
            case .budget(let budget): "DevProxy keeps \(budget.limitText) of request bodies already"
            case .note(let note): note
            }
            exchange.draft.recordBodyChanges([], note: "request body not modified: \(why), and it was relayed as "
                                             + "it came")
        }
        if !exchange.requestEnded {
            try? session.setReceiveWindow(stream: exchange.clientStream, size: limits.initialWindowSize)
        }
        send(exchange, body: gathered.body, trailers: gathered.trailers, ended: exchange.requestEnded)
    }

    /// Ends the stream's breakpoint, giving its body's bytes back to the board's budget; the
    /// breakpoint as it was, or nil when there was none.
    func endBreakpoint(_ exchange: HTTP2StreamExchange) -> StreamBreakpoint? {
        guard let stop = exchange.breakpoint else { return nil }
        exchange.breakpoint = nil
        stop.budget.release(stop.reserved)
        return stop
    }

    /// Acts on the decisions the web UI posted.
    func takeBreakpointDecisions() {
        for (stream, phase, decision) in breakpointInbox.take() {
            heldAtBreakpoint.remove(stream)
            // A stream that ended meanwhile (the client reset it) has nothing left to decide.
            guard let exchange = streams[stream] else { continue }
            if phase == .response {
                decideResponse(exchange, decision)
                continue
            }
            guard let held = exchange.breakpoint?.held else { continue }
            decide(exchange, held: held, decision)
        }
    }

    /// The client reset the stream or closed the connection: a held request (or response,
    /// `leaveResponseBreakpoint`) is withdrawn, its flow saying `client_gone`.
    func leaveBreakpoint(_ exchange: HTTP2StreamExchange) {
        gathering.remove(exchange.clientStream)
        heldAtBreakpoint.remove(exchange.clientStream)
        leaveResponseBreakpoint(exchange)
        guard let held = endBreakpoint(exchange)?.held else { return }
        context.configuration.intercepts?.withdraw(held.id)
        exchange.draft.flow.intercept = held.withdrawnRecord()
    }

    private func decide(_ exchange: HTTP2StreamExchange, held: Intercepts.Held, _ decision: Intercepts.Decision) {
        let trailers = endBreakpoint(exchange)?.trailers
        exchange.draft.flow.intercept = held.record(decision)
        switch decision {
        case .abort(let reason, _):
            answer(exchange, status: 502, kind: .interceptAborted, message: reason)
        case .respond(let typed):
            respondAtBreakpoint(exchange, typed)
        case .resume(let edit):
            let applied = held.applying(edit)
            guard let destination = MapRemoteRule.destination(of: applied.url) else {
                answer(exchange, status: 502, kind: .badRequest,
                       message: "the edited URL \(applied.url) is not an http:// or https:// URL with a host")
                return
            }
            if edit != nil {
                apply(applied, to: exchange, destination: destination, urlEdited: applied.url != held.url)
            }
            exchange.answeredLocally = false
            exchange.upstreamHeard = Date()
            send(exchange, body: applied.body, trailers: trailers, ended: true)
        }
    }

    /// Answers the held stream with `typed`, a response typed at the breakpoint: nothing goes
    /// upstream (no origin is dialled for it); the client gets the status, the fields (lower case,
    /// framed by DevProxy: `Intercepts.Answer.framedHeaders`, less what HTTP/2 does not carry) and
    /// the body. A head HTTP/2 cannot carry is a 502 saying why.
    private func respondAtBreakpoint(_ exchange: HTTP2StreamExchange, _ typed: Intercepts.Answer) {
        let method = exchange.requestHead.method ?? ""
        let fields = typed.framedHeaders(method: method).map { HTTP2Field($0.name.lowercased(), $0.value) }
        let head: HTTP2HeaderBlock
        do {
            head = try HTTP2HeaderBlock.response(status: typed.status, fields: fields).forwarded()
        } catch {
            answer(exchange, status: 502, kind: .badRequest,
                   message: "the response typed at the breakpoint cannot be sent over HTTP/2: \(error)")
            return
        }
        let noBody = typed.isBodiless(method: method) || typed.body.isEmpty
        let response = HTTPResponse(head)
        exchange.answeredLocally = true
        exchange.draft.flow.response = Flow.Response(response, httpVersion: "HTTP/2",
                                                     redact: context.configuration.redactHeaders)
        exchange.recordResponseHead(head, response)
        server.responded(exchange.draft.flow)
        try? session.submitResponse(stream: exchange.clientStream, head, endStream: noBody)
        if !noBody {
            exchange.recordResponse(typed.body)
            try? session.submitData(stream: exchange.clientStream, typed.body, endStream: true)
        }
        exchange.responseEnded = true
    }

    /// Makes the stream's head the edited request: `:method`, and for an edited URL `:scheme`,
    /// `:authority` and `:path` (another origin goes there as `--map-remote` sends a stream);
    /// the fields as edited, `content-length` the body's. The flow records the edited request.
    private func apply(_ applied: (method: String, url: String, headers: [Intercepts.HeaderField], body: [UInt8]),
                       to exchange: HTTP2StreamExchange, destination: Destination, urlEdited: Bool) {
        var head = exchange.requestHead
        head.setPseudo(":method", applied.method)
        if urlEdited {
            head.setPseudo(":scheme", destination.tls ? "https" : "http")
            head.setPseudo(":authority", destination.hostHeader)
            head.setPseudo(":path", destination.pathAndQuery)
            exchange.mappedDestination = elsewhere(destination)
            exchange.draft.flow.server.host = destination.host
            exchange.draft.flow.server.port = destination.port
        }
        let hadLength = head.firstValue("content-length") != nil
        head.fields = applied.headers.compactMap { field in
            let name = field.name.lowercased()
            // `:authority` says the host (RFC 9113 §8.3.1), and the length is the body's.
            guard name != "content-length", name != "host" || !urlEdited else { return nil }
            return HTTP2Field(name, field.value)
        }
        if hadLength || !applied.body.isEmpty {
            head.fields.append(HTTP2Field("content-length", String(applied.body.count)))
        }
        exchange.requestHead = head
        rerecord(exchange, head: head, body: applied.body, url: urlEdited ? destination.url : applied.url,
                 destination: destination)
    }

    /// The flow records `head` and `body` as the request that goes upstream (to `destination`,
    /// or the URL's origin), with the trailers the client sent.
    private func rerecord(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, body: [UInt8], url: String,
                          destination: Destination?) {
        let request = HTTPRequest(head)
        exchange.draft.flow.request = Flow.Request(request, url: url, httpVersion: "HTTP/2",
                                                   redact: context.configuration.redactHeaders)
        let origin = destination ?? MapRemoteRule.destination(of: url)
        let recorder = ExchangeRecorder(request: request, bodyLimit: context.configuration.bodyLimit,
                                        spool: context.configuration.bodySpool, grpcView: true,
                                        protoSchema: origin.flatMap {
                                            server.protoSchema(host: $0.host, port: $0.port, tls: $0.tls,
                                                               path: request.path,
                                                               contentType: request.fields["content-type"])
                                        })
        recorder.recordRequestBody(body)
        let trailers = exchange.recorder.requestTrailers
        if !trailers.isEmpty { recorder.recordRequestTrailers(trailers) }
        exchange.recorder = recorder
    }

    /// Sends the stream's head upstream, then `body` (and `trailers`), ending the request when
    /// `ended`, as `resend` sends a held body.
    private func send(_ exchange: HTTP2StreamExchange, body: [UInt8], trailers: [HTTP2Field]?, ended: Bool) {
        let bodiless = ended && body.isEmpty && trailers == nil
        exchange.bodiless = bodiless
        sendUpstream(exchange, endStream: bodiless)
        guard !bodiless else { return }
        if let http1Leg = exchange.http1Leg {
            http1Leg.push(body)
            if ended { http1Leg.finishRequest(trailers: HTTPFields(trailers ?? [])) }
        } else if let leg = exchange.leg, let upstream = exchange.upstreamStream {
            try? leg.session.submitData(stream: upstream, body, endStream: ended && trailers == nil)
            if let trailers {
                let relayed = (try? [HTTP2Field](forwarding: HTTPFields(trailers))) ?? []
                try? leg.session.submitTrailers(stream: upstream, relayed)
            }
            if ended { exchange.requestSent = Date() }
        } else if !body.isEmpty {
            // Answered meanwhile (no origin): nobody takes the bytes, so they are acknowledged here.
            try? session.consumeStream(exchange.clientStream, count: body.count)
        }
    }
}

/// Where the web UI's thread leaves decisions for an HTTP/2 connection's held streams; the
/// connection's loop, woken by the pipe, takes them (`takeBreakpointDecisions`).
final class BreakpointInbox: Sendable {
    private let decisions = Mutex<[(Int32, Intercepts.Phase, Intercepts.Decision)]>([])
    private let wake: WakePipe

    init(wake: WakePipe) {
        self.wake = wake
    }

    /// Called on the deciding thread: `decision` on `stream`'s held request or response (`phase`).
    func post(_ stream: Int32, phase: Intercepts.Phase, _ decision: Intercepts.Decision) {
        decisions.withLock { $0.append((stream, phase, decision)) }
        wake.signal()
    }

    func take() -> [(Int32, Intercepts.Phase, Intercepts.Decision)] {
        decisions.withLock { list in
            defer { list = [] }
            return list
        }
    }
}
