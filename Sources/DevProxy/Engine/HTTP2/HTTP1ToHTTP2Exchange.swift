import Foundation
import HTTP1
import HTTP2
import HTTPTypes

/// An HTTP/1.1 client's request sent to an origin that speaks only HTTP/2 (it chose h2 when
/// offered it, after offering nothing for `http/1.1`): translated to one h2 stream, and the
/// h2 response translated back (RFC 9113 §8.2 one way, a made-up reason phrase and HTTP/1.1
/// framing the other). mitmproxy answers this pairing with a 502.
///
/// One stream at a time on a connection this exchange owns, driven with blocking reads: the
/// request body goes up as the origin's window allows, then the response comes down, each
/// DATA frame acknowledged once the client has taken it.
struct HTTP1ToHTTP2Exchange {
    let context: ExchangeContext
    let head: HTTPRequestHead
    let destination: Destination
    let upstream: UpstreamConnection
    /// Where the request and response are recorded for the flow.
    let recorder: ExchangeRecorder

    /// Most request body bytes queued for the origin before waiting for its window.
    private static let queueLimit = 256 * 1024

    /// Runs the exchange; returns whether the client connection can carry another request.
    func run(draft: inout FlowDraft) -> Bool {
        defer { upstream.stream.close() }
        let target = "\(destination.host):\(destination.port)"
        if head.headers["Upgrade"] != nil {
            let message = "upstream \(target) speaks only HTTP/2, which cannot carry an HTTP/1.1 Upgrade (WebSocket)"
            draft.fail(.protocolMismatch, message)
            context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
            return false
        }
        let session: HTTP2Session
        let request: HTTP2HeaderBlock
        do {
            session = try HTTP2Session(role: .client)
            request = try HTTP2HeaderBlock(forwarding: HTTPRequest(head, scheme: destination.tls ? "https" : "http",
                                                                   authority: destination.hostHeader,
                                                                   path: destination.pathAndQuery))
        } catch {
            draft.fail(.badRequest, "\(error)")
            context.sendToClient(ErrorResponse.bytes(status: 400, detail: "\(error)"))
            return false
        }
        var driver = Driver(session: session, stream: upstream.stream)
        let hasBody = head.headers.transferCodings.last == "chunked" || Int(head.headers["Content-Length"] ?? "0") ?? 0 > 0
        recorder.sendStarted = Date()
        let stream: Int32
        do {
            stream = try session.submitRequest(request, endStream: !hasBody)
            try driver.flush()
            if hasBody {
                if head.headers.expectsContinue {
                    context.sendToClient(HTTP1Serializer.serialize(HTTPResponseHead(version: .http11, status: 100, reason: "Continue",
                                                                                    headers: HTTPHeaders())))
                }
                try sendBody(stream: stream, driver: &driver)
            }
        } catch {
            recorder.finishRequestBody(into: &draft)
            if !(error is ClientGone),
               let message = UpstreamFailure.missingClientCertificate(upstream, target: target) {
                draft.fail(.upstreamClientCertificateRequired, message)
                context.sendToClient(ErrorResponse.bytes(status: 502, detail: message))
                return false
            }
            let message = error is ClientGone ? "\(error)" : "upstream \(target) (HTTP/2) failed while the request was sent: \(error)"
            draft.fail(error is ClientGone ? .clientClosed : .upstreamReset, message)
            if !(error is ClientGone) { context.sendToClient(ErrorResponse.bytes(status: 502, detail: message)) }
            return false
        }
        recorder.requestSent = Date()
        recorder.finishTimings(into: &draft, openEnded: false)
        recorder.finishRequestBody(into: &draft)
        var relay = HTTP2ResponseToHTTP1(context: context, requestHead: head, stream: stream, target: target,
                                         recorder: recorder)
        relay.clientCertificateFailure = UpstreamFailure.missingClientCertificate(upstream, target: target)
        return relay.run(driver: &driver, draft: &draft)
    }

    /// Streams the client's body to the origin, waiting for window when the queue is full.
    private func sendBody(stream: Int32, driver: inout Driver) throws {
        while true {
            let event: HTTP1RequestEvent?
            do {
                event = try context.client.next()
            } catch {
                throw ClientGone(message: "the client connection failed during the request body: \(error)")
            }
            switch event {
            case .body(let bytes)?:
                recorder.recordRequestBody(bytes)
                try driver.session.submitData(stream: stream, bytes, endStream: false)
                try driver.flush()
                while driver.session.outboundQueuedBytes(stream: stream) > Self.queueLimit {
                    try driver.readOnce()
                    try driver.flush()
                }
            case .end(let trailers)?:
                if trailers.isEmpty {
                    try driver.session.submitData(stream: stream, [], endStream: true)
                } else {
                    let fields = try [HTTP2Field](forwarding: HTTPFields(trailers))
                    try driver.session.submitTrailers(stream: stream, fields)
                }
                try driver.flush()
                return
            case .head?, nil:
                throw ClientGone(message: "the client closed the connection in the middle of the request body")
            }
        }
    }

    /// Blocking I/O for one client-role session: writes what it queues, reads what arrives, and
    /// keeps the events for the response relay.
    struct Driver {
        let session: HTTP2Session
        let stream: ByteStream
        /// Events received and not yet taken.
        var events: [HTTP2Event] = []
        private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

        init(session: HTTP2Session, stream: ByteStream) {
            self.session = session
            self.stream = stream
        }

        mutating func flush() throws {
            events += try session.flush(to: stream)
        }

        /// Reads once (blocking up to the upstream timeout) and feeds the session.
        mutating func readOnce() throws {
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            guard count > 0 else { throw UpstreamClosed(message: "the origin closed the HTTP/2 connection") }
            events += try buffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }

        /// The next event, reading as needed.
        mutating func next() throws -> HTTP2Event {
            while events.isEmpty {
                try flush()
                if events.isEmpty { try readOnce() }
            }
            return events.removeFirst()
        }
    }
}
