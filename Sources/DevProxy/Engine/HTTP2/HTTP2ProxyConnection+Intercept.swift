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
/// waits for a decision it cannot get.
extension HTTP2ProxyConnection {
    /// How long a stream at a breakpoint may take to end its body before it goes on unheld.
    static let breakpointWait: TimeInterval = 2

    /// Stops `exchange` at the breakpoint when the filter passes its request; false when it goes
    /// on at once (the flow says why when the filter passed it).
    func stopsAtBreakpoint(_ exchange: HTTP2StreamExchange, board: Intercepts, request: HTTPRequest, url: String,
                           endStream: Bool) -> Bool {
        guard !exchange.isExtendedConnect,
              let filter = board.shouldHold(LocalRequest(request, url: url, httpVersion: "HTTP/2")) else {
            return false
        }
        let declared = request.fields["content-length"].flatMap { Int($0) } ?? 0
        if let note = Intercepts.refusal(bodyBytes: declared, board: board) {
            exchange.draft.flow.intercept = Intercepts.notHeld(filter: filter, because: note)
            return false
        }
        exchange.breakpoint = StreamBreakpoint(filter: filter)
        exchange.answeredLocally = true
        if endStream {
            holdAtBreakpoint(exchange)
        } else {
            gathering.insert(exchange.clientStream)
            // Room for the whole body the breakpoint holds, and a frame past it.
            try? session.setReceiveWindow(stream: exchange.clientStream, size: UInt32(Intercepts.maxBody + 16_384))
        }
        return true
    }

    /// Request body bytes of a stream at a breakpoint.
    func gatherAtBreakpoint(_ exchange: HTTP2StreamExchange, _ bytes: [UInt8], endStream: Bool) {
        guard let board = context.configuration.intercepts, board.reserve(bytes.count) else {
            // Past the budget of every breakpoint: what was gathered goes on, then these bytes.
            goOnUnheld(exchange, because: context.configuration.intercepts?.fullNote ?? "", then: bytes)
            return
        }
        exchange.breakpoint?.body += bytes
        if (exchange.breakpoint?.body.count ?? 0) > Intercepts.maxBody {
            goOnUnheld(exchange, because: Intercepts.refusal(bodyBytes: Intercepts.maxBody + 1, board: board) ?? "")
        } else if endStream {
            holdAtBreakpoint(exchange)
        }
    }

    /// The request ended: it goes on the board, unless the board is full.
    func holdAtBreakpoint(_ exchange: HTTP2StreamExchange) {
        gathering.remove(exchange.clientStream)
        guard let board = context.configuration.intercepts, let stop = exchange.breakpoint else { return }
        if let note = Intercepts.refusal(bodyBytes: stop.body.count, board: board) {
            goOnUnheld(exchange, because: note)
            return
        }
        let held = Intercepts.Held(id: exchange.draft.flow.id, method: exchange.requestHead.method ?? "",
                                   url: exchange.draft.flow.request?.url ?? "", httpVersion: "HTTP/2",
                                   headers: exchange.requestHead.fields.map {
                                       Intercepts.HeaderField(name: String(decoding: $0.name, as: UTF8.self),
                                                              value: String(decoding: $0.value, as: UTF8.self))
                                   },
                                   body: stop.body, filter: stop.filter)
        exchange.breakpoint?.held = held
        heldAtBreakpoint.insert(exchange.clientStream)
        let inbox = breakpointInbox
        let stream = exchange.clientStream
        board.hold(held) { inbox.post(stream, $0) }
    }

    /// Streams whose body did not end `breakpointWait` after their head go on unheld.
    func releaseStalledBreakpoints(now: Date) {
        for stream in gathering {
            guard let exchange = streams[stream], let stop = exchange.breakpoint else {
                gathering.remove(stream)
                continue
            }
            guard now.timeIntervalSince(stop.since) >= Self.breakpointWait else { continue }
            goOnUnheld(exchange, because: "not held: its body had not ended \(Int(Self.breakpointWait)) s after its "
                       + "head (a streaming call or a long upload), so it goes on as it comes")
        }
    }

    /// The stream goes upstream as if no breakpoint had stopped it: what it gathered first, then
    /// the rest as it comes; its flow says why.
    private func goOnUnheld(_ exchange: HTTP2StreamExchange, because note: String, then more: [UInt8] = []) {
        guard var stop = endBreakpoint(exchange) else { return }
        stop.body += more
        gathering.remove(exchange.clientStream)
        exchange.answeredLocally = false
        exchange.draft.flow.intercept = Intercepts.notHeld(filter: stop.filter, because: note)
        if !exchange.requestEnded {
            try? session.setReceiveWindow(stream: exchange.clientStream, size: limits.initialWindowSize)
        }
        send(exchange, body: stop.body, trailers: stop.trailers, ended: exchange.requestEnded)
    }

    /// Ends the stream's breakpoint, giving its body's bytes back to the board's budget; the
    /// breakpoint as it was, or nil when there was none.
    func endBreakpoint(_ exchange: HTTP2StreamExchange) -> StreamBreakpoint? {
        guard let stop = exchange.breakpoint else { return nil }
        exchange.breakpoint = nil
        context.configuration.intercepts?.release(stop.body.count)
        return stop
    }

    /// Acts on the decisions the web UI posted.
    func takeBreakpointDecisions() {
        for (stream, decision) in breakpointInbox.take() {
            heldAtBreakpoint.remove(stream)
            // A stream that ended meanwhile (the client reset it) has nothing left to decide.
            guard let exchange = streams[stream], let held = exchange.breakpoint?.held else { continue }
            decide(exchange, held: held, decision)
        }
    }

    /// The client reset the stream or closed the connection: a held request is withdrawn, its flow
    /// saying `client_gone`.
    func leaveBreakpoint(_ exchange: HTTP2StreamExchange) {
        gathering.remove(exchange.clientStream)
        heldAtBreakpoint.remove(exchange.clientStream)
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
        let request = HTTPRequest(head)
        exchange.draft.flow.request = Flow.Request(request, url: urlEdited ? destination.url : applied.url,
                                                   httpVersion: "HTTP/2", redact: context.configuration.redactHeaders)
        let recorder = ExchangeRecorder(request: request, bodyLimit: context.configuration.bodyLimit,
                                        spool: context.configuration.bodySpool, grpcView: true,
                                        protoSchema: server.protoSchema(host: destination.host, port: destination.port,
                                                                        tls: destination.tls, path: request.path,
                                                                        contentType: request.fields["content-type"]))
        recorder.recordRequestBody(applied.body)
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
    private let decisions = Mutex<[(Int32, Intercepts.Decision)]>([])
    private let wake: WakePipe

    init(wake: WakePipe) {
        self.wake = wake
    }

    /// Called on the deciding thread.
    func post(_ stream: Int32, _ decision: Intercepts.Decision) {
        decisions.withLock { $0.append((stream, decision)) }
        wake.signal()
    }

    func take() -> [(Int32, Intercepts.Decision)] {
        decisions.withLock { list in
            defer { list = [] }
            return list
        }
    }
}
