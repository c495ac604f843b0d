import Foundation
import HTTP1
import HTTP2
import HTTPTypes

/// Relays an origin's HTTP/2 response to an HTTP/1.1 client: interim responses, the final head
/// with a reason phrase made up and HTTP/1.1 framing (Content-Length when the origin sent one,
/// else chunked, or close-delimited for HTTP/1.0), the body as it comes, and trailers as a chunked
/// trailer section when the client said `TE: trailers` (always kept in the flow).
struct HTTP2ResponseToHTTP1 {
    let context: ExchangeContext
    let requestHead: HTTPRequestHead
    let stream: Int32
    let target: String
    /// Where the response is recorded for the flow.
    let recorder: ExchangeRecorder
    /// Set when the origin asked for a client certificate and got none: a failure before the
    /// response is then `upstream_client_certificate_required`, with this message.
    var clientCertificateFailure: String?

    /// Returns whether the client connection can carry another request.
    func run(driver: inout HTTP1ToHTTP2Exchange.Driver, draft: inout FlowDraft) -> Bool {
        var head: HTTP2HeaderBlock?
        do {
            while head == nil {
                switch try driver.next() {
                case .informationalHead(stream, let interim):
                    guard let status = interim.status, status != 100,
                          let interim = try? HTTPResponseHead(forwarding: HTTPResponse(interim)) else { continue }
                    context.sendToClient(HTTP1Serializer.serialize(interim))
                case .responseHead(stream, let final, let endStream):
                    head = final
                    if endStream { driver.events.insert(.data(stream: stream, bytes: [], endStream: true), at: 0) }
                case .streamReset(stream, let code, true):
                    return fail(draft: &draft, kind: .upstreamReset2, code: code, "upstream \(target) reset the HTTP/2 stream (\(code))")
                case .goAway(let last, let code, _) where last < stream:
                    return fail(draft: &draft, kind: .upstreamReset2, code: code,
                                "upstream \(target) sent GOAWAY (\(code)) before processing the request")
                case .protocolError(let id, let reason) where id == 0 || id == stream:
                    return fail(draft: &draft, kind: .upstreamBadResponse, code: nil, "upstream \(target) broke HTTP/2: \(reason)")
                default:
                    continue
                }
            }
        } catch {
            if let clientCertificateFailure {
                return fail(draft: &draft, kind: .upstreamClientCertificateRequired, code: nil,
                            clientCertificateFailure)
            }
            return fail(draft: &draft, kind: .upstreamClosed, code: nil, "upstream \(target) (HTTP/2) failed before the response: \(error)")
        }
        guard let head else { return false }
        return relayBody(head, driver: &driver, draft: &draft)
    }

    private func relayBody(_ head: HTTP2HeaderBlock, driver: inout HTTP1ToHTTP2Exchange.Driver, draft: inout FlowDraft) -> Bool {
        let response = HTTPResponse(head)
        recorder.recordResponseHead(response)
        recorder.finishTimings(into: &draft, openEnded: false)
        let status = response.status
        let redact = context.configuration.redactHeaders
        draft.flow.response = Flow.Response(response, httpVersion: "HTTP/2", redact: redact)
        context.server.responded(draft.flow)
        if let url = draft.flow.request?.url, context.configuration.pinSetRewrite?.matches(url) == true {
            // Not silent: this one pairing (an HTTP/1.1 client, an HTTP/2-only origin) relays as is.
            draft.flow.pinset = Flow.PinSetInfo(rewritten: false, note: "not rewritten: an HTTP/1.1 client's request "
                                                + "to an HTTP/2-only origin is relayed as is")
        }
        var headers = (try? HTTPHeaders(forwarding: response.fields)) ?? HTTPHeaders()
        let noBody = requestHead.method == "HEAD" || status == 204 || status == 304
        // The same framing rules as an HTTP/1.1 origin's response without Transfer-Encoding:
        // its Content-Length, else chunked for an HTTP/1.1 client, else read until close.
        let framing = ClientFraming(request: requestHead,
                                    response: HTTPResponseHead(version: .http11, status: status, reason: "", headers: headers))
        let chunked = framing.rechunk
        if chunked { headers.add(name: "Transfer-Encoding", value: "chunked") }
        let keepAlive = requestHead.keepAlive && framing.clientKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let wantsTrailers = requestHead.headers.hasListElement("TE", "trailers")
        defer {
            recorder.finishResponseBody(into: &draft)
            recorder.finishTrailers(into: &draft, redact: redact)
            recorder.finishTimings(into: &draft)
        }
        do {
            try context.client.stream.write(HTTP1Serializer.serialize(
                HTTPResponseHead(version: .http11, status: status, reason: ErrorResponse.reasonPhrase(status), headers: headers)))
        } catch {
            draft.fail(.clientClosed, "the client closed the connection before the response: \(error)")
            return false
        }
        var relayed = 0
        while true {
            let event: HTTP2Event
            do {
                event = try driver.next()
            } catch {
                draft.fail(.upstreamClosed, "upstream \(target) (HTTP/2) failed mid-body after \(relayed) bytes: \(error)")
                return false
            }
            do {
                switch event {
                case .data(stream, let bytes, let endStream):
                    recorder.recordResponseBody(bytes)
                    relayed += bytes.count
                    if !bytes.isEmpty && !noBody { try context.client.stream.write(chunked ? HTTP1Serializer.chunk(bytes) : bytes) }
                    if !bytes.isEmpty { try driver.session.consume(stream: stream, count: bytes.count) }
                    if endStream {
                        if chunked { try context.client.stream.write(HTTP1Serializer.lastChunk()) }
                        return keepAlive
                    }
                case .trailers(stream, let fields):
                    recorder.recordResponseTrailers(HTTPFields(fields))
                    if chunked {
                        let forwarded = wantsTrailers ? (try? HTTPHeaders(forwarding: HTTPFields(fields))) : nil
                        let section = forwarded ?? HTTPHeaders()
                        try context.client.stream.write(HTTP1Serializer.lastChunk(trailers: section))
                    }
                    return keepAlive
                case .streamReset(stream, let code, true):
                    // The head is out: only cutting the connection tells the client the body is short.
                    _ = fail(draft: &draft, kind: .upstreamReset2, code: code,
                             "upstream \(target) reset the HTTP/2 stream (\(code)) after \(relayed) bytes", answer: false)
                    draft.flow.error?.afterBytes = relayed
                    return false
                case .goAway(let last, _, _) where last < stream:
                    draft.fail(.upstreamClosed, "upstream \(target) sent GOAWAY mid-body after \(relayed) bytes")
                    return false
                default:
                    continue
                }
            } catch {
                draft.fail(.clientClosed, "the client closed the connection while the response streamed (\(relayed) bytes sent)")
                return false
            }
        }
    }

    /// Records a failure; before any response byte the client also gets a 502 saying why.
    private func fail(draft: inout FlowDraft, kind: FlowErrorKind, code: HTTP2ErrorCode?, _ message: String,
                      answer: Bool = true) -> Bool {
        draft.fail(kind, message)
        draft.flow.error?.code = code?.description
        draft.flow.error?.by = code == nil ? nil : "server"
        if answer { context.sendToClient(ErrorResponse.bytes(status: 502, detail: message)) }
        return false
    }
}
