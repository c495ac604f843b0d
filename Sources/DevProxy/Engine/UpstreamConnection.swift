import CertAuthority
import Foundation
import Synchronization
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
    /// Whether this connection came from the pool having served an exchange before (its connect
    /// and TLS were paid by an earlier flow).
    var reused = false
    /// Pooled straight after it was opened (dialled during the client's handshake, or ahead of
    /// need by `prepare`): the first exchange on it is the one that waited for its connect and
    /// TLS, and its flow says so.
    var neverUsed = false
    /// Set when the connection goes to an upstream proxy that takes absolute-form requests
    /// (plain HTTP through `--upstream-proxy`): the `Proxy-Authorization` to send, or "" for none.
    var proxyAuthorization: String?
    /// DevProxy's own upstream endpoints, when a transparent listener may refuse this connection
    /// as one of them redirected back (`redirectedBack`).
    var ownEndpoints: OwnEndpoints?
    /// Whether a transparent listener refused this connection as DevProxy's own, redirected back
    /// to it: the connection's failure is that loop, not the origin's.
    var redirectedBack: Bool { ownEndpoints?.redirectedBack(stream.socket) ?? false }
    /// Reads responses; lives with the connection so a pooled one keeps its parser state.
    let reader: MessageReader<HTTP1ResponseParser>
    /// The protocol the origin chose in ALPN (`h2`, `http/1.1`), nil when it chose none or the
    /// connection is plain.
    var applicationProtocol: String? { tls?.alpn }
    /// Whether the connection speaks HTTP/2 (the origin chose `h2`); such a connection is never
    /// pooled: one client connection owns it.
    var isHTTP2: Bool { applicationProtocol == "h2" }

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

    /// The URL the intermediate this origin's chain lacked was fetched from (`IssuerFetcher`).
    var fetchedIssuer: String?

    /// The TLS details the flow log records, worked out once per connection.
    private(set) lazy var tlsInfo: Flow.TLSInfo.UpstreamSide? = describeTLS()

    /// The last `flowTLS(over:)`: the client's side it was asked for and the value it gave.
    private var flowTLSMemo: (base: Flow.TLSInfo?, combined: Flow.TLSInfo)?

    /// A flow's TLS once it goes over this connection: `base` (the client's side, as the flow's
    /// draft has it) with this connection's side added; `base` as it is for a plain connection.
    /// The flows of one client connection get the same value, made once (`Flow.TLSInfo`).
    func flowTLS(over base: Flow.TLSInfo?) -> Flow.TLSInfo? {
        if let memo = flowTLSMemo, Self.identical(memo.base, base) { return memo.combined }
        guard let upstreamSide = tlsInfo else { return base }
        let combined = Flow.TLSInfo(client: base?.client, upstream: upstreamSide)
        flowTLSMemo = (base, combined)
        return combined
    }

    private static func identical(_ a: Flow.TLSInfo?, _ b: Flow.TLSInfo?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): a.isIdentical(to: b)
        default: false
        }
    }

    private func describeTLS() -> Flow.TLSInfo.UpstreamSide? {
        guard let tls else { return nil }
        let verification = tls.verification
        return Flow.TLSInfo.UpstreamSide(
            version: tls.version, cipher: tls.cipher, alpn: tls.alpn, verified: verification.verified,
            verifyError: verification.reason, chain: tls.peerChain.map(Flow.ChainCertificate.init),
            clientCertificate: Flow.ClientCertificate(tls), fetchedIssuer: fetchedIssuer)
    }
}

extension Flow.ClientCertificate {
    /// What the flow log says about client authentication on `tls`: nil when the origin did not
    /// ask (and no resumed session carried a certificate).
    init?(_ tls: TLSConnection) {
        if let identity = tls.clientIdentity {
            let certificate = identity.certificate
            self.init(presented: true, subject: certificate.subject, issuer: certificate.issuer,
                      pin: certificate.pin, file: identity.path)
        } else if tls.clientCertificateMissing {
            self.init(presented: false)
        } else {
            return nil
        }
        acceptableCAs = tls.clientCertificate.flatMap { $0.acceptableCAs.isEmpty ? nil : $0.acceptableCAs }
    }
}

extension Flow.ChainCertificate {
    init(_ certificate: Certificate) {
        self.init(subject: certificate.subject, issuer: certificate.issuer,
                  notAfter: ISO8601.string(certificate.notAfter), pin: certificate.pin)
    }
}

/// Opens upstream connections (honouring `--resolve`) and keeps idle keep-alive ones for
/// reuse, keyed by scheme, host and port; opens one ahead of a client's first request when asked
/// (`prepare`).
final class UpstreamPool: @unchecked Sendable {
    // `idle`, `preparing`, `lastSweep` and `closed` are guarded by `lock`.
    private let lock = NSLock()
    private var idle: [String: [(connection: UpstreamConnection, since: Date)]] = [:]
    private var preparing: [String: Preparation] = [:]
    private var lastSweep = Date()
    private var closed = false
    private let configuration: ProxyConfiguration
    private let tlsContext: TLSContext
    private let sessions = TLSSessionCacheStore()
    /// The proxy every connection of this pool goes through (`--upstream-proxy`, `upstream:URL`).
    let proxy: UpstreamProxy?
    /// The ends of connections this pool opened, so a transparent listener recognises its own
    /// traffic redirected back to it; nil without a transparent listener.
    let ownEndpoints: OwnEndpoints?
    /// The proxy's listeners, never dialled (nil in pools made without a server).
    let ownListeners: OwnListeners?
    /// Idle upstream connections older than this are closed rather than reused: servers
    /// commonly drop idle connections after 5–60 s and a stale one fails the next request.
    private let maxIdle: TimeInterval = 4
    private let maxIdlePerKey = 16
    /// Across all hosts (`maxIdleUpstream`): a client that visits thousands of hosts must not
    /// leave a connection (socket, TLS state, buffers) open to each of them.
    private var maxIdleTotal: Int { configuration.maxIdleUpstream }

    init(configuration: ProxyConfiguration, tlsContext: TLSContext, proxy: UpstreamProxy? = nil,
         ownEndpoints: OwnEndpoints? = nil, ownListeners: OwnListeners? = nil) {
        self.configuration = configuration
        self.tlsContext = tlsContext
        self.proxy = proxy
        self.ownEndpoints = ownEndpoints
        self.ownListeners = ownListeners
    }

    /// An idle connection to reuse, or a new one.
    ///
    /// - Throws: `NetworkError` (refused, unresolvable, timed out) or `TLSError`.
    /// - Parameters:
    ///   - reuse: false for tunnels, which need a connection of their own.
    ///   - alpn: the protocols to offer in ALPN (the client's own list, `h2` and `http/1.1`),
    ///     nil for `http/1.1`. A list with `h2` always opens a new connection: pooled ones are
    ///     HTTP/1.1, and one that comes back with h2 belongs to its caller alone.
    ///   - dial: the address to connect to when it is not `host`'s (a SOCKS5 or transparent client
    ///     gave an IP address and its ClientHello named the host): `host` is then the TLS server
    ///     name and the name verified.
    ///   - raw: the bytes are not HTTP/1 requests (a tunnel, h2 by prior knowledge): through an
    ///     upstream proxy they need CONNECT even without TLS. Never pooled.
    ///   - watch: the client this connection is for: while the connect and handshake run, a
    ///     client that hangs up, or a DevProxy that stops, ends the wait (`DialAbandoned`) instead
    ///     of the upstream timeout. The dial then runs on a thread of its own.
    func connection(host: String, port: Int, tls: Bool, reuse: Bool = true, alpn: [String]? = nil,
                    dial: String? = nil, raw: Bool = false, watch: DialWatch? = nil) throws -> UpstreamConnection {
        let key = Self.key(host: host, port: port, tls: tls, dial: dial)
        let target = HostPort(host: host, port: port).description
        if raw {
            return try watched(target, watch) { [self] in
                try connect(host: host, port: port, tls: tls, key: key, alpn: alpn, dial: dial, raw: true)
            }
        }
        if let alpn, tls, alpn.contains("h2") {
            return try watched(target, watch) { [self] in try open(host: host, port: port, tls: tls, key: key, alpn: alpn, dial: dial) }
        }
        if reuse {
            if let reused = takeIdle(key) { return reused }
            // A connection being opened for this host (`prepare`) is this request's: waiting for
            // it costs less than opening another, and its failure is this request's failure.
            if let preparation = claimPreparation(key) { return try preparation.result(watch: watch, target: target) }
            // It may have finished into the pool meanwhile.
            if let reused = takeIdle(key) { return reused }
        }
        return try watched(target, watch) { [self] in try open(host: host, port: port, tls: tls, key: key, dial: dial) }
    }

    /// Runs `open` here, or with a `watch` on a thread of its own while this one watches the client
    /// (`Preparation.result(watch:target:)`). A silent origin or upstream proxy (TCP accepted, no
    /// TLS or CONNECT answer) held the client's connection thread for the whole upstream timeout:
    /// a client that gave up was recorded a minute later and blamed for its handshake, and a stop
    /// meanwhile waited 35 s and then lost the flow.
    private func watched(_ target: String, _ watch: DialWatch?,
                         _ open: @escaping @Sendable () throws -> UpstreamConnection) throws -> UpstreamConnection {
        guard let watch else { return try open() }
        let preparation = Preparation()
        let thread = Thread { preparation.finish(Result { try open() }) }
        thread.stackSize = 512 * 1024
        thread.start()
        return try preparation.result(watch: watch, target: target)
    }

    /// What identifies an origin connection: scheme, host, port and the address dialled.
    static func key(host: String, port: Int, tls: Bool, dial: String? = nil) -> String {
        "\(tls ? "https" : "http")://\(host):\(port)" + (dial.map { "@\($0)" } ?? "")
    }

    /// Opens a connection to `host:port` on a thread of its own, for the request a client is
    /// about to send, unless one is idle or already on its way.
    ///
    /// A client that has just sent CONNECT spends a round trip or two on its TLS handshake with
    /// us before the first request; the origin's TCP and TLS handshakes happen meanwhile instead
    /// of after it (mitmproxy's `connection_strategy=eager`). The request that comes takes the
    /// connection (`connection`); if none comes, it waits in the pool like any idle one.
    func prepare(host: String, port: Int, tls: Bool, dial: String? = nil) {
        let key = Self.key(host: host, port: port, tls: tls, dial: dial)
        let preparation = Preparation()
        lock.lock()
        let needed = !closed && idle[key] == nil && preparing[key] == nil && preparing.count < Self.maxPreparing
            && idleCountLocked < maxIdleTotal
        if needed { preparing[key] = preparation }
        lock.unlock()
        guard needed else { return }
        let thread = Thread { [self] in
            let result = Result { try open(host: host, port: port, tls: tls, key: key, dial: dial) }
            if case .success(let connection) = result { connection.tls?.rememberSession() }
            lock.lock()
            // Still listed: nobody claimed it (`claimPreparation` takes it off the list). Then it
            // goes into the pool in the same step, so a request that no longer finds the
            // preparation finds the connection. A failure nobody asked about is dropped; the
            // request that comes, if any, connects itself and reports what it meets.
            var doomed: [UpstreamConnection] = []
            if preparing[key] === preparation {
                preparing[key] = nil
                if case .success(let connection) = result {
                    connection.neverUsed = true
                    doomed = poolLocked(connection, now: Date())
                }
            }
            lock.unlock()
            preparation.finish(result)
            doomed.forEach { $0.stream.close() }
        }
        thread.stackSize = 512 * 1024
        thread.start()
    }

    /// Connections `prepare` opens at once, at most: a burst of CONNECTs to many hosts that send
    /// no request (a scan, a browser's speculative connections) must not open a thread and an
    /// origin connection for each. Beyond it, the first request connects as it would anyway.
    static let maxPreparing = 32

    /// The connection `prepare` is opening for `key`, taken by this caller alone.
    private func claimPreparation(_ key: String) -> Preparation? {
        lock.lock()
        defer { lock.unlock() }
        return preparing.removeValue(forKey: key)
    }

    /// What each origin answered in ALPN after a fallback.
    let alpnMemory = ALPNMemory()

    /// Opens a TLS connection offering `alpn` (default `http/1.1`, or `h2` when HTTP/2 is on and
    /// the origin is known to need it) and falls back once: an origin that alerts
    /// `no_application_protocol`, or negotiates nothing when offered only `http/1.1` (an h2-only
    /// server such as nghttpd does that), is tried with the other protocol, and the answer is
    /// remembered (`alpnMemory`).
    private func open(host: String, port: Int, tls: Bool, key: String, alpn: [String]? = nil,
                      dial: String? = nil) throws -> UpstreamConnection {
        let http2 = configuration.http2
        guard tls, http2 || alpn != nil else { return try connect(host: host, port: port, tls: tls, key: key, alpn: alpn, dial: dial) }
        let offer = alpn ?? ["http/1.1"]
        let other: [String]? = offer.contains("h2") ? (offer.contains("http/1.1") ? nil : ["http/1.1"]) : (http2 ? ["h2"] : nil)
        if let remembered = alpnMemory.fallback(for: key), other != nil {
            // The origin needed the fallback last time: offer it first this time.
            let known: [String] = remembered.map { [$0] } ?? offer
            return try connect(host: host, port: port, tls: tls, key: key, alpn: known, dial: dial)
        }
        let first: UpstreamConnection
        do {
            first = try connect(host: host, port: port, tls: tls, key: key, alpn: offer, dial: dial)
        } catch let error as TLSError where error.alert == "no_application_protocol" && other != nil {
            let second = try connect(host: host, port: port, tls: tls, key: key, alpn: other, dial: dial)
            alpnMemory.remember(second.applicationProtocol, for: key)
            return second
        }
        guard first.applicationProtocol == nil, offer == ["http/1.1"], let other else { return first }
        // No ALPN: HTTP/1.1 from before ALPN, or an h2-only server. Ask once for h2, the first
        // connection closed before: an origin that serves one connection at a time (`openssl
        // s_server -www`, Python's HTTPServer wrapped in TLS) waits on the first for its request
        // and never answered the second's handshake, so the request waited the upstream timeout.
        first.stream.close()
        let second: UpstreamConnection
        do {
            second = try connect(host: host, port: port, tls: tls, key: key, alpn: other, dial: dial)
        } catch {
            alpnMemory.remember(nil, for: key)
            return try connect(host: host, port: port, tls: tls, key: key, alpn: offer, dial: dial)
        }
        alpnMemory.remember(second.applicationProtocol == "h2" ? "h2" : nil, for: key)
        // One that answered without ALPN again is an HTTP/1.1 connection like the first.
        return second
    }

    /// Resolves `host` (honouring `--resolve`), connects and, for TLS, shakes hands. An origin
    /// whose chain lacks the intermediate that issued it is connected to again once
    /// `IssuerFetcher` found that intermediate at the URL its certificate names.
    private func connect(host: String, port: Int, tls: Bool, key: String, alpn: [String]?,
                         dial: String?, raw: Bool = false) throws -> UpstreamConnection {
        do {
            return try connectOnce(host: host, port: port, tls: tls, key: key, alpn: alpn, dial: dial, raw: raw)
        } catch let error as TLSError where error.incompleteChain != nil && tlsContext.verifiesPeer {
            do {
                _ = try tlsContext.fetchMissingIssuer(of: error.incompleteChain ?? [], proxy: proxy,
                                                      forbidden: configuration.forbiddenDestinations)
            } catch var unfetched as TLSError {
                // Why the issuer could not be had is the error; what the origin sent stays with it.
                unfetched.failedUpstream = unfetched.failedUpstream ?? error.failedUpstream
                throw unfetched
            }
            return try connectOnce(host: host, port: port, tls: tls, key: key, alpn: alpn, dial: dial, raw: raw)
        }
    }

    private func connectOnce(host: String, port: Int, tls: Bool, key: String, alpn: [String]?,
                             dial: String?, raw: Bool) throws -> UpstreamConnection {
        // Through a proxy, the proxy resolves the name (a corporate proxy may allow names, not
        // addresses): the ClientHello's name for a client that gave an address, the request's own
        // host for one that named another than its ClientHello (`curl --connect-to`).
        let named = dial.flatMap { LeafName.isIPLiteral($0) ? nil : $0 }
        let target = proxy == nil ? dial.map { configuration.resolve.address(host: $0, port: port) }
                                        ?? configuration.resolve.address(host: host, port: port)
                                  : configuration.resolve.address(host: named ?? host, port: port)
        // Through a proxy, the proxy dials the target (its loopback is not ours): the proxy itself
        // must not be one of our listeners.
        let loop = if let proxy {
            ownListeners?.refusal(host: proxy.url.host, port: proxy.url.port, what: "the upstream proxy")
        } else {
            ownListeners?.refusal(host: target, port: port)
        }
        if let refusal = configuration.forbiddenDestinations.refusal(host: target, port: port) ?? loop {
            throw NetworkError(.forbidden, refusal)
        }
        let start = Date()
        let socket: Socket
        if let proxy {
            socket = try proxy.open(host: target, port: port, tunnel: tls || raw, timeout: configuration.connectTimeout,
                                    readTimeout: configuration.upstreamTimeout)
        } else {
            let record = ownEndpoints.map { own in
                { (socket: Socket, remote: SocketAddress) in own.insert(socket, remote: remote) }
            }
            socket = try Socket.connect(host: target, port: port, timeout: configuration.connectTimeout, bound: record)
            socket.setTimeout(configuration.upstreamTimeout)
        }
        let connected = Date()
        let address = socket.peerAddress?.description ?? target
        guard tls else {
            let connection = UpstreamConnection(stream: PlainStream(socket), key: key, address: address, tls: nil,
                                                connectMilliseconds: FlowDraft.milliseconds(from: start, to: connected),
                                                tlsMilliseconds: -1, limits: configuration.httpLimits)
            if proxy != nil && !raw { connection.proxyAuthorization = proxy?.authorization ?? "" }
            connection.ownEndpoints = ownEndpoints
            return connection
        }
        let connection: TLSConnection
        do {
            connection = try TLSConnection.connect(socket: socket, context: tlsContext, serverName: host,
                                                   session: sessions.handle(for: key), alpn: alpn,
                                                   clientCertificates: configuration.clientCertificates)
        } catch where ownEndpoints?.redirectedBack(socket) == true {
            throw RedirectedBack(target: "\(host):\(port)")
        } catch var error as TLSError where error.failedUpstream != nil {
            error.failedUpstream?.address = address
            error.failedUpstream?.connectMilliseconds = FlowDraft.milliseconds(from: start, to: connected)
            error.failedUpstream?.tlsMilliseconds = FlowDraft.milliseconds(since: connected)
            throw error
        }
        let upstream = UpstreamConnection(stream: connection, key: key, address: address, tls: connection,
                                          connectMilliseconds: FlowDraft.milliseconds(from: start, to: connected),
                                          tlsMilliseconds: FlowDraft.milliseconds(since: connected),
                                          limits: configuration.httpLimits)
        upstream.ownEndpoints = ownEndpoints
        if tlsContext.issuers.hasFetched {
            upstream.fetchedIssuer = tlsContext.issuers.source(completing: connection.peerChain)
        }
        return upstream
    }

    /// Returns a connection whose last response ended cleanly, for the next request.
    func release(_ connection: UpstreamConnection) {
        guard !connection.isHTTP2 else {
            // Never pooled: an h2 connection belongs to the one client connection that opened it.
            connection.stream.close()
            return
        }
        connection.tls?.rememberSession()
        lock.lock()
        let doomed = poolLocked(connection, now: Date())
        lock.unlock()
        doomed.forEach { $0.stream.close() }
    }

    /// Puts `connection` among the idle ones (sweeping first) unless the pool is full or closed;
    /// returns the connections for the caller to close outside the lock. Caller holds `lock`.
    private func poolLocked(_ connection: UpstreamConnection, now: Date) -> [UpstreamConnection] {
        var doomed = sweepLocked(now: now)
        if !closed && !connection.isHTTP2 && (idle[connection.key]?.count ?? 0) < maxIdlePerKey
            && idleCountLocked < maxIdleTotal {
            // In place: a copy of the list, changed and stored back, copied it on every request.
            idle[connection.key, default: []].append((connection, now))
        } else {
            doomed.append(connection)
        }
        return doomed
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

    /// How many connections `prepare` has on their way (for tests).
    var preparingConnections: Int {
        lock.lock()
        defer { lock.unlock() }
        return preparing.count
    }

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
        closed = true   // a connection `prepare` finishes later is closed, not pooled
        lock.unlock()
        all.forEach { $0.connection.stream.close() }
    }

    private func takeIdle(_ key: String) -> UpstreamConnection? {
        lock.lock()
        defer { lock.unlock() }
        // The list is changed in place (through the dictionary's values), looked up once.
        while let index = idle.index(forKey: key), let last = idle.values[index].popLast() {
            if idle.values[index].isEmpty { idle.remove(at: index) }
            if Date().timeIntervalSince(last.since) < maxIdle, isStillOpen(last.connection) {
                last.connection.reused = !last.connection.neverUsed
                last.connection.neverUsed = false
                return last.connection
            }
            last.connection.stream.close()
        }
        return nil
    }

    /// A pooled connection the server has closed shows as readable with EOF (or stray bytes).
    /// Readable TLS may also be the server's session tickets, which a connection `prepare`
    /// opened has not read yet: those are consumed and the connection kept.
    private func isStillOpen(_ connection: UpstreamConnection) -> Bool {
        var poller = pollfd(fd: connection.stream.socket.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) != 0 || connection.stream.pending > 0 else { return true }
        return connection.tls?.consumeIdleInput() ?? false
    }
}

/// A connection `UpstreamPool.prepare` is opening: the first request for its host waits for it.
private final class Preparation: @unchecked Sendable {
    private struct State {
        var outcome: Result<UpstreamConnection, any Error>?
        /// The waiter left (`DialAbandoned`): a connection that arrives later is closed.
        var abandoned = false
    }
    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    func finish(_ result: Result<UpstreamConnection, any Error>) {
        let orphan = state.withLock { state -> UpstreamConnection? in
            state.outcome = result
            guard state.abandoned, case .success(let connection) = result else { return nil }
            return connection
        }
        orphan?.stream.close()
        done.signal()
    }

    /// Waits for the connection (the connect and handshake timeouts bound it) and returns it, or
    /// throws what opening it threw; with a `watch`, throws `DialAbandoned` as soon as the client
    /// hangs up or DevProxy stops.
    func result(watch: DialWatch? = nil, target: String = "") throws -> UpstreamConnection {
        let started = Date()
        if let watch {
            while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                let stopping = watch.isStopping()
                guard stopping || watch.client.peerHasClosed else { continue }
                let gaveUp = state.withLock { state -> Bool in
                    guard state.outcome == nil else { return false }
                    state.abandoned = true
                    return true
                }
                if gaveUp {
                    throw DialAbandoned(stopping: stopping, waited: Date().timeIntervalSince(started), target: target)
                }
            }
        } else {
            done.wait()
        }
        guard let outcome = state.withLock({ $0.outcome }) else { preconditionFailure("a preparation signalled without an outcome") }
        return try outcome.get()
    }
}

/// The client an origin connection is being opened for, watched while it opens.
struct DialWatch: Sendable {
    let client: Socket
    let isStopping: @Sendable () -> Bool
}

/// The wait for an origin connection ended before the connection did: its client hung up, or
/// DevProxy is stopping.
struct DialAbandoned: Error, CustomStringConvertible {
    let stopping: Bool
    let waited: TimeInterval
    let target: String

    var description: String {
        let seconds = String(format: "%.1f", waited)
        return stopping
            ? "DevProxy stopped while it was still connecting to \(target) (\(seconds) s: no TLS or CONNECT answer yet)"
            : "the client closed the connection after \(seconds) s while DevProxy was still connecting to \(target): "
                + "no TCP, TLS or upstream-proxy answer yet (a silent origin or proxy)"
    }
}
