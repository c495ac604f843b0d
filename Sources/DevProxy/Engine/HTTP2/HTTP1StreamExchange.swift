import Foundation
import HTTP1
import HTTPTypes

/// The thread half of an `HTTP1StreamLeg`: sends one HTTP/2 client's request to an HTTP/1.1
/// origin and posts the response back, both bodies streamed.
struct HTTP1StreamExchange {
    let server: ProxyServer
    let connection: ClientConnection
    let leg: HTTP1StreamLeg
    let host: String
    let port: Int
    /// The address to connect to when it is not `host`'s.
    let dial: String?
    /// The translated request: origin-form target, `Host` from `:authority`, cookies joined.
    let head: HTTPRequestHead
    /// Whether the request carries a body (no END_STREAM on its HEADERS).
    let hasBody: Bool
    /// TLS to the origin: always, but for a `--map-remote` to an `http://` URL.
    var tls = true

    /// Starts the exchange on a thread of its own.
    func start() {
        let thread = Thread { self.run() }
        thread.stackSize = 512 * 1024
        thread.start()
    }

    private func run() {
        defer { server.releaseStreamLeg() }
        let target = HostPort(host: host, port: port).description
        guard var upstream = connect(target: target, reuse: true) else { return }
        var outcome = connection.using(upstream.stream.socket) { exchange(on: upstream, target: target, resending: false) }
        if outcome == .stale {
            // The server had closed the pooled connection as the request came: once more on a
            // fresh one, as an HTTP/1.1 client's request would be (`StaleConnection`).
            upstream.stream.close()
            leg.post(.retrying)
            guard let fresh = connect(target: target, reuse: false) else { return }
            upstream = fresh
            outcome = connection.using(upstream.stream.socket) { exchange(on: upstream, target: target, resending: true) }
        }
        if outcome != .released { upstream.stream.close() }
    }

    /// A connection to the origin, pooled when `reuse` allows, reported to the loop; nil when it
    /// failed (reported too) or the client has gone.
    private func connect(target: String, reuse: Bool) -> UpstreamConnection? {
        let upstream: UpstreamConnection
        do {
            upstream = try connection.pool.connection(host: host, port: port, tls: tls, reuse: reuse, dial: dial)
        } catch {
            let (kind, status, message) = UpstreamFailure.describe(error, target: target)
            leg.post(.failed(kind, status: status, message: message, responseStarted: false))
            return nil
        }
        guard leg.attach(upstream.stream.socket) else {
            upstream.stream.close()
            return nil
        }
        _ = upstream.tlsInfo   // worked out here, on the thread that owns the connection, before the loop reads it
        leg.post(.connected(upstream))
        return upstream
    }

    /// How an exchange left its upstream connection.
    private enum Outcome {
        /// It can serve another request and went back to the pool already (another exchange may
        /// be using it now).
        case released
        /// It is closed or in an unknown state.
        case spent
        /// A pooled connection the server had closed: nothing came back, nothing was reported,
        /// and the request may go again on a fresh one.
        case stale
    }

    /// Whether a failure before any response byte is the server having closed a reused
    /// connection, and the request may go again: bodiless and idempotent (RFC 9110 §9.2.2), not
    /// already a retry, not while DevProxy shuts down.
    private func isStale(_ error: any Error, on upstream: UpstreamConnection, resending: Bool) -> Bool {
        // The head may say nothing of a body an h2 request carries in DATA frames.
        !hasBody && StaleConnection.allowsResend(after: error, of: head, reused: upstream.reused, resending: resending,
                                                 stopping: server.isStopping)
    }

    /// Reads what the origin sent while the request body went up (an answer before the body is
    /// in: a 413, a 401): interim heads are posted (a `100` says nothing now) and the final head
    /// returned; nil when only interim ones had come.
    private func earlyAnswer(from upstream: UpstreamConnection) throws -> HTTPResponseHead? {
        repeat {
            guard let event = try upstream.reader.next() else {
                throw UpstreamClosed(message: "upstream \(host):\(port) closed the connection without sending a response")
            }
            guard case .head(let response) = event else { continue }
            if !response.isInterim { return response }
            if response.status != 100 { leg.post(.interim(HTTPResponse(response))) }
        } while try upstream.reader.hasArrivedInput()
        return nil
    }

    private func exchange(on upstream: UpstreamConnection, target: String, resending: Bool) -> Outcome {
        var outbound = head
        let chunked = hasBody && head.headers["Content-Length"] == nil
        if chunked { outbound.headers.add(name: "Transfer-Encoding", value: "chunked") }
        var responseStarted = false
        // A write that failed once the head had gone: the origin may have answered before the
        // whole body (a 413, a 401) and closed, and its answer is what the client gets.
        var cutShort: (any Error)?
        // A final head that came while the body went up (`earlyAnswer`), and whether it goes to the
        // client before the rest of the body (which then stops).
        var early: HTTPResponseHead?
        var answeredEarly = false
        // Request body bytes written to the origin, for `request.body_cut`.
        var sent = 0
        do {
            try upstream.stream.write(HTTP1Serializer.serialize(outbound))
            upstream.reader.parser.expectResponse(toMethod: head.method)
            if hasBody {
                do {
                    body: while true {
                        // Until a final head came, the origin is watched while the client pauses too.
                        let part = early == nil ? try leg.nextRequestPart(watching: upstream.stream.socket)
                            : try leg.nextRequestChunk().map { .chunk($0) } ?? .end
                        if case .end = part { break }
                        if early == nil, try upstream.reader.hasArrivedInput() {
                            early = try earlyAnswer(from: upstream)
                            if let early, early.status >= 300 || !early.keepAlive {
                                // RFC 9112 §9.6: the answer goes to the client now, and the rest of
                                // the body is not sent; the client's stream is told to stop after it.
                                answeredEarly = true
                                break
                            }
                        }
                        guard case .chunk(let chunk) = part else { continue body }
                        if !chunk.isEmpty { try upstream.stream.write(chunked ? HTTP1Serializer.chunk(chunk) : chunk) }
                        sent += chunk.count
                        leg.post(.consumed(chunk.count))
                    }
                    if answeredEarly { cutShort = UpstreamClosed(message: "the origin answered before the request body was in") }
                    if chunked && !answeredEarly {
                        let trailers = (try? HTTPHeaders(forwarding: leg.trailers)) ?? HTTPHeaders()
                        try upstream.stream.write(HTTP1Serializer.lastChunk(trailers: trailers))
                    }
                } catch let error as NetworkError where error.kind == .reset || error.kind == .closed {
                    cutShort = error
                }
            }
            var final: HTTPResponseHead? = early
            while final == nil {
                let event: HTTP1ResponseEvent?
                do {
                    event = try upstream.reader.next()
                } catch where cutShort != nil {
                    // Nothing to read either: the write's failure is the reason.
                    throw cutShort!
                }
                guard let event else {
                    if let cutShort { throw cutShort }
                    throw UpstreamClosed(message: "upstream \(target) closed the connection without sending a response"
                                         + (upstream.reused ? " (a reused keep-alive connection)" : ""))
                }
                guard case .head(let response) = event else { continue }
                if response.isInterim {
                    if response.status != 100 { leg.post(.interim(HTTPResponse(response))) }
                } else {
                    final = response
                }
            }
            guard let final else { return .spent }
            if final.status == 101 { throw UnrequestedSwitch(target: target, http2Client: true) }
            if cutShort != nil {
                // As an HTTP/1.1 client's flow says it (`ExchangeTransfer.finishEarlyAnswer`).
                let reason = !answeredEarly ? EarlyAnswerCut.closed(final.status)
                    : final.keepAlive ? EarlyAnswerCut.stopped(final.status) : EarlyAnswerCut.closing(final.status)
                leg.post(.bodyCut(Flow.BodyCut(sent: sent, reason: reason)))
            }
            leg.post(.head(HTTPResponse(final), httpVersion: final.version.description))
            responseStarted = true
            while true {
                let event: HTTP1ResponseEvent?
                do {
                    event = try upstream.reader.next()
                } catch let error as NetworkError where error.kind == .timedOut {
                    // A body that went quiet (an event stream, a watch) is waited for as long as
                    // the client waits: its reset cancels this leg, which cuts the read.
                    try leg.throwIfCancelled()
                    continue
                }
                switch event {
                case .body(let bytes)?:
                    leg.post(.body(bytes))
                    try leg.waitForRoom()
                case .end(let trailers)?:
                    let overrun = upstream.reader.parser.takeRemainingBytes().count
                    if overrun > 0 { leg.post(.overran(overrun, contentLength: final.headers["Content-Length"])) }
                    let reusable = cutShort == nil && overrun == 0
                        && final.keepAlive && ClientFraming(request: head, response: final).upstreamDelimited
                    // A reusable connection goes back to the pool before the client hears the end:
                    // its next request, sent the moment it does, finds the connection there
                    // instead of racing this thread for it (and opening another).
                    if reusable && leg.detach() {
                        connection.pool.release(upstream)
                        leg.post(.end(trailers: HTTPFields(trailers)))
                        return .released
                    }
                    leg.post(.end(trailers: HTTPFields(trailers)))
                    return .spent
                case .head?, nil:
                    throw UpstreamClosed(message: "upstream \(target) closed the connection mid-response")
                }
            }
        } catch is ClientGone {
            return .spent
        } catch where !responseStarted && isStale(error, on: upstream, resending: resending) {
            return .stale
        } catch where !responseStarted && upstream.tls?.clientCertificateMissing == true {
            let message = UpstreamFailure.missingClientCertificate(upstream, target: target) ?? "\(error)"
            leg.post(.failed(.upstreamClientCertificateRequired, status: 502, message: message, responseStarted: false))
        } catch let error as UpstreamClosed {
            leg.post(.failed(.upstreamClosed, status: 502, message: error.message, responseStarted: responseStarted))
        } catch let error as UnrequestedSwitch {
            leg.post(.failed(.upstreamBadResponse, status: 502, message: error.message, responseStarted: false))
        } catch let error as HTTP1ParseError where responseStarted && error.code == .truncated {
            // A body cut short by the origin's close, in the kind and words of an HTTP/1.1
            // client's flow (`HTTP1OriginLeg.failureMidBody`).
            leg.post(.failed(.upstreamClosed, status: 502, message: "upstream \(target) sent a malformed body: \(error.reason)",
                             responseStarted: true))
        } catch let error as HTTP1ParseError {
            leg.post(.failed(.upstreamBadResponse, status: 502, message: "upstream \(target) sent a malformed response: \(error.reason)",
                             responseStarted: responseStarted))
        } catch let error as NetworkError where error.kind == .timedOut {
            leg.post(.failed(.upstreamTimeout, status: 504,
                             message: LegFailure.noResponse(target, timeout: server.configuration.upstreamTimeout).message,
                             responseStarted: responseStarted))
        } catch {
            leg.post(.failed(.upstreamReset, status: 502, message: "upstream \(target) failed: \(error)", responseStarted: responseStarted))
        }
        return .spent
    }
}
