import Foundation
import HTTP1
import HTTPTypes
import PinningPolicy

extension ResponseRelay {
    /// Relays a response `--pinset-rewrite` matched: a successful body of at most
    /// `rewrite.limit` bytes is read whole, its `hashes` get the team root's pin, and it goes to
    /// the client with a fresh Content-Length (uncompressed when it came with a content coding).
    /// Anything else (not 2xx, too large, not a pin set) passes through untouched, with a note.
    /// `head` is the origin's head in HTTP/1.1 terms (`UpstreamResponseHead.asHTTP1`), so the
    /// same holds whatever version the origin speaks.
    func relayPinSet(_ head: HTTPResponseHead, rewrite: PinSetRewrite, leg: inout Leg,
                     draft: inout FlowDraft) -> RelayOutcome {
        let framing = ClientFraming(request: requestHead, response: head)
        let hasBody = requestHead.method != "HEAD" && head.status != 204 && head.status != 304
        guard (200..<300).contains(head.status), hasBody else {
            draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: status \(head.status)"
                                                + (hasBody ? "" : " without a body"))
            return stream(head, framing: framing, leg: &leg, draft: &draft)
        }
        if let length = head.headers["Content-Length"].flatMap(Int.init), length > rewrite.limit {
            draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: \(length) bytes, more than the "
                                                + "\(rewrite.limit)-byte limit for a pin set")
            return stream(head, framing: framing, leg: &leg, draft: &draft)
        }
        var body: [UInt8] = []
        while true {
            let event: UpstreamEvent
            do {
                event = try leg.next()
                // Held here, at most `rewrite.limit` bytes: the origin may send the rest.
                if case .body(let bytes) = event { try leg.consumed(bytes.count) }
            } catch {
                let message = "upstream failed in the pin set's body: \(error)"
                draft.fail(.upstreamClosed, message)
                context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            }
            switch event {
            case .body(let bytes):
                body += bytes
                if body.count > rewrite.limit {
                    draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: more than the "
                                                        + "\(rewrite.limit)-byte limit for a pin set")
                    return stream(head, framing: framing, buffered: body, leg: &leg, draft: &draft)
                }
            case .end(let trailers):
                if !trailers.isEmpty { recorder.recordResponseTrailers(trailers) }
                let reusable = head.keepAlive && framing.upstreamDelimited && leg.connectionReusable
                return sendWhole(head, body: body, rewrite: rewrite, upstreamReusable: reusable, draft: &draft)
            case .interim, .final:
                draft.fail(.upstreamClosed, "upstream closed in the pin set's body after \(body.count) bytes")
                context.sendToClient(ErrorResponse.bytes(status: 502, detail: "upstream closed mid-body"))
                return RelayOutcome(clientKeepAlive: false, upstreamReusable: false)
            }
        }
    }

    /// Sends a whole pin-set body, rewritten when it is one, with a Content-Length.
    private func sendWhole(_ head: HTTPResponseHead, body: [UInt8], rewrite: PinSetRewrite, upstreamReusable: Bool,
                           draft: inout FlowDraft) -> RelayOutcome {
        var outbound = head
        outbound.version = .http11
        outbound.headers.removeHopByHop()
        let (served, dropEncoding, info) = rewrite.rewrite(body, contentEncoding: head.headers["Content-Encoding"])
        if dropEncoding { outbound.headers.remove("Content-Encoding") }
        draft.flow.pinset = info
        outbound.headers.replaceOrAdd(name: "Content-Length", value: String(served.count))
        let clientKeepAlive = requestHead.keepAlive && head.keepAlive
        if !clientKeepAlive {
            outbound.headers.add(name: "Connection", value: "close")
        } else if requestHead.version == .http10 {
            outbound.headers.add(name: "Connection", value: "keep-alive")
        }
        if context.configuration.addVia { outbound.headers.add(name: "Via", value: "1.1 devproxy") }
        let redact = context.configuration.redactHeaders
        draft.flow.response?.headers = FlowDraft.headerPairs(outbound.headers, redact: redact)
        recorder.replaceResponseHead(HTTPResponse(outbound))
        recorder.recordResponseBody(served)
        recorder.finishResponseBody(into: &draft)
        do {
            try context.client.stream.write(HTTP1Serializer.serialize(outbound) + served, flush: true)
        } catch {
            draft.fail(.clientClosed, "the client closed the connection before the pin set was sent")
            return RelayOutcome(clientKeepAlive: false, upstreamReusable: upstreamReusable)
        }
        return RelayOutcome(clientKeepAlive: clientKeepAlive, upstreamReusable: upstreamReusable)
    }
}
