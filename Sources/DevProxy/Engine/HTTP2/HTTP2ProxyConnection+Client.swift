import Foundation
import HTTP1
import HTTP2
import HTTPTypes

/// What the client's session reports: requests start, bodies and trailers go upstream, resets
/// pass on with their own code, and a stream's flow ends when the client's stream closes.
extension HTTP2ProxyConnection {
    func handleClient(_ events: [HTTP2Event]) {
        for event in events {
            switch event {
            case .requestHead(let stream, let head, let endStream):
                startExchange(stream: stream, head: head, endStream: endStream)
            case .data(let stream, let bytes, let endStream):
                clientData(stream: stream, bytes: bytes, endStream: endStream)
            case .trailers(let stream, let fields):
                clientTrailers(stream: stream, fields: fields)
            case .dataSent(let stream, let count), .dataDiscarded(let stream, let count):
                // The client took response bytes: the origin may send as many more.
                streams[stream]?.http1Leg?.acknowledge(count)
                if let exchange = streams[stream], let code = exchange.pendingReset,
                   session.outboundQueuedBytes(stream: stream) == 0 {
                    exchange.pendingReset = nil
                    try? session.resetStream(stream, code: code)
                }
                guard let exchange = streams[stream], let leg = exchange.leg, let upstream = exchange.upstreamStream else { continue }
                try? leg.session.consumeStream(upstream, count: count)
                if session.outboundQueuedBytes(stream: stream) == 0 { leg.widenWindow(of: upstream) }
            case .streamReset(let stream, .protocolError, false):
                // The session reset the stream for the client's fault (RFC 9113 §8.1.1: a body longer
                // or shorter than its content-length, a field HTTP/2 forbids): nothing else said why.
                guard let exchange = streams[stream], exchange.draft.flow.error == nil else { continue }
                exchange.draft.fail(.http2ProtocolError, "the client's request was malformed (RFC 9113 §8.1.1: its body "
                                    + "did not match its content-length, or it had a field HTTP/2 forbids): the stream "
                                    + "was reset with PROTOCOL_ERROR and nothing more of it was forwarded")
                exchange.draft.flow.error?.code = HTTP2ErrorCode.protocolError.description
                exchange.draft.flow.error?.by = "client"
                stopUpstream(of: exchange, code: .cancel)
            case .streamReset(let stream, let code, false) where code == .flowControlError || code == .streamClosed
                                                                    || code == .frameSizeError:
                // The session reset the stream for the client's fault in framing (more DATA than
                // its window allowed, a frame on a half-closed stream): the flow had a request and
                // neither a response nor a reason.
                guard let exchange = streams[stream], exchange.draft.flow.error == nil, !exchange.responseEnded else { continue }
                let why = code == .flowControlError ? "the client sent more DATA than the stream's flow-control window allowed"
                    : code == .streamClosed ? "the client sent a frame on a stream it had already ended"
                    : "the client sent a frame of the wrong size"
                exchange.draft.fail(.http2ProtocolError, "\(why): the stream was reset with \(code) and nothing more of it "
                                    + "was forwarded")
                exchange.draft.flow.error?.code = code.description
                exchange.draft.flow.error?.by = "client"
                stopUpstream(of: exchange, code: .cancel)
            case .streamReset(let stream, let code, let byPeer):
                guard byPeer, let exchange = streams[stream] else { continue }
                if exchange.webSocketClosed {
                    // After a WebSocket's close handshake the stream has nothing left to carry.
                    stopUpstream(of: exchange, code: code)
                    continue
                }
                exchange.draft.fail(.clientReset, "the client reset the stream (\(code)) after \(exchange.responseBytes) response bytes")
                exchange.draft.flow.error?.code = code.description
                exchange.draft.flow.error?.by = "client"
                exchange.draft.flow.error?.afterBytes = exchange.responseBytes
                exchange.recorder.recordClientReset(code: code.description)
                if exchange.atBreakpoint { leaveBreakpoint(exchange) }
                stopUpstream(of: exchange, code: code)
            case .streamClosed(let stream, _):
                guard let exchange = streams.removeValue(forKey: stream) else { continue }
                // Closed at a breakpoint without the client's reset (the session reset it): withdrawn.
                if exchange.atBreakpoint { leaveBreakpoint(exchange) }
                if !exchange.responseEnded { exchange.http1Leg?.cancel() }
                if let leg = exchange.leg, let upstream = exchange.upstreamStream, leg.clientStreams[upstream] != nil {
                    if !exchange.responseEnded { try? leg.session.resetStream(upstream, code: .cancel) }
                    leg.clientStreams[upstream] = nil
                }
                emit(exchange)
            case .goAway(_, let code, let debug):
                // The client opens no new stream; the open ones finish.
                goingAway = true
                if code != .noError {
                    let text = String(decoding: debug.prefix(256), as: UTF8.self)
                        .filter { !$0.isASCII || $0.asciiValue! >= 0x20 && $0.asciiValue! != 0x7F }
                    clientGoAway = "\(code)" + (text.isEmpty ? "" : " \"\(text)\"")
                }
            case .headerListTooLarge(let stream, let size):
                var draft = context.draft(host: host, port: port)
                draft.flow.h2 = Flow.HTTP2Info(streamID: Int(stream), connectionID: connectionID, upstreamStreamID: nil)
                draft.fail(.badRequest, "the request's header list (\(size) bytes) exceeds \(limits.maxHeaderListSize) bytes: answered 431")
                draft.flow.error?.by = "proxy"
                // The session answered it (HTTP2Limits.headerListAnswer): recorded as the client got it.
                let body = HTTP2Limits.headerListAnswer(size: size, limit: limits.maxHeaderListSize)
                let capture = BodyCapture(limit: context.configuration.bodyLimit)
                capture.append(body)
                draft.flow.response = Flow.Response(status: 431, reason: ErrorResponse.reasonPhrase(431), httpVersion: "HTTP/2",
                                                    headers: [["content-type", ErrorResponse.textPlain],
                                                              ["content-length", "\(body.count)"]],
                                                    body: capture.finish(contentEncoding: nil, contentType: ErrorResponse.textPlain))
                server.emit(draft.finished())
            case .streamRefused(let stream) where stream > lastRefusedStream:
                // A stream over the concurrent streams allowed (a client that opened more before it
                // read DevProxy's SETTINGS): refused, and the client may send it again. Its flow said
                // the request was malformed, with PROTOCOL_ERROR.
                lastRefusedStream = stream
                var draft = context.draft(host: host, port: port)
                draft.flow.h2 = Flow.HTTP2Info(streamID: Int(stream), connectionID: connectionID, upstreamStreamID: nil)
                draft.fail(.overloaded, "refused with REFUSED_STREAM: the client had \(limits.maxConcurrentStreams) streams "
                           + "open on this connection, the most DevProxy allows; nothing of it was forwarded, and the "
                           + "client may send it again (RFC 9113 §8.7)")
                draft.flow.error?.code = HTTP2ErrorCode.refusedStream.description
                draft.flow.error?.by = "proxy"
                server.emit(draft.finished())
            case .protocolError(0, let reason):
                // The session ended the connection (a flood, a bad frame): its GOAWAY goes out.
                recordConnectionError("the client broke the HTTP/2 protocol: \(reason)")
            case .protocolError(let stream, let reason):
                if let exchange = streams[stream] {
                    exchange.draft.fail(.http2ProtocolError, "the client broke the HTTP/2 protocol on this stream: \(reason)")
                    exchange.draft.flow.error?.by = "client"
                } else if stream > lastRefusedStream, stream % 2 == 1 {
                    // A request head refused before it became an exchange (an invalid field, CR LF in a
                    // value, a space in :path): the stream was reset, and its flow says why.
                    lastRefusedStream = stream
                    var draft = context.draft(host: host, port: port)
                    draft.flow.h2 = Flow.HTTP2Info(streamID: Int(stream), connectionID: connectionID, upstreamStreamID: nil)
                    draft.fail(.http2ProtocolError, "the client's request head was malformed (\(reason)): the stream was "
                               + "reset with PROTOCOL_ERROR and nothing of it was forwarded")
                    draft.flow.error?.code = HTTP2ErrorCode.protocolError.description
                    draft.flow.error?.by = "client"
                    server.emit(draft.finished())
                }
            default:
                break
            }
        }
    }

    /// The client's stream ended early: its HTTP/1.1 leg is cancelled, or its origin stream reset
    /// with `code` while the response is still coming.
    private func stopUpstream(of exchange: HTTP2StreamExchange, code: HTTP2ErrorCode) {
        exchange.http1Leg?.cancel()
        if let leg = exchange.leg, let upstream = exchange.upstreamStream, !exchange.responseEnded {
            try? leg.session.resetStream(upstream, code: code)
        }
    }

    /// A request head arrived: record it, then answer it here or send it to the origin.
    private func startExchange(stream: Int32, head: HTTP2HeaderBlock, endStream: Bool) {
        var head = head
        var request = HTTPRequest(head)
        // A reverse listener's flows name its origin; elsewhere the URL is the one the client asked for.
        let ownScheme = cleartext ? "http" : "https"
        let scheme = originAuthority == nil ? request.scheme ?? ownScheme : ownScheme
        // Neither `:authority` nor `host` (nghttp2 refuses such a request before it gets here, so
        // this is the connection's): bracketed as a URI writes an IPv6 literal.
        var authority = originAuthority ?? request.authority ?? URIHost.authority(host: host, port: port == 443 ? nil : port)
        // An `:authority` without a port (grpc's `ssl_target_name_override`) that reached another
        // port than the scheme's: the URL names it, or replay and curl export went to :443.
        let defaultPort = (scheme == "http" ? 80 : 443)
        if originAuthority == nil, port != defaultPort, !Destination.hasPort(authority) { authority += ":\(port)" }
        // `OPTIONS *` (asterisk-form) asks about the server, not a resource: its target URI has an
        // empty path (RFC 9110 §7.1), as mitmproxy shows it too.
        let path = request.path == "*" ? "" : request.path ?? ""
        var url = "\(scheme)://\(authority)\(path)"
        // `--map-remote` and `--map-local` (`MapRules`), before anything answers the stream.
        let mapping = context.mapRules.isEmpty ? nil : map(&head, request: &request, url: &url)
        let draft = context.draft(host: mapping?.destination?.host ?? host, port: mapping?.destination?.port ?? port,
                                  request: Flow.Request(request, url: url, httpVersion: "HTTP/2",
                                                        redact: context.configuration.redactHeaders),
                                  h2: Flow.HTTP2Info(streamID: Int(stream), connectionID: connectionID, upstreamStreamID: nil))
        // Here, not from the exchange: a flow read out of a class is copied for the call.
        server.started(draft.flow)
        let exchange = HTTP2StreamExchange(clientStream: stream, draft: consume draft, requestHead: head, request: request,
                                           bodyLimit: context.configuration.bodyLimit,
                                           spool: context.configuration.bodySpool,
                                           protoSchema: server.protoSchema(host: host, port: port, tls: scheme == "https",
                                                                           path: request.path,
                                                                           contentType: request.fields["content-type"]))
        exchange.requestEnded = endStream
        exchange.bodiless = endStream
        if let mapping {
            exchange.draft.flow.mapped = mapping.record
            exchange.mappedDestination = elsewhere(mapping.destination)
        }
        if context.configuration.pinSetRewrite?.matches(url) == true {
            // Replaced by what the response turns out to be (ResponseRelay for an HTTP/1.1 origin,
            // `releasePinSet` for an HTTP/2 one), so a pass-through is never silent.
            exchange.draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: no response")
        }
        streams[stream] = exchange
        // Offline (the throttle): the stream is reset without an answer, as a lost network fails it.
        if let reason = context.connection.offlineReason {
            exchange.draft.fail(.offline, reason)
            exchange.draft.flow.error?.by = "proxy"
            try? session.resetStream(stream, code: .cancel)
            return
        }
        // RFC 9113 §8.3.1: `:authority` MUST NOT include the userinfo subcomponent; it was
        // forwarded, `user@host` and all.
        // Bytes, not Foundation's `contains`, which searched through `range(of:)` and CFString.
        if let authority = request.authority, authority.utf8.contains(UInt8(ascii: "@")) {
            answer(exchange, status: 400, kind: .badRequest, message: ":authority \"\(authority)\" holds user information, "
                   + "which HTTP/2 forbids (RFC 9113 §8.3.1): send credentials in Authorization")
            return
        }
        if request.method == "CONNECT", !exchange.isExtendedConnect {
            // A tunnel asked of the origin (a proxy behind it) inside an intercepted connection: it
            // went to an HTTP/1.1 origin as `CONNECT / HTTP/1.1` with a chunked body and hung.
            answer(exchange, status: 501, kind: .badRequest, message: Self.nestedConnect)
            return
        }
        // RFC 9110 §7.6.2: a TRACE or OPTIONS whose hops ran out here is DevProxy's to answer.
        let lastHop = MaxForwards.answersHere(method: request.method, value: request.fields["max-forwards"])
            ? MaxForwards.route : nil
        if lastHop != nil || mapping?.route != nil || !server.localRoutes.isEmpty {
            let request = LocalRequest(request, url: url, httpVersion: "HTTP/2", clientOf: context)
            if let route = mapping?.route ?? lastHop ?? server.localRoute(for: request) {
                exchange.local = (route, request)
                exchange.answeredLocally = true
                if endStream { answerLocally(exchange) }
                return
            }
        }
        // Breakpoints (`--intercept`) and `--modify-body` on the request: one atomic load and one
        // check when neither is set.
        if context.configuration.intercepts?.isActive == true || !context.mapRules.body.isEmpty,
           gathers(exchange, request: request, url: url, endStream: endStream) {
            return
        }
        sendUpstream(exchange, endStream: endStream)
    }

    /// Why a CONNECT inside an intercepted connection is answered 501.
    static let nestedConnect = "a CONNECT inside an intercepted connection (a tunnel through a proxy behind this origin) "
        + "is not relayed: DevProxy opens no tunnel within a tunnel; send the client to DevProxy itself, or reach that "
        + "proxy with --upstream-proxy"

    /// Sends an exchange's request head to the origin: on a stream of the current or a new HTTP/2
    /// connection, else through an HTTP/1.1 leg; answers the stream itself when neither can be had.
    func sendUpstream(_ exchange: HTTP2StreamExchange, endStream: Bool) {
        let head = exchange.requestHead
        let chosen: HTTP2UpstreamLeg?
        if let destination = exchange.mappedDestination {
            // `--map-remote` to another origin: an HTTP/2 connection there, else HTTP/1.1 (`mappedLeg`).
            guard let mapped = mappedLeg(to: destination, for: exchange, endStream: endStream) else { return }
            chosen = mapped
        } else {
            chosen = upstreamLeg(for: exchange)
        }
        guard let leg = chosen else {
            if upstreamSpeaksHTTP1 && exchange.draft.flow.response == nil {
                if exchange.isExtendedConnect {
                    answer(exchange, status: 502, kind: .protocolMismatch, message: "the origin \(host):\(port) speaks only "
                           + "HTTP/1.1, so it cannot take an extended CONNECT (RFC 8441: a WebSocket over HTTP/2)")
                    return
                }
                startHTTP1Leg(exchange, head: head, endStream: endStream)
            }
            return
        }
        if exchange.isExtendedConnect && !leg.takesExtendedConnect {
            // Sent only where the origin's SETTINGS allowed it; a later connection may not.
            answer(exchange, status: 502, kind: .protocolMismatch, message: "the origin's HTTP/2 connection did not "
                   + "enable extended CONNECT (RFC 8441 SETTINGS_ENABLE_CONNECT_PROTOCOL), so a WebSocket cannot open on it")
            return
        }
        var outbound: HTTP2HeaderBlock
        do {
            outbound = try head.forwarded()
            if let originAuthority, exchange.mappedDestination == nil { outbound.setPseudo(":authority", originAuthority) }
            MaxForwards.forward(&outbound)
        } catch {
            answer(exchange, status: 400, kind: .badRequest, message: "\(error)")
            return
        }
        do {
            let upstream = try leg.session.submitRequest(outbound, endStream: endStream)
            leg.clientStreams[upstream] = exchange.clientStream
            exchange.leg = leg
            exchange.upstreamStream = upstream
            exchange.draft.flow.h2?.upstreamStreamID = Int(upstream)
            if endStream { exchange.requestSent = Date() }
        } catch {
            answer(exchange, status: 502, kind: .upstreamReset, message: "the origin's HTTP/2 connection refused a new stream: \(error)")
        }
    }

    /// How many times one request goes again after its origin did not process it (`resend`).
    static let maxResends = 3
    /// The largest request body sent again (`resend`): a gRPC call's message, a form, a small JSON.
    static let maxResentBody = 64 * 1024

    /// A request whose stream the origin did not process (above a GOAWAY's last stream, refused
    /// with REFUSED_STREAM before any answer, or never opened because the origin's GOAWAY came
    /// first) goes again, up to `maxResends` times, on the current or a new origin connection, as
    /// a browser or a gRPC client resends it (RFC 9113 §8.7, §6.8): it is DevProxy's connection
    /// to the origin that went away (nginx after `keepalive_requests`, a gRPC server at
    /// `max_connection_age`), not the client's. The request must be bodiless, or have ended with
    /// its whole body held in memory (up to `maxResentBody`, no trailers). The flow says so
    /// (`server.retried`). Returns false when it may not go again; the caller then passes the
    /// refusal on.
    func resend(_ exchange: HTTP2StreamExchange) -> Bool {
        guard exchange.resends < Self.maxResends, exchange.responseHead == nil, exchange.draft.flow.response == nil,
              exchange.draft.flow.error == nil, !server.isStopping, streams[exchange.clientStream] === exchange else {
            return false
        }
        var body: [UInt8]?
        if !exchange.bodiless {
            guard exchange.requestEnded, exchange.recorder.requestTrailers.isEmpty,
                  let held = exchange.recorder.requestCapture.heldWhole(upTo: Self.maxResentBody) else { return false }
            body = held
        }
        exchange.resends += 1
        exchange.leg = nil
        exchange.upstreamStream = nil
        exchange.draft.flow.server.retried = true
        sendUpstream(exchange, endStream: body == nil)
        guard let body else { return true }
        // The client's stream window was reopened when the first copy was taken (or dropped): the
        // origin's taking this one reopens it again, which a stream the client has ended ignores.
        if let http1Leg = exchange.http1Leg {
            http1Leg.push(body)
            http1Leg.finishRequest()
        } else if let leg = exchange.leg, let upstream = exchange.upstreamStream {
            try? leg.session.submitData(stream: upstream, body, endStream: true)
        }
        return true
    }

    /// A request none of which reached the origin (`HTTP2Event.requestNotSent`: its HEADERS were
    /// still queued when the origin's GOAWAY came) opens again on the current or a new origin
    /// connection with what had been queued for it: `body`, ended or not (the client's later DATA
    /// follows it there), and `trailers`. Unlike `resend`, nothing needs to be held: the bytes were
    /// never handed to the wire, and the client's window for them reopens when the new stream
    /// takes them. Up to `maxResends` times; the flow says `server.retried`. Returns false when it
    /// may not go again; the caller then refuses the client's stream.
    func move(_ exchange: HTTP2StreamExchange, body: [UInt8], endStream: Bool, trailers: [HTTP2Field]?) -> Bool {
        guard exchange.resends < Self.maxResends, exchange.responseHead == nil, exchange.draft.flow.response == nil,
              exchange.draft.flow.error == nil, !server.isStopping, streams[exchange.clientStream] === exchange else {
            return false
        }
        exchange.resends += 1
        exchange.leg = nil
        exchange.upstreamStream = nil
        exchange.draft.flow.server.retried = true
        let bodiless = endStream && body.isEmpty && trailers == nil
        sendUpstream(exchange, endStream: bodiless)
        guard !bodiless else { return true }
        if let http1Leg = exchange.http1Leg {
            http1Leg.push(body)
            if endStream { http1Leg.finishRequest(trailers: HTTPFields(trailers ?? [])) }
        } else if let leg = exchange.leg, let upstream = exchange.upstreamStream {
            try? leg.session.submitData(stream: upstream, body, endStream: endStream && trailers == nil)
            if let trailers { try? leg.session.submitTrailers(stream: upstream, trailers) }
        } else {
            // Answered meanwhile (no origin, a refused stream): nobody takes the bytes.
            try? session.consumeStream(exchange.clientStream, count: body.count)
        }
        return true
    }

    /// The origin connection for a new stream: the current one, else a new one. Answers the
    /// stream itself (and returns nil) when the origin cannot be reached over h2.
    private func upstreamLeg(for exchange: HTTP2StreamExchange) -> HTTP2UpstreamLeg? {
        if let leg, leg.acceptsStreams {
            describe(leg, in: exchange, fresh: leg.clientStreams.isEmpty && !leg.upstream.reused)
            leg.upstream.reused = true
            return leg
        }
        // A dial that just failed is not made again for each stream that arrives meanwhile (the
        // handshake's own probe of the origin, then every stream of a burst, each waited out the
        // whole upstream timeout in turn): for a few seconds its reason answers them.
        if !upstreamSpeaksHTTP1, let failedAt = upstreamFailedAt, Date().timeIntervalSince(failedAt) < Self.failureReuse {
            answerUpstreamFailure(exchange)
            return nil
        }
        if !upstreamSpeaksHTTP1 {
            do {
                let connection = cleartext
                    ? try context.connection.pool.connection(host: host, port: port, tls: false, reuse: false,
                                                             dial: dial, raw: true)
                    : try context.connection.pool.connection(host: host, port: port, tls: true,
                                                             alpn: ["h2", "http/1.1"], dial: dial)
                // Without TLS there is no ALPN: h2 by prior knowledge, as the client spoke it.
                if connection.isHTTP2 || cleartext {
                    connection.stream.socket.setNonBlocking()
                    let fresh = try HTTP2UpstreamLeg(upstream: connection, limits: limits)
                    if let old = leg { retiring.append(old) }
                    leg = fresh
                    describe(fresh, in: exchange, fresh: true)
                    fresh.upstream.reused = true
                    return fresh
                }
                upstreamSpeaksHTTP1 = true
                context.connection.pool.release(connection)
            } catch {
                upstreamFailure = error
                upstreamFailedAt = Date()
            }
        }
        if upstreamSpeaksHTTP1 {
            // gRPC cannot be carried by HTTP/1.1 (its status travels in trailers); anything else
            // is translated by `startHTTP1Leg`.
            if exchange.isGRPC {
                answer(exchange, status: 502, kind: .protocolMismatch,
                       message: "the origin \(host):\(port) speaks only HTTP/1.1 and gRPC needs HTTP/2")
            }
        } else {
            answerUpstreamFailure(exchange)
        }
        return nil
    }

    /// Answers `exchange` with why the origin could not be reached (`upstreamFailure`), the flow
    /// keeping what the failed dial saw (`UpstreamFailure.annotate`), once its request is in.
    private func answerUpstreamFailure(_ exchange: HTTP2StreamExchange) {
        let (kind, status, message) = UpstreamFailure.describe(upstreamFailure, target: HostPort(host: host, port: port).description)
        UpstreamFailure.annotate(&exchange.draft, with: upstreamFailure)
        answerAfterRequest(exchange, status: status, kind: kind, message: message)
    }

    /// `answer`, once the request's body is in (or `--body-limit` of it): the flow keeps what the
    /// client sent, where an answer before it reset the stream (NO_ERROR) and the body went
    /// unread. Meanwhile nothing goes upstream and the client's DATA is acknowledged as it comes.
    /// Not for a call or a tunnel, whose client may wait for the answer before it sends (gRPC's
    /// UNAVAILABLE, a WebSocket's extended CONNECT), nor for a body the client holds back until
    /// it hears `100 Continue`.
    private func answerAfterRequest(_ exchange: HTTP2StreamExchange, status: Int, kind: FlowErrorKind, message: String) {
        guard !exchange.requestEnded, !exchange.isGRPC, exchange.requestHead[pseudo: ":method"] != "CONNECT",
              exchange.requestHead.firstValue("expect")?.lowercased() != "100-continue" else {
            answer(exchange, status: status, kind: kind, message: message)
            return
        }
        exchange.answeredLocally = true
        exchange.heldFailure = (status, kind, message, Date())
    }

    /// How long a held failure waits for the rest of the request at most (a client that sends
    /// nothing more until it hears back).
    static let heldFailureWait: TimeInterval = 2

    /// Sends a held failure's answer when the request has ended, passed `--body-limit`, or
    /// waited `heldFailureWait`.
    func releaseHeldFailure(_ exchange: HTTP2StreamExchange, now: Date = Date()) {
        guard let held = exchange.heldFailure,
              exchange.requestEnded || exchange.requestBytes > context.configuration.bodyLimit
                || now.timeIntervalSince(held.since) >= Self.heldFailureWait else { return }
        exchange.heldFailure = nil
        answer(exchange, status: held.status, kind: held.kind, message: held.message)
    }

    /// Puts the origin connection's address and TLS into a stream's flow; timings for the one
    /// stream that waited for the connection to open.
    func describe(_ leg: HTTP2UpstreamLeg, in exchange: HTTP2StreamExchange, fresh: Bool) {
        exchange.draft.flow.server.address = leg.upstream.address
        exchange.draft.flow.tls = leg.upstream.flowTLS(over: exchange.draft.flow.tls)
        exchange.draft.flow.timings.connect = fresh ? leg.upstream.connectMilliseconds : 0
        exchange.draft.flow.timings.tls = fresh ? leg.upstream.tlsMilliseconds : -1
    }

    private func clientData(stream: Int32, bytes: [UInt8], endStream: Bool) {
        // The connection window reopens at once, the stream's when the origin took the bytes
        // (see the origin's `.data`).
        try? session.consumeConnection(count: bytes.count)
        guard let exchange = streams[stream] else {
            try? session.consumeStream(stream, count: bytes.count)
            return
        }
        exchange.recordRequest(bytes)
        if endStream { exchange.requestEnded = true }
        if exchange.local != nil { exchange.appendLocalBody(bytes) }
        if let http1Leg = exchange.http1Leg, !exchange.answeredLocally {
            http1Leg.push(bytes)
            if endStream { http1Leg.finishRequest() }
            return
        }
        guard !exchange.answeredLocally, let leg = exchange.leg, let upstream = exchange.upstreamStream else {
            if exchange.breakpoint != nil {
                gatherAtBreakpoint(exchange, bytes, endStream: endStream)
                return
            }
            // Nobody upstream reads it: acknowledge at once so the client can finish sending.
            try? session.consumeStream(stream, count: bytes.count)
            if endStream && exchange.local != nil && exchange.draft.flow.response == nil { answerLocally(exchange) }
            releaseHeldFailure(exchange)
            return
        }
        do {
            try leg.session.submitData(stream: upstream, bytes, endStream: endStream)
            if endStream { exchange.requestSent = Date() }
        } catch {
            try? session.consumeStream(stream, count: bytes.count)
        }
    }

    private func clientTrailers(stream: Int32, fields: [HTTP2Field]) {
        guard let exchange = streams[stream] else { return }
        exchange.recorder.recordRequestTrailers(HTTPFields(fields))
        exchange.requestEnded = true
        if exchange.answeredLocally {
            if exchange.breakpoint != nil {
                exchange.breakpoint?.trailers = fields
                holdAtBreakpoint(exchange)
                return
            }
            if exchange.local != nil && exchange.draft.flow.response == nil { answerLocally(exchange) }
            releaseHeldFailure(exchange)
            return
        }
        if let http1Leg = exchange.http1Leg {
            http1Leg.finishRequest(trailers: HTTPFields(fields))
            return
        }
        guard let leg = exchange.leg, let upstream = exchange.upstreamStream else { return }
        let relayed = (try? [HTTP2Field](forwarding: HTTPFields(fields))) ?? []
        try? leg.session.submitTrailers(stream: upstream, relayed)
        exchange.requestSent = Date()
    }
}
