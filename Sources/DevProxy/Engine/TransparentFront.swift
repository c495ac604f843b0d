import Foundation
import HTTP1

/// A client of a `transparent` listener: the kernel redirected its connection here (REDIRECT,
/// TPROXY), so its destination is the connection's original one (a `wireguard` listener's: the
/// name DevProxy's DNS gave that address for, `WireGuardCapture`). From there it gets what a
/// CONNECT gets: TLS intercepted with a leaf for the SNI name (the origin dialled at the original
/// address and verified as that name), plain HTTP served request by request (the name from
/// `Host`), anything else tunnelled.
struct TransparentFront {
    let connection: ClientConnection
    var server: ProxyServer { connection.server }

    func run() {
        let socket = connection.socket
        guard let original = socket.originalDestination else {
            record(host: "", port: 0, .badRequest, "transparent: the connection's original destination is unknown")
            return
        }
        if server.isOwnListener(original) {
            record(host: original.host, port: original.port, .wouldLoop,
                   "transparent: the original destination \(original) is DevProxy's own listener (a connection nobody "
                   + "redirected): serving it would loop, so it is refused")
            return
        }
        if let peer = socket.peerAddress, server.ownEndpoints.refuseLoop(peer: peer, destination: original) {
            record(host: original.host, port: original.port, .wouldLoop,
                   "transparent: this is DevProxy's own connection to \(original), redirected back to it: serving "
                   + "it would loop, so it is refused; exclude DevProxy's traffic from the rule "
                   + "(devproxy transparent-rules --uid-exclude UID)")
            return
        }
        var host = original.host
        if connection.listenerMode.kind == .wireguard, let capture = server.wireGuard {
            // The device asked DevProxy's DNS for the name: the connection goes to the name, resolved here.
            guard let name = capture.host(for: original) else {
                record(host: original.host, port: original.port, .badRequest,
                       "wireguard: \(original.host) is an address DevProxy's DNS gave out before it last started, so its "
                       + "name is unknown; the device asks again within a minute (or turn its WireGuard tunnel off and on)")
                return
            }
            host = name
        }
        let reader = MessageReader(stream: connection.clientStream(PlainStream(socket)),
                                   parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        let handler = ConnectHandler(connection: connection, reader: reader)
        handler.serve(host: host, port: original.port, early: [])
    }

    private func record(host: String, port: Int, _ kind: FlowErrorKind, _ message: String) {
        var draft = FlowDraft(client: connection.clientAddress, process: connection.clientProcess,
                              listener: connection.listenerInfo, mode: .tunnel,
                              host: host, port: port)
        draft.fail(kind, message)
        server.emit(draft.finished())
    }
}

/// A client of a `reverse:URL` listener: the listener is its origin. Every request goes to URL's
/// host and port with `Host` (h2: `:authority`) rewritten to it; with `--reverse-tls` (and an
/// https URL) the listener speaks TLS with a leaf for the name the client asked for (its SNI, else
/// the listener's address), h2 included. Without TLS, a client that starts with the HTTP/2
/// preface (h2 by prior knowledge, as a plaintext gRPC channel does) is served over h2.
struct ReverseFront {
    let connection: ClientConnection
    var server: ProxyServer { connection.server }

    func run() {
        guard let url = connection.listenerMode.url else { return }
        connection.throttle(hosts: url.host)
        let reader = MessageReader(stream: connection.clientStream(PlainStream(connection.socket)),
                                   parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        let handler = ConnectHandler(connection: connection, reader: reader)
        if server.configuration.reverseTLS && url.tls {
            let name = connection.socket.localAddress?.host ?? "localhost"
            handler.serve(host: url.host, port: url.port, early: [], reverseName: name)
            return
        }
        connection.socket.setTimeout(server.configuration.headerTimeout)
        if server.configuration.http2, handler.startsWithHTTP2Preface(early: []) {
            // h2 by prior knowledge (a plaintext gRPC channel aimed at the listener): relayed to the
            // origin the same way for an http URL, over TLS for an https one.
            handler.serveCleartextHTTP2(host: url.host, port: url.port, early: [], upstreamTLS: url.tls)
            return
        }
        handler.servePlainHTTP(early: []) { head in
            var path = head.target
            if case .absolute(_, _, _, let origin)? = try? RequestTarget(parsing: head.target, method: head.method) {
                path = origin
            }
            return Destination(tls: url.tls, host: url.host, port: url.port, pathAndQuery: path)
        }
    }
}
