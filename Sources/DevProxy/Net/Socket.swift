import Foundation

/// A connected TCP socket, owned exclusively: closed when released.
///
/// Blocking I/O with per-operation timeouts (SO_RCVTIMEO / SO_SNDTIMEO). Each connection runs on
/// a thread of its own, so blocking here never stalls the Swift concurrency pool.
public final class Socket: @unchecked Sendable {
    // The descriptor is only closed once, guarded by `lock`; reads and writes happen from the
    // one thread that owns the connection, or from two relay threads, one per direction.
    public let fd: Int32
    private let lock = NSLock()
    private var closed = false
    /// The per-operation timeout last set; also bounds waits for a non-blocking descriptor.
    public private(set) var timeout: TimeInterval = 60
    /// Whether `timeout` has been set on the descriptor (until then reads block indefinitely).
    private var timeoutApplied = false
    /// Set once the relay switches the descriptor to non-blocking mode.
    public private(set) var isNonBlocking = false

    /// Takes ownership of a connected descriptor.
    public init(takingOwnership fd: Int32) {
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Connects to `host`, racing its addresses as browsers and curl do (Happy Eyeballs, RFC 8305).
    ///
    /// - Throws: `NetworkError` with `.refused`, `.unresolvable`, `.timedOut` or `.failed`.
    /// - Parameter bound: told the socket and the address it connects to once its local port is
    ///   known, before the SYN leaves: the socket is then bound to port 0 first (a port of its
    ///   own rather than one shared across destinations).
    public static func connect(host: String, port: Int, timeout: TimeInterval,
                               bound: ((Socket, SocketAddress) -> Void)? = nil) throws -> Socket {
        let addresses = try Resolver.resolve(host: host, port: port)
        guard !addresses.isEmpty else { throw NetworkError(.unresolvable, "\(host) has no addresses") }
        return try connect(to: addresses, timeout: timeout, bound: bound)
    }

    /// How long an attempt runs alone before the next address is tried beside it (RFC 8305 §5
    /// recommends 250 ms).
    static let attemptDelay: TimeInterval = 0.25

    /// Connects to the first of `addresses` that answers, racing them (Happy Eyeballs, RFC 8305
    /// §4–5): the families take turns, starting with the first address's; each attempt runs alone
    /// for `attemptDelay` (or until it fails) before the next one starts beside it, and the first
    /// connection made wins, the others closed. Each attempt has `timeout`. A name whose first
    /// address is unreachable (an IPv6 route that swallows packets, a server bound to
    /// `127.0.0.1` only while `localhost` also names `::1`) thus costs a quarter of a second, not
    /// the whole connect timeout per address.
    ///
    /// - Throws: the one attempt's `NetworkError`, or, when several failed, the kind of the first
    ///   to fail with every distinct reason.
    public static func connect(to addresses: [SocketAddress], timeout: TimeInterval,
                               bound: ((Socket, SocketAddress) -> Void)? = nil) throws -> Socket {
        let ordered = interleavingFamilies(addresses)
        var pending: [(socket: Socket, address: SocketAddress, flags: Int32, deadline: Date)] = []
        var failures: [NetworkError] = []
        var next = 0
        var nextStart = Date()
        while true {
            let now = Date()
            if next < ordered.count && (pending.isEmpty || now >= nextStart) {
                let address = ordered[next]
                next += 1
                nextStart = now.addingTimeInterval(attemptDelay)
                do {
                    let (socket, flags, connected) = try begin(address, bound: bound)
                    if connected {
                        _ = fcntl(socket.fd, F_SETFL, flags)
                        for other in pending { other.socket.close() }
                        return socket
                    }
                    pending.append((socket, address, flags, now.addingTimeInterval(timeout)))
                } catch let error as NetworkError {
                    failures.append(error)
                }
                continue
            }
            if pending.isEmpty { throw combined(failures) }
            var wake = pending.map(\.deadline).min()!
            if next < ordered.count { wake = min(wake, nextStart) }
            var pollers = pending.map { pollfd(fd: $0.socket.fd, events: Int16(POLLOUT), revents: 0) }
            let ready = poll(&pollers, nfds_t(pollers.count), pollMilliseconds(wake.timeIntervalSinceNow))
            if ready < 0 && errno != EINTR {
                let error = NetworkError(.failed, "poll(): \(String(cString: strerror(errno)))")
                for attempt in pending { attempt.socket.close() }
                throw error
            }
            var index = 0
            for poller in pollers {
                let attempt = pending[index]
                if poller.revents != 0 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(attempt.socket.fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        _ = fcntl(attempt.socket.fd, F_SETFL, attempt.flags)
                        for other in pending where other.socket !== attempt.socket { other.socket.close() }
                        return attempt.socket
                    }
                    failures.append(NetworkError.from(errno: error, connectingTo: attempt.address.description))
                } else if Date() >= attempt.deadline {
                    failures.append(NetworkError(.timedOut, "connecting to \(attempt.address) timed out after "
                                                 + "\(Int(timeout)) s"))
                } else {
                    index += 1
                    continue
                }
                attempt.socket.close()
                pending.remove(at: index)
            }
        }
    }

    /// `addresses` with the families taking turns, the first address's family first (RFC 8305 §4).
    static func interleavingFamilies(_ addresses: [SocketAddress]) -> [SocketAddress] {
        guard let first = addresses.first else { return [] }
        var preferred = addresses.filter { $0.family == first.family }[...]
        var others = addresses.filter { $0.family != first.family }[...]
        var result: [SocketAddress] = []
        while !preferred.isEmpty || !others.isEmpty {
            if let address = preferred.popFirst() { result.append(address) }
            if let address = others.popFirst() { result.append(address) }
        }
        return result
    }

    /// One error for attempts that all failed: the kind of the first to fail, every distinct reason.
    private static func combined(_ failures: [NetworkError]) -> NetworkError {
        guard let first = failures.first else { return NetworkError(.failed, "no address to connect to") }
        var reasons: [String] = []
        for failure in failures where !reasons.contains(failure.message) { reasons.append(failure.message) }
        return NetworkError(first.kind, reasons.joined(separator: "; "))
    }

    /// Starts a non-blocking connect to `address`: the socket, its flags before, and whether it
    /// connected at once.
    private static func begin(_ address: SocketAddress,
                              bound: ((Socket, SocketAddress) -> Void)?) throws -> (Socket, Int32, Bool) {
        let fd = socket(Int32(address.family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw NetworkError(.failed, "socket(): \(String(cString: strerror(errno))) (\(address))")
        }
        let socket = Socket(takingOwnership: fd)
        if let bound {
            guard address.wildcard.withSockaddr({ Glibc.bind(fd, $0, $1) }) == 0 else {
                throw NetworkError(.failed, "bind(): \(String(cString: strerror(errno))) (\(address))")
            }
            bound(socket, address)
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let result = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if result != 0 && errno != EINPROGRESS {
            throw NetworkError.from(errno: errno, connectingTo: address.description)
        }
        return (socket, flags, result == 0)
    }

    /// Sets how long a single read (and write) may block before failing with `.timedOut`.
    public func setTimeout(_ seconds: TimeInterval) {
        guard seconds != timeout || !timeoutApplied else { return }
        timeout = seconds
        timeoutApplied = true
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads up to `buffer.count` bytes; 0 means the peer closed.
    ///
    /// - Throws: `.timedOut` when the read timeout passes, `.reset` or `.failed`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            if isNonBlocking && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try wait(for: Int16(POLLIN))
                continue
            }
            throw NetworkError.from(errno: errno, connectingTo: nil)
        }
    }

    /// Reads what has arrived without waiting: nil when nothing has, 0 when the peer closed.
    public func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw NetworkError.from(errno: errno, connectingTo: nil)
        }
    }

    /// Switches to non-blocking mode for the relay; reads and writes still complete by
    /// waiting in poll() up to `timeout`.
    public func setNonBlocking() {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        isNonBlocking = true
    }

    /// Runs `body` with the descriptor non-blocking, then puts the mode back: a look at what an
    /// idle connection has received must not wait for more.
    public func withoutBlocking<T>(_ body: () throws -> T) rethrows -> T {
        let flags = fcntl(fd, F_GETFL)
        guard flags & O_NONBLOCK == 0 else { return try body() }
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        return try body()
    }

    /// A `poll()` timeout for a wait of `seconds` that may be long (an idle timeout): rounded up
    /// to the next millisecond, so the wait never ends just short of its deadline, and at most an
    /// hour (the caller loops), where poll's Int32 milliseconds would overflow past 24 days.
    public static func pollMilliseconds(_ seconds: TimeInterval) -> Int32 {
        Int32(min(max(seconds, 0), 3600) * 1000) + 1
    }

    /// Waits until the descriptor is ready for `events` or `limit` (by default the socket's
    /// `timeout`) passes.
    ///
    /// - Throws: `.timedOut`.
    public func wait(for events: Int16, limit: TimeInterval? = nil) throws {
        var poller = pollfd(fd: fd, events: events, revents: 0)
        let limit = limit ?? timeout
        while true {
            let ready = poll(&poller, 1, Int32(max(limit, 0) * 1000))
            if ready > 0 { return }
            if ready < 0 && errno == EINTR { continue }
            throw NetworkError(.timedOut, "timed out after \(Int(limit)) s")
        }
    }

    #if os(Linux)
    /// The peer shut down its side (a FIN, with or without unread bytes before it); Linux's
    /// POLLRDHUP, which Glibc's module does not carry.
    private static let peerShutDown = Int16(0x2000)
    /// The `revents` that say the peer is gone: its FIN, a hang-up or an error (a reset).
    private static let peerGone = peerShutDown | Int16(POLLHUP) | Int16(POLLERR)
    #endif

    /// Seconds of silence before the first keepalive probe, between probes, and the probes
    /// unanswered before the connection counts as dead: a vanished peer is found within
    /// `probeIdle + probeInterval × probeCount` (two minutes) of its last word.
    public static let probeIdle: Int32 = 60, probeInterval: Int32 = 15, probeCount: Int32 = 4

    /// Has the kernel probe a quiet connection's peer (TCP keepalive), so a peer that vanished
    /// without closing (asleep, off the network) fails the socket instead of holding it forever;
    /// a live peer's kernel answers the probes without its application seeing anything.
    public func probeLiveness() {
        var on: Int32 = 1, idle = Self.probeIdle, interval = Self.probeInterval, count = Self.probeCount
        let size = socklen_t(MemoryLayout<Int32>.size)
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, size)
        #if os(Linux)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
        #else
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPALIVE, &idle, size)
        #endif
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, size)
    }

    /// Whether the peer has closed the connection (a FIN or a reset), without reading anything:
    /// bytes the peer sent first (a pipelined request) stay where they are. Where the system
    /// cannot say so alongside unread bytes (no POLLRDHUP), only a close with nothing unread counts.
    public var peerHasClosed: Bool {
        #if os(Linux)
        var poller = pollfd(fd: fd, events: Self.peerShutDown, revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        return poller.revents & Self.peerGone != 0
        #else
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        #endif
    }

    /// Whether the peer reset the connection within `milliseconds` (POLLHUP or POLLERR: after
    /// its FIN alone the socket shows neither). A peer that closed before our data reached it
    /// answers that data with a reset; one that read it and closed does not.
    public func resetWithin(milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: 0, revents: 0)
        guard poll(&poller, 1, milliseconds) > 0 else { return false }
        return poller.revents & Int16(POLLHUP | POLLERR) != 0
    }

    /// What `waitForInput(watching:limit:)` saw first.
    public enum InputOrClose { case input, peerClosed, timedOut }

    /// Waits until this socket has input, `other`'s peer closes its connection, or `limit` passes:
    /// a proxy waiting on an origin notices the client that gave up waiting.
    public func waitForInput(watching other: Socket, limit: TimeInterval) -> InputOrClose {
        #if os(Linux)
        var pollers = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: other.fd, events: Self.peerShutDown, revents: 0)]
        let deadline = Date().addingTimeInterval(limit)
        while true {
            let ready = poll(&pollers, 2, Self.pollMilliseconds(deadline.timeIntervalSinceNow))
            if ready < 0 && errno == EINTR { continue }
            // An error poll cannot wait through is the read's to report.
            if ready < 0 { return .input }
            if ready == 0 { return .timedOut }
            if pollers[1].revents & Self.peerGone != 0 { return .peerClosed }
            return .input
        }
        #else
        do { try wait(for: Int16(POLLIN), limit: limit) } catch { return other.peerHasClosed ? .peerClosed : .timedOut }
        return .input
        #endif
    }

    /// Bytes in the kernel's receive queue, ready for a read (FIONREAD); 0 when it cannot tell.
    public var queuedBytes: Int {
        var queued: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &queued) == 0 ? Int(queued) : 0
    }

    /// Looks at the first bytes without consuming them.
    public func peek(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_PEEK))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw NetworkError.from(errno: errno, connectingTo: nil)
        }
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let count = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if count < 0 {
                if errno == EINTR { continue }
                if isNonBlocking && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    try waitToWrite()
                    continue
                }
                // A blocking send's timeout passed with the peer taking nothing.
                if (errno == EAGAIN || errno == EWOULDBLOCK) && writeMayWaitLonger { continue }
                throw NetworkError.from(errno: errno, connectingTo: nil)
            }
            offset += count
        }
    }

    /// While set, a write that has waited the socket's timeout for its peer to take bytes keeps
    /// waiting as long as this other socket's peer has not closed: a client that stops reading a
    /// response for a while (a video player that buffered ahead, a consumer busy with what it has)
    /// is held to what the origin allows, as without a proxy, not to the proxy's own timeout; the
    /// write fails once the origin gives up and closes. Set and cleared by the thread that writes.
    public weak var stalledWritesFollow: Socket?

    /// Whether a write whose wait timed out may go on waiting (`stalledWritesFollow`).
    public var writeMayWaitLonger: Bool {
        guard let origin = stalledWritesFollow else { return false }
        return !origin.peerHasClosed
    }

    /// Waits until the socket can take bytes: up to the timeout, or longer while
    /// `writeMayWaitLonger`.
    /// - Throws: `.timedOut`.
    public func waitToWrite() throws {
        while true {
            do {
                try wait(for: Int16(POLLOUT))
                return
            } catch let error as NetworkError where error.kind == .timedOut {
                if !writeMayWaitLonger { throw error }
            }
        }
    }

    /// Half-closes the sending side (the peer reads EOF).
    public func shutdownWrite() {
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the descriptor (once).
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Whether `close()` has run.
    public var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    /// Cuts the connection from another thread as a lost network ends it (the throttle switched to
    /// Offline): the peer gets a reset and nothing more, no FIN, no TLS close_notify, no last frame.
    /// The socket is held on a second descriptor with a zero linger (its final release sends RST),
    /// and the owner's descriptor is made to name a dead end before anything wakes the owner (`dup2`,
    /// under `lock`, so never after the owner closed it): one end of a socket pair whose other end
    /// is closed, which reads as an end and refuses writes, as the cut socket would. Whatever the
    /// owner writes from then on fails here instead of reaching the peer. Only then does shutting
    /// the read side wake a thread polling or reading, and closing the second descriptor lets the
    /// reset go once that thread lets go of the socket. Woken first (the read side shut before the
    /// swap), an owner could answer the end it read with a close_notify that reached the client
    /// before the reset: curl through an intercepted SOCKS5 connection read a clean end (exit 18,
    /// "transfer closed with 5 bytes remaining") in 3 runs of 6. The owner still closes.
    public func cutAsLost() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        let held = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        var pair: [Int32] = [-1, -1]
        let paired = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
        guard held >= 0, paired else {
            // No descriptor to spare: a FIN instead of a reset, but the owner still wakes and stops.
            if held >= 0 { Glibc.close(held) }
            if paired { Glibc.close(pair[0]); Glibc.close(pair[1]) }
            Glibc.shutdown(fd, Int32(SHUT_RDWR))
            return
        }
        Glibc.close(pair[1])
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(held, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        dup2(pair[0], fd)
        Glibc.close(pair[0])
        Glibc.shutdown(held, Int32(SHUT_RD))
        Glibc.close(held)
    }

    /// Unblocks any thread reading or writing (used on shutdown); the owner still closes.
    public func abort() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The remote address.
    public var peerAddress: SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        return ok == 0 ? SocketAddress(storage: storage) : nil
    }

    /// The local address.
    public var localAddress: SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return ok == 0 ? SocketAddress(storage: storage) : nil
    }
}
