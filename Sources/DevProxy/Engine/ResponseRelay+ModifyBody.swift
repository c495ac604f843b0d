import Foundation
import HTTP1
import HTTPTypes

/// `--modify-body` for an HTTP/1.1 client, whatever the origin speaks: the body of a response a
/// rule matched is gathered from the leg before anything is sent, edited (`BodyEdit`), and sent
/// with a `Content-Length` (chunked still when trailers came, to carry them). A body over
/// `BodyEdit.limit` goes on as it came: what was gathered first, then the rest as it comes.
extension ResponseRelay {
    /// The `--modify-body` rules that match `head` of this exchange; empty without any.
    func bodyRules(for head: HTTPResponseHead, draft: FlowDraft) -> [ModifyBodyRule] {
        let rules = context.configuration.mapRules
        guard !rules.body.isEmpty else { return [] }
        let asked = LocalRequest(recorder.request, url: draft.flow.request?.url ?? "",
                                 httpVersion: draft.flow.request?.httpVersion ?? "HTTP/1.1")
        return rules.bodyRules(for: asked, status: head.status, fields: head.headers.map { ($0.name, $0.value) })
    }

    /// Relays `head` and its body edited by `rules`; the body as it came when it cannot be
    /// (the flow's `mapped.note` says why).
    func relayEditingBody(_ head: HTTPResponseHead, rules: [ModifyBodyRule], leg: inout Leg,
                          draft: inout FlowDraft) -> RelayOutcome {
        let origin = ClientFraming(request: requestHead, response: head)
        let fields = head.headers.map { ($0.name, $0.value) }
        if let reason = BodyEdit.skipReason(method: requestHead.method, status: head.status, fields: fields) {
            if !reason.isEmpty { draft.recordBodyChanges([], note: "body not modified: " + reason) }
            return stream(head, framing: origin, leg: &leg, draft: &draft, reportResponded: true)
        }
        var body: [UInt8] = []
        let clientSocket = context.client.stream.socket
        var trailers = HTTPFields()
        gathering: while true {
            if !leg.hasBufferedResponse() {
                let limit = context.configuration.upstreamTimeout
                let waited = (try? leg.awaitResponse(watching: clientSocket, limit: limit)) ?? .input
                if waited == .peerClosed {
                    draft.fail(.clientClosed, "the client closed the connection while --modify-body gathered the "
                               + "response body (\(body.count) bytes)")
                    return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
                }
                if waited == .timedOut { continue }
            }
            let event: UpstreamEvent
            do {
                event = try leg.next()
            } catch let error as NetworkError where error.kind == .timedOut {
                continue
            } catch {
                let failure = leg.failureMidBody(error, relayed: 0)
                failure.record(in: &draft)
                // Nothing reached the client yet: it gets a clean 502 saying what failed.
                context.sendToClient(ErrorResponse.answer(status: 502, detail: failure.detail ?? failure.message,
                                                          kind: failure.kind,
                                                          bodyLimit: context.configuration.bodyLimit,
                                                          recordingIn: &draft))
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            }
            switch event {
            case .body(let bytes):
                body += bytes
                try? leg.consumed(bytes.count)
                if body.count > BodyEdit.limit {
                    draft.recordBodyChanges([], note: "body not modified: " + BodyEdit.overLimit)
                    return stream(head, framing: origin, buffered: body, leg: &leg, draft: &draft,
                                  reportResponded: true)
                }
            case .end(let fields):
                trailers = fields
                break gathering
            case .interim, .final:
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            }
        }
        let edit = BodyEdit.apply(rules, to: body, contentEncoding: head.headers["Content-Encoding"])
        draft.recordBodyChanges(edit.changes, note: edit.note)
        var edited = head
        if let bytes = edit.bytes {
            body = bytes
            if edit.dropEncoding { edited.headers.remove("Content-Encoding") }
        }
        // The whole body is here: sent with its length, or chunked to carry trailers to a 1.1 client.
        edited.headers.remove("Transfer-Encoding")
        edited.headers.remove("Content-Length")
        if trailers.isEmpty || requestHead.version != .http11 {
            edited.headers.add(name: "Content-Length", value: String(body.count))
        } else {
            edited.headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        if edit.bytes != nil {
            // The flow records the head the client got.
            recorder.replaceResponseHead(HTTPResponse(edited))
            let altSvcRemoved = draft.flow.response?.altSvcRemoved
            draft.flow.response = Flow.Response(HTTPResponse(edited), httpVersion: draft.flow.response?.httpVersion
                                                ?? "HTTP/1.1", redact: context.configuration.redactHeaders)
            draft.flow.response?.altSvcRemoved = altSvcRemoved
        }
        let framing = ClientFraming(request: requestHead, response: edited)
        let (outbound, clientKeepAlive) = clientHead(for: edited, framing: framing)
        recorder.recordResponseBody(body)
        if !trailers.isEmpty { recorder.recordResponseTrailers(trailers) }
        defer { recorder.finishResponseBody(into: &draft) }
        let out = framing.rechunk ? (body.isEmpty ? [] : HTTP1Serializer.chunk(body)) + Self.lastChunk(trailers) : body
        do {
            try context.client.stream.write(HTTP1Serializer.serialize(outbound) + out, flush: true)
        } catch {
            draft.fail(.clientClosed, "the client closed the connection before the response: \(error)")
            return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
        }
        if leg.overrun > 0 {
            draft.fail(.upstreamBadResponse, UpstreamOverrun.reason(leg.overrun, target: HostPort(
                host: draft.flow.server.host, port: draft.flow.server.port).description,
                length: head.headers["Content-Length"]))
            draft.flow.error?.by = "server"
        }
        return RelayOutcome(clientKeepAlive: clientKeepAlive,
                            upstreamReusable: head.keepAlive && origin.upstreamDelimited && leg.connectionReusable)
    }
}
