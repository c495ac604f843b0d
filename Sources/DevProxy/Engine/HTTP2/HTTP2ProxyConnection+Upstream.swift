import Foundation
import GRPCWire
import HTTP1
import HTTP2
import HTTPTypes

/// What an origin's session reports: responses, bodies and trailers go to the client's stream,
/// an origin's reset reaches the client with its own code, a GOAWAY retires the connection.
extension HTTP2ProxyConnection {
    /// Whether a later event of `events` ends `stream`'s response (its last DATA, or trailers).
    static func responseEnds(_ stream: Int32, in events: [HTTP2Event], after index: Int) -> Bool {
        for event in events[(index + 1)...] {
            switch event {
            case .data(stream, _, true), .trailers(stream, _): return true
            default: continue
            }
        }
        return false
    }

    func handleUpstream(_ events: [HTTP2Event], on leg: HTTP2UpstreamLeg) {
        let now = Date()
        for (index, event) in events.enumerated() {
            switch event {
            case .responseHead(let upstream, let origin, let endStream):
                guard let exchange = exchange(upstream, on: leg) else { continue }
                exchange.upstreamHeard = now
                let head = modifyingHeaders(of: origin, exchange: exchange)
                let response = HTTPResponse(head)
                exchange.recordResponseHead(head, response)
                exchange.responseEnded = endStream
                let status = response.status
                if exchange.isWebSocket, (200..<300).contains(status), !endStream {
                    exchange.recorder.startWebSocket(
                        inflating: WebSocketInflation.negotiated(extensions: response.fields.values("sec-websocket-extensions")),
                        dataBudget: context.configuration.bodyLimit)
                    exchange.draft.flow.mode = .websocket
                }
                exchange.draft.flow.response = Flow.Response(response, httpVersion: "HTTP/2",
                                                             redact: context.configuration.redactHeaders)
                // `responded` is for a body still on its way; one that has ended in this same read
                // (every small response) goes straight to the flow's end.
                if !endStream && !Self.responseEnds(upstream, in: events, after: index) {
                    server.responded(exchange.draft.flow)
                }
                do {
                    let relayed = try forwardedResponse(head, exchange: exchange)
                    if exchange.draft.flow.pinset != nil, context.configuration.pinSetRewrite != nil {
                        if (200..<300).contains(status), !endStream, exchange.requestHead.method != "HEAD" {
                            // A pin set: held until its body is whole (bounded), then rewritten and sent.
                            exchange.heldPinSet = (relayed, [])
                            leg.widenWindow(of: upstream)
                            continue
                        }
                        exchange.draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: status "
                                                                     + "\(status)" + (endStream ? " without a body" : ""))
                    }
                    if holdsResponse(exchange, head: relayed, endStream: endStream) {
                        // --modify-body, a breakpoint: held until its body is whole (bounded), then
                        // edited, or decided in the web UI, and sent.
                        leg.widenWindow(of: upstream)
                        continue
                    }
                    try session.submitResponse(stream: exchange.clientStream, relayed, endStream: endStream)
                } catch {
                    exchange.draft.fail(.upstreamBadResponse, "the origin's response head cannot be relayed: \(error)")
                    try? session.resetStream(exchange.clientStream, code: .internalError)
                    try? leg.session.resetStream(upstream, code: .cancel)
                }
            case .informationalHead(let upstream, let head):
                // 103 Early Hints and the like pass on; 100 Continue too (the client may wait for it).
                guard let exchange = exchange(upstream, on: leg) else { continue }
                exchange.upstreamHeard = now
                exchange.draft.recordInformational(HTTPResponse(head), redact: context.configuration.redactHeaders)
                guard let relayed = try? head.forwarded() else { continue }
                try? session.submitResponse(stream: exchange.clientStream, relayed, endStream: false)
            case .data(let upstream, let bytes, let endStream):
                // The connection window reopens at once, the stream's when the client took the
                // bytes: a stalled stream holds its own window, never the other streams'.
                try? leg.session.consumeConnection(count: bytes.count)
                guard let exchange = exchange(upstream, on: leg) else {
                    try? leg.session.consumeStream(upstream, count: bytes.count)
                    continue
                }
                exchange.upstreamHeard = now
                if exchange.heldPinSet != nil {
                    if exchange.responseBreakpoint != nil {
                        if endStream { exchange.responseEnded = true }
                        gatherResponse(exchange, bytes, endStream: endStream)
                        continue
                    }
                    exchange.heldPinSet?.body += bytes
                    if endStream {
                        exchange.responseEnded = true
                        releaseHeld(exchange, whole: true, endStream: true)
                    } else if let held = exchange.heldPinSet, held.body.count >= heldLimit(exchange) {
                        releaseHeld(exchange, whole: false, endStream: false)
                    }
                    continue
                }
                exchange.recordResponse(bytes)
                if endStream { exchange.responseEnded = true }
                do {
                    try session.submitData(stream: exchange.clientStream, bytes, endStream: endStream)
                } catch {
                    try? leg.session.consumeStream(upstream, count: bytes.count)
                }
            case .trailers(let upstream, let fields):
                guard let exchange = exchange(upstream, on: leg) else { continue }
                exchange.upstreamHeard = now
                exchange.responseEnded = true
                let relayed = (try? [HTTP2Field](forwarding: HTTPFields(fields))) ?? []
                if endsResponseAtBreakpoint(exchange, trailers: HTTPFields(fields), relayed: relayed) { continue }
                if exchange.heldPinSet != nil { releaseHeld(exchange, whole: true, endStream: false) }
                exchange.recorder.recordResponseTrailers(HTTPFields(fields))
                try? session.submitTrailers(stream: exchange.clientStream, relayed)
            case .dataSent(let upstream, let count), .dataDiscarded(let upstream, let count):
                // The origin took request bytes: the client may send as many more.
                guard let clientStream = leg.clientStreams[upstream] ?? streams.first(where: {
                    $0.value.leg === leg && $0.value.upstreamStream == upstream
                })?.key else { continue }
                try? session.consumeStream(clientStream, count: count)
            case .streamReset(let upstream, .protocolError, false):
                // The session reset the origin's stream for the origin's fault: a malformed response
                // (RFC 9113 §8.1.1: a body longer or shorter than its content-length, a field HTTP/2
                // forbids). The client's stream ends too, rather than wait for the rest.
                guard let exchange = exchange(upstream, on: leg), !exchange.responseEnded,
                      exchange.draft.flow.error?.by != "client" else { continue }
                leg.clientStreams[upstream] = nil
                responseFailedAtBreakpoint(exchange)
                let message = exchange.draft.flow.error?.message ?? "the origin's response was malformed (RFC 9113 "
                    + "§8.1.1: its body did not match its content-length, or it had a field HTTP/2 forbids)"
                if exchange.responseHead == nil && exchange.draft.flow.response == nil {
                    answer(exchange, status: 502, kind: .upstreamBadResponse, message: message)
                    continue
                }
                exchange.draft.fail(.upstreamBadResponse, message + "; its stream was reset with PROTOCOL_ERROR, and so "
                                    + "was the client's")
                exchange.draft.flow.error?.code = HTTP2ErrorCode.protocolError.description
                exchange.draft.flow.error?.by = "server"
                exchange.draft.flow.error?.afterBytes = exchange.responseBytes
                resetClientAfterQueuedFrames(exchange, code: .protocolError)
            case .streamReset(let upstream, let code, let byPeer):
                guard byPeer, let exchange = exchange(upstream, on: leg) else { continue }
                if code == .refusedStream, resend(exchange) {
                    // Not processed: it went again (`resend`); this stream is done with.
                    leg.clientStreams[upstream] = nil
                    continue
                }
                if exchange.webSocketClosed {
                    // After a WebSocket's close handshake the stream has nothing left to carry: no
                    // failure, and the client gets the origin's code.
                    resetClientAfterQueuedFrames(exchange, code: code)
                    continue
                }
                if code == .noError && exchange.responseEnded {
                    // A whole response, then "stop sending the request" (RFC 9113 §8.1): no failure,
                    // and the client is told the same way once the response has reached it.
                    resetClientAfterQueuedFrames(exchange, code: .noError)
                    continue
                }
                responseFailedAtBreakpoint(exchange)
                exchange.draft.fail(.upstreamReset2, "the origin reset the stream (\(code)) after \(exchange.responseBytes) response bytes")
                exchange.draft.flow.error?.code = code.description
                exchange.draft.flow.error?.by = "server"
                exchange.draft.flow.error?.afterBytes = exchange.responseBytes
                // Its own code, whether or not the response started: REFUSED_STREAM tells the
                // client it may retry; a made-up 502 would hide that.
                resetClientAfterQueuedFrames(exchange, code: code)
            case .requestNotSent(let upstream, let body, let endStream, let trailers):
                // Nothing of this request reached the origin (its HEADERS were still queued when the
                // origin's GOAWAY came): it moves to a new connection whole, whatever its size and
                // whether or not the client is still sending it.
                guard let exchange = exchange(upstream, on: leg), exchange.responseHead == nil,
                      exchange.draft.flow.error == nil else { continue }
                leg.clientStreams[upstream] = nil
                if !move(exchange, body: body, endStream: endStream, trailers: trailers) {
                    try? session.consumeStream(exchange.clientStream, count: body.count)
                    refuse(exchange, "the origin's connection was going away (GOAWAY) before the stream could open")
                }
            case .streamClosed(let upstream, _):
                leg.streamClosed(upstream)
            case .goAway(let lastStreamID, let code, let debugData):
                leg.goneAway = true
                if code != .noError {
                    let debug = String(decoding: debugData.prefix(200), as: UTF8.self)
                        .filter { !$0.isASCII || $0.asciiValue.map { $0 >= 0x20 && $0 < 0x7F } == true }
                    leg.goAwayFault = (code, debug)
                }
                if self.leg === leg {
                    retiring.append(leg)
                    self.leg = nil
                }
                // Streams above the last one the origin processed never reached it: a bodiless one
                // goes again on a new connection (`resend`); for any other the client may send it
                // again (REFUSED_STREAM).
                for (upstream, clientStream) in leg.clientStreams where upstream > lastStreamID {
                    leg.clientStreams[upstream] = nil
                    guard let exchange = streams[clientStream], !resend(exchange) else { continue }
                    refuse(exchange, "the origin sent GOAWAY (\(code)) before processing the stream")
                }
            case .protocolError(let upstream, let reason):
                if upstream == 0 {
                    closeLeg(leg, reason: "the origin broke the HTTP/2 protocol (\(reason))")
                } else if let exchange = exchange(upstream, on: leg) {
                    exchange.draft.fail(.upstreamBadResponse, "the origin broke the HTTP/2 protocol on this stream: \(reason)")
                }
            case .settingsReceived(let settings):
                // RFC 8441 §3: the origin takes extended CONNECT; the client is told the same.
                guard let value = settings.last(where: { $0.id == HTTP2Setting.enableConnectProtocolID })?.value else {
                    continue
                }
                leg.takesExtendedConnect = value == 1
                if value == 1 && !offersExtendedConnect && !goingAway && self.leg === leg {
                    offersExtendedConnect = true
                    try? session.submitSettings([HTTP2Setting(id: HTTP2Setting.enableConnectProtocolID, value: 1)])
                }
            case .headerListTooLarge(let upstream, let size):
                guard let exchange = exchange(upstream, on: leg) else { continue }
                answer(exchange, status: 502, kind: .upstreamBadResponse,
                       message: "the origin's response header list (\(size) bytes) exceeds \(limits.maxHeaderListSize) bytes")
            default:
                break
            }
        }
    }

    /// The most of a pin set held back: `--pinset-rewrite`'s limit, and below one stream window
    /// (widened to the full one for a held stream), since held bytes are not acknowledged to the
    /// origin (it stops sending at a full window).
    var pinSetHoldLimit: Int {
        min(context.configuration.pinSetRewrite?.limit ?? 0, Int(limits.initialWindowSize) - 1)
    }

    /// The most held for `exchange`: a pin set's `pinSetHoldLimit`, else `--modify-body`'s.
    func heldLimit(_ exchange: HTTP2StreamExchange) -> Int {
        exchange.draft.flow.pinset != nil && context.configuration.pinSetRewrite != nil
            ? pinSetHoldLimit : bodyHoldLimit(exchange)
    }

    /// Sends a held pin-set response on: rewritten (`PinSetRewrite.rewrite`, a fresh
    /// content-length) when its body is `whole`, else untouched with a note, the rest of the body
    /// to follow as any response's. The origin's stream window is acknowledged as the client takes
    /// the bytes (`dataSent`), as for any response; for a rewritten set the stream is already over.
    func releasePinSet(_ exchange: HTTP2StreamExchange, whole: Bool, endStream: Bool) {
        guard let (head, body) = exchange.heldPinSet, let rewrite = context.configuration.pinSetRewrite else { return }
        exchange.heldPinSet = nil
        var fields = head.fields
        var served = body
        if whole {
            let coding = fields.first { $0.nameString == "content-encoding" }?.valueString
            let result = rewrite.rewrite(body, contentEncoding: coding)
            served = result.body
            exchange.draft.flow.pinset = result.info
            fields.removeAll { $0.nameString == "content-length" || (result.dropEncoding && $0.nameString == "content-encoding") }
            fields.append(HTTP2Field("content-length", "\(served.count)"))
        } else {
            exchange.draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: more than the "
                                                         + "\(pinSetHoldLimit) bytes held for a pin set")
        }
        serveHeld(exchange, head: HTTP2HeaderBlock(pseudo: head.pseudo, fields: fields), body: served,
                  endStream: endStream)
    }

    /// Sends a response held whole (a pin set rewritten, a body `--modify-body` edited, a
    /// response a breakpoint held) to the client as `head`, `body` and `trailers`, the flow
    /// recording what the client got. A response that ends without a body ends with its HEADERS.
    func serveHeld(_ exchange: HTTP2StreamExchange, head block: HTTP2HeaderBlock, body served: [UInt8],
                   endStream: Bool, trailers: [HTTP2Field]? = nil) {
        exchange.responseHead = block
        let response = HTTPResponse(block)
        exchange.recorder.replaceResponseHead(response)
        exchange.draft.flow.response?.headers = FlowDraft.headerPairs(response.fields,
                                                                      redact: context.configuration.redactHeaders)
        exchange.recordResponse(served)
        let bodiless = served.isEmpty && endStream && trailers == nil
        try? session.submitResponse(stream: exchange.clientStream, block, endStream: bodiless)
        guard !bodiless else { return }
        if !served.isEmpty || trailers == nil {
            try? session.submitData(stream: exchange.clientStream, served, endStream: endStream && trailers == nil)
        }
        if let trailers { try? session.submitTrailers(stream: exchange.clientStream, trailers) }
    }

    /// Answers 504 on streams whose origin has said nothing for the upstream timeout since the
    /// request ended. Once a response has begun its silence is never cut: an event stream, a watch
    /// or a long poll answered in parts may rightly be quiet for long, and the client, which keeps
    /// or resets its stream, decides how long to wait, as it would without a proxy. Not for gRPC,
    /// gRPC-Web and Connect calls at all, which carry their own deadline (`grpc-timeout`,
    /// `connect-timeout-ms`), nor while the client has not taken what was sent (then the origin
    /// waits for its window).
    func expireSilentUpstreams(now: Date = Date()) {
        let timeout = context.configuration.upstreamTimeout
        for exchange in streams.values where exchange.requestEnded && !exchange.responseEnded && !exchange.answeredLocally
            && exchange.recorder.grpc == nil && exchange.pendingReset == nil {
            guard let leg = exchange.leg, let upstream = exchange.upstreamStream, leg.clientStreams[upstream] != nil else { continue }
            if session.outboundQueuedBytes(stream: exchange.clientStream) > 0 || exchange.heldPinSet != nil {
                exchange.upstreamHeard = now
                continue
            }
            // A response that has begun may rightly go quiet (an event stream, a watch): it is
            // waited for as long as the client keeps its stream open, as without a proxy.
            guard exchange.responseHead == nil, exchange.draft.flow.response == nil else { continue }
            guard now.timeIntervalSince(exchange.upstreamHeard) > timeout else { continue }
            answer(exchange, status: 504, kind: .upstreamTimeout,
                   message: LegFailure.noResponse("\(host):\(port)", timeout: timeout).message)
        }
    }

    /// Resets the client's stream once what was already relayed on it has left: nghttp2 sends a
    /// RST_STREAM ahead of queued HEADERS and DATA, which would swallow the part of the response
    /// the origin did send. What the window lets out goes now; the rest, then the reset, when the
    /// client's window reopens (`dataSent`). A gRPC call without a status yet records the one its
    /// client reports for `code`.
    func resetClientAfterQueuedFrames(_ exchange: HTTP2StreamExchange, code: HTTP2ErrorCode) {
        exchange.recorder.recordStreamReset(code: code.description)
        let output = session.pendingOutput()
        if !output.isEmpty { try? output.withUnsafeBytes { try client.write($0, flush: true) } }
        if session.outboundQueuedBytes(stream: exchange.clientStream) > 0 {
            exchange.pendingReset = code
        } else {
            try? session.resetStream(exchange.clientStream, code: code)
        }
    }

    /// Passes on a stream the origin never processed as REFUSED_STREAM, which tells the client it
    /// may send it again (RFC 9113 §8.7); the flow says why.
    private func refuse(_ exchange: HTTP2StreamExchange, _ message: String) {
        exchange.draft.fail(.upstreamReset2, message)
        exchange.draft.flow.error?.code = HTTP2ErrorCode.refusedStream.description
        exchange.draft.flow.error?.by = "server"
        exchange.recorder.recordStreamReset(code: HTTP2ErrorCode.refusedStream.description)
        try? session.resetStream(exchange.clientStream, code: .refusedStream)
    }

    private func exchange(_ upstream: Int32, on leg: HTTP2UpstreamLeg) -> HTTP2StreamExchange? {
        leg.clientStreams[upstream].flatMap { streams[$0] }
    }

    /// Answers a stream from DevProxy itself: a gRPC call gets HTTP 200 with `grpc-status` 14
    /// (UNAVAILABLE) and the reason, as gRPC clients expect of a proxy (a bare 502 would reach the
    /// app as a less precise status); anything else gets `status` and a one-line text body.
    /// After a response has started only a reset is honest.
    func answer(_ exchange: HTTP2StreamExchange, status: Int, kind: FlowErrorKind, message: String) {
        exchange.draft.fail(kind, message)
        exchange.draft.flow.error?.by = "proxy"
        if let leg = exchange.leg, let upstream = exchange.upstreamStream, leg.clientStreams[upstream] != nil {
            try? leg.session.resetStream(upstream, code: .cancel)
            leg.clientStreams[upstream] = nil
        }
        exchange.answeredLocally = true
        guard exchange.responseHead == nil, exchange.draft.flow.response == nil else {
            resetClientAfterQueuedFrames(exchange, code: .internalError)
            return
        }
        let (head, body) = ownAnswer(exchange, status: status, kind: kind, message: message)
        let response = HTTPResponse(head)
        exchange.draft.flow.response = Flow.Response(response, httpVersion: "HTTP/2", redact: [])
        if exchange.isGRPC {
            exchange.draft.flow.response?.body = .empty
            exchange.recordResponseHead(head, response)
        } else {
            exchange.responseHead = head
            exchange.recorder.replaceResponseHead(response)
            exchange.responseCapture.append(body)
        }
        sendOwnAnswer(exchange, head: head, body: body)
    }

    /// DevProxy's own answer to `exchange` (`answer`): for a gRPC call HTTP 200 with `grpc-status`
    /// 14 and `message` and no body; else `status` with `message` as a one-line text body (none to
    /// a HEAD: RFC 9110 §9.3.2, DATA after it is a malformed response to the client, curl's
    /// PROTOCOL_ERROR, and the reason is in the flow's error).
    func ownAnswer(_ exchange: HTTP2StreamExchange, status: Int, kind: FlowErrorKind,
                   message: String) -> (head: HTTP2HeaderBlock, body: [UInt8]) {
        if exchange.isGRPC {
            let fields = [HTTP2Field("content-type", "application/grpc"), HTTP2Field("grpc-status", "14"),
                          HTTP2Field("grpc-message", GRPCStatus.encodeMessage(message)),
                          HTTP2Field("x-devproxy-error", kind.rawValue)]
            return (HTTP2HeaderBlock.response(status: 200, fields: fields), [])
        }
        let body = ErrorResponse.body(status: status, detail: message)
        let fields = [HTTP2Field("content-type", ErrorResponse.textPlain), HTTP2Field("content-length", "\(body.count)"),
                      HTTP2Field("x-devproxy-error", kind.rawValue)]
        return (HTTP2HeaderBlock.response(status: status, fields: fields),
                exchange.requestHead.method == "HEAD" ? [] : body)
    }

    /// Sends `ownAnswer`'s head and body to the client, ending the stream.
    func sendOwnAnswer(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, body: [UInt8]) {
        try? session.submitResponse(stream: exchange.clientStream, head, endStream: body.isEmpty)
        if !body.isEmpty { try? session.submitData(stream: exchange.clientStream, body, endStream: true) }
    }

    /// A request a `LocalRoute` claimed, now that its body is in: DevProxy's own answer, never
    /// forwarded (`--sink-reports`, the onboarding site, the web UI's own address).
    func answerLocally(_ exchange: HTTP2StreamExchange) {
        guard let (route, request) = exchange.local else { return }
        let response = route.answer(request, bodyTooLong: exchange.localBodyTooLong)
        if let error = response.error {
            exchange.draft.fail(error.kind, error.message)
            exchange.draft.flow.error?.by = "proxy"
        }
        // `--block-list |…|444`: no answer; the stream is reset, as mitmproxy kills such a flow.
        if response.status == BlockListRule.noResponse {
            resetClientAfterQueuedFrames(exchange, code: .cancel)
            return
        }
        let fields = LocalRoute.sentHeaders(response).compactMap { field -> HTTP2Field? in
            let name = field.name.lowercased()
            return HTTPHeaders.isAlwaysHopByHop(name) ? nil : HTTP2Field(name, field.value)
        }
        let head = HTTP2HeaderBlock.response(status: response.status, fields: fields)
        let noBody = request.method == "HEAD" || response.status == 204 || response.status == 304 || response.body.isEmpty
        let neutral = HTTPResponse(head)
        exchange.draft.flow.response = Flow.Response(neutral, httpVersion: "HTTP/2", redact: [])
        exchange.recordResponseHead(head, neutral)
        server.responded(exchange.draft.flow)
        try? session.submitResponse(stream: exchange.clientStream, head, endStream: noBody)
        if noBody {
            exchange.responseEnded = true
        } else {
            exchange.recordResponse(response.body)
            try? session.submitData(stream: exchange.clientStream, response.body, endStream: true)
            exchange.responseEnded = true
        }
    }

    /// An HTTP/2 origin's final response `head` as `--modify-headers` makes it for the client
    /// (`ExchangeContext.modifyingHeaders`); `head` itself without rules.
    func modifyingHeaders(of head: HTTP2HeaderBlock, exchange: HTTP2StreamExchange) -> HTTP2HeaderBlock {
        guard !context.mapRules.headers.isEmpty else { return head }
        return context.modifyingHeaders(of: head, request: exchange.recorder.request,
                                        url: exchange.draft.flow.request?.url ?? "", draft: &exchange.draft)
    }

    /// An HTTP/1.1 origin's final `response` as `--modify-headers` makes it for the client.
    func modifyingHeaders(of response: HTTPResponse, exchange: HTTP2StreamExchange) -> HTTPResponse {
        guard !context.mapRules.headers.isEmpty else { return response }
        return context.modifyingHeaders(of: response, request: exchange.recorder.request,
                                        url: exchange.draft.flow.request?.url ?? "", draft: &exchange.draft) ?? response
    }

    /// The origin's final response head for the client: forwarded (`HTTP2HeaderBlock.forwarded`),
    /// `Alt-Svc` filtered (`ExchangeContext.filterAltSvc`, what was removed recorded in the flow).
    func forwardedResponse(_ head: HTTP2HeaderBlock, exchange: HTTP2StreamExchange) throws -> HTTP2HeaderBlock {
        var relayed = try head.forwarded()
        // Looked for first: handing `fields` over inout would clear the block's checked mark.
        if relayed.firstValue("alt-svc") != nil, let removed = context.filterAltSvc(&relayed.fields) {
            exchange.draft.flow.response?.altSvcRemoved = removed
        }
        return relayed
    }
}
