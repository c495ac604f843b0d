import Foundation

/// One client connection's simulated link (`--throttle`): a token bucket each way and the added
/// latency, shared by the streams the connection reads and writes through (the plain socket,
/// then TLS over it), so a CONNECT's tunnel or intercepted session has the one link.
///
/// Used by the connection's own thread only.
final class ThrottledLink: @unchecked Sendable {
    let profile: ThrottleProfile
    /// Whether the connection's destination is throttled now (`--throttle-hosts`); set when it is
    /// known (a CONNECT's target, each plain-HTTP request's host).
    var active = false
    /// For an HTTP/2 client: only its HEADERS and DATA frames make a turn, not the WINDOW_UPDATE,
    /// PING and SETTINGS frames that come while a response streams (`speaksHTTP2(after:)`).
    private var http2: HTTP2RequestFrames?

    /// Bytes either way may go at once after a pause: a small burst, so the long-run rate is the profile's.
    static let burst = 16 * 1024
    private var down: TokenBucket
    private var up: TokenBucket
    /// When a read last returned part of a request, and whether one has since the last write.
    private var lastRead: TimeInterval = 0
    private var readSinceWrite = false

    init(profile: ThrottleProfile) {
        self.profile = profile
        let now = Self.now()
        down = TokenBucket(rate: profile.downloadBytesPerSecond, now: now)
        up = TokenBucket(rate: profile.uploadBytesPerSecond, now: now)
    }

    static func now() -> TimeInterval { TimeInterval(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// How many of `wanted` bytes the next read may take, after waiting for the upload bucket
    /// when bytes are `ready` to be read (a read that would find nothing does not wait).
    func allowedRead(_ wanted: Int, ready: Bool, socket: Socket) -> Int {
        guard active, wanted > 0 else { return wanted }
        let least = Double(min(wanted, Self.burst / 4))
        if ready, up.tokens(at: Self.now()) < least {
            Self.sleep(until: up.time(toHave: least), socket: socket)
        }
        return max(1, min(wanted, Int(up.tokens(at: Self.now()))))
    }

    /// The client speaks HTTP/2 from here on; `early` is what it sent before the stream read any.
    func speaksHTTP2(after early: [UInt8]) {
        var frames = HTTP2RequestFrames()
        _ = early.withUnsafeBytes { frames.scan($0) }
        http2 = frames
    }

    /// Counts the bytes a read returned from the client.
    func didRead(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if active { up.take(Double(bytes.count)) }
        if http2?.scan(bytes) == false { return }
        lastRead = Self.now()
        readSinceWrite = true
    }

    /// Before a write to the client: the turn's latency (Chrome's: the response starts no sooner
    /// than `latency` after the request's last byte; here, the first write after the client sent
    /// something waits until `latency` after that read).
    func beforeWrite(socket: Socket) {
        guard active, readSinceWrite, profile.latency > 0 else { return }
        Self.sleep(until: lastRead + profile.latency, socket: socket)
        readSinceWrite = false
    }

    /// Waits until `count` bytes (at most `burst`) may go to the client, and takes them.
    func send(_ count: Int, socket: Socket) {
        let amount = Double(count)
        if down.tokens(at: Self.now()) < amount { Self.sleep(until: down.time(toHave: amount), socket: socket) }
        down.take(amount)
    }

    /// Counts a write to the client as ended.
    func didWrite() {
        readSinceWrite = false
    }

    /// Sleeps until `deadline` (uptime seconds), in a poll on `socket` for nothing: a socket cut
    /// by shutdown (`Socket.abort`) or reset by its peer ends the sleep early, and the next read
    /// or write reports it.
    private static func sleep(until deadline: TimeInterval, socket: Socket) {
        while true {
            let remaining = deadline - now()
            guard remaining > 0 else { return }
            var poller = pollfd(fd: socket.fd, events: 0, revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(remaining * 1000, 1000).rounded(.up))))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { return }
        }
    }

    /// Bytes one way may send: refilled at `rate` a second up to `burst`; a transfer takes its
    /// bytes once there are enough.
    private struct TokenBucket {
        let rate: Double
        private var level: Double
        private var updated: TimeInterval

        init(rate: Double, now: TimeInterval) {
            self.rate = rate
            level = Double(ThrottledLink.burst)
            updated = now
        }

        mutating func tokens(at now: TimeInterval) -> Double {
            level = min(Double(ThrottledLink.burst), level + (now - updated) * rate)
            updated = now
            return level
        }

        /// When the bucket will hold `amount`.
        func time(toHave amount: Double) -> TimeInterval { updated + max(0, amount - level) / rate }

        mutating func take(_ amount: Double) {
            _ = tokens(at: ThrottledLink.now())
            level -= amount
        }
    }
}

/// A client stream through a `ThrottledLink`: reads at the link's upload rate, writes at its
/// download rate in pieces of at most `ThrottledLink.burst` bytes, each sent at once, and the
/// first write of a turn after the latency. Memory stays bounded: a write returns only once its
/// bytes went, so the relay reads its origin no faster than the client's link takes them.
final class ThrottledStream: ByteStream, @unchecked Sendable {
    let inner: ByteStream
    let link: ThrottledLink

    init(_ inner: ByteStream, link: ThrottledLink) {
        self.inner = inner
        self.link = link
    }

    var socket: Socket { inner.socket }
    var inputReady: Bool { inner.inputReady }
    var pending: Int { inner.pending }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let allowed = link.allowedRead(buffer.count, ready: true, socket: socket)
        let count = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<allowed]))
        link.didRead(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        return count
    }

    func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        let ready = link.active && (inner.pending > 0 || inner.inputReady)
        let allowed = link.allowedRead(buffer.count, ready: ready, socket: socket)
        let count = try inner.readAvailable(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<allowed]))
        if let count { link.didRead(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
        return count
    }

    func write(_ bytes: UnsafeRawBufferPointer, flush: Bool) throws {
        guard link.active, !bytes.isEmpty else {
            try inner.write(bytes, flush: flush)
            if !bytes.isEmpty { link.didWrite() }
            return
        }
        link.beforeWrite(socket: socket)
        var offset = 0
        while offset < bytes.count {
            let piece = min(bytes.count - offset, ThrottledLink.burst)
            link.send(piece, socket: socket)
            try inner.write(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + piece]), flush: true)
            offset += piece
        }
        link.didWrite()
    }

    func flush() throws { try inner.flush() }
    func close() { inner.close() }
    func releaseBuffers() { inner.releaseBuffers() }
    func closeWrite() { inner.closeWrite() }
}

/// Follows the frames an HTTP/2 client sends (after its 24-byte connection preface) across reads,
/// and says whether a read carried part of a request: a HEADERS (RFC 9113 §6.2) or DATA (§6.1) frame.
struct HTTP2RequestFrames {
    private var prefaceLeft = 24
    private var header: [UInt8] = []
    private var payloadLeft = 0
    private var inRequestFrame = false

    /// Takes the next bytes; true when any of them belong to a HEADERS or DATA frame.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var found = false
        var index = min(prefaceLeft, bytes.count)
        prefaceLeft -= index
        while index < bytes.count {
            if payloadLeft > 0 {
                let skip = min(payloadLeft, bytes.count - index)
                payloadLeft -= skip
                index += skip
                found = found || inRequestFrame
                continue
            }
            header.append(bytes[index])
            index += 1
            guard header.count == 9 else { continue }
            payloadLeft = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            inRequestFrame = header[3] == 0x0 || header[3] == 0x1
            found = found || inRequestFrame
            header.removeAll(keepingCapacity: true)
        }
        return found
    }
}
