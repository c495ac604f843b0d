import Foundation
import HTTP1
import HTTPTypes

/// The byte-moving half of an HTTP/1.1 client's exchange, whatever the origin speaks: request
/// head and body up through the `UpstreamLeg`, interim and final response back through
/// `ResponseRelay`, bodies streamed in bounded chunks and captured for the log.
struct ExchangeTransfer<Leg: UpstreamLeg> {
    let context: ExchangeContext
    let head: HTTPRequestHead
    /// `head` as the neutral request the flow records (and a non-HTTP/1.1 leg translates).
    let request: HTTPRequest
    let destination: Destination
    /// Set only here (`ExchangeTransfer+EarlyAnswer` reads the origin's early answer through it).
    var leg: Leg
    /// Where the request and response are recorded for the flow.
    let recorder: ExchangeRecorder
    /// True once the response ended cleanly with a keep-alive framing and the request body was
    /// fully sent: the upstream connection can serve another request.
    private(set) var upstreamReusable = false
    /// True when a pooled connection turned out closed by the server before any response, and
    /// the request may go again on a fresh one (`StaleConnection`): nothing was recorded or sent
    /// to the client.
    private(set) var staleConnection = false
    /// A retry: the request's (empty) body was already read from the client.
    private let resending: Bool
    /// Whether the request has a body (chunked, or a Content-Length above 0).
    private var hasBody = false
    /// A final response that came while the request body was still going up (`originAnsweredEarly`).
    var earlyFinal: UpstreamResponseHead?
    /// `earlyFinal` goes to the client before the rest of the request body goes up (or instead).
    var relaysEarly = false
    /// Request body bytes that went to the origin, for `request.body_cut`.
    var bodyBytesSent = 0
    /// The web UI's replayer sent the request: breakpoints do not hold its response.
    var replayed = false

    init(context: ExchangeContext, head: HTTPRequestHead, request: HTTPRequest, destination: Destination, leg: Leg,
         recorder: ExchangeRecorder, resending: Bool = false) {
        self.context = context
        self.head = head
        self.request = request
        self.destination = destination
        self.leg = leg
        self.recorder = recorder
        self.resending = resending
    }

    /// Waits for the origin's answer while watching the client: a client that gives up before the
    /// head (`curl -m 1`) ends the exchange then, as `client_closed`, where it ran on to the
    /// upstream timeout and recorded a 504 that nobody received.
    private mutating func awaitHead() throws {
        switch try originInput(within: context.configuration.upstreamTimeout) {
        case .peerClosed:
            throw ClientGone(message: "the client closed the connection before the response head arrived")
        case .timedOut:
            // What `next()`'s read would have thrown after the same wait.
            throw NetworkError(.timedOut, "no response within \(Int(context.configuration.upstreamTimeout)) s")
        case .input:
            return
        }
    }

    /// How long an `Expect: 100-continue` request waits for the origin's `100` (or final answer)
    /// before its body goes anyway: curl's wait.
    static var continueWait: TimeInterval { 1 }

    /// How long a request with a body waits for its answer before its record so far is shown
    /// (`ExchangeContext.showRequestSent`).
    static var requestShownAfter: TimeInterval { 0.2 }

    /// What comes first within `limit`: input from the origin (what it already sent counts), the
    /// client's close, or neither.
    private mutating func originInput(within limit: TimeInterval) throws -> Socket.InputOrClose {
        if leg.responsePending() || leg.upstream.stream.pending > 0 { return .input }
        return try leg.awaitResponse(watching: context.client.stream.socket, limit: limit)
    }

    /// Once a request's body has gone on whole and its answer is slow to come (a long poll): its
    /// record so far, with its body, goes to the web UI, which can replay or copy it while it
    /// waits (`ExchangeContext.showRequestSent`). Not for every request: most are answered within
    /// `requestShownAfter`, and then nothing is made.
    private mutating func showRequestIfSlow(draft: FlowDraft) throws {
        guard hasBody && context.server.showsRunningFlows,
              try originInput(within: Self.requestShownAfter) == .timedOut else { return }
        context.showRequestSent(of: draft, recorder: recorder)
    }

    /// The failure is the server having closed a reused connection, and the request may go again.
    /// Not while DevProxy shuts down: then the cut is shutdown's own, and the exchange ends.
    private func isStale(_ error: Error) -> Bool {
        StaleConnection.allowsResend(after: error, of: head, reused: leg.upstream.reused, resending: resending,
                                     stopping: context.server.isStopping)
    }

    /// Sends the request and relays the response; returns whether the client may send more.
    mutating func run(draft: inout FlowDraft) -> Bool {
        // The parser has already refused a request whose last coding is not chunked.
        let chunked = head.headers.transferCodings.last == "chunked"
        hasBody = chunked || (head.headers["Content-Length"].flatMap { Int($0) } ?? 0) > 0
        let expectsContinue = head.headers.expectsContinue
        let waitsForContinue = expectsContinue && Leg.relaysContinue
        recorder.sendStarted = Date()
        // Sending the body failed because the origin closed the connection: it may have answered
        // before reading it all (a 413, a 401), and that answer is what the client gets; the
        // client connection closes after it (the rest of its body is not read).
        var cutShort: (any Error)?
        do {
            try leg.sendHead(UpstreamRequest(request: request, http1: head, destination: destination, hasBody: hasBody,
                                             chunked: chunked))
            if !waitsForContinue && !resending {
                // A leg that does not relay the origin's `100` (HTTP/2): the client goes on at once.
                if expectsContinue && hasBody { context.sendToClient(ExchangeContext.continueHead) }
                cutShort = try sendRequestBodyUntilCut(draft: &draft)
            }
        } catch {
            // The (empty) body is read off the client here, so the retry finds its next request.
            if isStale(error), (try? sendRequestBody(upstreamWrites: false, draft: &draft)) != nil {
                staleConnection = true
                return false
            }
            recorder.finishRequestBody(into: &draft, decoding: false)
            return failBeforeResponse(error, sending: true, draft: &draft)
        }
        recorder.requestSent = Date()
        recorder.finishTimings(into: &draft, openEnded: false)
        var bodySent = !waitsForContinue && cutShort == nil && !relaysEarly
        let response = ResponseRelay<Leg>(context: context, requestHead: head, recorder: recorder, replayed: replayed)
        do {
            if bodySent { try showRequestIfSlow(draft: draft) }
            if waitsForContinue && hasBody && !resending, try originInput(within: Self.continueWait) == .timedOut {
                // RFC 9110 §10.1.1: an origin need not send 100 (Python's http.server, many
                // frameworks), and a client need not wait for one (curl sends its body after 1 s):
                // DevProxy waited only on the origin, holding a body the client had sent, until the
                // upstream timeout. After the wait a client may expect, it says go on itself.
                context.sendToClient(ExchangeContext.continueHead)
                cutShort = try sendRequestBodyUntilCut(draft: &draft)
                bodySent = cutShort == nil && !relaysEarly
                // The send ends with the body, not the head (a 50 MiB upload read as 0 ms of send).
                recorder.requestSent = Date()
                if bodySent { try showRequestIfSlow(draft: draft) }
            }
            var final: UpstreamResponseHead?
            while final == nil {
                if let earlyFinal {
                    final = earlyFinal
                    break
                }
                let event: UpstreamEvent
                do {
                    try awaitHead()
                    event = try leg.next()
                } catch where cutShort != nil {
                    // Nothing came back either: the failed write is the reason.
                    throw cutShort!
                }
                switch event {
                case .interim(let interim) where interim.response.status == 100:
                    guard !bodySent, cutShort == nil else { continue }
                    context.sendToClient(ExchangeContext.continueHead)
                    cutShort = try sendRequestBodyUntilCut(draft: &draft)
                    bodySent = cutShort == nil && !relaysEarly
                    recorder.requestSent = Date()
                    if bodySent { try showRequestIfSlow(draft: draft) }
                case .interim(let interim):
                    relayInterim(interim, draft: &draft)
                case .final(let head):
                    final = head
                case .body, .end:
                    continue
                }
            }
            guard let final else { return false }
            recorder.recordResponseHead(final.response)
            // After an early answer the body is finished once the rest went up or was cut.
            if !relaysEarly { recorder.finishRequestBody(into: &draft) }
            let outcome = response.relay(final, leg: &leg, draft: &draft)
            if relaysEarly {
                bodySent = finishEarlyAnswer(final, upstreamKept: outcome.upstreamReusable, draft: &draft)
            } else if cutShort != nil {
                draft.flow.request?.bodyCut = Flow.BodyCut(sent: bodyBytesSent,
                                                           reason: EarlyAnswerCut.closed(final.response.status))
            }
            if !recorder.requestTrailers.isEmpty || !recorder.responseTrailers.isEmpty {
                recorder.finishTrailers(into: &draft, redact: context.configuration.redactHeaders)
            }
            recorder.finishGRPC(into: &draft)
            recorder.finishTimings(into: &draft)
            upstreamReusable = outcome.upstreamReusable && bodySent
            if cutShort != nil || (relaysEarly && !bodySent) { lingerOnUnreadBody() }
            return outcome.clientKeepAlive && bodySent && head.keepAlive
        } catch {
            if isStale(error) {
                staleConnection = true
                return false
            }
            recorder.finishRequestBody(into: &draft)
            recorder.finishGRPC(into: &draft)
            recorder.finishTimings(into: &draft)
            return failBeforeResponse(error, sending: false, draft: &draft)
        }
    }

    /// After an answer that came before the whole request body went up, reads and drops what the
    /// client still sends, for up to `lingerTime`, before its connection closes: a close with its
    /// bytes unread makes the kernel send RST, which can destroy the answer in the client's
    /// buffers before it reads it (RFC 9112 §9.6's lingering close, as nginx does).
    private func lingerOnUnreadBody() {
        let deadline = Date().addingTimeInterval(Self.lingerTime)
        while let event = try? context.client.next(deadline: deadline) {
            guard case .body = event else { return }
        }
    }

    /// How long `lingerOnUnreadBody` reads at most.
    static var lingerTime: TimeInterval { 2 }

    /// `sendRequestBody()`; a failure to write to an origin that closed the connection is
    /// returned instead of thrown (the origin may have answered already).
    mutating func sendRequestBodyUntilCut(draft: inout FlowDraft) throws -> (any Error)? {
        do {
            try sendRequestBody(draft: &draft, showingProgress: true)
            return nil
        } catch let error as NetworkError where (error.kind == .reset || error.kind == .closed) && !isStale(error) {
            return error
        }
    }

    /// Streams the client's request body through the leg; with `upstreamWrites: false` only
    /// reads it off the client. A long upload is shown while it goes with `showingProgress`
    /// (`ExchangeRecorder.progress`). Returns early, `relaysEarly` set, when the origin answers
    /// before the body is in and the answer goes to the client first (`originAnsweredEarly`).
    private mutating func sendRequestBody(upstreamWrites: Bool = true, draft: inout FlowDraft,
                                          showingProgress: Bool = false) throws {
        while true {
            if upstreamWrites && hasBody && Leg.answersWhileBodyGoesUp && earlyFinal == nil,
               try originAnsweredEarly(draft: &draft) {
                return
            }
            guard let event = try readClient() else { break }
            switch event {
            case .head:
                return
            case .body(let bytes):
                recorder.recordRequestBody(bytes)
                if upstreamWrites {
                    try leg.sendBody(bytes)
                    bodyBytesSent += bytes.count
                }
                if showingProgress { context.showProgress(of: draft, recorder: recorder) }
            case .end(let trailers):
                let fields = trailers.isEmpty ? HTTPFields() : HTTPFields(trailers)
                if !fields.isEmpty { recorder.recordRequestTrailers(fields) }
                if upstreamWrites && hasBody { try leg.endRequest(trailers: fields) }
                return
            }
        }
        throw ClientGone(message: "the client closed the connection in the middle of the request body")
    }

    private func readClient() throws -> HTTP1RequestEvent? {
        while true {
            do {
                return try context.client.next()
            } catch let error as NetworkError where error.kind == .timedOut {
                // A client that pauses its upload (a body streamed as it is made) is waited for as
                // long as the origin waits for it, as without a proxy.
                guard leg.upstream.stream.socket.peerHasClosed else { continue }
                throw ClientStalled(message: "the client sent nothing of its request body for "
                                    + "\(Int(context.client.stream.socket.timeout)) s, and the origin closed its "
                                    + "connection while it waited")
            } catch let error as HTTP1ParseError where error.code == .truncated {
                throw ClientGone(message: "the client closed the connection in the middle of the request body")
            } catch let error as HTTP1ParseError {
                throw MalformedRequestBody(error: error)
            } catch {
                throw ClientGone(message: "the client connection failed during the request body: \(error)")
            }
        }
    }

    /// Answers the client when nothing of the response has been sent yet.
    private func failBeforeResponse(_ error: Error, sending: Bool, draft: inout FlowDraft) -> Bool {
        switch error {
        case let error as ClientGone:
            draft.fail(.clientClosed, error.message)
        case let error as ClientStalled:
            draft.fail(.clientTimeout, error.message)
        case let error as MalformedRequestBody:
            // The head went upstream but nothing came back yet: the client still gets an answer.
            let message = "the request body is malformed: \(error.error.reason)"
            draft.fail(.badRequest, message)
            context.sendError(status: error.error.status, detail: message, kind: .badRequest, draft: &draft)
        default:
            leg.failureBeforeResponse(error, sending: sending).answer(context, draft: &draft)
        }
        return false
    }
}

/// The client went away or sent garbage mid-exchange.
struct ClientGone: Error {
    let message: String
}

/// The client stopped sending its request body, and the origin gave up waiting for it.
struct ClientStalled: Error {
    let message: String
}

/// The client's request body broke its framing (bad chunk size, extension over the limit).
struct MalformedRequestBody: Error {
    let error: HTTP1ParseError
}

/// The upstream closed before sending a complete response head.
struct UpstreamClosed: Error {
    let message: String
}

/// An origin answered 101 Switching Protocols where no switch can follow: to a request that asked
/// for none (RFC 9110 §15.2.2: a server switches only to a protocol the client's `Upgrade` named),
/// or on an HTTP/2 stream, which has no 101 (RFC 9113 §8.6). Relaying it would leave the client
/// waiting for a response that never comes.
struct UnrequestedSwitch: Error {
    let message: String

    init(target: String, http2Client: Bool) {
        message = "upstream \(target) answered 101 Switching Protocols "
            + (http2Client ? "to an HTTP/2 client's request, which cannot switch protocols (RFC 9113 §8.6)"
                           : "to a request that asked for no upgrade (RFC 9110 §15.2.2)")
    }
}
