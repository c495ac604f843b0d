import Foundation
import HTTP1
import HTTPTypes

/// The byte-moving half of an exchange: request head and body up, interim and final response
/// back, bodies streamed in bounded chunks and captured for the log.
struct ExchangeTransfer {
    let context: ExchangeContext
    let head: HTTPRequestHead
    let destination: Destination
    let upstream: UpstreamConnection
    /// Where the request and response are recorded for the flow.
    let recorder: ExchangeRecorder
    /// True once the response ended cleanly with a keep-alive framing and the request body was
    /// fully sent: the upstream connection can serve another request.
    private(set) var upstreamReusable = false
    /// True when a pooled connection turned out closed by the server before any response, and
    /// the request may go again on a fresh one (see `mayRetry`): nothing was recorded or sent
    /// to the client.
    private(set) var staleConnection = false
    /// A retry: the request's (empty) body was already read from the client.
    private let resending: Bool

    init(context: ExchangeContext, head: HTTPRequestHead, destination: Destination, upstream: UpstreamConnection,
         recorder: ExchangeRecorder, resending: Bool = false) {
        self.context = context
        self.head = head
        self.destination = destination
        self.upstream = upstream
        self.recorder = recorder
        self.resending = resending
    }

    /// Whether a request that failed on a reused connection before any response byte goes again on
    /// a fresh one. Servers close idle keep-alive connections whenever they like (RFC 9112 §9.8);
    /// one closed just as the request went out reads as a reset or an empty response. RFC 9110
    /// §9.2.2 lets a proxy resend idempotent requests; only bodiless ones, so nothing is buffered.
    static func mayRetry(_ head: HTTPRequestHead) -> Bool {
        idempotentMethods.contains(head.method) && head.headers["Transfer-Encoding"] == nil
            && (head.headers["Content-Length"] ?? "0") == "0" && !head.headers.expectsContinue
    }

    /// RFC 9110 §9.2.2.
    private static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// The failure is the server having closed a reused connection, and the request may go again.
    /// Not while DevProxy shuts down: then the cut is shutdown's own, and the exchange ends.
    private func isStale(_ error: Error) -> Bool {
        guard upstream.reused, !resending, !context.server.isStopping, Self.mayRetry(head) else { return false }
        switch error {
        case is UpstreamClosed: return true
        case let error as NetworkError: return error.kind == .reset || error.kind == .closed
        default: return false
        }
    }

    /// Sends the request and relays the response; returns whether the client may send more.
    mutating func run(draft: inout FlowDraft) -> Bool {
        // The parser has already refused a request whose last coding is not chunked.
        let requestChunked = head.headers.transferCodings.last == "chunked"
        let upgrading = head.headers["Upgrade"] != nil
        var outbound = head
        outbound.headers.removeHopByHop(relayingUpgrade: upgrading)
        if let authorization = upstream.proxyAuthorization {
            // Plain HTTP through an upstream proxy: absolute-form, with its credentials (RFC 9112 §3.2.2).
            outbound.target = destination.url
            if !authorization.isEmpty {
                outbound.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization)
            }
        } else {
            outbound.target = destination.pathAndQuery
        }
        outbound.version = .http11
        // RFC 9112 §3.2.2: a proxy forwarding absolute-form replaces Host with the URL's authority.
        outbound.headers.replaceOrAdd(name: "Host", value: destination.hostHeader)
        if requestChunked { outbound.headers.add(name: "Transfer-Encoding", value: "chunked") }
        if context.configuration.addVia { outbound.headers.add(name: "Via", value: "1.1 devproxy") }
        let waitsForContinue = head.headers.expectsContinue
        recorder.sendStarted = Date()
        do {
            try upstream.stream.write(HTTP1Serializer.serialize(outbound))
            if !waitsForContinue && !resending {
                try sendRequestBody(chunked: requestChunked)
            }
        } catch {
            // The (empty) body is read off the client here, so the retry finds its next request.
            if isStale(error), (try? sendRequestBody(chunked: false, upstreamWrites: false)) != nil {
                staleConnection = true
                return false
            }
            recorder.finishRequestBody(into: &draft, decoding: false)
            return failBeforeResponse(error, draft: &draft)
        }
        recorder.requestSent = Date()
        recorder.finishTimings(into: &draft, openEnded: false)
        var bodySent = !waitsForContinue
        let response = ResponseRelay(context: context, requestHead: head, upstream: upstream, recorder: recorder)
        do {
            let final = try response.readFinalHead(onContinue: {
                guard !bodySent else { return }
                context.sendToClient(HTTP1Serializer.serialize(HTTPResponseHead(version: .http11, status: 100, reason: "Continue", headers: HTTPHeaders())))
                try sendRequestBody(chunked: requestChunked)
                bodySent = true
            })
            if let authorization = upstream.proxyAuthorization, final.status == 407 {
                // The upstream proxy's own refusal: the client did not ask that proxy anything.
                let why = authorization.isEmpty ? "it wants credentials; give them with --upstream-proxy-auth-file"
                                                : "it refused the credentials in --upstream-proxy-auth-file"
                throw UpstreamProxyFailure(message: "the upstream proxy answered \(head.method) \(destination.url) "
                                           + "with 407 (\(why))")
            }
            recorder.recordResponseHead(HTTPResponse(final))
            recorder.finishRequestBody(into: &draft)
            let outcome = response.relay(final, draft: &draft)
            recorder.finishTimings(into: &draft)
            upstreamReusable = outcome.upstreamReusable && bodySent
            return outcome.clientKeepAlive && bodySent && head.keepAlive
        } catch {
            if isStale(error) {
                staleConnection = true
                return false
            }
            recorder.finishRequestBody(into: &draft)
            recorder.finishTimings(into: &draft, openEnded: false)
            return failBeforeResponse(error, draft: &draft)
        }
    }

    /// Streams the client's request body upstream, re-chunking when it arrived chunked; with
    /// `upstreamWrites: false` only reads it off the client.
    private func sendRequestBody(chunked: Bool, upstreamWrites: Bool = true) throws {
        while let event = try readClient() {
            switch event {
            case .head:
                return
            case .body(let bytes):
                recorder.recordRequestBody(bytes)
                if upstreamWrites { try upstream.stream.write(chunked ? HTTP1Serializer.chunk(bytes) : bytes) }
            case .end(let trailers):
                if chunked && upstreamWrites { try upstream.stream.write(HTTP1Serializer.lastChunk(trailers: trailers)) }
                return
            }
        }
        throw ClientGone(message: "the client closed the connection in the middle of the request body")
    }

    private func readClient() throws -> HTTP1RequestEvent? {
        do {
            return try context.client.next()
        } catch let error as HTTP1ParseError where error.code == .truncated {
            throw ClientGone(message: "the client closed the connection in the middle of the request body")
        } catch let error as HTTP1ParseError {
            throw MalformedRequestBody(error: error)
        } catch {
            throw ClientGone(message: "the client connection failed during the request body: \(error)")
        }
    }

    /// Answers the client when nothing of the response has been sent yet.
    private func failBeforeResponse(_ error: Error, draft: inout FlowDraft) -> Bool {
        let target = "\(destination.host):\(destination.port)"
        if !(error is ClientGone), let message = UpstreamFailure.missingClientCertificate(upstream, target: target) {
            draft.fail(.upstreamClientCertificateRequired, message)
            context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
            return false
        }
        switch error {
        case let error as ClientGone:
            draft.fail(.clientClosed, error.message)
        case let error as MalformedRequestBody:
            // The head went upstream but nothing came back yet: the client still gets an answer.
            let message = "the request body is malformed: \(error.error.reason)"
            draft.fail(.badRequest, message)
            context.sendToClient(ErrorResponse.bytes(status: error.error.status, detail: message))
        case let error as HTTP1ParseError:
            let message = "upstream \(target) sent a malformed response: \(error.reason)"
            draft.fail(.upstreamBadResponse, message)
            context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
        case let error as NetworkError where error.kind == .timedOut:
            let message = "upstream \(target) did not respond within \(Int(context.configuration.upstreamTimeout)) s"
            draft.fail(.upstreamTimeout, message)
            context.sendToClient(ErrorResponse.bytes(status: 504, detail: message))
        case let error as UpstreamProxyFailure:
            draft.fail(.upstreamProxyFailed, error.message)
            context.sendToClient(ErrorResponse.bytes(status: error.timedOut ? 504 : 502, detail: error.message))
        case let error as UpstreamClosed:
            draft.fail(.upstreamClosed, error.message)
            context.sendToClient(ErrorResponse.bytes(status: 502, detail: error.message))
        case let error as TLSError where error.kind == .notTLS:
            let message = "upstream \(target) did not speak TLS"
            draft.fail(.upstreamTLSFailed, message)
            context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
        default:
            let message = "upstream \(target) failed: \(error)"
            draft.fail(.upstreamReset, message)
            context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
        }
        return false
    }
}

/// The client went away or sent garbage mid-exchange.
struct ClientGone: Error {
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
