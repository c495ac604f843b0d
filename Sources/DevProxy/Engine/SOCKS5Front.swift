import Foundation
import HTTP1
import SOCKS5

/// A client of a `socks5` listener: the SOCKS5 handshake (`SOCKS5Handshake`, sans-IO) tells
/// where it is going, then the connection gets exactly what a CONNECT gets (ClientHello peek,
/// interception or passthrough).
///
/// Success is answered before the origin is contacted, as for CONNECT's 200: the interception
/// path connects itself and reports an unreachable origin in the flow and to the client.
struct SOCKS5Front {
    let connection: ClientConnection
    var server: ProxyServer { connection.server }

    func run() {
        let socket = connection.socket
        socket.setTimeout(server.configuration.headerTimeout)
        // Until its handshake is done the client may make room at the connection limit (`ConnectHandler+Eviction`).
        connection.waitingSince.store(ClientConnection.uptimeMilliseconds(), ordering: .relaxed)
        let credentials = server.configuration.proxyCredentials
        var handshake = SOCKS5Handshake(configuration: credentials.isEmpty ? .noAuthentication : .usernamePassword { user, password in
            credentials.contains(ProxyCredential(user: user, password: password))
        })
        var buffer = [UInt8](repeating: 0, count: 4096)
        var received = 0
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try socket.read(into: $0) }
            } catch {
                if received > 0 { record(.clientTimeout, "the SOCKS5 handshake did not complete: \(error)") }
                return
            }
            guard count > 0 else {
                if connection.evicted.load(ordering: .relaxed) {
                    record(.overloaded, "DevProxy closed the connection to make room at its "
                           + "\(server.configuration.maxConnections) connections: it had waited longest for its SOCKS5 handshake")
                } else if received > 0 {
                    record(.clientClosed, "the client closed the connection during the SOCKS5 handshake")
                }
                return
            }
            received += count
            for action in handshake.feed(buffer[0..<count]) {
                switch action {
                case .send(let bytes):
                    guard (try? bytes.withUnsafeBytes({ try socket.write($0) })) != nil else { return }
                case .needMore, .relay:
                    continue
                case .connect(let target):
                    for reply in handshake.connected() {
                        switch reply {
                        case .send(let bytes):
                            guard (try? bytes.withUnsafeBytes({ try socket.write($0) })) != nil else { return }
                        case .established(let early):
                            serve(target: target, early: early)
                            return
                        default:
                            continue
                        }
                    }
                    return
                case .established:
                    return
                case .fail(let failure):
                    if failure.kind == .unsupportedVersion, let first = buffer.first, let client = Self.otherClient(first) {
                        // An HTTP client reads an HTTP answer that says where to go; a TLS client gets the close.
                        let message = "\(client) client on the SOCKS5 port: set it to use socks5h://"
                            + "\(connection.listenerInfo.address) as a SOCKS proxy, or the proxy's HTTP port as an HTTP proxy"
                        if first != 0x16 {
                            _ = try? ErrorResponse.bytes(status: 400, detail: message).withUnsafeBytes { try socket.write($0) }
                        }
                        record(.badRequest, message)
                        return
                    }
                    if failure.kind == .unsupportedVersion, buffer.first == 0x04 {
                        // A SOCKS4 or 4a client reads SOCKS4's own refusal (request rejected, 0x5B),
                        // not a SOCKS5 byte it cannot parse: it was closed with no reply at all.
                        _ = try? [UInt8]([0x00, 0x5B, 0, 0, 0, 0, 0, 0]).withUnsafeBytes { try socket.write($0) }
                        record(.badRequest, "a SOCKS4 client on the SOCKS5 listener: set it to use SOCKS5 "
                               + "(socks5h://\(connection.listenerInfo.address))")
                        return
                    }
                    _ = try? failure.bytes.withUnsafeBytes { try socket.write($0) }
                    // A client that offers no username/password method where credentials are required
                    // lacks credentials, as a wrong pair does.
                    let needsCredentials = failure.kind == .noAcceptableMethods && !credentials.isEmpty
                    record(failure.kind == .authenticationFailed || needsCredentials ? .proxyAuthRequired : .badRequest,
                           "SOCKS5: \(failure.reason)" + (failure.reply.map { " (reply \(String($0.rawValue, radix: 16)))" } ?? ""))
                    return
                }
            }
        }
    }

    /// "an HTTP" or "a TLS" when a greeting's first byte is where an HTTP request (a method's
    /// first letter) or a TLS handshake record begins; nil for anything else.
    static func otherClient(_ first: UInt8) -> String? {
        if first == 0x16 { return "a TLS" }
        return (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) ? "an HTTP" : nil
    }

    private func serve(target: SOCKS5Target, early: [UInt8]) {
        let reader = MessageReader(stream: connection.clientStream(PlainStream(connection.socket)),
                                   parser: HTTP1RequestParser(limits: server.configuration.httpLimits))
        ConnectHandler(connection: connection, reader: reader).serve(host: target.host, port: Int(target.port), early: early)
    }

    private func record(_ kind: FlowErrorKind, _ message: String) {
        var draft = FlowDraft(client: connection.clientAddress, process: connection.clientProcess,
                              listener: connection.listenerInfo, mode: .tunnel, host: "", port: 0)
        draft.fail(kind, message)
        server.emit(draft.finished())
    }
}
