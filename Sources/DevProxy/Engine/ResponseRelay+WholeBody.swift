import Foundation
import HTTP1
import HTTPTypes

/// A response body read whole before anything goes to the client, for an HTTP/1.1 client: what
/// `--modify-body` edits and what a breakpoint holds. `gatherBody` reads it off the leg,
/// `sendWhole` sends it with its length (chunked still when trailers came, to carry them).
extension ResponseRelay {
    /// How gathering a whole body ended.
    enum Gathering {
        /// The body came to its end; `trailers` came after it.
        case end(trailers: HTTPFields)
        /// It stopped before the end: what was gathered was read off the leg and acknowledged,
        /// the rest is still to come.
        case stopped(GatheringStop)
        /// The exchange is over (the client left, the origin failed): the flow says why, and the
        /// client got a 502 when nothing had reached it.
        case over(RelayOutcome)
    }

    /// Why a whole body was not gathered.
    enum GatheringStop {
        /// It went past the gatherer's limit.
        case tooLong
        /// The origin sent nothing of it for this many seconds.
        case paused(Int)
        /// `admit` refused a part (a budget spent); the part is in the body all the same.
        case refused
    }

    /// Reads the response body to its end off `leg` into `body` (which may hold a start gathered
    /// already), at most `limit` bytes, asking `admit` of each part before it is kept.
    /// - Parameters:
    ///   - pause: stop when the origin sends nothing for this long (a long poll, a stream); nil
    ///     waits as long as the client does.
    ///   - gatherer: who gathers, as the flow's error says it (`--modify-body`, `a breakpoint`).
    func gatherBody(into body: inout [UInt8], limit: Int, pause: TimeInterval? = nil, gatherer: String,
                    admit: ([UInt8]) -> Bool = { _ in true }, leg: inout Leg, draft: inout FlowDraft) -> Gathering {
        if body.count > limit { return .stopped(.tooLong) }
        let clientSocket = context.client.stream.socket
        var lastBytes = Date()
        while true {
            if !leg.hasBufferedResponse() {
                var wait = context.configuration.upstreamTimeout
                if let pause {
                    let left = pause - Date().timeIntervalSince(lastBytes)
                    if left <= 0 { return .stopped(.paused(Int(pause.rounded()))) }
                    wait = min(wait, left)
                }
                let waited = (try? leg.awaitResponse(watching: clientSocket, limit: wait)) ?? .input
                if waited == .peerClosed {
                    draft.fail(.clientClosed, "the client closed the connection while \(gatherer) gathered the "
                               + "response body (\(body.count) bytes)")
                    return .over(RelayOutcome(clientKeepAlive: false, upstreamReusable: false))
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
                return .over(RelayOutcome(clientKeepAlive: false, upstreamReusable: false))
            }
            switch event {
            case .body(let bytes):
                try? leg.consumed(bytes.count)
                guard admit(bytes) else {
                    body += bytes
                    return .stopped(.refused)
                }
                body += bytes
                lastBytes = Date()
                if body.count > limit { return .stopped(.tooLong) }
            case .end(let fields):
                return .end(trailers: fields)
            case .interim, .final:
                return .over(RelayOutcome(clientKeepAlive: false, upstreamReusable: false))
            }
        }
    }

    /// `head` framed for a whole body of `count` bytes: its length, or chunked to carry `trailers`
    /// to an HTTP/1.1 client. A response that has none keeps its fields (a HEAD's and a 304's
    /// `Content-Length` are the representation's), but a 204 has no framing fields at all.
    func framedWhole(_ head: HTTPResponseHead, count: Int, trailers: HTTPFields) -> HTTPResponseHead {
        var framed = head
        guard !Self.hasNoBody(head, request: requestHead) else {
            // RFC 9110 §8.6: no Content-Length in a 1xx or 204 (an edited status may make one).
            if head.status == 204 || head.status < 200 {
                framed.headers.remove("Content-Length")
                framed.headers.remove("Transfer-Encoding")
            }
            return framed
        }
        framed.headers.remove("Transfer-Encoding")
        framed.headers.remove("Content-Length")
        if trailers.isEmpty || requestHead.version != .http11 {
            framed.headers.add(name: "Content-Length", value: String(count))
        } else {
            framed.headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        return framed
    }

    /// Whether a response with `head` to `request` has no body (RFC 9110 §6.4.1): to a HEAD, a
    /// 1xx, a 204 or a 304.
    static func hasNoBody(_ head: HTTPResponseHead, request: HTTPRequestHead) -> Bool {
        request.method == "HEAD" || head.status == 204 || head.status == 304 || (100..<200).contains(head.status)
    }

    /// Makes `head` the flow's response, as the client gets it.
    func recordAsSent(_ head: HTTPResponseHead, draft: inout FlowDraft) {
        recorder.replaceResponseHead(HTTPResponse(head))
        let altSvcRemoved = draft.flow.response?.altSvcRemoved
        draft.flow.response = Flow.Response(HTTPResponse(head), httpVersion: draft.flow.response?.httpVersion
                                            ?? "HTTP/1.1", redact: context.configuration.redactHeaders)
        draft.flow.response?.altSvcRemoved = altSvcRemoved
    }

    /// Sends `head` (framed by `framedWhole`) with the whole `body` and `trailers`, and records
    /// them for the flow. `origin` is the head as the leg read it: whether the upstream
    /// connection can serve another request is its framing's to say.
    func sendWhole(_ head: HTTPResponseHead, body: [UInt8], trailers: HTTPFields, origin: HTTPResponseHead,
                   leg: inout Leg, draft: inout FlowDraft) -> RelayOutcome {
        let framing = ClientFraming(request: requestHead, response: head)
        let (outbound, clientKeepAlive) = clientHead(for: head, framing: framing)
        if !framing.noBody { recorder.recordResponseBody(body) }
        if !trailers.isEmpty { recorder.recordResponseTrailers(trailers) }
        defer { recorder.finishResponseBody(into: &draft) }
        let out = framing.noBody ? []
            : framing.rechunk ? (body.isEmpty ? [] : HTTP1Serializer.chunk(body)) + Self.lastChunk(trailers) : body
        do {
            try context.client.stream.write(HTTP1Serializer.serialize(outbound) + out, flush: true)
        } catch {
            draft.fail(.clientClosed, "the client closed the connection before the response: \(error)")
            return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
        }
        if leg.overrun > 0 {
            draft.fail(.upstreamBadResponse, UpstreamOverrun.reason(leg.overrun, target: HostPort(
                host: draft.flow.server.host, port: draft.flow.server.port).description,
                length: origin.headers["Content-Length"]))
            draft.flow.error?.by = "server"
        }
        let originFraming = ClientFraming(request: requestHead, response: origin)
        return RelayOutcome(clientKeepAlive: clientKeepAlive,
                            upstreamReusable: origin.keepAlive && originFraming.upstreamDelimited
                                && leg.connectionReusable)
    }
}
