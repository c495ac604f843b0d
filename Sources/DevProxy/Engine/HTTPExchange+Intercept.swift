import Foundation
import HTTP1
import HTTPTypes

extension HTTPExchange {
    /// Holds the request at a breakpoint (`Intercepts`) when the filter passes it: its whole body
    /// is read off the client first (a client that sent `Expect: 100-continue` is told to go on
    /// here), then this thread waits for the web UI's decision, watching the client. Resumed, the
    /// request goes on as edited, its body handed to the usual transfer (`MessageReader.inject`);
    /// aborted, the client gets a 502 saying why. Nil when the filter does not pass it (or it is a
    /// WebSocket upgrade): the exchange goes on as it came. Otherwise whether the client
    /// connection can carry another request.
    func breakpoint(_ board: Intercepts, request: HTTPRequest, sent: HTTPRequestHead, draft: inout FlowDraft) -> Bool? {
        guard head.method != "CONNECT", head.headers["Upgrade"] == nil,
              let filter = board.shouldHold(LocalRequest(request, url: destination.url,
                                                         httpVersion: head.version.description, clientOf: draft.flow))
        else { return nil }
        let declared = head.headers["Content-Length"].flatMap { Int($0) } ?? 0
        if let note = Intercepts.refusal(bodyBytes: declared, board: board) {
            draft.flow.intercept = Intercepts.notHeld(filter: filter, because: note)
            return nil
        }
        if head.headers.transferCodings.contains(where: { $0 != "chunked" }) {
            // Undone as it is read (`MessageReader`): a part read ahead could not be handed back.
            draft.flow.intercept = Intercepts.notHeld(filter: filter, because: "not held: its body is sent with a "
                                                      + "transfer coding other than chunked, which a breakpoint does "
                                                      + "not take")
            return nil
        }
        var exchange = self
        let hasBody = head.headers.transferCodings.last == "chunked" || declared > 0
        exchange.answerExpectation(hasBody: hasBody)
        let body: [UInt8]
        switch readWholeBody(board) {
        case .whole(let bytes):
            // Kept in `board`'s budget (`reserve`) until the decision.
            body = bytes
        case .partial(let bytes, let stop):
            // Too long, or paused: what was read goes up first, then the rest as it comes.
            if !bytes.isEmpty { context.client.inject([.body(bytes)]) }
            let note = switch stop {
            case .paused(let seconds): "not held: the client paused its body for \(seconds) s, so it goes on as it comes"
            case .tooLong: Intercepts.refusal(bodyBytes: Intercepts.maxBody + 1, board: board) ?? ""
            case .refused: board.fullNote
            }
            draft.flow.intercept = Intercepts.notHeld(filter: filter, because: note)
            let request = exchange.outgoingRequest()
            return exchange.forward(request, recorder: exchange.makeRecorder(request), draft: &draft)
        case .failed(let kind, let message, let status, let bytes):
            recordFailedRead(request, kind: kind, message: message, status: status, read: bytes, draft: &draft)
            return false
        }
        // The fields that go upstream: the client's hop-by-hop ones (`Proxy-Connection`,
        // `Connection`, `Keep-Alive`) are its connection's to DevProxy, not the origin's, so the
        // editor does not offer them; `apply` keeps them for the client's connection.
        var fields = sent.headers
        fields.remove("Expect")
        fields.removeHopByHop()
        if hasBody { Self.frame(&fields, bodyLength: body.count) }
        let held = Intercepts.Held(id: draft.flow.id, method: head.method, url: destination.url,
                                   httpVersion: head.version.description,
                                   headers: fields.map { Intercepts.HeaderField(name: $0.name, value: $0.value) },
                                   body: body, filter: filter)
        let socket = context.client.stream.socket
        let decision = board.wait(held) { socket.peerHasClosed }
        board.release(body.count)
        guard let decision else {
            draft.flow.intercept = held.withdrawnRecord()
            recordAndEnd(body, request: request, draft: &draft)
            draft.fail(.clientClosed, "the client closed the connection while the request was held at a breakpoint")
            return false
        }
        draft.flow.intercept = held.record(decision)
        switch decision {
        case .abort(let reason, _):
            recordAndEnd(body, request: request, draft: &draft)
            draft.fail(.interceptAborted, reason)
            context.sendError(status: 502, detail: reason, kind: .interceptAborted, draft: &draft)
            return false
        case .respond(let answer):
            return exchange.answerAtBreakpoint(answer, body: body, request: request, draft: &draft)
        case .resume(let edit):
            let applied = held.applying(edit)
            guard exchange.apply(applied, held: held, bodyEdited: edit?.body != nil, hadBody: hasBody) else {
                let message = "the edited URL \(applied.url) is not an http:// or https:// URL with a host"
                recordAndEnd(body, request: request, draft: &draft)
                draft.fail(.badRequest, message)
                context.sendError(status: 502, detail: message, kind: .badRequest, draft: &draft)
                return false
            }
            if !applied.body.isEmpty { context.client.inject([.body(applied.body), .end(trailers: HTTPHeaders())]) }
            else { context.client.inject([.end(trailers: HTTPHeaders())]) }
            let request = exchange.outgoingRequest()
            exchange.describe(request, in: &draft, urlEdited: applied.url != held.url)
            return exchange.forward(request, recorder: exchange.makeRecorder(request), draft: &draft)
        }
    }

    /// Answers the held request with `answer`, typed at the breakpoint: the request (`body` its
    /// body) is recorded as the client sent it and goes nowhere; the client gets exactly the
    /// status, fields and body typed, framed by DevProxy (`Intercepts.Answer.framedHeaders`).
    /// Whether the client connection can carry another request.
    private func answerAtBreakpoint(_ answer: Intercepts.Answer, body: [UInt8], request: HTTPRequest,
                                    draft: inout FlowDraft) -> Bool {
        let recorder = makeRecorder(request)
        recorder.recordRequestBody(body)
        recorder.finishRequestBody(into: &draft)
        let keepAlive = head.keepAlive && !context.server.isStopping
        var headers = HTTPHeaders(answer.framedHeaders(method: head.method).map { ($0.name, $0.value) })
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let reason = HTTPResponse.standardReason(answer.status)
        let noBody = answer.isBodiless(method: head.method)
        let response = HTTPResponse(status: answer.status, reason: reason, fields: HTTPFields(headers))
        recorder.replaceResponseHead(response)
        if !noBody { recorder.recordResponseBody(answer.body) }
        draft.flow.response = Flow.Response(response, httpVersion: "HTTP/1.1",
                                            redact: context.configuration.redactHeaders)
        recorder.finishResponseBody(into: &draft)
        context.server.responded(draft.flow)
        let responseHead = HTTPResponseHead(version: .http11, status: answer.status, reason: reason, headers: headers)
        context.sendToClient(HTTP1Serializer.serialize(responseHead) + (noBody ? [] : answer.body))
        return keepAlive
    }

    /// Before a whole body is read here (a breakpoint's, `--modify-body`'s): a client that sent
    /// `Expect: 100-continue` is told to go on now when it has a body to send, and the `Expect`
    /// does not go up, since the body is wanted now, not when the origin says so.
    mutating func answerExpectation(hasBody: Bool) {
        guard head.headers.expectsContinue else { return }
        if hasBody { context.sendToClient(ExchangeContext.continueHead) }
        head.headers.remove("Expect")
    }

    /// A whole-body read that failed (`BodyRead.failed`): the flow keeps what was read and why,
    /// and the client gets `status` when there is one.
    func recordFailedRead(_ request: HTTPRequest, kind: FlowErrorKind, message: String, status: Int?, read bytes: [UInt8],
                          draft: inout FlowDraft) {
        let recorder = makeRecorder(request)
        recorder.recordRequestBody(bytes)
        recorder.finishRequestBody(into: &draft, decoding: false)
        draft.fail(kind, message)
        if let status { context.sendError(status: status, detail: message, kind: kind, draft: &draft) }
    }

    /// How reading a whole request body (a breakpoint's, `--modify-body`'s) ended.
    enum BodyRead {
        case whole([UInt8])
        /// What was read before `stop`: the rest is still to come from the client.
        case partial([UInt8], stop: BodyStop)
        /// The client hung up or broke the framing; `status` is the answer it gets, if any.
        case failed(FlowErrorKind, String, status: Int?, read: [UInt8])
    }

    /// Why a whole body was not read.
    enum BodyStop {
        /// The client sent nothing of it for this many seconds.
        case paused(Int)
        /// Past the reader's limit.
        case tooLong
        /// `admit` refused a part (a budget spent).
        case refused
    }

    /// Reads the request body to its end (decoded of any transfer coding, as the transfer reads it),
    /// each part taken from `board`'s budget: a whole body stays taken, anything else is given back.
    private func readWholeBody(_ board: Intercepts) -> BodyRead {
        var body: [UInt8] = []
        let read = readWholeBody(into: &body, limit: Intercepts.maxBody) { board.reserve($0.count) }
        if case .whole = read { return read }
        board.release(body.count)
        return read
    }

    /// Reads the request body to its end into `body`, at most `limit` bytes, asking `admit` of
    /// each part before it is kept.
    func readWholeBody(into body: inout [UInt8], limit: Int, admit: ([UInt8]) -> Bool = { _ in true }) -> BodyRead {
        while true {
            let event: HTTP1RequestEvent?
            do {
                event = try context.client.next()
            } catch let error as NetworkError where error.kind == .timedOut {
                return .partial(body, stop: .paused(Int(context.client.stream.socket.timeout)))
            } catch let error as HTTP1ParseError where error.code != .truncated {
                return .failed(.badRequest, "the request body is malformed: \(error.reason)", status: error.status,
                                read: body)
            } catch {
                return .failed(.clientClosed, "the client closed the connection in the middle of the request body",
                               status: nil, read: body)
            }
            switch event {
            case .body(let bytes)?:
                guard admit(bytes) else { return .partial(body + bytes, stop: .refused) }
                body += bytes
                if body.count > limit { return .partial(body, stop: .tooLong) }
            case .end?, .head?:
                return .whole(body)
            case nil:
                return .failed(.clientClosed, "the client closed the connection in the middle of the request body",
                               status: nil, read: body)
            }
        }
    }

    /// Frames a held body by its length: `Content-Length`, no `Transfer-Encoding` (its codings
    /// were undone as it was read).
    static func frame(_ fields: inout HTTPHeaders, bodyLength: Int) {
        fields.remove("Transfer-Encoding")
        fields.replaceOrAdd(name: "Content-Length", value: String(bodyLength))
    }

    /// Makes this exchange the request `applied` describes: its method, its header fields framed
    /// for its body, and its URL's destination (another origin, as `--map-remote` sends one; the
    /// same origin keeps the connection's address and `Host`). False for a URL that names none.
    private mutating func apply(_ applied: (method: String, url: String, headers: [Intercepts.HeaderField],
                                            body: [UInt8]),
                                held: Intercepts.Held, bodyEdited: Bool, hadBody: Bool) -> Bool {
        head.method = applied.method
        var fields = HTTPHeaders(applied.headers.map { ($0.name, $0.value) })
        if hadBody || bodyEdited || !applied.body.isEmpty { Self.frame(&fields, bodyLength: applied.body.count) }
        // Whether the client's connection stays open is still the client's to say.
        for name in ["Connection", "Proxy-Connection", "Keep-Alive"] {
            fields.remove(name)
            for value in head.headers.values(name) { fields.add(name: name, value: value) }
        }
        head.headers = fields
        guard applied.url != held.url else {
            let sentHost = held.headers.first { $0.name.equalsCaseInsensitive("Host") }?.value
            if let host = fields["Host"], host != sentHost { destination.editedHost = host }
            return true
        }
        guard let target = MapRemoteRule.destination(of: applied.url) else { return false }
        if let before = MapRemoteRule.destination(of: held.url), before.tls == target.tls, before.host == target.host,
           before.port == target.port {
            destination = Destination(tls: destination.tls, host: destination.host, port: destination.port,
                                      pathAndQuery: target.pathAndQuery, dial: destination.dial,
                                      authority: destination.authority, editedHost: destination.editedHost)
        } else {
            destination = target
        }
        head.target = destination.pathAndQuery
        return true
    }

    /// The request as it goes upstream, `Host` the destination's.
    func outgoingRequest() -> HTTPRequest {
        var sent = head
        sent.headers.replaceOrAdd(name: "Host", value: destination.hostHeader)
        return HTTPRequest(sent, scheme: destination.tls ? "https" : "http", authority: destination.hostHeader,
                           path: destination.pathAndQuery)
    }

    /// The flow's request and server become the edited request's.
    func describe(_ request: HTTPRequest, in draft: inout FlowDraft, urlEdited: Bool) {
        let clientHost = draft.flow.request?.clientHost
        let target = draft.flow.request?.target
        draft.flow.request = Flow.Request(request, url: destination.url, httpVersion: head.version.description,
                                          redact: context.configuration.redactHeaders)
        draft.flow.request?.clientHost = clientHost
        if !urlEdited { draft.flow.request?.target = target }
        draft.flow.server.host = destination.host
        draft.flow.server.port = destination.port
    }

    /// Records a held body that does not go on, and ends the flow's request with it.
    private func recordAndEnd(_ body: [UInt8], request: HTTPRequest, draft: inout FlowDraft) {
        let recorder = makeRecorder(request)
        recorder.recordRequestBody(body)
        recorder.finishRequestBody(into: &draft)
    }
}
