import CertAuthority
import Foundation
import HTTP1
import HTTPTypes

/// Forwards one HTTP/1.1 request to its origin and the response back, streaming both bodies,
/// and records the flow. Returns whether the client connection can carry another request.
struct HTTPExchange {
    let context: ExchangeContext
    var head: HTTPRequestHead
    var destination: Destination
    /// The local route that answers this request whatever it names (the onboarding site for a
    /// request sent straight to the proxy's port); nil: the server's routes decide.
    var route: LocalRoute? = nil
    /// Set when the web UI's replayer sent this request (`X-DevProxy-Replay`).
    var replay: ReplayMark? = nil
    /// What `--map-remote` or `--map-local` did to the request (`mapped()`), once they were applied.
    var mapping: Flow.Mapping? = nil

    /// Runs the exchange.
    func run() -> Bool {
        if mapping == nil, !context.mapRules.isEmpty, let mapped = mapped() { return mapped.run() }
        let request = HTTPRequest(head, scheme: destination.tls ? "https" : "http", authority: destination.hostHeader,
                                  path: destination.pathAndQuery)
        let version = head.version.description
        let url = destination.url
        // The flow shows the Host that went to the origin (RFC 9112 §3.2.2: an absolute-form
        // request's is the URL's authority; a resend's may be edited), and the client's beside it.
        let clientHost = head.headers["Host"]
        let replaced = clientHost.map { $0 != destination.hostHeader } ?? false
        var sent = head
        if replaced { sent.headers.replaceOrAdd(name: "Host", value: destination.hostHeader) }
        let recorded = replaced ? HTTPRequest(sent, scheme: request.scheme, authority: request.authority, path: request.path)
            : request
        var draft = context.draft(host: destination.host, port: destination.port,
                                  request: Flow.Request(recorded, url: url, httpVersion: version,
                                                        redact: context.configuration.redactHeaders))
        if replaced { draft.flow.request?.clientHost = clientHost }
        // The absolute-form a client sends a proxy, kept for the request line as it came (raw export).
        if head.target.first != "/", head.target != "*" {
            draft.flow.request?.target = head.target
        }
        if let replay {
            draft.flow.id = replay.id
            draft.flow.replayOf = replay.original
            // A Host the replay sends in place of the URL's names another host than the TLS
            // connection's, as the intercepted request it repeats did (`server.request_host`).
            if destination.tls, let host = replay.host {
                draft.flow.server.requestHost = ExchangeContext.otherHost(in: "https://" + host, than: destination.host)
            }
        }
        if let mapping { draft.flow.mapped = mapping }
        defer { context.server.emit(draft.takeFinished()) }
        context.server.started(draft.flow)
        let recorder = makeRecorder(request)
        // Offline (the throttle): no answer, the connection closes, as with no network.
        if let reason = context.connection.offlineReason {
            draft.fail(.offline, reason)
            return false
        }
        // RFC 9110 §7.6.2: a TRACE or OPTIONS whose hops ran out here is DevProxy's to answer.
        let lastHop = MaxForwards.answersHere(method: head.method, value: head.headers["Max-Forwards"]) ? MaxForwards.route : nil
        if route != nil || lastHop != nil || !context.server.localRoutes.isEmpty {
            let request = LocalRequest(request, url: url, httpVersion: version, clientOf: context)
            if let route = route ?? lastHop ?? context.server.localRoute(for: request) {
                return answerLocally(request, route: route, recorder: recorder, draft: &draft)
            }
        }
        // `--modify-body` on the request, then breakpoints, each seeing what the one before made.
        var exchange = self
        var outgoing = request
        var upstreamHead = sent
        var recording = recorder
        if !context.mapRules.body.isEmpty {
            switch modifyingRequestBody(request, draft: &draft) {
            case .unchanged:
                break
            case .read(let read, let request):
                exchange = read
                outgoing = request
                recording = read.makeRecorder(request)
                upstreamHead = read.head
                if replaced { upstreamHead.headers.replaceOrAdd(name: "Host", value: destination.hostHeader) }
            case .failed(let keepAlive):
                return keepAlive
            }
        }
        // Breakpoints (`--intercept`): one atomic load when no filter is set.
        if let board = context.configuration.intercepts, board.isActive, replay == nil,
           let held = exchange.breakpoint(board, request: outgoing, sent: upstreamHead, draft: &draft) {
            return held
        }
        return exchange.forward(outgoing, recorder: recording, draft: &draft)
    }

    /// Records `request` (the one that goes upstream) for the flow, its gRPC view decoded by the
    /// schema the origin offers, if any.
    func makeRecorder(_ request: HTTPRequest) -> ExchangeRecorder {
        ExchangeRecorder(request: request, bodyLimit: context.configuration.bodyLimit,
                         spool: context.configuration.bodySpool, grpcView: true, lowercaseNames: false,
                         protoSchema: context.server.protoSchema(host: destination.host, port: destination.port,
                                                                 tls: destination.tls, path: request.path,
                                                                 contentType: head.headers["Content-Type"]))
    }

    /// Sends the request to its origin (dialled or pooled) and relays the response.
    func forward(_ request: HTTPRequest, recorder: ExchangeRecorder, draft: inout FlowDraft) -> Bool {
        var upstream: UpstreamConnection
        let key = UpstreamPool.key(host: destination.host, port: destination.port, tls: destination.tls,
                                   dial: destination.dial)
        let pinned = context.connection.takePinned(key)
        do {
            // A replay of an HTTP/2 flow offers h2 first, as the original's client did (`ReplayMark.http2`).
            let alpn = replay?.http2 == true && destination.tls && context.configuration.http2 ? ["h2", "http/1.1"] : nil
            upstream = try pinned ?? context.connection.pool.connection(host: destination.host, port: destination.port,
                                                                        tls: destination.tls, alpn: alpn,
                                                                        dial: destination.dial,
                                                                        watch: context.connection.dialWatch)
        } catch {
            answerConnectFailure(error, draft: &draft)
            drainRequestBody(into: recorder, draft: &draft)
            return false
        }
        if upstream.isHTTP2 {
            // The origin speaks only HTTP/2 (or a replay of an HTTP/2 flow offered it first): one
            // h2 stream, on a connection of its own. The replay's flow says HTTP/2, as the flow it
            // repeats did: the replayer's HTTP/1.1 hop is DevProxy's own.
            if replay?.http2 == true { draft.flow.request?.httpVersion = "HTTP/2" }
            return relayToHTTP2(upstream, request: request, recorder: recorder, draft: &draft)
        }
        var leg = HTTP1OriginLeg(upstream: upstream, destination: destination, configuration: context.configuration)
        var (keepAlive, transfer) = send(leg, request: request, recorder: recorder, draft: &draft, resending: false)
        if transfer.staleConnection {
            // The server had closed the pooled connection: once more on a fresh one.
            upstream.stream.close()
            do {
                upstream = try context.connection.pool.connection(host: destination.host, port: destination.port,
                                                                  tls: destination.tls, reuse: false,
                                                                  dial: destination.dial)
            } catch {
                answerConnectFailure(error, draft: &draft)
                return false
            }
            draft.flow.server.retried = true
            leg = HTTP1OriginLeg(upstream: upstream, destination: destination, configuration: context.configuration)
            (keepAlive, transfer) = send(leg, request: request, recorder: recorder, draft: &draft, resending: true)
        }
        if transfer.upstreamReusable {
            if pinned != nil || Self.authenticatesTheConnection(head, draft.flow.response) {
                context.connection.pin(upstream)
            } else {
                context.connection.pool.release(upstream)
            }
        } else {
            upstream.stream.close()
        }
        return keepAlive
    }

    /// Whether the exchange is a step of NTLM or Negotiate authentication, which binds the origin
    /// connection to its client (`ClientConnection.pin`): the request carries such credentials, or
    /// the response asks for them.
    static func authenticatesTheConnection(_ request: HTTPRequestHead, _ response: Flow.Response?) -> Bool {
        func connectionScheme(_ value: String) -> Bool {
            let scheme = value.prefix { $0 != " " && $0 != "," }.lowercased()
            return scheme == "ntlm" || scheme == "negotiate"
        }
        if request.headers.values("Authorization").contains(where: connectionScheme) { return true }
        guard let response, response.status == 401 else { return false }
        let fields = response.headers
        return (0..<fields.endIndex).contains { index in
            fields.name(at: index).lowercased() == "www-authenticate"
                && fields.value(at: index).split(separator: ",").contains {
                    connectionScheme($0.trimmingCharacters(in: .whitespaces))
                }
        }
    }

    /// Sends the request through `leg` and relays the response, recording the connection in the flow.
    private func send<Leg: UpstreamLeg>(_ leg: Leg, request: HTTPRequest, recorder: ExchangeRecorder,
                                        draft: inout FlowDraft, resending: Bool) -> (Bool, ExchangeTransfer<Leg>) {
        describe(leg.upstream, in: &draft)
        var transfer = ExchangeTransfer(context: context, head: head, request: request, destination: destination,
                                        leg: leg, recorder: recorder, resending: resending)
        transfer.replayed = replay != nil
        let keepAlive = context.connection.using(leg.upstream.stream.socket) { transfer.run(draft: &draft) }
        return (keepAlive, transfer)
    }

    /// The exchange with an origin that speaks only HTTP/2 (RFC 9113 §8.2 translation both ways,
    /// `HTTP2OriginLeg`); the connection closes after it. An `Upgrade` cannot cross to HTTP/2.
    private func relayToHTTP2(_ upstream: UpstreamConnection, request: HTTPRequest, recorder: ExchangeRecorder,
                              draft: inout FlowDraft, resending: Bool = false) -> Bool {
        defer { upstream.stream.close() }
        describe(upstream, in: &draft)
        let target = "\(destination.host):\(destination.port)"
        if head.headers["Upgrade"] != nil {
            let message = "upstream \(target) speaks only HTTP/2, which cannot carry an HTTP/1.1 Upgrade (WebSocket)"
            draft.fail(.protocolMismatch, message)
            context.sendError(status: 502, detail: message, kind: .protocolMismatch, draft: &draft)
            return false
        }
        let leg: HTTP2OriginLeg
        do {
            leg = try HTTP2OriginLeg(upstream: upstream, destination: destination,
                                     upstreamTimeout: context.configuration.upstreamTimeout)
        } catch {
            draft.fail(.badRequest, "\(error)")
            context.sendError(status: 400, detail: "\(error)", kind: .badRequest, draft: &draft)
            return false
        }
        let (keepAlive, transfer) = send(leg, request: request, recorder: recorder, draft: &draft, resending: resending)
        guard transfer.staleConnection else { return keepAlive }
        // The origin left the stream unprocessed (REFUSED_STREAM, GOAWAY below it; RFC 9113
        // §8.7): once more on a fresh connection, as an HTTP/2 client's stream goes again.
        let fresh: UpstreamConnection
        do {
            fresh = try context.connection.pool.connection(host: destination.host, port: destination.port,
                                                           tls: destination.tls, reuse: false, dial: destination.dial)
        } catch {
            answerConnectFailure(error, draft: &draft)
            return false
        }
        draft.flow.server.retried = true
        if fresh.isHTTP2 {
            return relayToHTTP2(fresh, request: request, recorder: recorder, draft: &draft, resending: true)
        }
        defer { fresh.stream.close() }
        let http1 = HTTP1OriginLeg(upstream: fresh, destination: destination, configuration: context.configuration)
        return send(http1, request: request, recorder: recorder, draft: &draft, resending: true).0
    }

    /// The upstream connection's address, TLS and opening costs, in the flow.
    private func describe(_ upstream: UpstreamConnection, in draft: inout FlowDraft) {
        draft.flow.server.address = upstream.address
        draft.flow.timings.connect = upstream.reused ? 0 : upstream.connectMilliseconds
        draft.flow.timings.tls = upstream.reused || upstream.tls == nil ? -1 : upstream.tlsMilliseconds
        draft.flow.tls = upstream.flowTLS(over: draft.flow.tls)
    }

    /// Reads the request body and answers it here without contacting the origin (a `LocalRoute`).
    private func answerLocally(_ request: LocalRequest, route: LocalRoute, recorder: ExchangeRecorder,
                               draft: inout FlowDraft) -> Bool {
        var request = request
        var tooLong = false
        do {
            while let event = try context.client.next() {
                if case .body(let bytes) = event {
                    recorder.recordRequestBody(bytes)
                    if !request.appendBody(bytes, upTo: route.bodyLimit) { tooLong = true }
                }
                if case .end = event { break }
            }
        } catch {
            draft.fail(.badRequest, "the request body could not be read: \(error)")
            return false
        }
        recorder.finishRequestBody(into: &draft)
        let response = route.answer(request, bodyTooLong: tooLong)
        if let error = response.error { draft.fail(error.kind, error.message) }
        // `--block-list |…|444`: the connection closes without an answer (nginx's 444, mitmproxy).
        if response.status == BlockListRule.noResponse { return false }
        let keepAlive = head.keepAlive && !tooLong && !context.server.isStopping
        var headers = HTTPHeaders(LocalRoute.sentHeaders(response).map { ($0.name, $0.value) })
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let reason = ErrorResponse.reasonPhrase(response.status)
        let noBody = head.method == "HEAD" || response.status == 204 || response.status == 304
        let answer = HTTPResponse(status: response.status, reason: reason, fields: HTTPFields(headers))
        recorder.replaceResponseHead(answer)
        if !noBody { recorder.recordResponseBody(response.body) }
        draft.flow.response = Flow.Response(answer, httpVersion: "HTTP/1.1", redact: [])
        recorder.finishResponseBody(into: &draft)
        context.server.responded(draft.flow)
        let responseHead = HTTPResponseHead(version: .http11, status: response.status, reason: reason, headers: headers)
        context.sendToClient(HTTP1Serializer.serialize(responseHead) + (noBody ? [] : response.body))
        return keepAlive
    }

    /// 502 or 504 for an upstream that could not be reached, with the reason in the body.
    private func answerConnectFailure(_ error: Error, draft: inout FlowDraft) {
        let (kind, status, message) = UpstreamFailure.describe(error, target: HostPort(host: destination.host, port: destination.port).description)
        UpstreamFailure.annotate(&draft, with: error)
        draft.fail(kind, message)
        context.sendError(status: status, detail: message, kind: kind, draft: &draft)
    }

    /// After an early error the request body (if any) is still on its way; read it off so the
    /// client sees our answer rather than a reset, and record it (up to `--body-limit`, as any
    /// body): a pin-failure report posted to a collector that is down was lost with it, and the
    /// flow did not show what the app sent. Bounded by the body's own framing.
    private func drainRequestBody(into recorder: ExchangeRecorder, draft: inout FlowDraft) {
        var complete = false
        while let event = try? context.client.next() {
            if case .body(let bytes) = event {
                recorder.recordRequestBody(bytes)
                continue
            }
            if case .end = event { complete = true }
            break
        }
        recorder.finishRequestBody(into: &draft, decoding: complete)
    }
}
