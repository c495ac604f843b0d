import Foundation
import HTTP1

/// What an exchange needs to know about the client connection it runs on. A class: the exchange's
/// parts (transfer, relay, legs) each hold it, and a struct of a dozen strings was copied, with a
/// reference count for each, every time one of them was made (six times per HTTP/1.1 request).
final class ExchangeContext {
    let server: ProxyServer
    let connection: ClientConnection
    let client: MessageReader<HTTP1RequestParser>
    let clientAddress: String
    /// `http` for absolute-form requests, `https` inside an intercepted CONNECT.
    let mode: Flow.Mode
    let clientTLS: Flow.TLSInfo.ClientSide?
    let signer: Flow.SignerInfo?
    let persona: String?

    init(server: ProxyServer, connection: ClientConnection, client: MessageReader<HTTP1RequestParser>,
         clientAddress: String, mode: Flow.Mode, clientTLS: Flow.TLSInfo.ClientSide?, signer: Flow.SignerInfo?,
         persona: String?) {
        self.server = server
        self.connection = connection
        self.client = client
        self.clientAddress = clientAddress
        self.mode = mode
        self.clientTLS = clientTLS
        self.signer = signer
        self.persona = persona
    }

    var configuration: ProxyConfiguration { server.configuration }

    /// A new flow for this connection, with its request head and HTTP/2 stream when known.
    func draft(host: String, port: Int, request: Flow.Request? = nil, h2: Flow.HTTP2Info? = nil) -> FlowDraft {
        FlowDraft(client: clientAddress, listener: connection.listenerInfo, mode: mode, host: host, port: port,
                  tls: clientTLS.map { Flow.TLSInfo(client: $0, upstream: nil) }, request: request, signer: signer,
                  persona: persona, insecureUpstream: configuration.insecureUpstream && mode == .https ? true : nil,
                  h2: h2)
    }

    /// Sends bytes to the client, ignoring failure (the client may already be gone; the flow
    /// records the cause).
    func sendToClient(_ bytes: [UInt8]) {
        try? client.stream.write(bytes)
    }
}

/// Where a request goes: scheme, host, port and the origin-form target to send upstream.
struct Destination {
    let tls: Bool
    let host: String
    let port: Int
    let pathAndQuery: String
    /// The address to connect to when it is not `host`'s (see `UpstreamPool.connection`).
    var dial: String? = nil

    /// The host as it appears in an authority: an IPv6 literal in brackets (RFC 3986 §3.2.2).
    /// (A byte scan: `String.contains(_: String)` goes through Foundation's locale-aware search.)
    private var authority: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
    }

    /// The URL the flow log shows.
    var url: String {
        let scheme = tls ? "https" : "http"
        let defaultPort = tls ? 443 : 80
        return "\(scheme)://\(authority)\(port == defaultPort ? "" : ":\(port)")\(pathAndQuery)"
    }

    /// The Host header value for this destination.
    var hostHeader: String {
        return port == (tls ? 443 : 80) ? authority : "\(authority):\(port)"
    }
}
