import Glibc

/// One of a worker's C/T connection slots and the exchanges it runs, per mode:
///
/// - keepalive: connect once, then GET after GET on the same connection; reconnect only
///   when the server closes or on error. Latency: request written → response read.
/// - newconn: connect (+CONNECT) + handshake + one GET, close, repeat. Latency: connect
///   started → response read.
/// - stream: one GET; records time to first byte and the body's transfer time, then finishes.
/// - idle: one GET to prove the path works, then holds the connection open until the end.
final class Slot {
    private enum State {
        case waitingToConnect(until: UInt64)
        case connecting(LoadConnection)
        case sending(LoadConnection, offset: Int)
        case receiving(LoadConnection)
        case holding(LoadConnection)
        case finished
    }

    private let settings: SlotSettings
    private var state: State = .waitingToConnect(until: 0)
    private var parser = ResponseParser()
    private var connectStartedAt: UInt64 = 0
    private var requestStartedAt: UInt64 = 0
    private var firstByteAt: UInt64 = 0
    /// Deadline of the current operation; pushed forward whenever bytes move.
    private(set) var deadline = UInt64.max

    init(settings: SlotSettings) {
        self.settings = settings
    }

    /// Whether this slot has nothing more to do (a finished stream).
    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Whether the slot is between starting a connection and finishing an exchange.
    var isBusy: Bool {
        switch state {
        case .connecting, .sending, .receiving: return true
        default: return false
        }
    }

    /// When a slot waiting to reconnect wants to be stepped without any socket event.
    var wakeTime: UInt64? {
        if case .waitingToConnect(let until) = state { return until }
        return nil
    }

    /// The descriptor and events to poll for, if the slot waits on its socket.
    private(set) var pollRequest: pollfd?

    /// Runs the slot as far as it goes without blocking.
    /// - Parameters:
    ///   - buffer: the worker's scratch buffer for reads (contents discarded).
    ///   - stats: the worker's counters.
    func step(buffer: UnsafeMutableRawBufferPointer, stats: inout RunStats) {
        pollRequest = nil
        while true {
            // The clock is read only by the steps that record a time, not on every pass.
            do throws(LoadError) {
                switch state {
                case .finished:
                    return
                case .waitingToConnect(let until):
                    let now = MonotonicClock.now()
                    guard now >= until else { return }
                    connectStartedAt = now
                    deadline = now + settings.timeout
                    state = .connecting(try LoadConnection(plan: settings.plan))
                case .connecting(let connection):
                    let now = MonotonicClock.now()  // before the last handshake step, as the request's start
                    if let wait = try connection.advanceSetup() { return waitOn(connection, wait) }
                    startRequest(on: connection, now: now)
                case .sending(let connection, let offset):
                    let result = connection.names.request[offset...].withUnsafeBytes { bytes in
                        Result { () throws(LoadError) in try connection.write(bytes) }
                    }
                    switch try result.get() {
                    case .bytes(let n):
                        let next = offset + n
                        guard next == connection.names.request.count else {
                            state = .sending(connection, offset: next)
                            continue
                        }
                        state = .receiving(connection)
                        // The response cannot be here yet; reading now would only cost a read(2)
                        // that says EAGAIN. Wait for it — unless OpenSSL holds input poll cannot see.
                        if !connection.hasBufferedInput { return waitOn(connection, .readable) }
                    case .wait(let wait): return waitOn(connection, wait)
                    case .closed: throw LoadError(kind: .io, reason: "server closed before the request was sent")
                    }
                case .receiving(let connection):
                    if let wait = try receive(on: connection, buffer: buffer, stats: &stats) {
                        return waitOn(connection, wait)
                    }
                case .holding(let connection):
                    switch try connection.read(into: buffer) {
                    case .bytes: continue  // post-handshake messages such as TLS 1.3 session tickets
                    case .wait(let wait): return waitOn(connection, wait)
                    case .closed: throw LoadError(kind: .io, reason: "server closed an idle connection")
                    }
                }
            } catch {
                fail(error, stats: &stats, now: MonotonicClock.now())
            }
        }
    }

    /// Fails the current operation with a timeout when its deadline has passed.
    func checkTimeout(now: UInt64, stats: inout RunStats) {
        switch state {
        case .connecting, .sending, .receiving:
            guard now > deadline else { return }
            fail(LoadError(kind: .timeout, reason: "no progress for \(settings.timeout / 1_000_000) ms"), stats: &stats, now: now)
        default:
            return
        }
    }

    /// At the end of the run, accounts for a stream still in flight (counted as a timeout).
    func finishRun(stats: inout RunStats) {
        guard settings.mode == .stream, case .receiving = state else { return }
        stats.bodyBytes += parser.bodyBytes
        stats.streamNanoseconds += settings.window.end - requestStartedAt
        if firstByteAt > 0 { stats.timeToFirstByte.record(firstByteAt - requestStartedAt) }
        stats.count(LoadError(kind: .timeout, reason: "stream not finished within --duration"))
    }

    /// Reads and parses until the response completes or the socket has nothing more.
    /// - Returns: what to wait for, or nil when the slot moved on.
    private func receive(on connection: LoadConnection, buffer: UnsafeMutableRawBufferPointer,
                         stats: inout RunStats) throws(LoadError) -> LoadConnection.Wait? {
        while true {
            switch try connection.read(into: buffer) {
            case .bytes(let n):
                let now = MonotonicClock.now()
                deadline = now + settings.timeout
                if !parser.started { firstByteAt = now }
                let used = try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
                guard parser.isComplete else { continue }
                guard used == n else { throw LoadError(kind: .io, reason: "bytes after the response") }
                complete(connection, now: now, stats: &stats)
                return nil
            case .wait(let wait):
                return wait
            case .closed:
                guard parser.finishOnClose() else {
                    throw LoadError(kind: .io, reason: parser.started ? "closed mid-response" : "closed before responding")
                }
                complete(nil, now: MonotonicClock.now(), stats: &stats)
                return nil
            }
        }
    }

    /// Books a finished response and picks the next state for the mode.
    private func complete(_ connection: LoadConnection?, now: UInt64, stats: inout RunStats) {
        stats.statuses[parser.status, default: 0] += 1
        let ok = (200...399).contains(parser.status)
        if !ok { stats.count(LoadError(kind: .http, reason: "status \(parser.status)")) }
        switch settings.mode {
        case .keepalive, .newconn:
            if ok && settings.window.counts(now) {
                stats.requests += 1
                stats.bodyBytes += parser.bodyBytes
                let start = settings.mode == .newconn ? connectStartedAt : requestStartedAt
                stats.latency.record(now - start)
            }
            if settings.mode == .keepalive, let connection, !parser.closesConnection {
                startRequest(on: connection, now: now)
            } else {
                state = .waitingToConnect(until: 0)
            }
        case .stream:
            stats.requests += ok ? 1 : 0
            stats.bodyBytes += parser.bodyBytes
            stats.streamNanoseconds += now - requestStartedAt
            stats.streamsCompleted += 1
            stats.timeToFirstByte.record(firstByteAt - requestStartedAt)
            stats.latency.record(now - requestStartedAt)
            state = .finished
        case .idle, .stall:  // stall is HTTP/2's (HTTP2Slot); the options refuse it here
            if let connection, ok, !parser.closesConnection {
                stats.established += 1
                deadline = .max
                state = .holding(connection)
            } else {
                state = .waitingToConnect(until: now + settings.backoff)
            }
        }
    }

    /// Begins the next GET on a ready connection.
    private func startRequest(on connection: LoadConnection, now: UInt64) {
        parser = ResponseParser()
        requestStartedAt = now
        firstByteAt = 0
        deadline = now + settings.timeout
        state = .sending(connection, offset: 0)
    }

    /// Records the slot as waiting on its socket.
    private func waitOn(_ connection: LoadConnection, _ wait: LoadConnection.Wait) {
        let events = wait == .readable ? POLLIN : POLLOUT
        pollRequest = pollfd(fd: connection.socket.fd, events: Int16(events), revents: 0)
    }

    /// Counts a failure (if still inside the run), drops the connection and schedules a retry.
    private func fail(_ error: LoadError, stats: inout RunStats, now: UInt64) {
        if now <= settings.window.end { stats.count(error) }
        if case .holding = state { stats.established -= 1 }
        pollRequest = nil
        state = settings.mode == .stream ? .finished : .waitingToConnect(until: now + settings.backoff)
    }
}
