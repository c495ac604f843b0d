import CertAuthority
import Foundation
import HTTP1

/// An open connection to an origin server, plain or TLS, with what it cost to open.
final class UpstreamConnection: @unchecked Sendable {
    // Used by one client connection at a time; handed between them only through the pool.
    let stream: ByteStream
    let key: String
    let address: String
    let tls: TLSConnection?
    /// Milliseconds spent on TCP connect and on the TLS handshake (0 when reused).
    let connectMilliseconds: Double
    let tlsMilliseconds: Double
    /// Whether this connection came from the pool.
    var reused = false
    /// Reads responses; lives with the connection so a pooled one keeps its parser state.
    let reader: MessageReader<HTTP1ResponseParser>

    init(stream: ByteStream, key: String, address: String, tls: TLSConnection?, connectMilliseconds: Double, tlsMilliseconds: Double,
         limits: HTTP1Limits) {
        self.stream = stream
        self.key = key
        self.address = address
        self.tls = tls
        self.connectMilliseconds = connectMilliseconds
        self.tlsMilliseconds = tlsMilliseconds
        self.reader = MessageReader(stream: stream, parser: HTTP1ResponseParser(limits: limits))
    }

    /// The TLS details the flow log records, worked out once per connection.
    private(set) lazy var tlsInfo: Flow.TLSInfo.UpstreamSide? = describeTLS()

    private func describeTLS() -> Flow.TLSInfo.UpstreamSide? {
        guard let tls else { return nil }
        let verification = tls.verification
        return Flow.TLSInfo.UpstreamSide(
            version: tls.version, cipher: tls.cipher, alpn: tls.alpn, verified: verification.verified,
            verifyError: verification.reason, chain: tls.peerChain.map(Flow.ChainCertificate.init))
    }
}

extension Flow.ChainCertificate {
    init(_ certificate: Certificate) {
        self.init(subject: certificate.subject, issuer: certificate.issuer,
                  notAfter: ISO8601.string(certificate.notAfter), pin: certificate.pin)
    }
}

/// Opens upstream connections (honouring `--resolve`) and keeps idle keep-alive ones for
/// reuse, keyed by scheme, host and port.
final class UpstreamPool: @unchecked Sendable {
    // `idle` and `lastSweep` are guarded by `lock`.
    private let lock = NSLock()
    private var idle: [String: [(connection: UpstreamConnection, since: Date)]] = [:]
    private var lastSweep = Date()
    private let configuration: ProxyConfiguration
    private let tlsContext: TLSContext
    private let sessions = TLSSessionCacheStore()
    /// Idle upstream connections older than this are closed rather than reused: servers
    /// commonly drop idle connections after 5–60 s and a stale one fails the next request.
    private let maxIdle: TimeInterval = 4
    private let maxIdlePerKey = 16
    /// Across all hosts (`maxIdleUpstream`): a client that visits thousands of hosts must not
    /// leave a connection (socket, TLS state, buffers) open to each of them.
    private var maxIdleTotal: Int { configuration.maxIdleUpstream }

    init(configuration: ProxyConfiguration, tlsContext: TLSContext) {
        self.configuration = configuration
        self.tlsContext = tlsContext
    }

    /// An idle connection to reuse, or a new one.
    ///
    /// - Throws: `NetworkError` (refused, unresolvable, timed out) or `TLSError`.
    /// - Parameter reuse: false for tunnels, which need a connection of their own.
    func connection(host: String, port: Int, tls: Bool, reuse: Bool = true) throws -> UpstreamConnection {
        let key = "\(tls ? "https" : "http")://\(host):\(port)"
        if reuse, let reused = takeIdle(key) { return reused }
        let target = configuration.resolve.address(host: host, port: port)
        let start = Date()
        let socket = try Socket.connect(host: target, port: port, timeout: configuration.connectTimeout)
        socket.setTimeout(configuration.upstreamTimeout)
        let connected = Date()
        let address = socket.peerAddress?.description ?? target
        guard tls else {
            return UpstreamConnection(stream: PlainStream(socket), key: key, address: address, tls: nil,
                                      connectMilliseconds: FlowDraft.milliseconds(from: start, to: connected), tlsMilliseconds: -1,
                                      limits: configuration.httpLimits)
        }
        let connection = try TLSConnection.connect(socket: socket, context: tlsContext, serverName: host,
                                                   session: sessions.handle(for: key))
        return UpstreamConnection(stream: connection, key: key, address: address, tls: connection,
                                  connectMilliseconds: FlowDraft.milliseconds(from: start, to: connected),
                                  tlsMilliseconds: FlowDraft.milliseconds(since: connected), limits: configuration.httpLimits)
    }

    /// Returns a connection whose last response ended cleanly, for the next request.
    func release(_ connection: UpstreamConnection) {
        connection.tls?.rememberSession()
        let now = Date()
        lock.lock()
        var doomed = sweepLocked(now: now)
        var list = idle[connection.key, default: []]
        if list.count < maxIdlePerKey && idleCountLocked < maxIdleTotal {
            list.append((connection, now))
            idle[connection.key] = list
        } else {
            doomed.append(connection)
        }
        lock.unlock()
        doomed.forEach { $0.stream.close() }
    }

    /// Closes expired idle connections and frees idle buffers (see `sweepLocked`); the proxy
    /// calls it on its accept loop's tick, so a pool nobody uses any more still empties.
    /// - Returns: whether any connection was closed.
    @discardableResult
    func sweep(now: Date = Date()) -> Bool {
        lock.lock()
        let expired = sweepLocked(now: now)
        lock.unlock()
        expired.forEach { $0.stream.close() }
        return !expired.isEmpty
    }

    /// At most every `sweepInterval`: removes the idle connections past `maxIdle` (returned,
    /// for the caller to close outside the lock) — those of hosts never asked for again would
    /// otherwise stay open for good — and frees the TLS buffers of those idle past
    /// `sweepInterval` (a connection in the pool is nobody else's). Caller holds `lock`.
    private func sweepLocked(now: Date) -> [UpstreamConnection] {
        guard now.timeIntervalSince(lastSweep) >= Self.sweepInterval else { return [] }
        lastSweep = now
        var expired: [UpstreamConnection] = []
        for (key, list) in idle {
            var fresh = list
            fresh.removeAll { entry in
                let idleFor = now.timeIntervalSince(entry.since)
                if idleFor >= Self.sweepInterval { entry.connection.stream.releaseBuffers() }
                guard idleFor >= maxIdle else { return false }
                expired.append(entry.connection)
                return true
            }
            if fresh.count < list.count { idle[key] = fresh.isEmpty ? nil : fresh }
        }
        return expired
    }

    /// How often the pool is swept. Also how long a pooled connection keeps its TLS buffers:
    /// busy keep-alive traffic takes it back within microseconds and never pays to rebuild them.
    static let sweepInterval: TimeInterval = 0.25

    /// How many idle connections the pool holds (for tests).
    var idleConnections: Int {
        lock.lock()
        defer { lock.unlock() }
        return idleCountLocked
    }

    /// Idle connections across all hosts (keys with no connection are removed). Caller holds `lock`.
    private var idleCountLocked: Int { idle.values.reduce(0) { $0 + $1.count } }

    /// How many idle TLS connections have given their buffers back (for tests).
    var idleWithoutBuffers: Int {
        lock.lock()
        defer { lock.unlock() }
        return idle.values.joined().filter { $0.connection.tls?.buffersReleased == true }.count
    }

    /// Closes every idle connection (shutdown).
    func closeAll() {
        lock.lock()
        let all = idle.values.flatMap { $0 }
        idle = [:]
        lock.unlock()
        all.forEach { $0.connection.stream.close() }
    }

    private func takeIdle(_ key: String) -> UpstreamConnection? {
        lock.lock()
        defer { lock.unlock() }
        while var list = idle[key], let last = list.popLast() {
            idle[key] = list.isEmpty ? nil : list
            if Date().timeIntervalSince(last.since) < maxIdle, isStillOpen(last.connection) {
                last.connection.reused = true
                return last.connection
            }
            last.connection.stream.close()
        }
        return nil
    }

    /// A pooled connection the server has closed shows as readable with EOF (or stray bytes).
    private func isStillOpen(_ connection: UpstreamConnection) -> Bool {
        var poller = pollfd(fd: connection.stream.socket.fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 0 && connection.stream.pending == 0
    }
}
