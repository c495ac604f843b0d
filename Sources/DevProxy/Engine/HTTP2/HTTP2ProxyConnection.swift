import GRPCWire
import Foundation
import HTTP2
import HTTPTypes

/// Serves one client connection that chose `h2` in ALPN, on the client connection's own thread:
/// one `poll()` loop drives the client's session and the origin's, relaying each stream as it
/// comes (headers, data, trailers, resets), each stream its own flow.
///
/// Flow control is end to end: neither session acknowledges received DATA by itself; bytes from
/// one side are consumed (their window reopened) only once the other side's session has handed
/// them to the wire (`dataSent`). A slow reader therefore slows its own stream's sender and
/// nothing else, and what the proxy holds is bounded by the windows it advertises.
final class HTTP2ProxyConnection {
    let context: ExchangeContext
    /// The client's stream: TLS, or a plain socket for h2 without TLS inside a CONNECT tunnel.
    let client: ByteStream
    /// h2 without TLS (prior knowledge, as a plaintext gRPC channel sends): the origin is spoken
    /// to the same way.
    let cleartext: Bool
    /// Bytes the client sent before the loop started (after CONNECT, before our 200).
    private let initialBytes: [UInt8]
    let session: HTTP2Session
    let host: String
    let port: Int
    /// The address to connect to when it is not `host`'s (see `UpstreamPool.connection`).
    let dial: String?
    /// On a `reverse:URL` listener, the origin's authority (`host`, `:port` unless the scheme's
    /// default): every stream's `:authority` goes out as this, as `Host` does over HTTP/1.1, and
    /// the flow's URL names the origin. Nil elsewhere: `:authority` is relayed as the client sent it.
    let originAuthority: String?
    let limits: HTTP2Limits
    /// Shared by the flows of every stream of this connection.
    let connectionID: String
    /// The origin connection new streams go to; nil until one is needed or after it failed.
    var leg: HTTP2UpstreamLeg?
    /// Legs the origin sent GOAWAY on, kept until their streams end.
    var retiring: [HTTP2UpstreamLeg] = []
    /// Why the origin could not be reached over h2 (it failed, or chose HTTP/1.1).
    var upstreamFailure: (any Error)?
    /// The client's GOAWAY when it carried an error (`PROTOCOL_ERROR "bad frame from proxy"`):
    /// the streams it ends say why, which no flow did.
    var clientGoAway: String?
    /// When the last dial of the origin failed (`upstreamFailure` says why).
    var upstreamFailedAt: Date?
    /// Seconds a failed dial answers new streams before the origin is tried again.
    static let failureReuse: TimeInterval = 3
    var upstreamSpeaksHTTP1 = false
    var streams: [Int32: HTTP2StreamExchange] = [:] {
        // Whether anything flows on the connection, for Offline switched on meanwhile (`ClientConnection.isFlowing`).
        didSet { context.connection.http2Streams.store(streams.count, ordering: .relaxed) }
    }
    /// GOAWAY sent to the client (shutdown, or the client's own GOAWAY): serve what is open, then close.
    var goingAway = false
    /// The highest client stream refused before it had an exchange (a malformed request head):
    /// its flow is written once, however many reasons the session gives (stream ids only grow).
    var lastRefusedStream: Int32 = 0
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL went to the client, because the origin sent it (RFC 8441:
    /// WebSockets over HTTP/2 where the origin takes them, as the app would see without us).
    var offersExtendedConnect = false
    /// The client closed the connection, or reading from or writing to it failed.
    var clientHungUp = false
    /// The client sent bytes after the handshake (its connection preface, at least): it went on
    /// with the certificate, which a post-handshake pinner (OkHttp) does not.
    var clientSpoke = false
    /// A connection-level protocol error was recorded as a flow.
    var recordedConnectionError = false
    /// Wakes the loop when a stream's HTTP/1.1 thread has something to report.
    let wake: WakePipe
    /// Decisions on streams held at a breakpoint, posted from the web UI's thread (`Intercepts`).
    let breakpointInbox: BreakpointInbox
    /// Streams gathering their body at a breakpoint, not yet held (`releaseStalledBreakpoints`).
    var gathering: Set<Int32> = []
    /// Streams held on the board, waiting for a decision (`takeBreakpointDecisions`): a request
    /// or a response.
    var heldAtBreakpoint: Set<Int32> = []
    /// Streams whose response a breakpoint gathers, not yet held (`releaseStalledResponses`).
    var gatheringResponses: Set<Int32> = []
    var server: ProxyServer { context.server }

    private static let counter = Counter()

    init(context: ExchangeContext, client: ByteStream, host: String, port: Int, dial: String? = nil,
         upstream: Result<UpstreamConnection, any Error>?,
         cleartext: Bool = false, initialBytes: [UInt8] = [], limits: HTTP2Limits = HTTP2Limits()) throws {
        self.context = context
        self.client = client
        self.cleartext = cleartext
        self.initialBytes = initialBytes
        self.host = host
        self.port = port
        self.dial = dial
        self.originAuthority = context.connection.listenerMode.kind == .reverse
            ? Destination(tls: !cleartext, host: host, port: port, pathAndQuery: "").hostHeader : nil
        self.limits = limits
        self.session = try HTTP2Session(role: .server, limits: limits)
        self.wake = try WakePipe()
        self.breakpointInbox = BreakpointInbox(wake: wake)
        self.connectionID = "\(context.clientAddress)#\(Self.counter.next())"
        switch upstream {
        case .success(let connection) where connection.isHTTP2:
            leg = try HTTP2UpstreamLeg(upstream: connection, limits: limits)
        case .success(let connection):
            upstreamSpeaksHTTP1 = true
            context.connection.pool.release(connection)
        case .failure(let error):
            upstreamFailure = error
            upstreamFailedAt = Date()
        case nil:
            break
        }
    }

    /// Serves the connection until the client closes it, it fails, or shutdown has drained it.
    func run() {
        defer {
            for leg in [leg].compactMap({ $0 }) + retiring { leg.upstream.stream.close() }
            for exchange in streams.values {
                if exchange.atBreakpoint { leaveBreakpoint(exchange) }
                exchange.http1Leg?.cancel()
                // A stream whose whole response went out is complete even if the client hung up
                // before its session noticed the close (a client that closes at once, as curl does).
                // So is a WebSocket whose close handshake went both ways.
                let complete = exchange.requestEnded && exchange.responseDelivered && exchange.pendingReset == nil
                    && session.outboundQueuedBytes(stream: exchange.clientStream) == 0
                    || exchange.webSocketClosed
                if !complete {
                    exchange.draft.fail(.clientClosed, "the client connection closed while the stream was open"
                                        + (clientGoAway.map { " (the client's GOAWAY: \($0))" } ?? ""))
                    // Shutdown's cut reads as the client closing too; ProxyServer names it, and the
                    // call's status is the lost connection's, not one the client chose.
                    if server.isStopping {
                        exchange.recorder.recordShutdownCut()
                    } else {
                        exchange.recorder.recordClientClosed()
                    }
                }
                emit(exchange)
            }
            streams = [:]
        }
        client.socket.setNonBlocking()
        leg?.upstream.stream.socket.setNonBlocking()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let handshakeEnded = Date()
        defer { recordCloseWithoutStream(since: handshakeEnded) }
        var lastActivity = Date()
        var lastSilenceCheck = lastActivity
        do {
            // The origin's SETTINGS, sent as its handshake ended, are usually here already: read
            // first, so one that enables WebSockets over HTTP/2 (RFC 8441) is answered in the
            // same write as our own SETTINGS, before the client decides how to open its sockets.
            if let leg { readUpstream(leg, &buffer) }
            if !initialBytes.isEmpty { handleClient(try session.receive(initialBytes)) }
            try flushAll()
            while true {
                if server.isStopping && !goingAway {
                    // RFC 9113 §6.8: a graceful GOAWAY lets open streams finish within the grace.
                    try? session.goAway(code: .noError)
                    goingAway = true
                    try flushAll()
                }
                if goingAway && streams.isEmpty { break }
                if !session.wantsRead && !session.wantsWrite { break }
                let legs = ([leg].compactMap { $0 } + retiring).filter { !$0.closed }
                let ready = waitForInput(legs: legs)
                // Responses held for their latency (`--throttle` over HTTP/2) that came due go now.
                if let due = context.connection.link?.nextDue, due <= ThrottledLink.now() { try client.flush() }
                let now = Date()
                if now.timeIntervalSince(lastSilenceCheck) >= 0.25 && !streams.isEmpty {
                    lastSilenceCheck = now
                    expireSilentUpstreams(now: now)
                    for exchange in streams.values where exchange.heldFailure != nil { releaseHeldFailure(exchange, now: now) }
                    if !gathering.isEmpty { releaseStalledBreakpoints(now: now) }
                    if !gatheringResponses.isEmpty { releaseStalledResponses(now: now) }
                    reportProgress(now: now)
                    try flushAll()
                }
                if ready.isEmpty {
                    if streams.isEmpty && Date().timeIntervalSince(lastActivity) > context.configuration.idleTimeout {
                        try? session.goAway(code: .noError)
                        try flushAll()
                        break
                    }
                    continue
                }
                lastActivity = Date()
                if ready.contains(-1) {
                    guard try readClient(&buffer) else { break }
                }
                if ready.contains(-2) {
                    wake.drain()
                    pumpHTTP1Legs()
                    if !heldAtBreakpoint.isEmpty { takeBreakpointDecisions() }
                }
                for (index, upstreamLeg) in legs.enumerated() where ready.contains(index) {
                    readUpstream(upstreamLeg, &buffer)
                }
                try flushAll()
                retiring.removeAll { $0.closed || ($0.clientStreams.isEmpty && $0.goneAway) }
            }
        } catch {
            // The client connection failed (write error, TLS error): streams end with it. A
            // client that closed at once fails our first write (the SETTINGS) rather than a read.
            clientHungUp = true
        }
    }

    /// Waits for input on the client (-1 in the result), a stream thread's report (-2) or a leg
    /// (its index), up to 250 ms so
    /// shutdown and the idle timeout are noticed. TLS may hold decrypted bytes poll cannot see.
    private func waitForInput(legs: [HTTP2UpstreamLeg]) -> Set<Int> {
        var ready = Set<Int>()
        if client.pending > 0 { ready.insert(-1) }
        for (index, leg) in legs.enumerated() where leg.upstream.stream.pending > 0 { ready.insert(index) }
        if !ready.isEmpty { return ready }
        var fds = [pollfd(fd: client.socket.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0)]
        fds += legs.map { pollfd(fd: $0.upstream.stream.socket.fd, events: Int16(POLLIN), revents: 0) }
        let held = context.connection.link?.nextDue.map { Int32(max(0, min(250, ($0 - ThrottledLink.now()) * 1000)).rounded(.up)) }
        guard poll(&fds, nfds_t(fds.count), held ?? 250) > 0 else { return [] }
        if fds[0].revents != 0 { ready.insert(-1) }
        if fds[1].revents != 0 { ready.insert(-2) }
        for index in legs.indices where fds[index + 2].revents != 0 { ready.insert(index) }
        return ready
    }

    /// A client that hung up before opening any stream gets the flow the HTTP/1.1 path writes
    /// for one that closed before its first request: `client_closed_after_handshake` (OkHttp
    /// checks pins after an h2 handshake too, and such a close left no flow at all), or
    /// `client_closed_unused` when it sat silent first. Nothing when the proxy ended the
    /// connection (shutdown, idle timeout) or a protocol error was already recorded.
    private func recordCloseWithoutStream(since handshakeEnded: Date) {
        guard !cleartext, clientHungUp, !recordedConnectionError, session.lastProcessedStreamID == 0 else { return }
        var draft = context.draft(host: host, port: port, sinceAccepted: true)
        draft.flow.h2 = Flow.HTTP2Info(streamID: 0, connectionID: connectionID, upstreamStreamID: nil)
        if let unused = ConnectHandler.unusedFor(since: handshakeEnded) {
            draft.fail(.clientClosedUnused, unused)
        } else if clientSpoke {
            // OkHttp's CertificatePinner throws before its connection writes the preface; a client
            // that sent it accepted the chain (a gRPC channel's readiness check, a warm-up).
            draft.fail(.clientClosedUnused, "the client sent its HTTP/2 connection preface and closed without opening a "
                       + "stream: it went on past the certificate, so this is no pinning evidence")
        } else {
            draft.fail(.clientClosedAfterHandshake, "the client completed the TLS handshake (HTTP/2) and closed without "
                       + "opening a stream: it likely pins a key this chain does not contain")
        }
        server.emit(draft.finished())
    }

    /// Reads what the client sent and handles it; false when the client closed or broke the
    /// protocol beyond recovery.
    private func readClient(_ buffer: inout [UInt8]) throws -> Bool {
        while true {
            let count = try buffer.withUnsafeMutableBytes { try client.readAvailable(into: $0) }
            guard let count else { return true }
            guard count > 0 else {
                clientHungUp = true
                return false
            }
            clientSpoke = true
            do {
                let events = try buffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                handleClient(events)
            } catch {
                recordConnectionError("the client broke the HTTP/2 protocol: \(error)")
                try? flushAll()
                return false
            }
            if client.pending == 0 { return true }
        }
    }

    /// Reads what an origin sent and handles it; a failed origin ends its streams.
    private func readUpstream(_ leg: HTTP2UpstreamLeg, _ buffer: inout [UInt8]) {
        do {
            while true {
                let count = try buffer.withUnsafeMutableBytes { try leg.upstream.stream.readAvailable(into: $0) }
                guard let count else { return }
                guard count > 0 else {
                    closeLeg(leg, reason: "the origin closed the HTTP/2 connection"
                             + (leg.goAwayError.map { " after \($0)" } ?? ""), byOrigin: true)
                    return
                }
                if leg.received == 0, count >= 9, buffer[3] != 0x04 || buffer[5...8].contains(where: { $0 != 0 }) {
                    // An h2 server's first frame is SETTINGS on stream 0. Anything else (`HTTP/1.1
                    // 400`, Python's HTML error page to the preface) is an origin that does not speak
                    // h2 without TLS: said as such, not as the origin breaking HTTP/2 with the GOAWAY
                    // DevProxy's own session sent.
                    leg.answeredOtherThanHTTP2 = true
                    closeLeg(leg, reason: "the origin did not answer in HTTP/2", byOrigin: true)
                    return
                }
                leg.received += count
                let events = try buffer.withUnsafeBytes { try leg.session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                handleUpstream(events, on: leg)
                if leg.upstream.stream.pending == 0 { return }
            }
        } catch {
            let reset = (error as? NetworkError).map { $0.kind == .reset || $0.kind == .closed } ?? false
            closeLeg(leg, reason: "the HTTP/2 connection to the origin failed: \(error)", byOrigin: reset)
        }
    }

    /// Sends what both sides' sessions have queued, handling the events that sending causes
    /// (data handed to the wire, streams closed), until nothing is left.
    func flushAll() throws {
        var progress = true
        while progress {
            progress = false
            for upstreamLeg in [leg].compactMap({ $0 }) + retiring where !upstreamLeg.closed {
                do {
                    let events = try upstreamLeg.flush()
                    if !events.isEmpty { progress = true }
                    handleUpstream(events, on: upstreamLeg)
                } catch {
                    closeLeg(upstreamLeg, reason: "writing to the origin failed: \(error)")
                    progress = true
                }
            }
            let events = try session.flush(to: client)
            if !events.isEmpty {
                handleClient(events)
                progress = true
            }
        }
    }

    /// Ends a failed or closed origin connection: its open streams are reset towards the client
    /// (a response already started cannot become a 502) or answered 502 when nothing was sent.
    /// - Parameter byOrigin: the origin closed (or reset) the connection. On one that had served
    ///   streams before, that is an idle connection closed as a request went out (hypercorn after
    ///   its keep-alive timeout): a bodiless idempotent request with no answer goes again on a new
    ///   one, as an HTTP/1.1 request on a stale pooled connection does (`StaleConnection`).
    func closeLeg(_ upstreamLeg: HTTP2UpstreamLeg, reason: String, byOrigin: Bool = false) {
        guard !upstreamLeg.closed else { return }
        upstreamLeg.closed = true
        upstreamLeg.upstream.stream.close()
        if leg === upstreamLeg { leg = nil }
        for (_, clientStream) in upstreamLeg.clientStreams {
            guard let exchange = streams[clientStream] else { continue }
            exchange.leg = nil
            if exchange.responseHead == nil {
                if byOrigin, upstreamLeg.streamsClosed > 0, exchange.bodiless,
                   StaleConnection.isIdempotent(exchange.draft.flow.request?.method ?? ""), resend(exchange) {
                    continue
                }
                if upstreamLeg.answeredOtherThanHTTP2 {
                    answer(exchange, status: 502, kind: .protocolMismatch, message: "the origin \(host):\(port) did not answer "
                           + "in HTTP/2: it does not speak HTTP/2 without TLS (h2c by prior knowledge, as this client spoke "
                           + "it); reach it over HTTP/1.1")
                    continue
                }
                if let message = UpstreamFailure.missingClientCertificate(upstreamLeg.upstream,
                                                                           target: "\(host):\(port)") {
                    answer(exchange, status: 502, kind: .upstreamClientCertificateRequired, message: message)
                    continue
                }
                if upstreamLeg.streamsClosed == 0, upstreamLeg.received == 0,
                   let message = UpstreamFailure.refusedClientCertificate(upstreamLeg.upstream, target: "\(host):\(port)",
                                                                          cause: reason) {
                    answer(exchange, status: 502, kind: .upstreamClientCertificateRequired, message: message)
                    continue
                }
                answer(exchange, status: 502, kind: .upstreamClosed, message: "\(reason) before the response")
            } else if exchange.webSocketClosed {
                // The origin hung up after a WebSocket's close handshake: the stream ends cleanly.
                try? session.submitData(stream: clientStream, [], endStream: true)
            } else if !exchange.responseEnded {
                responseFailedAtBreakpoint(exchange)
                exchange.draft.fail(.upstreamClosed, "\(reason) after \(exchange.responseBytes) response bytes")
                exchange.draft.flow.error?.by = "server"
                exchange.draft.flow.error?.afterBytes = exchange.responseBytes
                exchange.draft.flow.error?.code = upstreamLeg.goAwayFault?.code.description
                if exchange.isGRPC, session.canSendBody(on: clientStream) {
                    // A gRPC call ends with UNAVAILABLE, as it does without a proxy when the
                    // origin's connection is lost (a reset's INTERNAL_ERROR reached the app as
                    // INTERNAL): trailers after what was relayed, which name DevProxy as their author.
                    let fields = [HTTP2Field("grpc-status", "14"),
                                  HTTP2Field("grpc-message", GRPCStatus.encodeMessage("\(reason) (DevProxy)")),
                                  HTTP2Field("x-devproxy-error", FlowErrorKind.upstreamClosed.rawValue)]
                    if (try? session.submitTrailers(stream: clientStream, fields)) != nil {
                        // Recorded as the client got them: the flow had no grpc.status.
                        exchange.recorder.recordResponseTrailers(HTTPFields(fields))
                        continue
                    }
                }
                // After what was already queued for the client (a reset goes out ahead of queued
                // HEADERS and DATA, and the client got none of what the flow says was relayed).
                resetClientAfterQueuedFrames(exchange, code: .internalError)
            }
        }
        upstreamLeg.clientStreams = [:]
    }

    /// Records a failure of the whole client connection as a flow of its own.
    func recordConnectionError(_ message: String) {
        // One flow per connection error: the thrown error and the GOAWAY event the session queued
        // for the same fault each wrote one.
        guard !recordedConnectionError else { return }
        recordedConnectionError = true
        var draft = context.draft(host: host, port: port)
        draft.fail(.http2ProtocolError, message)
        draft.flow.h2 = Flow.HTTP2Info(streamID: 0, connectionID: connectionID, upstreamStreamID: nil)
        server.emit(draft.finished())
    }

    /// Hands a finished stream's flow to the sinks.
    func emit(_ exchange: HTTP2StreamExchange) {
        server.emit(exchange.finish(redact: context.configuration.redactHeaders))
    }
}
