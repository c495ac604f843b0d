import CertAuthority
import CSystem
import Foundation
import GRPCWire
import HTTP1
import Synchronization


/// The proxy: accepts clients on a thread of its own and serves each on its own thread,
/// handing every finished flow to the sinks.
///
/// Why threads and blocking I/O: this toolchain has no event-loop library, the Swift
/// concurrency pool has two threads here (blocking it froze a probe server), and a thread per
/// connection with a poll() relay measured ~58 MB/s TLS↔TLS, simple to reason about. Idle
/// connections cost a thread stack each (virtual; a few KiB resident).
public final class ProxyServer: @unchecked Sendable {
    // Immutable after init except `listener` (set in start) and `state` (a Mutex).
    public let configuration: ProxyConfiguration
    /// The network conditions connections follow (`ProxyConfiguration.throttleSwitch`, else one
    /// fixed by `--throttle`); nil when no connection can ever be slowed.
    let throttle: ThrottleSwitch?
    /// The connections Offline cut while they were open, whose flows `emit` records as `offline`.
    let offlineCuts = OfflineCuts()
    let leaves: LeafSource
    let serverTLS: TLSContext
    /// The listener contexts of personas that change TLS settings, by persona name.
    let personaTLS: [String: TLSContext]
    let pool: UpstreamPool
    /// The pools of `upstream:URL` listeners, by proxy URL.
    private let proxiedPools: [ModeURL: UpstreamPool]
    /// Shared by every pool: the local ends of DevProxy's own upstream connections.
    let ownEndpoints = OwnEndpoints()
    /// The bound listeners' addresses, which no connection dials.
    let ownListeners = OwnListeners()
    private let sinks: [FlowSink]
    /// What DevProxy answers itself: the onboarding site, then `configuration.localRoutes`.
    let localRoutes: [LocalRoute]
    /// The sinks that show flows while they run (the session store behind the web UI).
    private let lifecycleSinks: [FlowSink]
    /// The bound listeners, one per mode, the first one taking `--listen`.
    private var listeners: [(mode: ListenerMode, listener: Listener)] = []
    /// The `wireguard` mode's capture (set before `start`, which serves its namespace's listener).
    public var wireGuard: WireGuardCapture?
    /// The listeners of captures (`wireGuard`'s), with the address flows name for them (its UDP one).
    private var captured: [(mode: ListenerMode, listener: Listener, address: SocketAddress)] = []
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    /// The threads client connections run on (512 KiB stacks; one kept waiting after its
    /// connection ends, for the next).
    let connectionThreads = ConnectionThreads(stackSize: 512 * 1024)

    private struct State {
        var connections: [ObjectIdentifier: ClientConnection] = [:]
        var stopping = false
        /// When `stop` began (the system's uptime).
        var stopBegan: TimeInterval = .infinity
        var acceptDone = false
        /// When the last connection ended (nil while any is open), and the idle trims done since.
        var idleSince: Date?
        var idleTrims = 0
    }

    /// The map rules switched on now (`ProxyConfiguration.mapRules`), read for every request.
    /// Through the configuration, its computed getter copied the whole `ProxyConfiguration` (a
    /// retain and a release for each of its references) on every read: ~5k instructions an h2
    /// stream, from four reads (callgrind, docs/performance.md, run 53). Its two stored parts are
    /// read here instead.
    var mapRules: MapRules { configuration.ruleBoard?.rules ?? configuration.startRules }

    /// Seconds after the proxy went idle at which the heap is trimmed again (the `index`th time):
    /// 1, 4 and 15 s, while the sinks (the session store's writer) work off a backlog and free its
    /// memory, then every 30 s while it stays idle (the web UI's queries and pages free memory too).
    private static func idleTrimDelay(_ index: Int) -> TimeInterval {
        let first: [TimeInterval] = [1, 4, 15]
        return index < first.count ? first[index] : 15 + 30 * TimeInterval(index - first.count + 1)
    }

    /// - Throws: `ConfigurationError` for a non-loopback listen without `allowRemote`.
    public init(configuration: ProxyConfiguration, leaves: LeafSource, sinks: [FlowSink]) throws {
        var configuration = configuration
        // `--grpc-reflection` names the flows of its questions, as the web UI's replays do.
        if configuration.grpcReflection, configuration.replaySecret == nil {
            configuration.replaySecret = String(UInt64.random(in: .min ... .max), radix: 16)
                + String(UInt64.random(in: .min ... .max), radix: 16)
        }
        self.configuration = configuration
        throttle = configuration.throttleSwitch ?? configuration.throttle.map {
            ThrottleSwitch(ThrottleSwitch.Setting(profile: $0, hosts: configuration.throttleHosts))
        }
        self.leaves = leaves
        self.sinks = sinks
        lifecycleSinks = sinks.filter(\.observesLifecycle)
        localRoutes = (configuration.onboarding.map { [$0.route] } ?? []) + configuration.localRoutes
        serverTLS = try TLSContext.server()
        personaTLS = [Persona.tls12.rawValue: try TLSContext.server(profile: .tls12),
                      Persona.noForwardSecrecy.rawValue: try TLSContext.server(profile: .rsaKeyExchange)]
        let clientTLS = try TLSContext.client(extraCAs: configuration.upstreamCAs,
                                              insecure: configuration.insecureUpstream)
        // Connections are recorded only when a transparent listener could see them come back.
        let recorded = configuration.modes.contains { $0.kind == .transparent } ? ownEndpoints : nil
        pool = UpstreamPool(configuration: configuration, tlsContext: clientTLS, proxy: configuration.upstreamProxy,
                            ownEndpoints: recorded, ownListeners: ownListeners)
        var proxied: [ModeURL: UpstreamPool] = [:]
        for mode in configuration.modes where mode.kind == .upstream {
            guard let url = mode.url, proxied[url] == nil else { continue }
            let proxy = try UpstreamProxy(url: url, authorization: configuration.upstreamProxyAuthorization)
            proxied[url] = UpstreamPool(configuration: configuration, tlsContext: clientTLS, proxy: proxy,
                                        ownEndpoints: recorded, ownListeners: ownListeners)
        }
        proxiedPools = proxied
        // Offline switched on while connections are open cuts what flows on those it covers.
        throttle?.observe { [weak self] setting in
            guard let self, let setting, setting.profile.offline else { return }
            self.cutOffline(setting)
        }
    }

    /// Every open connection, for a change that reaches them all (`cutOffline`).
    var openConnections: [ClientConnection] { state.withLock { Array($0.connections.values) } }

    /// The pool a listener's connections use: its own upstream proxy's, else the shared one.
    func pool(for mode: ListenerMode) -> UpstreamPool {
        mode.url.flatMap { mode.kind == .upstream ? proxiedPools[$0] : nil } ?? pool
    }

    private var allPools: [UpstreamPool] { [pool] + proxiedPools.values }

    /// The client-facing context for a presentation's persona: the standard one unless the
    /// persona changes TLS settings (`tls12`, `no-forward-secrecy`).
    func serverTLS(forPersona persona: String) -> TLSContext {
        personaTLS[persona] ?? serverTLS
    }

    /// The address actually listened on (the real port when 0 was asked for): the first listener's.
    public var address: SocketAddress? { listeners.first?.listener.address }

    /// Every listener's mode and the address it is bound to, in `--mode` order.
    public var boundListeners: [(kind: ListenerMode.Kind, name: String, address: SocketAddress)] {
        listeners.map { ($0.mode.kind, $0.mode.name, $0.listener.address) }
            + captured.map { ($0.mode.kind, $0.mode.name, $0.address) }
    }

    /// Whether `address` is one DevProxy listens on (a wildcard listener matches any address
    /// of its family on its port).
    func isOwnListener(_ address: SocketAddress) -> Bool {
        listeners.contains { entry in
            let own = entry.listener.address
            guard own.port == address.port else { return false }
            let wildcard = own.host == "0.0.0.0" || own.host == "::"
            return own.host == address.host || (wildcard && own.family == address.family)
        }
    }

    /// Binds and starts accepting.
    ///
    /// - Throws: `ConfigurationError` when asked to listen beyond loopback without
    ///   `allowRemote`; `NetworkError` when the address cannot be bound.
    public func start() throws {
        // OpenSSL's socket BIO writes with write(), where MSG_NOSIGNAL cannot help: a client
        // that hangs up mid-write would otherwise kill the whole process.
        signal(SIGPIPE, SIG_IGN)
        var bound: [(mode: ListenerMode, listener: Listener)] = []
        for (index, mode) in configuration.modes.enumerated() {
            if mode.kind == .wireguard {
                guard let capture = wireGuard else {
                    throw ConfigurationError("--mode wireguard needs its capture, which devproxy run makes")
                }
                if !capture.address.isLoopback && !configuration.allowRemote {
                    throw ConfigurationError("refusing to listen on \(capture.address) (wireguard): a device there would "
                                             + "send the proxy all its traffic; pass --allow-remote to do it anyway")
                }
                captured.append((mode, capture.listener, capture.address))
                // A device removed while running (`devproxy wireguard --remove-peer N`) keeps no connection.
                capture.onPeerRemoved { [weak self] host in self?.abortConnections(fromWireGuardHost: host) }
                continue
            }
            let host: String, port: Int
            if let modeHost = mode.host, let modePort = mode.port {
                (host, port) = (modeHost, modePort)
            } else if index == 0 {
                (host, port) = (configuration.listenHost, configuration.listenPort)
            } else {
                throw ConfigurationError("--mode \(mode): only the first mode takes --listen; give this one an address (\(mode.kind)@127.0.0.1:PORT)")
            }
            #if !os(Linux)
            if mode.kind == .transparent {
                throw ConfigurationError("--mode transparent needs Linux (SO_ORIGINAL_DST)")
            }
            #endif
            let listener = try Listener(host: host, port: port, transparent: mode.kind == .transparent)
            if !listener.address.isLoopback && !configuration.allowRemote {
                throw ConfigurationError("refusing to listen on \(listener.address): anyone on the network could use the proxy and read decrypted traffic; pass --allow-remote (and --proxy-auth FILE) to do it anyway")
            }
            bound.append((mode, listener))
        }
        listeners = bound
        ownListeners.set(bound.map(\.listener.address))
        if configuration.grpcReflection { grpcReflection = makeReflection() }
        for (mode, listener, address) in bound.map({ ($0.mode, $0.listener, $0.listener.address) }) + captured {
            let thread = Thread { [self] in acceptLoop(listener, mode: mode, address: address.description) }
            thread.name = "devproxy-accept-\(mode.kind.rawValue)"
            thread.start()
        }
    }

    /// HTTP/1.1 requests of HTTP/2 streams in flight (`HTTP1StreamExchange`), each on a thread
    /// and an origin connection of its own; at most `maxConnections`, past which a stream is
    /// refused (`reserveStreamLeg`). 30 connections of 100 streams each made 3,036 threads, 3,108
    /// descriptors and 375 MiB, which the connection limit did not bound.
    private let streamLegs = Atomic<Int>(0)

    /// Takes a place for one HTTP/1.1 leg of an HTTP/2 stream; false when `maxConnections` are taken.
    func reserveStreamLeg() -> Bool {
        let taken = streamLegs.add(1, ordering: .relaxed).newValue
        guard taken <= configuration.maxConnections else {
            streamLegs.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives back a place `reserveStreamLeg` took.
    func releaseStreamLeg() { streamLegs.subtract(1, ordering: .relaxed) }

    /// `--grpc-reflection`'s questions and answers; set in `start`, before any connection.
    private(set) var grpcReflection: GRPCReflection?

    /// The reflection client, asking through the regular listener (none: a warning, and no question).
    private func makeReflection() -> GRPCReflection? {
        guard let entry = ownEntry else {
            StandardError.warn("--grpc-reflection asks servers through a regular listener, and there is none: "
                               + "no server will be asked (add --mode regular@127.0.0.1:PORT)")
            return nil
        }
        return GRPCReflection(listener: .init(host: entry.host, port: entry.port, authorization: entry.authorization,
                                              secret: configuration.replaySecret),
                              base: configuration.protoSchema)
    }

    /// The schema a gRPC call's messages are typed by: `--proto`'s, with what `--grpc-reflection`
    /// learnt from the server (asking it when the call's method is new).
    func protoSchema(host: String, port: Int, tls: Bool, path: String?, contentType: String?) -> ProtoSchema? {
        guard let grpcReflection, let path, let framing = GRPCReflection.framing(contentType: contentType) else {
            return configuration.protoSchema
        }
        return grpcReflection.schema(host: host, port: port, tls: tls, path: path, framing: framing)
    }

    /// What a gRPC call to `host`:`port` is typed by now (`--proto`, and what the server told
    /// `--grpc-reflection`), asking nothing: for calls recorded before an answer came (web UI).
    public func knownSchema(host: String, port: Int) -> ProtoSchema? {
        grpcReflection?.known(host: host, port: port) ?? configuration.protoSchema
    }

    /// `state.stopping`, readable without the lock: every connection asks at every request, and
    /// sixteen connections taking turns on `state` for it showed as 3 % of the proxy's CPU in
    /// lock contention (perf of HTTP/1.1 keep-alive at 16 connections). Set inside the lock, when
    /// `state.stopping` is, so a connection admitted before `stop` sees it at its next request.
    private let stopping = Atomic<Bool>(false)

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Stops accepting, gives in-flight exchanges `shutdownGrace` to finish, cuts the rest
    /// (their flows are recorded as aborted), then closes the sinks.
    public func stop() {
        let alreadyStopping = state.withLock { state in
            guard !state.stopping else { return true }
            state.stopping = true
            state.stopBegan = ProcessInfo.processInfo.systemUptime
            stopping.store(true, ordering: .releasing)
            return false
        }
        guard !alreadyStopping else { return }
        // Held requests are answered now (502, `intercept.outcome` `stopped`): their threads
        // would otherwise wait out the grace period for a web UI that is going too.
        configuration.intercepts?.stop()
        for _ in 0..<(listeners.count + captured.count) { finished.wait() }
        // Connections between requests go now; exchanges in flight get the grace period.
        for connection in state.withLock({ Array($0.connections.values) }) { connection.abortIfIdle() }
        let deadline = Date().addingTimeInterval(configuration.shutdownGrace)
        while Date() < deadline && state.withLock({ !$0.connections.isEmpty }) { usleep(20_000) }
        for connection in state.withLock({ Array($0.connections.values) }) { connection.abort() }
        let cut = Date().addingTimeInterval(2)
        while Date() < cut && state.withLock({ !$0.connections.isEmpty }) { usleep(10_000) }
        // A cut connection may still be writing its flows (a long gRPC stream's record takes a
        // while to build): the sinks stay open for it, up to `shutdownRecordWait`. Closed at
        // once, flows finished before the cut were dropped without a word, exit status 0.
        let recording = state.withLock { $0.connections.count }
        if recording > 0 {
            StandardError.warn("waiting up to \(Int(Self.shutdownRecordWait)) s for \(recording) connection(s) to record "
                               + "their flows")
            let last = Date().addingTimeInterval(Self.shutdownRecordWait)
            while Date() < last && state.withLock({ !$0.connections.isEmpty }) { usleep(20_000) }
        }
        let left = state.withLock { $0.connections.count }
        // Only now: the devices' exchanges in flight needed their tunnel through the grace period.
        wireGuard?.stop()
        allPools.forEach { $0.closeAll() }
        connectionThreads.close()
        sinks.forEach { $0.close() }
        if left > 0 {
            StandardError.warn("\(left) connection(s) were still recording when the logs closed: their flows are missing")
        }
    }

    /// Cuts every connection that came through the wireguard listener from tunnel address `host`
    /// (a device removed while running), with its upstream connections.
    func abortConnections(fromWireGuardHost host: String) {
        let cut = state.withLock { state in
            state.connections.values.filter { $0.listenerMode.kind == .wireguard && $0.socket.peerAddress?.host == host }
        }
        cut.forEach { $0.abort() }
    }

    /// The most shutdown waits, after the grace period and the cut, for connections that are
    /// still recording their flows.
    static let shutdownRecordWait: TimeInterval = 30

    /// Hands a finished flow to every sink; flows cut by shutdown are marked aborted, with what
    /// the cut looked like from inside kept in the message.
    func emit(_ flow: consuming Flow) {
        if isStopping && Self.isCut(flow, stopBegan: state.withLock { $0.stopBegan }) {
            // The cut seen from inside, unless it is the cut itself: shutdown aborting the client's
            // socket reads there as the client closing, which it did not.
            let detail = flow.error.flatMap { $0.kind == FlowErrorKind.clientClosed.rawValue ? nil : " (\($0.kind): \($0.message))" } ?? ""
            flow.error = Flow.FlowError(kind: FlowErrorKind.aborted.rawValue, message: "DevProxy was shutting down" + detail, alert: nil)
        }
        if offlineCuts.any { offlineCuts.mark(&flow) }
        configuration.signatures?.check(&flow)
        // The log line is encoded once for every sink that records it (the flow log, the store).
        var line: [UInt8]?
        for sink in sinks {
            guard sink.recordsLogLine else {
                sink.record(flow)
                continue
            }
            if line == nil { line = JSONLinesFlowLog.line(for: flow) }
            sink.record(flow, line: line ?? [])
        }
    }

    /// Whether shutdown, begun at `stopBegan` (uptime), cut `flow`: it failed after that, or it
    /// ended with no answer and no failure of its own. A flow that had failed by itself before
    /// (an upstream timeout answered 504, say, its flow emitted a moment after `stop` began) keeps
    /// its own cause.
    static func isCut(_ flow: borrowing Flow, stopBegan: TimeInterval) -> Bool {
        // A request held at a breakpoint that stopping answered (502, `intercept_aborted`) was not cut.
        if let error = flow.error {
            return error.kind != FlowErrorKind.interceptAborted.rawValue && (error.recordedAt ?? .infinity) >= stopBegan
        }
        return flow.response == nil && flow.mode != .tunnel
    }

    /// The request head of `flow` is known: sinks that show running flows get it now.
    func started(_ flow: borrowing Flow) {
        for sink in lifecycleSinks { sink.started(flow) }
    }

    /// The response head of `flow` is known.
    func responded(_ flow: borrowing Flow) {
        for sink in lifecycleSinks { sink.responded(flow) }
    }

    /// `flow` is still running and has more to show than it had (`ProgressSchedule`).
    func progressed(_ flow: borrowing Flow) {
        for sink in lifecycleSinks { sink.progressed(flow) }
    }

    /// Whether any sink shows running flows (the engine takes no snapshots otherwise).
    var showsRunningFlows: Bool { !lifecycleSinks.isEmpty }

    /// Why a request lacks valid proxy credentials, or nil when it is authorised.
    func authorizationFailure(_ head: HTTPRequestHead) -> String? {
        guard !configuration.proxyCredentials.isEmpty else { return nil }
        guard let header = head.headers["Proxy-Authorization"] else { return "proxy credentials required" }
        // RFC 9110 §11.4: the scheme, then one or more spaces (`Basic   dXNlcg==` was refused).
        let parts = header.split(separator: " ", maxSplits: 1)
        let token = parts.count == 2 ? parts[1].drop(while: { $0 == " " }) : ""
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Data(base64Encoded: String(token)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else {
            return "Proxy-Authorization must be Basic credentials"
        }
        let user = String(text[..<colon]), password = String(text[text.index(after: colon)...])
        return configuration.proxyCredentials.contains(ProxyCredential(user: user, password: password)) ? nil : "wrong proxy credentials"
    }

    private func acceptLoop(_ listener: Listener, mode: ListenerMode, address: String) {
        defer { finished.signal() }
        while !isStopping {
            guard let socket = (try? listener.accept(timeout: UpstreamPool.sweepInterval)) ?? nil else {
                // A quiet tick: idle upstream connections expire even when no request comes to
                // release another one; once the proxy is idle, the freed heap goes back too.
                let swept = allPools.map { $0.sweep() }.contains(true)
                let trimDue = state.withLock { state -> Bool in
                    guard state.connections.isEmpty else { return false }
                    guard let since = state.idleSince,
                          Date().timeIntervalSince(since) >= Self.idleTrimDelay(state.idleTrims) else { return swept }
                    state.idleTrims += 1
                    return true
                }
                if trimDue { trimHeap() }
                continue
            }
            let connection = ClientConnection(server: self, socket: socket, listener: mode, listenerAddress: address)
            let admitted = state.withLock { state -> Bool in
                if state.connections.count >= configuration.maxConnections {
                    // Full: the connection that has waited longest for a complete request head
                    // (an idle keep-alive one, a client trickling its head) makes room; only
                    // when every one is answering, tunnelling or streaming is the newcomer refused.
                    guard let (key, oldest) = state.connections
                        .map({ ($0.key, $0.value, $0.value.waitingSince.load(ordering: .relaxed)) })
                        .filter({ $0.2 > 0 }).min(by: { $0.2 < $1.2 }).map({ ($0.0, $0.1) }) else { return false }
                    oldest.evicted.store(true, ordering: .relaxed)
                    oldest.socket.abort()
                    state.connections[key] = nil
                }
                state.connections[ObjectIdentifier(connection)] = connection
                return true
            }
            guard admitted else {
                refuseOverload(connection)
                continue
            }
            connectionThreads.run { [self] in
                connection.run()
                connection.closePinned()
                let idle = state.withLock { state in
                    state.connections.removeValue(forKey: ObjectIdentifier(connection))
                    guard state.connections.isEmpty else { return false }
                    state.idleSince = Date()
                    state.idleTrims = 0
                    return true
                }
                if idle { trimHeap() }
            }
        }
    }

    /// glibc keeps freed memory in per-thread arenas; after a burst of connections (a thousand
    /// idle clients, thousands of hosts) hand it back once the proxy is quiet again.
    private func trimHeap() {
        #if os(Linux)
        malloc_trim(0)
        #endif
    }

    /// 503 for a client beyond `maxConnections`, answered on the accept thread (short, bounded).
    private func refuseOverload(_ connection: ClientConnection) {
        connection.socket.setTimeout(1)
        let message = "DevProxy is serving its maximum of \(configuration.maxConnections) connections; retry shortly"
        var draft = FlowDraft(client: connection.clientAddress, process: connection.clientProcess,
                              listener: connection.listenerInfo, mode: .http, host: "", port: 0)
        draft.fail(.overloaded, message)
        try? PlainStream(connection.socket).write(ErrorResponse.answer(status: 503, detail: message, kind: .overloaded,
                                                                       bodyLimit: configuration.bodyLimit,
                                                                       recordingIn: &draft))
        emit(draft.finished())
        connection.socket.close()
    }
}
