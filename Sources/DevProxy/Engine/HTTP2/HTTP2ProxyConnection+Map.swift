import HTTP2
import HTTPTypes

/// `--map-remote` and `--map-local` for an HTTP/2 client's streams (`MapRules`). A stream mapped
/// to this connection's own origin (another path) goes on as any other; one mapped to another
/// origin goes there on an HTTP/2 connection of its own (`mappedLeg`), or, when that origin speaks
/// only HTTP/1.1, on an HTTP/1.1 leg (`startHTTP1Leg`), as a stream to an HTTP/1.1-only origin does.
extension HTTP2ProxyConnection {
    /// What the rules make of a stream's request: for map-remote, `head`, `request` and `url`
    /// rewritten to the new URL (`:scheme`, `:authority`, `:path`; a `host` field dropped, as
    /// `:authority` says it); for modify-headers, its fields (a `Host` it sets becomes
    /// `:authority`, `url` kept); nil when no rule applied.
    func map(_ head: inout HTTP2HeaderBlock, request: inout HTTPRequest, url: inout String) -> MapOutcome? {
        let asked = LocalRequest(request, url: url, httpVersion: "HTTP/2", clientOf: context)
        guard let outcome = context.mapRules.apply(to: asked) else { return nil }
        if let edits = outcome.edits {
            head.fields.removeAll { edits.removed.contains(String(decoding: $0.name, as: UTF8.self)) }
            for field in edits.added {
                head.fields.append(HTTP2Field(name: Array(field.name.lowercased().utf8),
                                              value: Array(field.value.utf8)))
            }
            request = HTTPRequest(head)
        }
        guard let destination = outcome.destination else {
            if let host = outcome.edits?.host { sendHost(host, head: &head, request: &request) }
            return outcome
        }
        head.setPseudo(":scheme", destination.tls ? "https" : "http")
        head.setPseudo(":authority", destination.hostHeader)
        head.setPseudo(":path", destination.pathAndQuery)
        let hostName = Array("host".utf8)
        head.fields.removeAll { $0.name == hostName }
        request = HTTPRequest(head)
        url = destination.url
        if let host = outcome.edits?.host { sendHost(host, head: &head, request: &request) }
        return outcome
    }

    /// A `Host` `--modify-headers` set, as HTTP/2 carries it: `:authority` (RFC 9113 §8.3.1),
    /// without a `host` field beside it. The stream still goes to the URL's origin.
    private func sendHost(_ host: String, head: inout HTTP2HeaderBlock, request: inout HTTPRequest) {
        let hostName = Array("host".utf8)
        head.fields.removeAll { $0.name == hostName }
        head.setPseudo(":authority", host)
        request = HTTPRequest(head)
    }

    /// `destination` when it is not this connection's origin (scheme, host and port); nil otherwise.
    func elsewhere(_ destination: Destination?) -> Destination? {
        guard let destination else { return nil }
        let same = destination.tls == !cleartext && destination.host == host.lowercased() && destination.port == port
            && originAuthority == nil
        return same ? nil : destination
    }

    /// The HTTP/2 connection to `destination` for a stream `--map-remote` sent there: one this
    /// client connection opened there before, else a new one (TLS offering h2, as the client's own
    /// origin is asked; without TLS, h2 by prior knowledge for gRPC only, as a plaintext gRPC
    /// channel speaks it). It is kept with the connection's other legs (`retiring`: polled, flushed,
    /// closed with the connection, dropped once the origin sent GOAWAY and its streams ended). Nil
    /// when the stream went another way: over HTTP/1.1 (the origin chose it, or plain HTTP), or
    /// answered (the dial failed; gRPC or an extended CONNECT to an origin without HTTP/2).
    func mappedLeg(to destination: Destination, for exchange: HTTP2StreamExchange,
                   endStream: Bool) -> HTTP2UpstreamLeg? {
        let key = UpstreamPool.key(host: destination.host, port: destination.port, tls: destination.tls, dial: nil)
        if let open = retiring.first(where: { $0.upstream.key == key && $0.acceptsStreams }) {
            describe(open, in: exchange, fresh: false)
            return open
        }
        let origin = HostPort(host: destination.host, port: destination.port).description
        if destination.tls || exchange.isGRPC {
            do {
                let connection = destination.tls
                    ? try context.connection.pool.connection(host: destination.host, port: destination.port, tls: true,
                                                             alpn: ["h2", "http/1.1"])
                    : try context.connection.pool.connection(host: destination.host, port: destination.port, tls: false,
                                                             reuse: false, raw: true)
                if connection.isHTTP2 || !destination.tls {
                    connection.stream.socket.setNonBlocking()
                    let leg = try HTTP2UpstreamLeg(upstream: connection, limits: limits)
                    retiring.append(leg)
                    describe(leg, in: exchange, fresh: true)
                    leg.upstream.reused = true
                    return leg
                }
                context.connection.pool.release(connection)
            } catch {
                let (kind, status, message) = UpstreamFailure.describe(error, target: origin)
                UpstreamFailure.annotate(&exchange.draft, with: error)
                answer(exchange, status: status, kind: kind, message: message)
                return nil
            }
        }
        if exchange.isGRPC || exchange.isExtendedConnect {
            answer(exchange, status: 502, kind: .protocolMismatch,
                   message: "--map-remote sent this HTTP/2 stream to \(origin), which speaks only HTTP/1.1, and "
                       + (exchange.isGRPC ? "gRPC needs HTTP/2"
                          : "an extended CONNECT (RFC 8441) cannot cross to HTTP/1.1"))
            return nil
        }
        startHTTP1Leg(exchange, head: exchange.requestHead, endStream: endStream, to: destination)
        return nil
    }
}
