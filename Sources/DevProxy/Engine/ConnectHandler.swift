import CertAuthority
import Foundation
import HTTP1

/// `CONNECT host:port`: answers 200, looks at the ClientHello, then either tunnels the bytes
/// untouched or terminates TLS with a per-host leaf and serves the requests inside.
struct ConnectHandler {
    let connection: ClientConnection
    let reader: MessageReader<HTTP1RequestParser>
    var server: ProxyServer { connection.server }

    func run(_ head: HTTPRequestHead) {
        guard case .authority(let host, let port)? = try? head.requestTarget() else {
            connection.emitRejected(head, kind: .badRequest, status: 400, message: "CONNECT needs host:port, got \"\(head.target)\"", reader: reader)
            return
        }
        // A CONNECT has no content (RFC 9110 §9.3.6): with a length or a coding, bytes after the
        // head would be the body to one reading and the tunnel's first bytes to another.
        if head.headers["Transfer-Encoding"] != nil || (head.headers["Content-Length"].flatMap { Int($0) } ?? 0) > 0 {
            connection.emitRejected(head, kind: .badRequest, status: 400,
                                    message: "a CONNECT request has no content (RFC 9110 §9.3.6); this one declares a body",
                                    reader: reader)
            return
        }
        // Port 0 names no service: the tunnel was answered 200 and then waited for a ClientHello.
        guard (1...65535).contains(port) else {
            connection.emitRejected(head, kind: .badRequest, status: 400,
                                    message: "CONNECT to port \(port): a port is 1 to 65535", reader: reader)
            return
        }
        let dial = server.configuration.resolve.address(host: host, port: port)
        if let refusal = server.configuration.forbiddenDestinations.refusal(host: dial, port: port)
            ?? server.ownListeners.refusal(host: dial, port: port) {
            connection.emitRejected(head, kind: .destinationRefused, status: 403, message: refusal, reader: reader)
            return
        }
        if head.headers["User-Agent"] == QAVerdict.probeUserAgent { connection.probe = "pin-check" }
        // Offline: the tunnel is never opened, its CONNECT never answered.
        connection.throttle(hosts: host)
        if let reason = connection.offlineReason {
            recordFailure(.https, host: host, port: port, .offline, reason)
            return
        }
        // Bytes a client sent right after CONNECT (before our 200) belong to the tunnel.
        let early = reader.parser.takeRemainingBytes()
        reader.releaseBuffer()
        guard (try? reader.stream.write(Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8))) != nil else { return }
        serve(host: host, port: port, early: early)
    }

    /// Serves a connection whose destination is known (a CONNECT answered 200, a SOCKS5 request
    /// answered success, a transparent connection's original destination): looks at its first
    /// bytes, then intercepts TLS, serves h2 without TLS, serves HTTP/1 requests, or tunnels.
    ///
    /// - Parameter reverseName: for a `reverse:https://…` listener with `--reverse-tls`, the name
    ///   its leaf carries when the client sends no SNI; `host:port` is then the origin as given.
    func serve(host: String, port: Int, early: [UInt8], reverseName: String? = nil) {
        let socket = connection.socket
        socket.setTimeout(server.configuration.headerTimeout)
        // Until its ClientHello and handshake are in, the connection may make room at the limit.
        waitsForClient(true)
        defer { waitsForClient(false) }
        if let site = server.configuration.onboarding, OnboardingSite.names(host) {
            // DevProxy's own site: answered here, never tunnelled, resolved or passed through.
            serveOnboarding(site, port: port, early: early)
            return
        }
        connection.throttle(hosts: host)
        // Offline: a SOCKS5, transparent or reverse connection goes no further.
        if let reason = connection.offlineReason {
            recordFailure(.https, host: host, port: port, .offline, reason)
            return
        }
        var early = early
        if early.isEmpty, reverseName == nil {
            switch whoSpeaksFirst(host: host, port: port) {
            case .server(let upstream):
                tunnel(host: host, port: port, sni: nil,
                       reason: "the server spoke first (SSH, SMTP, FTP, a database: not TLS or HTTP)", early: [], upstream: upstream)
                return
            case .unreachable(let error):
                // A silent client and an origin that cannot be reached: said now, not after the
                // header timeout as "no complete ClientHello".
                let (kind, _, message) = UpstreamFailure.describe(error, target: HostPort(host: host, port: port).description)
                recordFailure(.tunnel, host: host, port: port, kind, message)
                return
            case .neither(let upstream):
                // A connection opened ahead of use (a Redis or database pool's): quiet is no fault,
                // and tunnels are never cut for it. It was closed here as a failed handshake.
                tunnel(host: host, port: port, sni: nil,
                       reason: "neither side spoke within \(Int(server.configuration.headerTimeout)) s (a connection opened "
                           + "ahead of use): relayed as it comes, not TLS or HTTP", early: [], upstream: upstream, quiet: true)
                return
            case .client:
                break
            }
        }
        let hello = peekClientHello(early: &early)
        if case .hello = hello {} else { waitsForClient(false) }
        switch hello {
        case .hello(let hello):
            let sni = hello.serverName ?? host
            connection.throttle(hosts: host, sni)
            if let rule = server.configuration.passthrough.first(where: { $0.matches(sni) || $0.matches(host) }) {
                tunnel(host: host, port: port, sni: hello.serverName, reason: "passthrough rule \(rule)", early: early)
                return
            }
            if let reverseName {
                // A reverse proxy names its origin in Host (`reverse:URL`), not what the client named.
                intercept(host: host, port: port, sni: hello.serverName ?? reverseName, hello: hello, early: early,
                          keepsClientHost: false)
                return
            }
            // A client that gave an IP address (SOCKS5 with local DNS, transparent mode) or another
            // host (`curl --connect-to`) and named the host in its ClientHello: the origin is
            // verified as that host, where the request said.
            if let name = hello.serverName, Self.namesAnotherHost(name, than: host) {
                intercept(host: name, port: port, sni: sni, hello: hello, early: early, dial: host)
                return
            }
            intercept(host: host, port: port, sni: sni, hello: hello, early: early)
        case .notTLS(let why):
            if server.configuration.http2, startsWithHTTP2Preface(early: early) {
                // h2 without TLS by prior knowledge (a plaintext gRPC channel through the proxy);
                // a TLS reverse listener's origin is still spoken to over TLS.
                serveCleartextHTTP2(host: host, port: port, early: early, upstreamTLS: reverseName != nil)
                return
            }
            if reverseName != nil {
                // A plain-HTTP client of a TLS reverse listener: its requests still go over TLS.
                servePlainHTTP(early: early) {
                    Destination(tls: true, host: host, port: port, pathAndQuery: originForm($0.target))
                }
                return
            }
            if let rule = server.configuration.passthrough.first(where: { $0.matches(host) }) {
                tunnel(host: host, port: port, sni: nil, reason: "passthrough rule \(rule)", early: early)
                return
            }
            // Plain HTTP inside CONNECT (an app talking HTTP to port 80 through the proxy, a
            // transparent connection to port 80): recorded request by request.
            if startsWithHTTP1RequestLine(early: early) {
                servePlainHTTP(early: early) { plainDestination($0, host: host, port: port) }
                return
            }
            tunnel(host: host, port: port, sni: nil, reason: "not TLS or HTTP: \(why)", early: early)
        case .incomplete:
            // A client that hung up was not waited for: the flow said it took the whole header timeout.
            if connection.socket.peerHasClosed {
                recordFailure(.https, host: host, port: port, .clientClosed, "the client closed the connection after the "
                              + "tunnel opened" + (early.isEmpty ? ", having sent nothing" : ", before its ClientHello was complete"))
            } else {
                recordFailure(.https, host: host, port: port, .clientHandshakeFailed,
                              "the client sent no complete ClientHello within \(Int(server.configuration.headerTimeout)) s")
            }
        }
    }

    /// Reads the ClientHello without consuming it (MSG_PEEK), so TLS or the tunnel sees it. When
    /// the client sent bytes with its CONNECT or SOCKS5 request (`early`, already read), the rest
    /// of its ClientHello is read onto them: a ClientHello split across the two hung up at once
    /// ("no complete ClientHello"), and one sent whole there never reached TLS (the client hung).
    func peekClientHello(early: inout [UInt8]) -> ClientHello.Parse {
        guard early.isEmpty else {
            let deadline = Date().addingTimeInterval(server.configuration.headerTimeout)
            var result = ClientHello.parse(early)
            var buffer = [UInt8](repeating: 0, count: ClientHello.maximumLength)
            while case .incomplete = result, early.count < ClientHello.maximumLength, Date() < deadline {
                guard let count = try? buffer.withUnsafeMutableBytes({ try connection.socket.read(into: $0) }), count > 0 else {
                    break
                }
                early += buffer[0..<count]
                result = ClientHello.parse(early)
            }
            return result
        }
        var buffer = [UInt8](repeating: 0, count: ClientHello.maximumLength)
        guard let count = try? buffer.withUnsafeMutableBytes({ try connection.socket.peek(into: $0) }), count > 0 else {
            return .incomplete
        }
        let result = ClientHello.parse(Array(buffer[0..<count]))
        guard case .incomplete = result, count < buffer.count else { return result }
        // Not all there yet: what came is read (TLS and the tunnel take it as `early`) and the rest
        // waited for in blocking reads. Peeking again until more came spun: 1,000 clients holding
        // half a ClientHello kept two cores busy for the header timeout, and one that hung up was
        // noticed only then.
        guard let read = try? buffer.withUnsafeMutableBytes({ try connection.socket.read(into: $0) }), read > 0 else {
            return .incomplete
        }
        early = Array(buffer[0..<read])
        return peekClientHello(early: &early)
    }

    /// Seconds a client may stay silent after its tunnel opens before DevProxy asks whether the
    /// server speaks first.
    static let serverFirstAfter: TimeInterval = 0.5

    /// Who speaks first in a tunnel whose client has sent nothing for `serverFirstAfter`: the
    /// origin is dialled and watched with the client. A protocol where the server speaks first
    /// (SSH's banner, SMTP's greeting, MySQL's handshake) has no ClientHello to wait for, and
    /// such a client waited out the header timeout and got nothing.
    private enum FirstSpeaker {
        /// The client spoke (or closed), or the origin could not be reached: the ClientHello path.
        case client
        /// The origin spoke first, on this connection.
        case server(UpstreamConnection)
        /// Both stayed silent for the header timeout, on this connection.
        case neither(UpstreamConnection)
        /// The client stayed silent and the origin could not be reached.
        case unreachable(any Error)
    }

    private func whoSpeaksFirst(host: String, port: Int) -> FirstSpeaker {
        let client = connection.socket
        var pollers = [pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)]
        guard client.queuedBytes == 0, poll(&pollers, 1, Socket.pollMilliseconds(Self.serverFirstAfter)) == 0 else {
            return .client
        }
        let upstream: UpstreamConnection
        do {
            upstream = try connection.pool.connection(host: host, port: port, tls: false, reuse: false, raw: true)
        } catch {
            // The client may have spoken while the dial failed: then its ClientHello path reports it.
            return client.queuedBytes > 0 ? .client : .unreachable(error)
        }
        let deadline = Date().addingTimeInterval(server.configuration.headerTimeout)
        var both = [pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: upstream.stream.socket.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&both, 2, Socket.pollMilliseconds(deadline.timeIntervalSinceNow))
            if ready < 0 && errno == EINTR { continue }
            if ready > 0 && both[1].revents != 0 && both[0].revents == 0 { return .server(upstream) }
            if ready == 0 { return .neither(upstream) }
            upstream.stream.close()
            return .client
        }
    }

    /// Relays bytes untouched and records a tunnel flow; over `upstream` when it is already open.
    ///
    /// A `quiet` tunnel (neither side has spoken yet) may make room at the connection limit until a byte passes.
    private func tunnel(host: String, port: Int, sni: String?, reason: String, early: [UInt8], persona: String? = nil,
                        upstream opened: UpstreamConnection? = nil, quiet: Bool = false) {
        if !quiet { waitsForClient(false) }
        var draft = connection.draft(mode: .tunnel, host: host, port: port)
        // `qa verdict` groups flows by persona: without it, a passthrough persona's tunnels read
        // as the team persona's.
        draft.flow.persona = persona
        draft.flow.tunnel = Flow.TunnelInfo(sni: sni, bytesFromClient: 0, bytesFromServer: 0, reason: reason)
        defer { server.emit(draft.finished()) }
        let upstream: UpstreamConnection
        do {
            upstream = try opened ?? connection.pool.connection(host: host, port: port, tls: false, reuse: false, raw: true,
                                                                watch: connection.dialWatch)
        } catch let error as DialAbandoned {
            draft.fail(error.stopping ? .aborted : .clientClosed, error.description)
            return
        } catch {
            draft.fail(error.isNetworkTimeout ? .upstreamTimeout : .upstreamRefused,
                       "cannot connect to \(host):\(port): \(error)")
            return
        }
        draft.flow.server.address = upstream.address
        draft.flow.timings.connect = upstream.connectMilliseconds
        server.started(draft.flow)
        if !early.isEmpty { try? upstream.stream.write(early) }
        let outcome = connection.using(upstream.stream.socket) {
            // A quiet one that made room ends at once, not when its origin next speaks or closes.
            Relay(a: reader.stream, b: upstream.stream).run(observeAToB: { _ in if quiet { waitsForClient(false) } },
                                                            observeBToA: { _ in if quiet { waitsForClient(false) } },
                                                            tickInterval: quiet ? 1 : nil,
                                                            tick: { if madeRoom { upstream.stream.socket.abort() } })
        }
        upstream.stream.close()
        draft.flow.tunnel?.bytesFromClient = outcome.bytesAToB + early.count
        draft.flow.tunnel?.bytesFromServer = outcome.bytesBToA
        if upstream.redirectedBack {
            // Its end read as the origin's reset; it was DevProxy refusing its own connection.
            draft.fail(.wouldLoop, OwnEndpoints.loopReason(target: HostPort(host: host, port: port).description))
        }
        if madeRoom {
            draft.fail(.overloaded, madeRoomReason(waitingFor: "either side of its tunnel to speak"))
        } else if let error = outcome.error {
            // A timeout is a peer that stopped answering keepalive probes (quiet alone ends nothing).
            draft.fail(.upstreamReset, "tunnel ended: \(error)")
        }
    }

    /// Terminates the client's TLS with a leaf for `sni` and serves HTTP requests inside.
    private func intercept(host: String, port: Int, sni: String, hello: ClientHello, early: [UInt8], dial: String? = nil,
                           keepsClientHost: Bool = true) {
        let presentation: Presentation
        do {
            presentation = try server.leaves.presentation(for: try LeafName(sni))
        } catch {
            recordFailure(.https, host: host, port: port, .leafRefused, "no certificate for \(sni): \(error)")
            return
        }
        guard case .intercept(let leaf, let persona) = presentation else {
            if case .passthrough(let reason, let persona) = presentation {
                tunnel(host: host, port: port, sni: hello.serverName, reason: reason, early: early, persona: persona)
            }
            return
        }
        let signer = Flow.SignerInfo(serial: leaf.issuer.serialHex, email: leaf.issuer.email)
        // `--lazy-upstream`: nothing is dialled before a request, also for a client that offers
        // h2 (it gets h2, and its first stream finds out what the origin speaks, translating if
        // need be); the origin was dialled during such a client's handshake, which waited for it.
        let choice = !server.configuration.eagerUpstream && server.configuration.http2 && hello.alpn.contains("h2")
            ? ProtocolChoice(preference: ProtocolChoice.preferH2, upstream: nil)
            : ProtocolChoice.decide(offered: hello.alpn, http2: server.configuration.http2) { offer in
                Result { try connection.pool.connection(host: host, port: port, tls: true, alpn: offer, dial: dial,
                                                        watch: connection.dialWatch) }
            }
        if case .failure(let error as DialAbandoned)? = choice.upstream {
            // The client gave up (or DevProxy stopped) while the origin had not answered: its flow
            // says so now, not the client's handshake a minute later.
            recordFailure(.https, host: host, port: port, error.stopping ? .aborted : .clientClosed, error.description)
            return
        }
        if choice.upstream == nil && server.configuration.eagerUpstream {
            connection.pool.prepare(host: host, port: port, tls: true, dial: dial)
        }
        let tls: TLSConnection
        do {
            tls = try TLSConnection.accept(socket: connection.socket, context: server.serverTLS(forPersona: persona), leaf: leaf,
                                           peerName: "the client", alpn: choice.preference, received: early)
        } catch let error as TLSError {
            if case .success(let upstream)? = choice.upstream { upstream.stream.close() }
            if madeRoom {
                recordFailure(.https, host: host, port: port, .overloaded, madeRoomReason(waitingFor: Self.handshakeWait))
                return
            }
            recordHandshakeFailure(error, host: host, port: port, sni: hello.serverName, signer: signer, persona: persona,
                                   offeredALPN: hello.alpn)
            return
        } catch {
            if case .success(let upstream)? = choice.upstream { upstream.stream.close() }
            return
        }
        waitsForClient(false)
        let clientTLS = Flow.TLSInfo.ClientSide(sni: hello.serverName, version: tls.version, cipher: tls.cipher, alpn: tls.alpn)
        if tls.alpn == "h2" {
            serveHTTP2(tls: tls, clientTLS: clientTLS, host: host, port: port, dial: dial, signer: signer, persona: persona,
                       upstream: choice.upstream)
            return
        }
        if case .success(let upstream)? = choice.upstream {
            // An HTTP/1.1 connection waits in the pool for this client's first request, whose flow
            // is the one that paid for its connect and TLS.
            if upstream.isHTTP2 {
                upstream.stream.close()
            } else {
                upstream.neverUsed = true
                connection.pool.release(upstream)
            }
        }
        let inner = MessageReader(stream: connection.clientStream(tls),
                                  parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        let context = ExchangeContext(server: server, connection: connection, client: inner, clientAddress: connection.clientAddress, mode: .https,
                                      clientTLS: clientTLS, signer: signer, persona: persona)
        defer { tls.close() }
        var first = true
        let handshakeEnded = Date()
        while let head = connection.readHead(inner, first: first, mode: .https, tlsInfo: clientTLS,
                                             draft: { context.draft(host: host, port: port) }, onCleanClose: {
            guard first else { return }
            var draft = context.draft(host: host, port: port, sinceAccepted: true)
            if let unused = Self.unusedFor(since: handshakeEnded) {
                draft.fail(.clientClosedUnused, unused)
            } else if tls.alpn == nil, !hello.alpn.isEmpty, !hello.alpn.contains("http/1.1") {
                // It asked only for protocols we did not answer (an h2-only gRPC client with
                // --no-http2): it hung up over the protocol, not over the certificate.
                draft.fail(.clientClosedALPNMismatch,
                           "the client offered ALPN \(hello.alpn.joined(separator: ",")), got none of them, and closed without a request"
                           + (server.configuration.http2 ? "" : " (HTTP/2 is off: --no-http2)"))
            } else {
                // OkHttp checks pins after the handshake and closes without a request.
                draft.fail(.clientClosedAfterHandshake,
                           "the client completed the TLS handshake and closed without sending a request: it likely pins a key this chain does not contain")
            }
            server.emit(draft.finished())
        }) {
            first = false
            // An origin-form request's own Host goes on unchanged, as it would without the proxy (a
            // virtual host behind a shared front, `curl -H 'Host: tenant-b.example'`): the RFC 9112
            // §3.2.2 replacement is for absolute-form, and the origin got the CONNECT authority
            // while the flow showed the client's Host.
            if head.method == "CONNECT" {
                // Forwarded as a request, the origin's 2xx came back re-chunked, no tunnel began, and
                // the flow's URL glued two authorities (`https://host:PORTinner:443`).
                connection.emitRejected(head, kind: .badRequest, status: 501, message: HTTP2ProxyConnection.nestedConnect,
                                        reader: inner)
                return
            }
            let ownHost = keepsClientHost && (head.target.hasPrefix("/") || head.target == "*") ? head.headers["Host"] : nil
            let destination = Destination(tls: true, host: host, port: port, pathAndQuery: originForm(head.target), dial: dial,
                                          authority: ownHost.flatMap { $0.isEmpty ? nil : $0 })
            guard HTTPExchange(context: context, head: head, destination: destination).run(), !server.isStopping else { return }
        }
    }

    /// Serves HTTP/1 requests sent in plain text on the client socket (after `early`), each to
    /// the destination `route` gives it; absolute-form and origin-form targets alike.
    func servePlainHTTP(early: [UInt8], site: LocalRoute? = nil, route: (HTTPRequestHead) -> Destination) {
        let inner = MessageReader(stream: connection.clientStream(PlainStream(connection.socket)),
                                  parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        if !early.isEmpty { inner.parser.feed(early) }
        let context = ExchangeContext(server: server, connection: connection, client: inner,
                                      clientAddress: connection.clientAddress,
                                      mode: .http, clientTLS: nil, signer: nil, persona: nil)
        var first = true
        while let head = connection.readHead(inner, first: first, mode: .http, tlsInfo: nil) {
            first = false
            if head.method == "CONNECT" {
                // Only a forward-proxy listener takes CONNECT: a reverse listener forwarded it to its
                // origin (which answered 501) under a URL with the authority glued on
                // (`http://127.0.0.1:45177localhost:443`), and inside a tunnel it means nothing.
                connection.emitRejected(head, kind: .badRequest, status: 405,
                                        message: "CONNECT is taken only by a proxy listener (regular or upstream), not "
                                            + "by this one (\(connection.listenerMode.name))", reader: inner)
                return
            }
            let exchange = HTTPExchange(context: context, head: head, destination: route(head), route: site)
            guard exchange.run(), !server.isStopping else { return }
        }
    }

    /// Where a plain request in a tunnel goes: the tunnel's address, always; the request keeps
    /// the `Host` it came with (a virtual host the tunnel's `localhost:18080` or IP does not
    /// name, which DevProxy replaced), and the flow names that host.
    private func plainDestination(_ head: HTTPRequestHead, host: String, port: Int) -> Destination {
        let path = originForm(head.target)
        guard let value = head.headers["Host"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return Destination(tls: false, host: host, port: port, pathAndQuery: path)
        }
        let name = Self.hostName(value)
        return Destination(tls: false, host: name.isEmpty ? host : name, port: port, pathAndQuery: path,
                           dial: name == host.lowercased() ? nil : host, authority: value)
    }

    /// The host of a `Host` value, without its port or brackets.
    static func hostName(_ value: String) -> String {
        let value = value.trimmingCharacters(in: .whitespaces).lowercased()
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
            return String(value[value.index(after: value.startIndex)..<close])
        }
        guard let colon = value.lastIndex(of: ":"), value.firstIndex(of: ":") == colon else { return value }
        return String(value[..<colon])
    }

    /// Whether the tunnel's first bytes are an HTTP/1 request line: a method token of capital
    /// letters, a space, a target without spaces, a space, `HTTP/` digit `.` digit, then the line's
    /// end (peeked, not consumed; waits at most 1 s for them). The version is what tells HTTP from
    /// the text protocols that also start with a word and a space: Redis's inline `SET key value`,
    /// IRC's `NICK foo` were answered 400 where they had to be tunnelled.
    private func startsWithHTTP1RequestLine(early: [UInt8]) -> Bool {
        if !early.isEmpty, let answer = Self.requestLineVerdict(early[...]) { return answer }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let deadline = Date().addingTimeInterval(1)
        while Date() < deadline {
            let peeked = try? buffer.withUnsafeMutableBytes { try connection.socket.peek(into: $0) }
            guard let count = peeked, count > 0 else { return false }
            if let answer = Self.requestLineVerdict(buffer[0..<count]) { return answer }
            // A line longer than the window that still reads as a request (a very long target):
            // HTTP, whose parser then says what is wrong with it.
            if count == buffer.count { return true }
            usleep(2_000)
        }
        return false
    }

    /// `startsWithHTTP1RequestLine`'s reading of the bytes so far: true or false, nil when more are needed.
    static func requestLineVerdict(_ bytes: ArraySlice<UInt8>) -> Bool? {
        var index = bytes.startIndex
        var methodLength = 0
        while index < bytes.endIndex, bytes[index] != UInt8(ascii: " ") {
            let byte = bytes[index]
            guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "-"), methodLength < 20 else {
                return false
            }
            methodLength += 1
            index += 1
        }
        guard index < bytes.endIndex else { return nil }
        guard methodLength > 0 else { return false }
        index += 1
        let targetStart = index
        while index < bytes.endIndex, bytes[index] != UInt8(ascii: " ") {
            guard bytes[index] > 0x20, bytes[index] != 0x7F else { return false }
            index += 1
        }
        guard index < bytes.endIndex else { return nil }
        guard index > targetStart else { return false }
        index += 1
        let version = Array("HTTP/".utf8)
        for (offset, expected) in version.enumerated() {
            guard index + offset < bytes.endIndex else { return nil }
            guard bytes[index + offset] == expected else { return false }
        }
        index += version.count
        for expected in ["digit", ".", "digit"] {
            guard index < bytes.endIndex else { return nil }
            let byte = bytes[index]
            let fits = expected == "." ? byte == UInt8(ascii: ".") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard fits else { return false }
            index += 1
        }
        guard index < bytes.endIndex else { return nil }
        if bytes[index] == UInt8(ascii: "\n") { return true }
        guard bytes[index] == UInt8(ascii: "\r") else { return false }
        guard index + 1 < bytes.endIndex else { return nil }
        return bytes[index + 1] == UInt8(ascii: "\n")
    }

    /// The connection preface every HTTP/2 client sends first (RFC 9113 §3.4).
    static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Whether the tunnel's first bytes are the HTTP/2 preface (peeked, not consumed).
    func startsWithHTTP2Preface(early: [UInt8]) -> Bool {
        if !early.isEmpty { return early.starts(with: Self.http2Preface.prefix(early.count)) && early.count >= 3 }
        var buffer = [UInt8](repeating: 0, count: Self.http2Preface.count)
        let deadline = Date().addingTimeInterval(1)
        while Date() < deadline {
            guard let count = try? buffer.withUnsafeMutableBytes({ try connection.socket.peek(into: $0) }), count > 0 else { return false }
            guard buffer[0..<count].elementsEqual(Self.http2Preface[0..<count]) else { return false }
            if count == buffer.count { return true }
            usleep(2_000)
        }
        return false
    }

    /// Serves h2 without TLS (inside a tunnel, or on a plain reverse listener), streams relayed to
    /// the origin by prior knowledge, or with `upstreamTLS` over TLS (ALPN h2, else translated to
    /// HTTP/1.1) as a reverse listener's https URL asks.
    func serveCleartextHTTP2(host: String, port: Int, early: [UInt8], upstreamTLS: Bool = false) {
        // HTTP/2 frames that keep a response streaming (WINDOW_UPDATE, PING) are no new request.
        connection.link?.speaksHTTP2(after: early)
        let stream = connection.clientStream(PlainStream(connection.socket))
        let inner = MessageReader(stream: stream, parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        let context = ExchangeContext(server: server, connection: connection, client: inner, clientAddress: connection.clientAddress,
                                      mode: .http, clientTLS: nil, signer: nil, persona: nil)
        do {
            try HTTP2ProxyConnection(context: context, client: stream, host: host, port: port, upstream: nil,
                                     cleartext: !upstreamTLS, initialBytes: early).run()
        } catch {
            var draft = context.draft(host: host, port: port)
            draft.fail(.http2ProtocolError, "cannot start the HTTP/2 session: \(error)")
            server.emit(draft.finished())
        }
    }

    /// Serves a client that chose h2: every stream relayed to the origin (over h2 when it speaks it).
    private func serveHTTP2(tls: TLSConnection, clientTLS: Flow.TLSInfo.ClientSide, host: String, port: Int, dial: String?,
                            signer: Flow.SignerInfo, persona: String, upstream: Result<UpstreamConnection, any Error>?) {
        defer { tls.close() }
        // HTTP/2 frames that keep a response streaming (WINDOW_UPDATE, PING) are no new request.
        connection.link?.speaksHTTP2(after: [])
        let client = connection.clientStream(tls)
        let inner = MessageReader(stream: client, parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        let context = ExchangeContext(server: server, connection: connection, client: inner, clientAddress: connection.clientAddress,
                                      mode: .https, clientTLS: clientTLS, signer: signer, persona: persona)
        do {
            try HTTP2ProxyConnection(context: context, client: client, host: host, port: port, dial: dial,
                                     upstream: upstream).run()
        } catch {
            var draft = context.draft(host: host, port: port)
            draft.fail(.http2ProtocolError, "cannot start the HTTP/2 session: \(error)")
            server.emit(draft.finished())
        }
    }

    /// Seconds of silence after the handshake past which a client's close is an unused
    /// connection rather than a pinning check: OkHttp closes as soon as `CertificatePinner`
    /// refuses, in the same call as the handshake; a browser closes a preconnected socket it did
    /// not need seconds later.
    static let unusedAfter: TimeInterval = 2

    /// The `client_closed_unused` message when the client closed at least `unusedAfter` seconds
    /// after the handshake ended at `handshakeEnded`; nil for a close that came sooner.
    static func unusedFor(since handshakeEnded: Date) -> String? {
        let idle = Date().timeIntervalSince(handshakeEnded)
        guard idle >= unusedAfter else { return nil }
        return "the client completed the TLS handshake, sent no request for \(String(format: "%.1f", idle)) s and closed: "
            + "a connection opened ahead of need and not used (a browser's preconnect), not a pinning check, which "
            + "closes at once"
    }

    /// A request inside the tunnel may use origin-form (`/path`) or, rarely, absolute-form.
    func originForm(_ target: String) -> String {
        if case .absolute(_, _, _, let path)? = try? RequestTarget(parsing: target, method: "GET") { return path }
        return target
    }

    /// A flow for a connection that ended before any exchange, saying why.
    func recordFailure(_ mode: Flow.Mode, host: String, port: Int, _ kind: FlowErrorKind, _ message: String) {
        var draft = connection.draft(mode: mode, host: host, port: port)
        // Closed to make room, the client seems to have hung up (its ClientHello cut, a dial abandoned).
        if madeRoom && kind != .overloaded {
            draft.fail(.overloaded, madeRoomReason(waitingFor: Self.handshakeWait))
        } else {
            draft.fail(kind, message)
        }
        server.emit(draft.finished())
    }

    func recordHandshakeFailure(_ error: TLSError, host: String, port: Int, sni: String?, signer: Flow.SignerInfo,
                                persona: String, offeredALPN: [String] = []) {
        // A client that offered only protocols we do not speak may hang up over that, not over the certificate.
        let alpnRefused = !offeredALPN.isEmpty && !offeredALPN.contains("http/1.1")
            && !(server.configuration.http2 && offeredALPN.contains("h2"))
        var draft = connection.draft(mode: .https, host: host, port: port)
        draft.flow.tls = Flow.TLSInfo(client: Flow.TLSInfo.ClientSide(sni: sni, version: nil, cipher: nil, alpn: nil), upstream: nil)
        draft.flow.signer = signer
        draft.flow.persona = persona
        switch error.kind {
        case .alertReceived where Self.certificateAlerts.contains(error.alert ?? "")
            || error.afterOurCertificate && Self.verifyCallbackAlerts.contains(error.alert ?? ""):
            draft.fail(.clientRejectedCertificate,
                       "the client rejected our certificate (\(error.alert ?? "alert")): it does not trust the root, or it pins a key this chain does not contain",
                       alert: error.alert)
        case .closedDuringHandshake where error.peerFinished && !alpnRefused:
            // Its Finished arrived (it accepted the chain as TLS sees it), then it closed while we
            // sent TLS 1.3's session tickets: a pinner that checks once the handshake is done
            // (Node's checkServerIdentity), as after a handshake that ended on our side.
            draft.fail(.clientClosedAfterHandshake,
                       "the client completed the TLS handshake and closed without sending a request: it likely pins a key this chain does not contain")
        case .closedDuringHandshake where error.afterOurCertificate && !alpnRefused
            // Our flight met a socket the client had already closed (before the handshake began, or
            // during it), which answered it with a reset: it never read our certificate. One that
            // read it and hung up leaves no reset.
            && !connection.socket.resetWithin(milliseconds: 50):
            // It had our certificate and hung up without an alert: TLS 1.3 leaves it nothing to do
            // but send its Finished, which a close right after it (the client's RST) can take
            // from the socket before we read it. Node's checkServerIdentity and other pinners
            // that check once TLS is done close this way.
            draft.fail(.clientRejectedCertificate,
                       "the client closed the connection once it had our certificate, without an alert and without a "
                       + "request: it likely pins a key this chain does not contain, or does not trust the root")
        case .notTLS:
            draft.fail(.clientNotTLS, error.message)
        default:
            draft.fail(.clientHandshakeFailed, error.message, alert: error.alert)
        }
        server.emit(draft.finished())
    }

    /// Alerts OpenSSL sends for a verify callback's own refusal (`X509_V_ERR_APPLICATION_VERIFICATION`
    /// gives `handshake_failure`, an error left unset `internal_error`): a pinner in the callback
    /// (libcurl's `CURLOPT_SSL_CTX_FUNCTION`, pyOpenSSL). Read as a rejection only once the client
    /// had our certificate; before it they mean a failed negotiation.
    static let verifyCallbackAlerts: Set<String> = ["handshake_failure", "internal_error"]

    /// Alerts a client sends when it does not accept the server's certificate (RFC 8446 §6.2).
    static let certificateAlerts: Set<String> = [
        "unknown_ca", "bad_certificate", "certificate_unknown", "unsupported_certificate", "certificate_expired",
        "certificate_revoked", "access_denied",
    ]
}
