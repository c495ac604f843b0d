import Foundation
import HTTPTypes

/// Where to connect: a host and port, optionally reached through an HTTP proxy, optionally with
/// the address pinned (`--resolve HOST:PORT:ADDRESS`, as curl does).
public struct Endpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// `--proxy HOST:PORT`: connections go through it (CONNECT for TLS and for the probe).
    public var proxy: HostPort?
    /// `--resolve` entries: addresses to dial instead of resolving.
    public var resolve: [ResolveOverride]

    public init(host: String, port: Int, proxy: HostPort? = nil, resolve: [ResolveOverride] = []) {
        (self.host, self.port, self.proxy, self.resolve) = (host, port, proxy, resolve)
    }

    /// The name a TLS client gives the endpoint: the host without the brackets a URL puts an IPv6
    /// literal in. `TLSConnection.connect` sends no server name for an address (RFC 6066 §3
    /// permits no IP literal there) and checks the certificate's IP address entry, as curl does;
    /// bracketed, `[::1]` went out as SNI and was checked as a DNS name.
    public var serverName: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// A TCP connection to the endpoint, through the proxy with CONNECT when there is one.
    ///
    /// - Throws: `NetworkError` for connect failures, `QAError(.network)` when the proxy refuses.
    public func openTunnel(timeout: TimeInterval = 10) throws -> Socket {
        guard let proxy else { return try dialDirect(host: host, port: port, timeout: timeout) }
        let socket = try dialDirect(host: proxy.host, port: proxy.port, timeout: timeout)
        socket.setTimeout(timeout)
        let authority = HostPort(host: host, port: port).description
        let stream = PlainStream(socket)
        // Its User-Agent marks the tunnel as pin-check's own, so `qa verdict` does not take it for the app's.
        try stream.write(Array(("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
                                + "User-Agent: \(QAVerdict.probeUserAgent)\r\n\r\n").utf8))
        let (head, _) = try stream.readHead()
        let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        guard (200..<300).contains(status) else {
            throw QAError(.network, "the proxy \(proxy) refused CONNECT \(authority): \(head.split(separator: "\r\n").first ?? "")")
        }
        return socket
    }

    /// A plain TCP connection to `host:port`, honouring `resolve`.
    func dialDirect(host: String, port: Int, timeout: TimeInterval) throws -> Socket {
        try Socket.connect(host: resolve.address(host: host, port: port), port: port, timeout: timeout)
    }
}

/// `HOST:PORT`, with IPv6 literals in brackets.
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        (self.host, self.port) = (host, port)
    }

    /// Parses `HOST:PORT` or `[V6]:PORT`.
    ///
    /// - Throws: `QAError(.invalidInput)`.
    public init(parsing text: String, defaultPort: Int? = nil) throws {
        var host = text
        var port = defaultPort
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") { port = Int(rest.dropFirst()) } else if !rest.isEmpty { port = nil }
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            port = Int(text[text.index(after: colon)...])
        }
        guard let port, (1...65535).contains(port), !host.isEmpty else {
            throw QAError(.invalidInput, "\(text) is not HOST:PORT")
        }
        (self.host, self.port) = (host, port)
    }

    public var description: String { URIHost.authority(host: host, port: port) }
}
