import Foundation
import HTTP1
import HTTPTypes

/// Reads the upstream's response and relays it to the client: interim responses as they
/// come, then the final head with framing fixed for the client, then the body.
struct ResponseRelay {
    let context: ExchangeContext
    let requestHead: HTTPRequestHead
    let upstream: UpstreamConnection
    /// Where the response is recorded for the flow; the exchange has recorded the final head.
    let recorder: ExchangeRecorder

    /// How the response ended.
    struct Outcome {
        var clientKeepAlive: Bool
        var upstreamReusable: Bool
    }

    /// Reads until the final (non-1xx, or 101) response head, passing interim ones on.
    ///
    /// - Parameter onContinue: called for `100 Continue` (and before the final head if the
    ///   upstream skipped it), to release a held request body.
    /// - Throws: `HTTP1ParseError`, `NetworkError`, `UpstreamClosed`.
    func readFinalHead(onContinue: () throws -> Void) throws -> HTTPResponseHead {
        upstream.reader.parser.expectResponse(toMethod: requestHead.method)
        while true {
            guard let event = try upstream.reader.next() else {
                throw UpstreamClosed(message: "upstream \(upstream.address) closed the connection without sending a response" +
                                     (upstream.reused ? " (a reused keep-alive connection)" : ""))
            }
            guard case .head(let head) = event else { continue }
            if head.status == 100 {
                try onContinue()
            } else if head.isInterim {
                context.sendToClient(HTTP1Serializer.serialize(head))
            } else {
                return head
            }
        }
    }

    /// Sends the final head and streams the body; records the response in the flow.
    func relay(_ head: HTTPResponseHead, draft: inout FlowDraft) -> Outcome {
        draft.flow.response = Flow.Response(recorder.response ?? HTTPResponse(head),
                                            httpVersion: head.version.description,
                                            redact: context.configuration.redactHeaders)
        context.server.responded(draft.flow)
        if head.status == 101 {
            WebSocketSession(context: context, upstream: upstream).run(head: head, draft: &draft)
            return Outcome(clientKeepAlive: false, upstreamReusable: false)
        }
        if let rewrite = context.configuration.pinSetRewrite, rewrite.matches(draft.flow.request?.url ?? "") {
            return relayPinSet(head, rewrite: rewrite, draft: &draft)
        }
        let framing = ClientFraming(request: requestHead, response: head)
        let (outbound, clientKeepAlive) = clientHead(for: head, framing: framing)
        defer { recorder.finishResponseBody(into: &draft) }
        // When the body (or its end) is already buffered, the head goes out with it in one TLS
        // record and one write; otherwise at once, so a slow body never delays the headers.
        var held: [UInt8]? = HTTP1Serializer.serialize(outbound)
        if (try? upstream.reader.hasBufferedInput()) != true, let head = held {
            held = nil
            do {
                try context.client.stream.write(head)
            } catch {
                draft.fail(.clientClosed, "the client closed the connection before the response: \(error)")
                return Outcome(clientKeepAlive: false, upstreamReusable: false)
            }
        }
        var relayed = 0
        while true {
            let event: HTTP1ResponseEvent?
            do {
                event = try upstream.reader.next()
            } catch {
                // The head is out: the only honest signal left is to cut the client connection,
                // never a clean end that makes a truncated body look complete.
                let message = (error as? HTTP1ParseError).map { "upstream sent a malformed body: \($0.reason)" }
                    ?? "upstream failed mid-body: \(error)"
                draft.fail(.upstreamClosed, "\(message) after \(relayed) bytes")
                if held != nil {
                    // Nothing reached the client yet: it can still get a clean 502.
                    context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
                }
                return Outcome(clientKeepAlive: false, upstreamReusable: false)
            }
            do {
                switch event {
                case .body(let bytes)?:
                    recorder.recordResponseBody(bytes)
                    let first = relayed == 0
                    relayed += bytes.count
                    // While more of the body is already here, records gather in the client's write
                    // buffer and leave together; before any wait on the upstream they are flushed.
                    // The first part leaves at once: the client sees the response start without
                    // waiting for 64 KiB of a fast download to gather.
                    let more = !first && ((try? upstream.reader.hasBufferedInput()) == true || upstream.stream.inputReady)
                    try send(framing.rechunk ? HTTP1Serializer.chunk(bytes) : bytes, after: &held, flush: !more)
                case .end(let trailers)?:
                    try send(framing.rechunk ? HTTP1Serializer.lastChunk(trailers: trailers) : [], after: &held, flush: true)
                    // Bytes after the end of the response answer no request: reusing the connection
                    // would hand them to the next client as its response.
                    let surplus = !upstream.reader.parser.takeRemainingBytes().isEmpty
                    return Outcome(clientKeepAlive: clientKeepAlive,
                                   upstreamReusable: head.keepAlive && framing.upstreamDelimited && !surplus)
                case .head?, nil:
                    return Outcome(clientKeepAlive: false, upstreamReusable: false)
                }
            } catch {
                draft.fail(.clientClosed, "the client closed the connection while the response streamed (\(relayed) bytes sent)")
                return Outcome(clientKeepAlive: false, upstreamReusable: false)
            }
        }
    }
}

/// How a response is framed towards the client (RFC 9112 §6.3 on the way in, §6.1 out).
struct ClientFraming {
    /// Send the body with chunked coding (it arrived chunked, or close-delimited to a 1.1 client).
    let rechunk: Bool
    /// The client connection can stay open after this response.
    let clientKeepAlive: Bool
    /// The upstream body ended by its own framing (not by closing the connection).
    let upstreamDelimited: Bool

    init(request: HTTPRequestHead, response: HTTPResponseHead) {
        let noBody = request.method == "HEAD" || response.status == 204 || response.status == 304
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
        if framing.rechunk { outbound.headers.add(name: "Transfer-Encoding", value: "chunked") }
        let clientKeepAlive = requestHead.keepAlive && framing.clientKeepAlive && head.keepAlive
        if !clientKeepAlive {
            outbound.headers.add(name: "Connection", value: "close")
        } else if requestHead.version == .http10 {
            outbound.headers.add(name: "Connection", value: "keep-alive")
        }
        if context.configuration.addVia { outbound.headers.add(name: "Via", value: "1.1 devproxy") }
        return (outbound, clientKeepAlive)
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
