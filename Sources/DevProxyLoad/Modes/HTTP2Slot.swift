import Glibc
import HTTP2

/// One HTTP/2 connection of a worker and the streams it runs, per mode:
///
/// - keepalive: connect once (CONNECT, TLS with ALPN `h2` only), keep `-m` streams in flight,
///   opening the next as each finishes; reconnect after a GOAWAY (once its streams are done)
///   or an error. Latency: request submitted → end of the response.
/// - stream: open `-m` downloads at once; time to first byte and transfer time each; finish.
/// - stall: open `-m` streams advertising a zero stream window and never grant any, then hold
///   them until the end (`established` counts the streams whose head arrived, held at the end).
///
/// Frames are the sans-IO `HTTP2Session`'s (libnghttp2); this type moves its bytes through the
/// connection and books what its events say. Body bytes are acknowledged as they arrive (not in
/// stall mode), so the server's sending is never held up by the generator.
final class HTTP2Slot {
    private enum State {
        case waitingToConnect(until: UInt64)
        case connecting(LoadConnection)
        case running(LoadConnection, HTTP2Session)
        case finished
    }

    /// One request in flight.
    private struct Exchange {
        var startedAt: UInt64
        var firstByteAt: UInt64 = 0
        var status = 0
        var bytes: UInt64 = 0
        /// `grpc-status`, from the trailers or a trailers-only head.
        var grpcStatus: String?
        var headSeen = false
    }

    private let settings: SlotSettings
    private let plan: HTTP2Plan
    private var state: State = .waitingToConnect(until: 0)
    private var exchanges: [Int32: Exchange] = [:]
    /// Frames taken from the session and not yet written in full.
    private var output: [UInt8] = []
    private var outputOffset = 0
    /// No new streams on this connection: GOAWAY received, or a submission refused.
    private var draining = false
    /// Streams opened on the current connection.
    private var opened = 0
    private(set) var deadline = UInt64.max
    private(set) var pollRequest: pollfd?

    init(settings: SlotSettings) {
        self.settings = settings
        // Only built for runs whose plan has HTTP/2 (Worker checks).
        plan = settings.plan.http2 ?? HTTP2Plan(options: LoadOptions(url: TargetURL(isTLS: true, host: "", port: 443,
                                                                                       pathAndQuery: "/")))
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    var isBusy: Bool {
        if case .connecting = state { return true }
        return false
    }

    var wakeTime: UInt64? {
        if case .waitingToConnect(let until) = state { return until }
        return nil
    }

    func step(buffer: UnsafeMutableRawBufferPointer, stats: inout RunStats) {
        pollRequest = nil
        while true {
            do throws(LoadError) {
                switch state {
                case .finished:
                    return
                case .waitingToConnect(let until):
                    let now = MonotonicClock.now()
                    guard now >= until else { return }
                    deadline = now + settings.timeout
                    state = .connecting(try LoadConnection(plan: settings.plan))
                case .connecting(let connection):
                    if let wait = try connection.advanceSetup() { return waitOn(connection, wait) }
                    guard connection.selectedALPN == "h2" else {
                        let chosen = connection.selectedALPN ?? "no protocol"
                        throw LoadError(kind: .tls, reason: "the server chose \(chosen) in ALPN, not h2")
                    }
                    let session: HTTP2Session
                    do {
                        session = try HTTP2Session(role: .client, limits: plan.limits)
                    } catch {
                        throw LoadError(kind: .io, reason: "HTTP/2 session: \(error)")
                    }
                    exchanges = [:]
                    output = []
                    outputOffset = 0
                    draining = false
                    opened = 0
                    openStreams(connection, session, now: MonotonicClock.now())
                    state = .running(connection, session)
                case .running(let connection, let session):
                    guard let wait = try pump(connection, session, buffer: buffer, stats: &stats) else {
                        // The connection is done: drained after a GOAWAY, or every download finished.
                        state = settings.mode == .stream ? .finished : .waitingToConnect(until: 0)
                        continue
                    }
                    return waitOn(connection, wait)
                }
            } catch {
                fail(error, stats: &stats, now: MonotonicClock.now())
            }
        }
    }

    func checkTimeout(now: UInt64, stats: inout RunStats) {
        switch state {
        case .connecting, .running:
            guard now > deadline else { return }
            let reason = "no progress for \(settings.timeout / 1_000_000) ms"
            fail(LoadError(kind: .timeout, reason: reason), stats: &stats, now: now)
        default:
            return
        }
    }

    func finishRun(stats: inout RunStats) {
        guard case .running = state else { return }
        if settings.mode == .stall {
            stats.established += UInt64(exchanges.values.count { $0.headSeen })
            return
        }
        guard settings.mode == .stream else { return }
        for exchange in exchanges.values {
            stats.bodyBytes += exchange.bytes
            stats.streamNanoseconds += settings.window.end - exchange.startedAt
            if exchange.firstByteAt > 0 { stats.timeToFirstByte.record(exchange.firstByteAt - exchange.startedAt) }
            stats.count(LoadError(kind: .timeout, reason: "stream not finished within --duration"))
        }
    }

    /// Writes the session's frames and feeds it what the socket has, until either would block.
    /// - Returns: what to wait for, or nil when the connection has nothing left to do.
    private func pump(_ connection: LoadConnection, _ session: HTTP2Session, buffer: UnsafeMutableRawBufferPointer,
                      stats: inout RunStats) throws(LoadError) -> LoadConnection.Wait? {
        // Set when a write would block: reading goes on meanwhile (the server's frames may be what
        // frees it), and the wait returned is the write's.
        var blockedWrite: LoadConnection.Wait?
        while true {
            if blockedWrite == nil && outputOffset < output.count {
                let result = output[outputOffset...].withUnsafeBytes { bytes in
                    Result { () throws(LoadError) in try connection.write(bytes) }
                }
                switch try result.get() {
                case .bytes(let n):
                    outputOffset += n
                    continue
                case .wait(let wait): blockedWrite = wait
                case .closed: throw LoadError(kind: .io, reason: "server closed the connection while we wrote")
                }
            }
            if blockedWrite == nil && session.wantsWrite {
                output = session.pendingOutput(maxBytes: 64 * 1024)
                outputOffset = 0
                try handle(session.takeEvents(), connection, session, now: MonotonicClock.now(), stats: &stats)
                if !output.isEmpty { continue }
            }
            if exchanges.isEmpty && (draining || (settings.mode == .stream && opened > 0)) { return nil }
            if session.isFinished { throw LoadError(kind: .io, reason: "HTTP/2 session ended with streams open") }
            switch try connection.read(into: buffer) {
            case .bytes(let n):
                let now = MonotonicClock.now()
                deadline = now + settings.timeout
                let events: [HTTP2Event]
                do {
                    events = try session.receive(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
                } catch {
                    try handle(session.takeEvents(), connection, session, now: now, stats: &stats)
                    throw LoadError(kind: .io, reason: "HTTP/2: \(error.reason)")
                }
                try handle(events, connection, session, now: now, stats: &stats)
            case .wait(let wait):
                return blockedWrite ?? wait
            case .closed:
                if exchanges.isEmpty && draining { return nil }
                let reason = "server closed the connection with \(exchanges.count) stream(s) open"
                throw LoadError(kind: .io, reason: reason)
            }
        }
    }

    /// Books what the session reported.
    private func handle(_ events: [HTTP2Event], _ connection: LoadConnection, _ session: HTTP2Session, now: UInt64,
                        stats: inout RunStats) throws(LoadError) {
        for event in events {
            switch event {
            case .responseHead(let stream, let head, let endStream):
                guard var exchange = exchanges[stream] else { continue }
                exchange.status = head.status ?? 0
                exchange.grpcStatus = head.values("grpc-status").last
                exchange.headSeen = true
                if exchange.firstByteAt == 0 { exchange.firstByteAt = now }
                exchanges[stream] = exchange
                if endStream {
                    complete(stream, connection, session, now: now, stats: &stats)
                } else if settings.mode == .stall && exchanges.values.allSatisfy(\.headSeen) {
                    // Every head is in and no body byte can come: nothing more to wait for.
                    deadline = .max
                }
            case .data(let stream, let bytes, let endStream):
                if settings.mode != .stall && !bytes.isEmpty {
                    do {
                        try session.consume(stream: stream, count: bytes.count)
                    } catch {
                        throw LoadError(kind: .io, reason: "HTTP/2 window update: \(error.reason)")
                    }
                }
                guard var exchange = exchanges[stream] else { continue }
                exchange.bytes += UInt64(bytes.count)
                if exchange.firstByteAt == 0 { exchange.firstByteAt = now }
                exchanges[stream] = exchange
                if endStream { complete(stream, connection, session, now: now, stats: &stats) }
            case .trailers(let stream, let fields):
                guard exchanges[stream] != nil else { continue }
                if let grpc = fields.last(where: { $0.name == Array("grpc-status".utf8) }) {
                    exchanges[stream]?.grpcStatus = grpc.valueString
                }
                complete(stream, connection, session, now: now, stats: &stats)
            case .streamReset(let stream, let code, let byPeer):
                guard exchanges[stream] != nil else { continue }
                let reason = "stream reset by \(byPeer ? "the server" : "us"): \(code)"
                abandon(stream, LoadError(kind: .io, reason: reason), connection, session, now: now, stats: &stats)
            case .streamClosed(let stream, let code):
                guard exchanges[stream] != nil else { continue }
                abandon(stream, LoadError(kind: .io, reason: "stream closed before its end: \(code)"),
                        connection, session, now: now, stats: &stats)
            case .goAway:
                draining = true
            case .protocolError(let stream, let reason) where stream == 0:
                throw LoadError(kind: .io, reason: "HTTP/2 protocol error: \(reason)")
            default:
                continue
            }
        }
    }

    /// Books a finished response and, in keepalive mode, opens the next stream.
    private func complete(_ stream: Int32, _ connection: LoadConnection, _ session: HTTP2Session, now: UInt64,
                          stats: inout RunStats) {
        guard let exchange = exchanges.removeValue(forKey: stream) else { return }
        stats.statuses[exchange.status, default: 0] += 1
        var ok = (200...399).contains(exchange.status)
        if !ok {
            stats.count(LoadError(kind: .http, reason: "status \(exchange.status)"))
        } else if let grpc = exchange.grpcStatus, grpc != "0" {
            ok = false
            stats.count(LoadError(kind: .http, reason: "grpc-status \(grpc)"))
        }
        switch settings.mode {
        case .stream:
            stats.requests += ok ? 1 : 0
            stats.bodyBytes += exchange.bytes
            stats.streamNanoseconds += now - exchange.startedAt
            stats.streamsCompleted += 1
            stats.timeToFirstByte.record(exchange.firstByteAt - exchange.startedAt)
            stats.latency.record(now - exchange.startedAt)
        case .stall:
            break
        default:
            if ok && settings.window.counts(now) {
                stats.requests += 1
                stats.bodyBytes += exchange.bytes
                stats.latency.record(now - exchange.startedAt)
            }
            openStreams(connection, session, now: now)
        }
    }

    /// Drops a stream that ended without a complete response, counting why.
    private func abandon(_ stream: Int32, _ error: LoadError, _ connection: LoadConnection, _ session: HTTP2Session,
                         now: UInt64, stats: inout RunStats) {
        guard exchanges.removeValue(forKey: stream) != nil else { return }
        if now <= settings.window.end { stats.count(error) }
        if settings.mode == .keepalive { openStreams(connection, session, now: now) }
    }

    /// Opens streams up to `-m` on the connection, unless it drains or the run is over.
    private func openStreams(_ connection: LoadConnection, _ session: HTTP2Session, now: UInt64) {
        guard now < settings.window.end else { return }
        let limit = settings.mode == .keepalive ? Int.max : plan.streams
        while !draining && exchanges.count < plan.streams && opened < limit {
            do throws(HTTP2Error) {
                let stream = try session.submitRequest(connection.names.http2Head, endStream: plan.body.isEmpty)
                if !plan.body.isEmpty { try session.submitData(stream: stream, plan.body, endStream: true) }
                exchanges[stream] = Exchange(startedAt: now)
                opened += 1
            } catch {
                // GOAWAY received or stream ids spent: finish what is open, then reconnect.
                draining = true
            }
        }
    }

    /// Records the slot as waiting on its socket; reads are always of interest, so a server's
    /// frames are taken in while a write waits.
    private func waitOn(_ connection: LoadConnection, _ wait: LoadConnection.Wait) {
        var events = POLLIN
        if wait == .writable { events |= POLLOUT }
        if case .connecting = state, wait == .writable { events = POLLOUT }
        pollRequest = pollfd(fd: connection.socket.fd, events: Int16(events), revents: 0)
    }

    /// Counts a failure (if still inside the run), drops the connection and schedules a retry.
    private func fail(_ error: LoadError, stats: inout RunStats, now: UInt64) {
        if now <= settings.window.end { stats.count(error) }
        exchanges = [:]
        pollRequest = nil
        state = settings.mode == .stream ? .finished : .waitingToConnect(until: now + settings.backoff)
    }
}

extension HTTP2Slot: LoadSlot {}
