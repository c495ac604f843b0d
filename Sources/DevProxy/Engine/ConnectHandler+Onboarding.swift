import CertAuthority
import Foundation
import HTTP1

extension ConnectHandler {
    /// A CONNECT (or SOCKS5 request) to `devproxy.test`: TLS with a leaf for that name from the
    /// usual leaf source, then every request inside answered by the onboarding site. Nothing is
    /// resolved or dialled; a CONNECT tunnel that is not TLS, or a name the signer may not certify,
    /// ends with a flow that says so (plain HTTP from a SOCKS5, transparent or WireGuard client is
    /// the site's too).
    func serveOnboarding(_ site: OnboardingSite, port: Int, early: [UInt8]) {
        let host = OnboardingSite.host
        let failure = { (kind: FlowErrorKind, message: String) in
            recordFailure(.https, host: host, port: port, kind, message)
        }
        var early = early
        guard case .hello(let hello) = peekClientHello(early: &early) else {
            // A client that never spoke to a proxy (a transparent or WireGuard one's, SOCKS5's
            // `http://devproxy.test/`) has no other way to ask for it: its plain HTTP is the site's.
            if [.socks5, .transparent, .wireguard].contains(connection.listenerMode.kind) {
                servePlainHTTP(early: early, site: site.route) { head in
                    Destination(tls: false, host: host, port: port, pathAndQuery: self.originForm(head.target))
                }
                return
            }
            failure(.clientNotTLS,
                    "\(host) inside CONNECT is served over TLS only; ask for http://\(host)/ as a plain proxy request")
            return
        }
        let leaf: Leaf, persona: String
        do {
            let presentation = try server.leaves.presentation(for: try LeafName(host))
            guard case .intercept(let minted, let chosen) = presentation else {
                failure(.leafRefused,
                        "no certificate for \(host) (it would pass through); ask for http://\(host)/ instead")
                return
            }
            (leaf, persona) = (minted, chosen)
        } catch {
            failure(.leafRefused, "no certificate for \(host): \(error); ask for http://\(host)/ instead")
            return
        }
        let signer = Flow.SignerInfo(serial: leaf.issuer.serialHex, email: leaf.issuer.email)
        let tls: TLSConnection
        do {
            // HTTP/1.1 only: the site's answers are small, and the HTTP/2 engine relays to origins.
            tls = try TLSConnection.accept(socket: connection.socket, context: server.serverTLS(forPersona: persona),
                                           leaf: leaf, peerName: "the client", alpn: .http11, received: early)
        } catch let error as TLSError {
            recordHandshakeFailure(error, host: host, port: port, sni: hello.serverName, signer: signer,
                                   persona: persona)
            return
        } catch {
            return
        }
        defer { tls.close() }
        let clientTLS = Flow.TLSInfo.ClientSide(sni: hello.serverName, version: tls.version, cipher: tls.cipher,
                                                alpn: tls.alpn)
        let inner = MessageReader(stream: tls, parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        let context = ExchangeContext(server: server, connection: connection, client: inner,
                                      clientAddress: connection.clientAddress, mode: .https, clientTLS: clientTLS,
                                      signer: signer, persona: persona)
        var first = true
        while let head = connection.readHead(inner, first: first, mode: .https, tlsInfo: clientTLS,
                                             draft: { context.draft(host: host, port: port) }) {
            first = false
            var path = head.target
            if case .absolute(_, _, _, let absolutePath)? = try? head.requestTarget() { path = absolutePath }
            let destination = Destination(tls: true, host: host, port: port, pathAndQuery: path)
            guard HTTPExchange(context: context, head: head, destination: destination, route: site.route).run(),
                  !server.isStopping else { return }
        }
    }
}
