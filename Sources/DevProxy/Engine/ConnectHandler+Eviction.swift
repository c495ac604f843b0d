/// At the connection limit, a connection whose client has not yet got as far as a request gives
/// its place to a newcomer (`ProxyServer`, `ClientConnection.waitingSince`), as one waiting for a
/// request head does: after its CONNECT (or SOCKS5 request, or transparent redirect) it waits for
/// the client's ClientHello, then for the TLS handshake to end; a tunnel where neither side has
/// sent a byte yet waits too, and so does a SOCKS5 client before its handshake is done
/// (`SOCKS5Front`). 1,024 clients that sent a CONNECT and then nothing, or half a
/// ClientHello, locked every other client out with 503 for as long as they stayed.
extension ConnectHandler {
    /// Marks the connection as waiting for its client (it may make room) or as busy with it. A
    /// connection already waiting (a SOCKS5 handshake before it) keeps the time it began to.
    func waitsForClient(_ waiting: Bool) {
        if waiting {
            _ = connection.waitingSince.compareExchange(expected: 0, desired: ClientConnection.uptimeMilliseconds(),
                                                        ordering: .relaxed)
        } else {
            connection.waitingSince.store(0, ordering: .relaxed)
        }
    }

    /// Whether DevProxy closed this connection to make room for another.
    var madeRoom: Bool { connection.evicted.load(ordering: .relaxed) }

    /// A flow's reason when the connection made room: what it had waited longest for.
    func madeRoomReason(waitingFor what: String) -> String {
        "DevProxy closed the connection to make room at its \(server.configuration.maxConnections) connections: "
            + "it had waited longest for \(what)"
    }

    /// What a connection that made room before its handshake ended had waited for.
    static let handshakeWait = "the client's ClientHello and TLS handshake"
}
