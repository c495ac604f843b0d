import Foundation
import HTTP1

/// What an exchange needs to know about the client connection it runs on.
struct ExchangeContext {
    let server: ProxyServer
    let connection: ClientConnection
    let client: MessageReader<HTTP1RequestParser>
    let clientAddress: String
    /// `http` for absolute-form requests, `https` inside an intercepted CONNECT.
    let mode: Flow.Mode
    let clientTLS: Flow.TLSInfo.ClientSide?
    let signer: Flow.SignerInfo?
    let persona: String?

    var configuration: ProxyConfiguration { server.configuration }

    /// A new flow for this connection.
    func draft(host: String, port: Int) -> FlowDraft {
        var draft = FlowDraft(client: clientAddress, listener: connection.listenerInfo, mode: mode, host: host, port: port)
        draft.flow.signer = signer
        draft.flow.persona = persona
        if let clientTLS { draft.flow.tls = Flow.TLSInfo(client: clientTLS, upstream: nil) }
        if configuration.insecureUpstream && mode == .https { draft.flow.insecureUpstream = true }
        return draft
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
