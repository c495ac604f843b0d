import Foundation

/// Copies bytes both ways between two streams until either side closes, on the calling thread.
///
/// Both descriptors switch to non-blocking mode and one poll() loop serves both directions:
/// OpenSSL forbids reading and writing one SSL from two threads, and a TLS 1.3 ticket can make
/// a blocking SSL_read wait for data that never comes while the other direction starves.
struct Relay {
    /// What crossed, for the flow record.
    struct Outcome {
        var bytesAToB = 0
        var bytesBToA = 0
        /// Why the relay ended, when it was not a clean close.
        var error: Error?
        /// Which side closed first: true for `a`, false for `b`, nil while both were open.
        var aClosedFirst: Bool?
    }

    // Quiet alone never ends a relay. A quiet tunnel or WebSocket is an open session, not an idle
    // one (a push connection passed through, whose heartbeat may come every half hour; a socket
    // that speaks only when something happens): cutting it at a timeout would break the app under
    // the proxy and not without it. Both sockets probe their peer instead (`Socket.probeLiveness`),
    // so one that vanished without a close (a laptop asleep, a phone gone from the network) ends
    // the relay within minutes.
    let a: ByteStream
    let b: ByteStream

    /// Runs until one side closes or fails, then half-closes the other so it sees EOF.
    ///
    /// - Parameters:
    ///   - observeAToB / observeBToA: see each chunk as it is relayed (WebSocket logging).
    ///   - tickInterval, tick: `tick` runs about every `tickInterval` seconds while the relay
    ///     runs, busy or quiet (a WebSocket's messages so far, shown while it stays open).
    func run(observeAToB: (UnsafeRawBufferPointer) -> Void = { _ in },
             observeBToA: (UnsafeRawBufferPointer) -> Void = { _ in },
             tickInterval: TimeInterval? = nil, tick: () -> Void = {}) -> Outcome {
        var outcome = Outcome()
        var lastTick = Date()
        a.socket.setNonBlocking()
        b.socket.setNonBlocking()
        a.socket.probeLiveness()
        b.socket.probeLiveness()
        // A side that stops reading for a while is waited for while the other side stays open.
        a.socket.stalledWritesFollow = b.socket
        b.socket.stalledWritesFollow = a.socket
        defer {
            a.socket.stalledWritesFollow = nil
            b.socket.stalledWritesFollow = nil
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        // Each direction ends on its own (a half-close is passed on); the relay ends when both have.
        var aOpen = true, bOpen = true
        while aOpen || bOpen {
            do {
                // TLS may hold decrypted bytes that poll() cannot see; drain those first.
                var moved = false
                if aOpen {
                    let step = try pump(from: a, to: b, buffer: &buffer, count: &outcome.bytesAToB, observe: observeAToB)
                    moved = step.moved
                    aOpen = !step.closed
                    if step.closed, outcome.aClosedFirst == nil { outcome.aClosedFirst = true }
                }
                if bOpen {
                    let step = try pump(from: b, to: a, buffer: &buffer, count: &outcome.bytesBToA, observe: observeBToA)
                    moved = moved || step.moved
                    bOpen = !step.closed
                    if step.closed, outcome.aClosedFirst == nil { outcome.aClosedFirst = false }
                }
                if let tickInterval, Date().timeIntervalSince(lastTick) >= tickInterval {
                    lastTick = Date()
                    tick()
                }
                if moved { continue }
                // Sleep until traffic, in one poll: a quiet tunnel (a push connection passed
                // through) costs no wake-ups. Shutdown cuts the sockets; a peer that stopped
                // answering the keepalive probes fails them.
                var pollers = [pollfd(fd: a.socket.fd, events: aOpen ? Int16(POLLIN) : 0, revents: 0),
                               pollfd(fd: b.socket.fd, events: bOpen ? Int16(POLLIN) : 0, revents: 0)]
                let wait = tickInterval.map { min(Self.longWait, max(0.01, $0 - Date().timeIntervalSince(lastTick))) }
                    ?? Self.longWait
                let ready = poll(&pollers, 2, Socket.pollMilliseconds(wait))
                if ready < 0 && errno != EINTR { break }
            } catch {
                outcome.error = error
                break
            }
        }
        return outcome
    }

    /// One poll's wait when nothing but traffic, a failed probe or shutdown ends the relay.
    static let longWait: TimeInterval = 3600

    /// Moves what is available from one side to the other.
    ///
    /// - Returns: whether anything moved, and whether `source` reached EOF (then `destination`
    ///   is half-closed so it sees the end too).
    private func pump(from source: ByteStream, to destination: ByteStream, buffer: inout [UInt8], count: inout Int,
                      observe: (UnsafeRawBufferPointer) -> Void) throws -> (moved: Bool, closed: Bool) {
        var moved = false
        while true {
            let read = try buffer.withUnsafeMutableBytes { try source.readAvailable(into: $0) }
            guard let read else { return (moved, false) }
            if read == 0 {
                destination.closeWrite()
                return (moved, true)
            }
            try buffer.withUnsafeBytes { raw in
                let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<read])
                observe(chunk)
                try destination.write(chunk)
            }
            count += read
            moved = true
        }
    }
}
