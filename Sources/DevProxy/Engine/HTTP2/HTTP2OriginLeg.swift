import Foundation
import HTTP2
import HTTPTypes

/// An exchange's leg to an origin that speaks only HTTP/2 (it chose h2 when offered it, after
/// offering nothing for `http/1.1`): the request goes up as one h2 stream, translated from the
/// neutral head (RFC 9113 §8.2), and the response comes back as neutral events. mitmproxy
/// answers an HTTP/1.1 client's request to such an origin with a 502.
///
/// One stream on a connection this leg owns (never pooled), driven with blocking reads: the
/// request body goes up as the origin's window allows, and each DATA frame is acknowledged once
/// the client has taken it (`consumed`).
struct HTTP2OriginLeg: UpstreamLeg {
    let upstream: UpstreamConnection
    private let destination: Destination
    private var driver: Driver
    private var stream: Int32 = 0
    /// The origin ended the stream with the event just returned: `.end` comes next.
    private var endPending = false
    /// The origin closed the stream before the whole request body went up (a whole response,
    /// then RST_STREAM NO_ERROR: RFC 9113 §8.1): the rest is read off the client and dropped,
    /// and the response is relayed. A reset for a failure still comes out of `next()`.
    private var requestCut = false

    /// Most request body bytes queued for the origin before waiting for its window.
    private static let queueLimit = 256 * 1024

    static var relaysContinue: Bool { false }
    static var answersWhileBodyGoesUp: Bool { false }
    func responseArrived() -> Bool { false }

    /// How long the origin may stay silent (`--upstream-timeout`), for the failure's message.
    private let upstreamTimeout: TimeInterval

    /// - Throws: `HTTP2Error` when no session can be made.
    init(upstream: UpstreamConnection, destination: Destination, upstreamTimeout: TimeInterval) throws {
        self.upstream = upstream
        self.destination = destination
        self.upstreamTimeout = upstreamTimeout
        let session = try HTTP2Session(role: .client)
        driver = Driver(session: session, stream: upstream.stream)
    }

    private var target: String { "\(destination.host):\(destination.port)" }

    mutating func sendHead(_ request: UpstreamRequest) throws {
        let block: HTTP2HeaderBlock
        var neutral = request.request
        MaxForwards.forward(&neutral.fields, method: neutral.method)
        do {
            block = try HTTP2HeaderBlock(forwarding: neutral)
        } catch {
            throw UntranslatableRequest(error: error)
        }
        stream = try driver.session.submitRequest(block, endStream: !request.hasBody)
        try driver.flush()
    }

    mutating func sendBody(_ bytes: [UInt8]) throws {
        guard takesBody() else { return }
        try driver.session.submitData(stream: stream, bytes, endStream: false)
        try driver.flush()
        while driver.session.outboundQueuedBytes(stream: stream) > Self.queueLimit {
            try driver.readOnce()
            try driver.flush()
        }
    }

    /// Whether the origin's stream still takes request body bytes; false (for good) once it closed.
    private mutating func takesBody() -> Bool {
        if !requestCut && !driver.session.canSendBody(on: stream) { requestCut = true }
        return !requestCut
    }

    mutating func endRequest(trailers: HTTPFields) throws {
        guard takesBody() else { return }
        if trailers.isEmpty {
            try driver.session.submitData(stream: stream, [], endStream: true)
        } else {
            try driver.session.submitTrailers(stream: stream, try [HTTP2Field](forwardingTrailers: trailers))
        }
        try driver.flush()
    }

    mutating func next() throws -> UpstreamEvent {
        if endPending {
            endPending = false
            return .end(trailers: HTTPFields())
        }
        while true {
            switch try driver.next() {
            case .informationalHead(stream, let interim):
                // `100 Continue` was DevProxy's to send (`relaysContinue`).
                guard interim.status != 100 else { continue }
                return .interim(UpstreamResponseHead(response: HTTPResponse(interim), httpVersion: "HTTP/2",
                                                     http1: nil))
            case .responseHead(stream, let final, let endStream):
                endPending = endStream
                return .final(UpstreamResponseHead(response: HTTPResponse(final), httpVersion: "HTTP/2", http1: nil))
            case .data(stream, let bytes, let endStream):
                if bytes.isEmpty {
                    if endStream { return .end(trailers: HTTPFields()) }
                    continue
                }
                endPending = endStream
                return .body(bytes)
            case .trailers(stream, let fields):
                return .end(trailers: HTTPFields(fields))
            case .streamReset(stream, let code, true):
                throw HTTP2StreamFailure.reset(code)
            case .streamReset(stream, .protocolError, false):
                // The session reset the stream for the origin's fault, and said nothing else.
                throw HTTP2StreamFailure.protocolError("its response was malformed (RFC 9113 §8.1.1: a body that did "
                                                       + "not match its content-length, or a field HTTP/2 forbids)")
            case .headerListTooLarge(stream, let size):
                // An HTTP/1.1 client waited out the upstream timeout for a head that was dropped.
                throw HTTP2StreamFailure.protocolError("its response head's header list (\(size) bytes) is larger than "
                                                       + "the \(driver.session.limits.maxHeaderListSize) bytes DevProxy accepts")
            case .streamReset(stream, let code, false):
                throw HTTP2StreamFailure.protocolError("DevProxy reset the stream (\(code))")
            case .goAway(let last, let code, _) where last < stream:
                throw HTTP2StreamFailure.goAway(code)
            case .protocolError(let id, let reason) where id == 0 || id == stream:
                throw HTTP2StreamFailure.protocolError(reason)
            default:
                continue
            }
        }
    }

    mutating func consumed(_ count: Int) throws {
        try driver.session.consume(stream: stream, count: count)
    }

    mutating func hasBufferedResponse() -> Bool {
        endPending || !driver.events.isEmpty
    }

    mutating func responsePending() -> Bool {
        hasBufferedResponse() || upstream.stream.inputReady
    }

    mutating func awaitResponse(watching client: Socket, limit: TimeInterval) throws -> Socket.InputOrClose {
        // The window updates for what the client took go first: the origin may be waiting for them.
        try driver.flush()
        if hasBufferedResponse() || upstream.stream.pending > 0 { return .input }
        return upstream.stream.socket.waitForInput(watching: client, limit: limit)
    }

    /// The connection is this exchange's: it closes after it.
    var connectionReusable: Bool { false }

    /// HTTP/2 frames the body: a longer one is a malformed response, reported as a failure.
    var overrun: Int { 0 }

    func failureBeforeResponse(_ error: Error, sending: Bool) -> LegFailure {
        switch error {
        case let error as UntranslatableRequest:
            return LegFailure(kind: .badRequest, message: "\(error.error)", status: 400)
        case let failure as HTTP2StreamFailure:
            switch failure {
            case .reset(let code):
                return LegFailure(kind: .upstreamReset2, message: "upstream \(target) reset the HTTP/2 stream "
                                  + "(\(code))", code: code.description)
            case .goAway(let code):
                return LegFailure(kind: .upstreamReset2, message: "upstream \(target) sent GOAWAY (\(code)) before "
                                  + "processing the request", code: code.description)
            case .protocolError(let reason):
                return LegFailure(kind: .upstreamBadResponse, message: "upstream \(target) broke HTTP/2: \(reason)")
            }
        case let error as NetworkError where error.kind == .timedOut:
            return .noResponse(target, timeout: upstreamTimeout)
        default:
            if let message = UpstreamFailure.missingClientCertificate(upstream, target: target) {
                return LegFailure(kind: .upstreamClientCertificateRequired, message: message)
            }
            if sending {
                return LegFailure(kind: .upstreamReset,
                                  message: "upstream \(target) (HTTP/2) failed while the request was sent: \(error)")
            }
            return LegFailure(kind: .upstreamClosed,
                              message: "upstream \(target) (HTTP/2) failed before the response: \(error)")
        }
    }

    func failureMidBody(_ error: Error, relayed: Int) -> LegFailure {
        switch error as? HTTP2StreamFailure {
        case .reset(let code)?:
            return LegFailure(kind: .upstreamReset2, message: "upstream \(target) reset the HTTP/2 stream (\(code)) "
                              + "after \(relayed) bytes", code: code.description, afterBytes: relayed)
        case .goAway?:
            return LegFailure(kind: .upstreamClosed, message: "upstream \(target) sent GOAWAY mid-body after "
                              + "\(relayed) bytes")
        case .protocolError(let reason)?:
            return LegFailure(kind: .upstreamBadResponse, message: "upstream \(target) broke HTTP/2 mid-body after "
                              + "\(relayed) bytes: \(reason)", code: HTTP2ErrorCode.protocolError.description,
                              afterBytes: relayed)
        default:
            if let error = error as? NetworkError, error.kind == .timedOut {
                return LegFailure(kind: .upstreamTimeout, message: LegFailure.silenceMidBody(target, timeout: upstreamTimeout)
                                  + ", after \(relayed) bytes")
            }
            return LegFailure(kind: .upstreamClosed,
                              message: "upstream \(target) (HTTP/2) failed mid-body after \(relayed) bytes: \(error)")
        }
    }

    /// Blocking I/O for one client-role session: writes what it queues, reads what arrives, and
    /// keeps the events until they are taken.
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
            events += try buffer.withUnsafeBytes {
                try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count]))
            }
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

/// How an HTTP/2 origin ended one stream before its response did.
enum HTTP2StreamFailure: Error, CustomStringConvertible {
    /// RST_STREAM from the origin, with its code.
    case reset(HTTP2ErrorCode)
    /// GOAWAY that left the stream unprocessed.
    case goAway(HTTP2ErrorCode)
    /// The origin broke the protocol on the stream or the connection (nghttp2's words).
    case protocolError(String)

    var description: String {
        switch self {
        case .reset(let code): "the origin reset the HTTP/2 stream (\(code))"
        case .goAway(let code): "the origin sent GOAWAY (\(code))"
        case .protocolError(let reason): "the origin broke HTTP/2: \(reason)"
        }
    }
}

/// A request that cannot go to an HTTP/2 origin as it is (a field value with CR, LF or NUL).
struct UntranslatableRequest: Error {
    let error: Error
}
