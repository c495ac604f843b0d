import Foundation
import HTTP1
import HTTPTypes

/// Relays the origin's response, read through an `UpstreamLeg` whatever version the origin
/// speaks, to an HTTP/1.1 client: the final head with framing fixed for the client (and a
/// reason phrase made up when the origin had none), then the body, then trailers as a chunked
/// trailer section; or, when a breakpoint holds it, as decided there (`relayHolding`). Interim
/// responses are the exchange's (`ExchangeTransfer`).
struct ResponseRelay<Leg: UpstreamLeg> {
    let context: ExchangeContext
    let requestHead: HTTPRequestHead
    /// Where the response is recorded for the flow; the exchange has recorded the final head.
    let recorder: ExchangeRecorder
    /// The web UI's replayer sent the request (`ReplayMark`): breakpoints do not hold its response,
    /// as they do not hold its request.
    var replayed = false

    /// Sends the final head (as `--modify-headers` makes it) and streams the body; records the
    /// response in the flow, its head as the client gets it.
    func relay(_ origin: UpstreamResponseHead, leg: inout Leg, draft: inout FlowDraft) -> RelayOutcome {
        var final = origin
        if !context.mapRules.headers.isEmpty {
            final = context.modifyingHeaders(of: origin, request: recorder.request, url: draft.flow.request?.url ?? "",
                                             draft: &draft)
            if final.response != origin.response { recorder.replaceResponseHead(final.response) }
        }
        draft.flow.response = Flow.Response(recorder.response ?? final.response, httpVersion: final.httpVersion,
                                            redact: context.configuration.redactHeaders)
        var head = final.asHTTP1
        if let removed = context.filterAltSvc(&head.headers) { draft.flow.response?.altSvcRemoved = removed }
        if head.status == 101 {
            context.server.responded(draft.flow)
            // Only an HTTP/1.1 origin switches protocols (HTTP/2 has no 101, RFC 9113 §8.6).
            WebSocketSession(context: context, upstream: leg.upstream).run(head: head, draft: &draft)
            return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
        }
        if let rewrite = context.configuration.pinSetRewrite, rewrite.matches(draft.flow.request?.url ?? "") {
            context.server.responded(draft.flow)
            return relayPinSet(head, rewrite: rewrite, leg: &leg, draft: &draft)
        }
        let bodyRules = bodyRules(for: head, draft: draft)
        // Breakpoints (`--intercept`): one atomic load when no filter is set.
        if let board = context.configuration.intercepts, board.isActive,
           let filter = breakpointFilter(for: head, board: board, draft: draft) {
            return relayHolding(head, filter: filter, board: board, rules: bodyRules, leg: &leg, draft: &draft)
        }
        if !bodyRules.isEmpty { return relayEditingBody(head, rules: bodyRules, leg: &leg, draft: &draft) }
        return stream(head, framing: ClientFraming(request: requestHead, response: head), leg: &leg, draft: &draft,
                      reportResponded: true)
    }

    /// Sends `head`, framed for the client, and streams the body: first `buffered` (bytes a caller
    /// already read from the leg and acknowledged), then what the leg reads.
    /// - Parameter reportResponded: report the flow `responded` (`ProxyServer.responded`) before
    ///   the first wait for more of the body. A response whose body and end were read with its
    ///   head (every small one) goes from started to finished: that step is for a body on its way.
    func stream(_ head: HTTPResponseHead, framing: ClientFraming, buffered: [UInt8] = [], leg: inout Leg,
                draft: inout FlowDraft, reportResponded: Bool = false) -> RelayOutcome {
        var respondedPending = reportResponded
        let (outbound, clientKeepAlive) = clientHead(for: head, framing: framing)
        // A client that stops reading for a while is waited for as long as the origin waits.
        let clientSocket = context.client.stream.socket
        clientSocket.stalledWritesFollow = leg.upstream.stream.socket
        defer {
            clientSocket.stalledWritesFollow = nil
            recorder.finishResponseBody(into: &draft)
        }
        // When the body (or its end) is already here, the head goes out with it in one TLS
        // record and one write; otherwise at once, so a slow body never delays the headers.
        var held: [UInt8]? = HTTP1Serializer.serialize(outbound)
        if buffered.isEmpty, !leg.hasBufferedResponse(), let head = held {
            held = nil
            do {
                try context.client.stream.write(head)
            } catch {
                draft.fail(.clientClosed, "the client closed the connection before the response: \(error)")
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            }
        }
        var relayed = 0
        var pending: [UInt8]? = buffered.isEmpty ? nil : buffered
        /// When the origin last sent something, while it is quiet (nil while bytes come).
        var quietSince: Date?
        while true {
            let event: UpstreamEvent
            let fromLeg = pending == nil
            if let bytes = pending {
                event = .body(bytes)
                pending = nil
            } else {
                if !leg.hasBufferedResponse() {
                    if respondedPending {
                        respondedPending = false
                        context.server.responded(draft.flow)
                    }
                    // A body may rightly go quiet (an event stream, a watch, a long poll answered
                    // in parts): it is waited for as long as the client waits, as without a proxy.
                    if quietSince == nil { quietSince = Date() }
                    let waited: Socket.InputOrClose
                    do {
                        waited = try leg.awaitResponse(watching: clientSocket, limit: context.configuration.upstreamTimeout)
                    } catch {
                        waited = .input   // the read that follows reports the failure
                    }
                    switch waited {
                    case .peerClosed:
                        clientLeftQuietBody(relayed: relayed, quietSince: quietSince, draft: &draft)
                        return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
                    case .timedOut:
                        continue
                    case .input:
                        break
                    }
                }
                do {
                    event = try leg.next()
                } catch let error as NetworkError where error.kind == .timedOut {
                    // Input that was not yet a whole event (part of a TLS record, an HTTP/2 PING),
                    // then quiet again: the same wait as above.
                    if clientSocket.peerHasClosed {
                        clientLeftQuietBody(relayed: relayed, quietSince: quietSince, draft: &draft)
                        return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
                    }
                    continue
                } catch {
                    // The head is out: the only honest signal left is to cut the client connection,
                    // never a clean end that makes a truncated body look complete.
                    let failure = leg.failureMidBody(error, relayed: relayed)
                    failure.record(in: &draft)
                    if held != nil {
                        // Nothing reached the client yet: it can still get a clean 502, which is then
                        // the flow's response (it recorded the origin's head the client never saw)
                        // and says what failed (`X-DevProxy-Error`, as DevProxy's other answers do).
                        context.sendToClient(ErrorResponse.answer(status: 502, detail: failure.detail ?? failure.message,
                                                                  kind: failure.kind, bodyLimit: context.configuration.bodyLimit,
                                                                  recordingIn: &draft))
                    }
                    return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
                }
            }
            quietSince = nil
            do {
                switch event {
                case .body(let bytes):
                    recorder.recordResponseBody(bytes)
                    let first = relayed == 0
                    relayed += bytes.count
                    // While more of the body is already here, records gather in the client's write
                    // buffer and leave together; before any wait on the upstream they are flushed.
                    // The first part leaves at once: the client sees the response start without
                    // waiting for 64 KiB of a fast download to gather.
                    let more = !first && leg.responsePending()
                    let out = framing.noBody ? [] : framing.rechunk ? HTTP1Serializer.chunk(bytes) : bytes
                    try send(out, after: &held, flush: !more)
                    if fromLeg { try leg.consumed(bytes.count) }
                    // A long body (an event stream, a download) is shown while it comes.
                    context.showProgress(of: draft, recorder: recorder)
                case .end(let trailers):
                    if !trailers.isEmpty { recorder.recordResponseTrailers(trailers) }
                    try send(framing.rechunk ? Self.lastChunk(trailers) : [], after: &held, flush: true)
                    if leg.overrun > 0 {
                        draft.fail(.upstreamBadResponse, UpstreamOverrun.reason(leg.overrun, target: HostPort(host: draft.flow.server.host,
                                                                                                  port: draft.flow.server.port).description,
                                                                                length: head.headers["Content-Length"]))
                        draft.flow.error?.by = "server"
                    }
                    return RelayOutcome(clientKeepAlive: clientKeepAlive, upstreamReusable: head.keepAlive
                                        && framing.upstreamDelimited && leg.connectionReusable)
                case .interim, .final:
                    return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
                }
            } catch let error as NetworkError where error.kind == .timedOut {
                draft.fail(.clientTimeout, "the client stopped taking the response, and the origin closed its "
                           + "connection while it waited (\(relayed) bytes sent)")
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            } catch {
                draft.fail(.clientClosed,
                           "the client closed the connection while the response streamed (\(relayed) bytes sent)")
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            }
        }
    }
}

extension ResponseRelay {
    /// Records a client that left while the origin's body was quiet.
    func clientLeftQuietBody(relayed: Int, quietSince: Date?, draft: inout FlowDraft) {
        let quiet = quietSince.map { Int(Date().timeIntervalSince($0).rounded()) } ?? 0
        draft.fail(.clientClosed, "the client closed the connection while the response streamed (\(relayed) bytes "
                   + "sent; the origin had been quiet for \(quiet) s)")
    }
}

/// How a relayed response ended.
struct RelayOutcome {
    var clientKeepAlive: Bool
    var upstreamReusable: Bool
}

/// How a response is framed towards the client (RFC 9112 §6.3 on the way in, §6.1 out).
struct ClientFraming {
    /// Send the body with chunked coding (it arrived chunked, or close-delimited to a 1.1 client,
    /// or with a length and announced trailers).
    let rechunk: Bool
    /// The client connection can stay open after this response.
    let clientKeepAlive: Bool
    /// The upstream body ended by its own framing (not by closing the connection).
    let upstreamDelimited: Bool
    /// The response has no body (a HEAD request's, 1xx, 204, 304): body bytes are not relayed.
    let noBody: Bool

    init(request: HTTPRequestHead, response: HTTPResponseHead) {
        noBody = request.method == "HEAD" || response.status == 204 || response.status == 304
            || (100..<200).contains(response.status)
        let codings = response.headers.transferCodings
        let chunked = codings.last == "chunked"
        let hasLength = response.headers["Content-Length"] != nil
        if noBody {
            (rechunk, clientKeepAlive, upstreamDelimited) = (false, true, true)
        } else if chunked || !codings.isEmpty || !hasLength {
            // Chunked, or read-until-close (§6.3 rules 4 and 8): a 1.1 client gets chunks and
            // keeps its connection.
            let closeDelimited = !chunked
            let canChunk = request.version == .http11
            (rechunk, clientKeepAlive, upstreamDelimited) = (canChunk, canChunk, !closeDelimited)
        } else if response.headers["Trailer"] != nil && request.version == .http11 {
            // An h2 origin's length and the trailers it announced (RFC 9110 §6.6.2): only a chunked
            // body carries trailers over HTTP/1.1 (RFC 9112 §7.1.2); framed by its length, they
            // were lost on the way.
            (rechunk, clientKeepAlive, upstreamDelimited) = (true, true, true)
        } else {
            (rechunk, clientKeepAlive, upstreamDelimited) = (false, true, true)
        }
    }
}

extension ResponseRelay {
    /// The head sent to the client for `head`: this proxy's version, hop-by-hop fields gone,
    /// framing and connection fields for the client; and whether the client connection stays open.
    func clientHead(for head: HTTPResponseHead, framing: ClientFraming) -> (HTTPResponseHead, Bool) {
        var outbound = head
        // RFC 9110 §6.2: an intermediary sends its own HTTP version, not the origin's.
        outbound.version = .http11
        outbound.headers.removeHopByHop()
        outbound.headers.collapseContentLength()
        if framing.rechunk {
            // RFC 9112 §6.1: no Content-Length beside Transfer-Encoding.
            outbound.headers.remove("Content-Length")
            outbound.headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        let clientKeepAlive = requestHead.keepAlive && framing.clientKeepAlive && head.keepAlive
        if !clientKeepAlive {
            outbound.headers.add(name: "Connection", value: "close")
        } else if requestHead.version == .http10 {
            outbound.headers.add(name: "Connection", value: "keep-alive")
        }
        if context.configuration.addVia { outbound.headers.add(name: "Via", value: "1.1 devproxy") }
        return (outbound, clientKeepAlive)
    }

    /// The last chunk with the origin's trailers as a trailer section, connection-specific fields
    /// dropped (RFC 9110 §6.5.1; a section whose values cannot cross is left out). An HTTP/1.1
    /// client parses a trailer section whether or not it sent `TE: trailers` (RFC 9112 §7.1.2).
    static func lastChunk(_ trailers: HTTPFields) -> [UInt8] {
        guard !trailers.isEmpty else { return HTTP1Serializer.lastChunk() }
        return HTTP1Serializer.lastChunk(trailers: (try? HTTPHeaders(forwarding: trailers)) ?? HTTPHeaders())
    }

    /// Writes `bytes` to the client, preceded by the held response head if it has not gone yet.
    func send(_ bytes: [UInt8], after held: inout [UInt8]?, flush: Bool) throws {
        if let head = held {
            held = nil
            try context.client.stream.write(head + bytes, flush: flush)
        } else if !bytes.isEmpty {
            try context.client.stream.write(bytes, flush: flush)
        } else if flush {
            try context.client.stream.flush()
        }
    }
}
