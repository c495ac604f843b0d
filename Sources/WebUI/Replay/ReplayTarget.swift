import DevProxy
import Foundation
import HTTPTypes

/// Where a replay of a recorded flow goes, and the `Host` it carries: the server the original
/// went to, with the Host header as recorded, as mitmproxy replays a flow (it connects to the
/// flow's host and port and sends the headers it recorded).
///
/// A request's URL names the host of its `Host` header, which is not always where it went: an
/// intercepted HTTPS request whose Host names another host than its connection's
/// (`curl -H 'Host: tenant-b.test' https://localhost:8443/`, `server.request_host`) went on the
/// connection for `server.host`; a plain HTTP request in a tunnel (CONNECT, SOCKS5, transparent)
/// went to the tunnel's address (`server.address`), whatever its Host said. Replayed by its URL,
/// either went to the Host's name (unresolvable, or another server) with the URL's authority as
/// its Host (`tenant-b.test:8443` where the client sent `tenant-b.test`).
struct ReplayTarget: Equatable {
    /// The URL the replayer asks the proxy for: its host and port are where the connection goes.
    let url: String
    /// The Host to send in place of the URL's (`ReplayMark.host`); nil when the URL's is the one recorded.
    let host: String?

    init(url: String, host: String?) {
        self.url = url
        self.host = host
    }

    /// The target of a replay of `flow`, whose request is `request`.
    init(replaying flow: Flow, request: Flow.Request) {
        var url = request.url
        if var components = URLComponents(string: url), let (host, port) = Self.server(of: flow, request: request, url: components) {
            // A zone id's `%` is `%25` in a URI (RFC 6874 §2); unencoded, Foundation traps on it.
            if let encoded = URIHost.bracketed(host).addingPercentEncoding(withAllowedCharacters: .urlHostAllowed) {
                components.percentEncodedHost = encoded
                components.port = port
                url = components.string ?? url
            }
        }
        // An HTTP/2 request names its host in `:authority` when it has no Host field.
        let recorded = (request.headers.first(named: "host") ?? request.pseudoHeaders?.first(named: ":authority"))?
            .trimmingCharacters(in: .whitespaces)
        let host = recorded.flatMap { recorded -> String? in
            guard let components = URLComponents(string: url), WebUI.differs(recorded, fromAuthorityOf: components),
                  ReplayMark.canCarry(host: recorded) else { return nil }
            return recorded
        }
        self.init(url: url, host: host)
    }

    /// The host and port the original request went to when its URL names another; nil when the URL's are those.
    private static func server(of flow: Flow, request: Flow.Request, url: URLComponents) -> (String, Int)? {
        let urlHost = url.host?.lowercased() ?? ""
        if flow.server.requestHost != nil, !flow.server.host.isEmpty, flow.server.port > 0,
           flow.server.host.lowercased() != urlHost {
            return (flow.server.host, flow.server.port)
        }
        // Plain HTTP in a tunnel: origin-form (an absolute-form request's `target` is recorded),
        // HTTP/1.x, dialled at the tunnel's address. A reverse listener's URL is its origin's.
        guard flow.mode == .http, request.target == nil, request.pseudoHeaders == nil,
              flow.listener?.mode.hasPrefix("reverse") != true,
              let address = flow.server.address, let (host, port) = Self.hostAndPort(address),
              host.lowercased() != urlHost else { return nil }
        return (host, port)
    }

    /// `127.0.0.1:8080` or `[::1]:8080` as a host (without brackets) and a port.
    static func hostAndPort(_ address: String) -> (String, Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
              port > 0, port < 65536 else { return nil }
        var host = address[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return host.isEmpty ? nil : (String(host), port)
    }
}
