import CertAuthority
import Foundation
import HTTP1
import Synchronization

/// One client socket from accept to close, on a thread of its own: reads requests, answers
/// CONNECT by tunnelling or intercepting, forwards absolute-form `http://` requests.
final class ClientConnection: @unchecked Sendable {
    // Touched only by its own thread, except `abort()` from shutdown (guarded by `upstreams`).
    let server: ProxyServer
    let socket: Socket
    let clientAddress: String
    /// When the connection was accepted: the start of flows of the connection itself (a tunnel,
    /// a handshake that failed, a close without a request), which read as instantaneous.
    let accepted: Date
    /// The upstream sockets in use, so shutdown can cut an exchange blocked on an origin.
    private let upstreams = Mutex<[ObjectIdentifier: Socket]>([:])
    /// Set while the connection sleeps between requests (see `waitForFirstByte`).
    private let idle = Atomic<Bool>(false)
    /// Since when (uptime, ms) the connection has waited for or read a request head without one
    /// complete; 0 while it answers one, tunnels or streams. At the connection limit the longest
    /// waiting one makes room (`ProxyServer`): 1,024 clients trickling partial heads locked every
    /// other client out with 503 for the header timeout.
    let waitingSince = Atomic<Int64>(0)

    static func uptimeMilliseconds() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
    /// An HTTP/2 client's open streams (-1: not HTTP/2), for `isFlowing`.
    let http2Streams = Atomic<Int>(-1)
    /// Whether something flows on the connection now: a request, a response, a WebSocket, a
    /// tunnel, an HTTP/2 stream; not while it waits for a request head between requests, nor an
    /// HTTP/2 connection with no stream open.
    var isFlowing: Bool {
        waitingSince.load(ordering: .relaxed) == 0 && http2Streams.load(ordering: .relaxed) != 0
    }

    /// Set when the server closed this connection to make room (`waitingSince`).
    let evicted = Atomic<Bool>(false)
    /// An origin connection this client's requests keep to themselves (`pin`), never pooled.
    private var pinned: UpstreamConnection?

    /// The listener this client came in on; flows record it.
    let listenerInfo: Flow.ListenerInfo
    /// The process on this machine that opened the connection (its flows' `client_process`),
    /// looked up once when `run` starts; nil when unknown. Set and read on its own thread.
    private(set) var clientProcess: Flow.ClientProcess?
    /// `pin-check` when `devproxy pin-check` opened this connection (its CONNECT's User-Agent):
    /// the flows record it, and `qa verdict` leaves them out. Set and read on its own thread.
    var probe: String?
    let listenerMode: ListenerMode
    /// Where this connection's upstream connections come from (an `upstream:URL` listener's
    /// go through its proxy).
    let pool: UpstreamPool
    /// The simulated link the client's bytes cross (`--throttle`, the web UI's throttle menu); nil
    /// when the proxy can never throttle (no `--throttle` and no web UI to set one).
    let link: ThrottledLink?

    init(server: ProxyServer, socket: Socket, listener: ListenerMode = ListenerMode(kind: .regular),
         listenerAddress: String = "") {
        self.server = server
        self.socket = socket
        accepted = Date()
        self.clientAddress = socket.peerAddress?.description ?? "?"
        self.listenerMode = listener
        self.listenerInfo = Flow.ListenerInfo(mode: listener.name, address: listenerAddress)
        self.pool = server.pool(for: listener)
        // One device per client address, its port left out (`ThrottleDevices`).
        self.link = server.throttle.map { ThrottledLink(conditions: $0, client: socket.peerAddress?.host ?? "?") }
    }

    /// The client's stream as the engine reads and writes it: through the simulated link when
    /// the proxy can throttle.
    func clientStream(_ stream: ByteStream) -> ByteStream {
        guard let link else { return stream }
        return ThrottledStream(stream, link: link)
    }

    /// The connection goes to `hosts` from now on: it is throttled while a profile is set and any
    /// of them is one `--throttle-hosts` names (all of them without it).
    func throttle(hosts: String...) {
        link?.destination(hosts)
    }

    /// Why a new request or connection fails, when the throttle is Offline for the destination.
    var offlineReason: String? {
        guard link?.isOffline == true else { return nil }
        return "the throttle is Offline (DevTools' Offline, set by --throttle offline or the web UI's throttle menu): "
            + "DevProxy closed the connection without an answer, as a device with no network fails it"
    }

    /// The profile name flows record while the connection is throttled.
    var throttleName: String? {
        link?.profile?.name
    }

    /// A new flow of this connection, before any exchange: its client, listener and `probe`.
    func draft(mode: Flow.Mode, host: String, port: Int) -> FlowDraft {
        var draft = FlowDraft(client: clientAddress, process: clientProcess,
                              listener: listenerInfo, mode: mode, host: host, port: port,
                              startedAt: accepted)
        if let probe { draft.flow.probe = probe }
        draft.flow.throttle = throttleName
        return draft
    }

    /// What an origin dial for this client watches: the client hanging up, DevProxy stopping.
    var dialWatch: DialWatch {
        DialWatch(client: socket, isStopping: { [server] in server.isStopping })
    }

    /// Keeps `upstream` for this client's later requests to its origin instead of the shared pool:
    /// NTLM and Negotiate (Kerberos) authenticate the connection, not each request (RFC 4559 §4),
    /// so a pooled one served the next client as the user who signed in on it, and a handshake
    /// whose second leg went out on another pooled connection failed with 401. A connection pinned
    /// before for another origin is closed. (mitmproxy gives each client its own origin
    /// connections; Squid and Fiddler pin connections for this.)
    func pin(_ upstream: UpstreamConnection) {
        if let old = pinned, old !== upstream { old.stream.close() }
        pinned = upstream
    }

    /// The pinned connection to the origin `key` names (`UpstreamPool.key`), taken; nil when none.
    func takePinned(_ key: String) -> UpstreamConnection? {
        guard let connection = pinned, connection.key == key else { return nil }
        pinned = nil
        return connection
    }

    /// Closes the pinned connection (the client has gone).
    func closePinned() {
        pinned?.stream.close()
        pinned = nil
    }

    /// Registers an upstream socket for the duration of `body`.
    func using<R>(_ upstream: Socket, _ body: () throws -> R) rethrows -> R {
        upstreams.withLock { $0[ObjectIdentifier(upstream)] = upstream }
        defer { _ = upstreams.withLock { $0.removeValue(forKey: ObjectIdentifier(upstream)) } }
        return try body()
    }

    /// Cuts the connection if it is between requests: shutdown does that at once, as nothing is
    /// lost. (Set before the idle wait checks `isStopping`, so a connection that goes idle just
    /// as shutdown begins sees one or the other.)
    func abortIfIdle() {
        if idle.load(ordering: .sequentiallyConsistent) { socket.abort() }
    }

    /// Whether Offline, switched on while the connection is open, cuts it: `setting` covers its
    /// destination and something flows on it. An idle one is left: its next request fails
    /// (`offlineReason`). Another thread asks (`ProxyServer.cutOffline`).
    func isCut(byOffline setting: ThrottleSwitch.Setting) -> Bool {
        guard let link, isFlowing else { return false }
        return link.covered(by: setting)
    }

    /// Cuts the connection as a lost network does (`Socket.cutAsLost`: the client gets a reset and
    /// nothing more) and shuts its upstream sockets in use, so a thread waiting on either wakes and
    /// ends its flows (which `ProxyServer.emit` records as `offline`). From another thread.
    func cutAsLost() {
        socket.cutAsLost()
        upstreams.withLock { $0.values.forEach { $0.abort() } }
    }

    /// Cuts the client socket and every upstream socket in use (shutdown past its grace).
    func abort() {
        socket.abort()
        upstreams.withLock { $0.values.forEach { $0.abort() } }
    }

    /// Serves the connection until it closes.
    func run() {
        defer { socket.close() }
        // Once per connection, before its first flow: a short-lived client (curl) is still there.
        // A WireGuard device's connection comes from the tunnel, never from a process here.
        // A redirected app's socket is connected to where it was going, not to the listener.
        if listenerMode.kind != .wireguard {
            clientProcess = SocketOwners.shared.owner(
                ofPeerOf: socket, connectedTo: listenerMode.kind == .transparent ? socket.originalDestination : nil)
        }
        switch listenerMode.kind {
        case .socks5:
            SOCKS5Front(connection: self).run()
            return
        case .transparent, .wireguard:
            TransparentFront(connection: self).run()
            return
        case .reverse:
            ReverseFront(connection: self).run()
            return
        case .regular, .upstream:
            break
        }
        socket.setTimeout(server.configuration.headerTimeout)
        let reader = MessageReader(stream: clientStream(PlainStream(socket)),
                                   parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        var first = true
        while var head = readHead(reader, first: first, mode: .http, tlsInfo: nil) {
            first = false
            // Taken off first, whatever answers the request: an onboarding request replayed from
            // the web UI recorded the header, its secret included, under a flow id the UI never found.
            let replay = ReplayMark.take(from: &head, secret: server.configuration.replaySecret)
            // A program in `devproxy exec --transparent`'s namespace, named by the exec's relay.
            if let program = NamespaceCapture.reportedClient(taking: &head, relay: clientProcess) {
                clientProcess = program
            }
            if let site = server.configuration.onboarding,
               let destination = OnboardingRequest.destination(of: head, listenerAddress: listenerInfo.address,
                                                               isOwnListener: { [server] host, port in
                                                                   server.ownListeners.refusal(host: host, port: port) != nil
                                                               }) {
                // The onboarding site is public material, answered without proxy credentials.
                let context = ExchangeContext(server: server, connection: self, client: reader,
                                              clientAddress: clientAddress, mode: .http, clientTLS: nil, signer: nil,
                                              persona: nil)
                guard HTTPExchange(context: context, head: head, destination: destination, route: site.route,
                                   replay: replay).run(),
                      !server.isStopping else { return }
                continue
            }
            if let failure = server.authorizationFailure(head) {
                emitRejected(head, kind: .proxyAuthRequired, status: 407, message: failure, reader: reader,
                             extra: [("Proxy-Authenticate", "Basic realm=\"DevProxy\"")])
                return
            }
            if head.method == "CONNECT" {
                // Its 200 goes unthrottled: the link is the one to the target, set once it is known.
                link?.destination(nil)
                ConnectHandler(connection: self, reader: reader).run(head)
                return
            }
            guard case .absolute(let scheme, let host, let port, let path)? = try? head.requestTarget(), scheme == "http" || scheme == "https" else {
                emitRejected(head, kind: .badRequest, status: 400,
                             message: "DevProxy is a proxy: send absolute-form requests (GET http://host/path) or CONNECT host:port",
                             reader: reader)
                return
            }
            // Plain-HTTP proxying: each request's host decides, as a client may send any host on one connection.
            throttle(hosts: host)
            link?.requestHeadRead()
            let context = ExchangeContext(server: server, connection: self, client: reader, clientAddress: clientAddress,
                                          mode: .http, clientTLS: nil, signer: nil, persona: nil)
            // RFC 9112 §3.2.4: an OPTIONS whose absolute-form URI has an empty path and no query asks
            // about the server itself, and goes on as `OPTIONS *` (a replayed `OPTIONS *` flow's URL
            // is `https://host:port`, so it goes on as it came).
            let asterisk = head.method == "OPTIONS" && Self.hasEmptyPath(absoluteForm: head.target)
            let destination = Destination(tls: scheme == "https", host: host, port: port ?? (scheme == "https" ? 443 : 80),
                                          pathAndQuery: asterisk ? "*" : path, editedHost: replay?.host)
            let exchange = HTTPExchange(context: context, head: head, destination: destination, replay: replay)
            guard exchange.run(), !server.isStopping else { return }
        }
    }

    /// Reads the next request head within the header timeout (the idle timeout before its
    /// first byte). Records a flow and answers 400/408/414/431 for a bad or slow head; nil when
    /// the connection is done.
    func readHead(_ reader: MessageReader<HTTP1RequestParser>, first: Bool, mode: Flow.Mode, tlsInfo: Flow.TLSInfo.ClientSide?,
                  draft makeDraft: (() -> FlowDraft)? = nil, onCleanClose: (() -> Void)? = nil) -> HTTPRequestHead? {
        let configuration = server.configuration
        let before = reader.bytesRead
        // A flow for a head that failed: inside an intercepted CONNECT, one that knows the target,
        // signer and persona (`makeDraft`); a bad request there had host "" and port 0, and
        // `qa verdict` counted it under the team persona.
        func blankDraft() -> FlowDraft {
            if let makeDraft { return makeDraft() }
            var draft = FlowDraft(client: clientAddress, process: clientProcess,
                                  listener: listenerInfo, mode: mode, host: "", port: 0)
            if let tlsInfo { draft.flow.tls = Flow.TLSInfo(client: tlsInfo, upstream: nil) }
            return draft
        }
        waitingSince.store(Self.uptimeMilliseconds(), ordering: .relaxed)
        defer { waitingSince.store(0, ordering: .relaxed) }
        do {
            // A keep-alive connection may idle (poll() bounds that by the idle timeout); once a
            // request starts it has the header timeout. The socket's own per-read timeout stays
            // at the header timeout, so the hot path makes no setsockopt calls.
            if !first || mode == .https {
                if try waitForFirstByte(reader) == false {
                    if reader.bytesRead == before { onCleanClose?() }
                    return nil
                }
            }
            let deadline = Date().addingTimeInterval(configuration.headerTimeout)
            guard let event = try reader.next(deadline: deadline) else {
                if reader.bytesRead == before { onCleanClose?() }
                return nil
            }
            guard case .head(let head) = event else { return nil }
            // A slow head may have tightened the per-read timeout to its deadline.
            socket.setTimeout(configuration.headerTimeout)
            return head
        } catch let error as HTTP1ParseError where error.code == .socksGreeting && mode == .http {
            // The client waits for a SOCKS reply: it gets SOCKS's refusal at once (SOCKS5: no
            // acceptable method; SOCKS4: request rejected), not an HTTP answer after the timeout.
            var draft = FlowDraft(client: clientAddress, process: clientProcess,
                                  listener: listenerInfo, mode: mode, host: "", port: 0)
            let version = reader.parser.takeRemainingBytes().first ?? 5
            draft.fail(.badRequest, socksOnHTTPListener(version: version))
            try? reader.stream.write(version == 4 ? [0x00, 0x5B, 0, 0, 0, 0, 0, 0] : [0x05, 0xFF])
            server.emit(draft.finished())
        } catch let error as HTTP1ParseError where error.code == .truncated {
            // The client hung up partway through its head (a cancelled request): its flow says so,
            // without a 400 nobody would read, as any other client that gives up.
            var draft = blankDraft()
            if evicted.load(ordering: .relaxed) {
                draft.fail(.overloaded, "DevProxy closed the connection to make room at its \(configuration.maxConnections) "
                           + "connections: it had waited longest for a complete request head (\(reader.bytesRead - before) bytes)")
            } else {
                draft.fail(.clientClosed, "the client closed the connection after \(reader.bytesRead - before) bytes of an "
                           + "incomplete request head")
            }
            server.emit(draft.finished())
        } catch let error as HTTP1ParseError {
            var draft = blankDraft()
            let reason = error.code == .tlsHandshake ? tlsOnPlainListener : error.reason
            draft.fail(.badRequest, reason)
            // To a TLS client this answer reads as "wrong version number", the symptom people
            // search for; the flow and the console say what to change.
            try? reader.stream.write(ErrorResponse.answer(status: error.status, detail: reason, kind: .badRequest,
                                                          bodyLimit: configuration.bodyLimit, recordingIn: &draft))
            server.emit(draft.finished())
        } catch let error as NetworkError where error.kind == .timedOut {
            guard reader.bytesRead > before else { return nil }   // idle keep-alive: just close
            var draft = blankDraft()
            draft.fail(.clientTimeout, "the client did not send a complete request head within \(Int(configuration.headerTimeout)) s")
            try? reader.stream.write(ErrorResponse.answer(status: 408, detail: "request head not received within "
                                                              + "\(Int(configuration.headerTimeout)) s", kind: .clientTimeout,
                                                          bodyLimit: configuration.bodyLimit, recordingIn: &draft))
            server.emit(draft.finished())
        } catch {
            // A client that checks pins after the handshake and hangs up while our session
            // tickets are unread makes its kernel send RST, not FIN: the same story as a close.
            if reader.bytesRead == before { onCleanClose?() }
            if reader.bytesRead > before {
                var draft = FlowDraft(client: clientAddress, process: clientProcess,
                                      listener: listenerInfo, mode: mode, host: "", port: 0)
                draft.fail(.clientClosed, "the connection failed in the middle of a request head: \(error)")
                server.emit(draft.finished())
            }
        }
        return nil
    }

    /// Why a TLS handshake on this plain-HTTP listener failed, and what the client should use.
    var tlsOnPlainListener: String {
        let address = listenerInfo.address
        switch listenerMode.kind {
        case .reverse:
            return "the client began a TLS handshake on this plain-HTTP reverse listener: use http://\(address), "
                + "or run the listener with --reverse-tls"
        default:
            return "the client began a TLS handshake on the proxy's plain-HTTP port: it is set to use https://\(address) "
                + "as its proxy; use http://\(address) (HTTPS goes through the proxy with CONNECT, and is still intercepted)"
        }
    }

    /// Why a SOCKS client's greeting on this HTTP listener was refused, and what to use.
    func socksOnHTTPListener(version: UInt8) -> String {
        "the client spoke SOCKS\(version) to the proxy's HTTP port: set it to use http://\(listenerInfo.address) as an "
            + "HTTP proxy, or run a SOCKS5 listener (--mode socks5@HOST:PORT) and point it there"
    }

    /// Waits for the next request's first byte (or buffered TLS data); false on close, at the
    /// idle timeout, or at shutdown.
    ///
    /// Most clients send their next request at once; one that does not gets its buffers freed
    /// after 250 ms and then sleeps in one `poll` until its next request, the idle timeout, or
    /// shutdown (which cuts idle connections at once, `abortIfIdle`). No periodic wake-ups: a
    /// thousand idle connections cost no CPU.
    private func waitForFirstByte(_ reader: MessageReader<HTTP1RequestParser>) throws -> Bool {
        if try reader.hasBufferedInput() { return true }
        var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(server.configuration.idleTimeout)
        if poll(&poller, 1, min(250, Socket.pollMilliseconds(server.configuration.idleTimeout))) > 0 { return true }
        reader.releaseBuffer()
        reader.stream.releaseBuffers()
        idle.store(true, ordering: .sequentiallyConsistent)
        defer { idle.store(false, ordering: .sequentiallyConsistent) }
        while !server.isStopping {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            let ready = poll(&poller, 1, Socket.pollMilliseconds(remaining))
            if ready > 0 { return !server.isStopping }
            if ready < 0 && errno != EINTR { return false }
        }
        return false
    }

    /// Answers a request the proxy refuses itself and records it.
    func emitRejected(_ head: HTTPRequestHead, kind: FlowErrorKind, status: Int, message: String,
                      reader: MessageReader<HTTP1RequestParser>, extra: [(String, String)] = []) {
        // The host the request named (CONNECT's authority, an absolute URL's), so filtering by host
        // finds the refusal too: it was recorded with host "" and port 0.
        let (host, port): (String, Int) = switch try? RequestTarget(parsing: head.target, method: head.method) {
        case .authority(let host, let port)?: (host, port)
        case .absolute(let scheme, let host, let port, _)?: (host, port ?? (scheme == "https" ? 443 : 80))
        default: ("", 0)
        }
        var draft = FlowDraft(client: clientAddress, process: clientProcess,
                              listener: listenerInfo, mode: .http, host: host, port: port)
        draft.flow.request = Flow.Request(method: head.method, url: head.target, httpVersion: head.version.description,
                                          headers: FlowDraft.headerPairs(head.headers, redact: server.configuration.redactHeaders), body: nil)
        draft.fail(kind, message)
        try? reader.stream.write(ErrorResponse.answer(status: status, detail: message, kind: kind, extraHeaders: extra,
                                                      bodyLimit: server.configuration.bodyLimit, recordingIn: &draft))
        server.emit(draft.finished())
    }
}

extension ClientConnection {
    /// Whether an absolute-form target (`http://host:port`) has neither a path nor a query.
    static func hasEmptyPath(absoluteForm target: String) -> Bool {
        guard let schemeEnd = target.range(of: "://") else { return false }
        return !target[schemeEnd.upperBound...].contains { $0 == "/" || $0 == "?" }
    }
}
