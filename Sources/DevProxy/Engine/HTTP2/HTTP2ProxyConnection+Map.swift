import HTTP2
import HTTPTypes

/// `--map-remote` and `--map-local` for an HTTP/2 client's streams (`MapRules`). A stream mapped
/// to this connection's own origin (another path) goes on as any other; one mapped to another
/// origin goes there on an HTTP/1.1 leg of its own (`startHTTP1Leg`), as a stream to an
/// HTTP/1.1-only origin does, so gRPC and WebSockets over HTTP/2 can be mapped only within their origin.
extension HTTP2ProxyConnection {
    /// What the rules make of a stream's request: for map-remote, `head`, `request` and `url`
    /// rewritten to the new URL (`:scheme`, `:authority`, `:path`; a `host` field dropped, as
    /// `:authority` says it); nil when no rule applied.
    func map(_ head: inout HTTP2HeaderBlock, request: inout HTTPRequest, url: inout String) -> MapOutcome? {
        let asked = LocalRequest(request, url: url, httpVersion: "HTTP/2")
        guard let outcome = context.configuration.mapRules.apply(to: asked) else { return nil }
        guard let destination = outcome.destination else { return outcome }
        head.setPseudo(":scheme", destination.tls ? "https" : "http")
        head.setPseudo(":authority", destination.hostHeader)
        head.setPseudo(":path", destination.pathAndQuery)
        let hostName = Array("host".utf8)
        head.fields.removeAll { $0.name == hostName }
        request = HTTPRequest(head)
        url = destination.url
        return outcome
    }

    /// `destination` when it is not this connection's origin (scheme, host and port); nil otherwise.
    func elsewhere(_ destination: Destination?) -> Destination? {
        guard let destination else { return nil }
        let same = destination.tls == !cleartext && destination.host == host.lowercased() && destination.port == port
            && originAuthority == nil
        return same ? nil : destination
    }

    /// Sends a stream `--map-remote` mapped to another origin there, over HTTP/1.1.
    func sendMapped(_ exchange: HTTP2StreamExchange, to destination: Destination, endStream: Bool) {
        let origin = HostPort(host: destination.host, port: destination.port).description
        if exchange.isGRPC || exchange.isExtendedConnect {
            answer(exchange, status: 502, kind: .protocolMismatch,
                   message: "--map-remote sent this HTTP/2 stream to another origin (\(origin)), which DevProxy reaches "
                       + "over HTTP/1.1, and " + (exchange.isGRPC ? "gRPC needs HTTP/2" : "an extended CONNECT (RFC 8441) "
                       + "cannot cross to HTTP/1.1") + "; map within the same origin (another path) instead")
            return
        }
        startHTTP1Leg(exchange, head: exchange.requestHead, endStream: endStream, to: destination)
    }
}
