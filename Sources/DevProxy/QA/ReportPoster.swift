import CertAuthority
import Foundation
import HTTPTypes

/// Sends a pin-failure report as an app would: `POST` with `Content-Type: application/json`,
/// HTTP/1.1 over plain TCP or TLS, through an HTTP proxy when given (absolute-form for `http:`,
/// CONNECT then TLS for `https:`).
public struct ReportPoster: Sendable {
    /// What came back from one URI.
    public struct Delivery: Codable, Sendable, Equatable {
        public var uri: String
        /// The HTTP status, or nil when the POST failed.
        public var status: Int?
        /// Why it failed, when it did.
        public var error: String?
    }

    /// The HTTP proxy, if any.
    public var proxy: HostPort?
    /// Extra CAs trusted for `https:` report URIs (beside the system store).
    public var extraCAs: [Certificate]
    /// `--resolve` overrides.
    public var resolve: [ResolveOverride]
    /// Per-operation timeout, seconds. Default 10.
    public var timeout: TimeInterval

    public init(proxy: HostPort? = nil, extraCAs: [Certificate] = [], resolve: [ResolveOverride] = [], timeout: TimeInterval = 10) {
        (self.proxy, self.extraCAs, self.resolve, self.timeout) = (proxy, extraCAs, resolve, timeout)
    }

    /// POSTs `body` to each URI in order; a failure of one does not stop the others.
    public func post(_ body: [UInt8], to uris: [String]) -> [Delivery] {
        uris.map { uri in
            do {
                return Delivery(uri: uri, status: try post(body, to: uri), error: nil)
            } catch {
                return Delivery(uri: uri, status: nil, error: "\(error)")
            }
        }
    }

    /// One POST; returns the response status.
    public func post(_ body: [UInt8], to uri: String) throws -> Int {
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty else {
            throw QAError(.invalidInput, "\(uri) is not an http: or https: URL")
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        let defaultPort = (scheme == "https" ? 443 : 80) == port
        // URLComponents keeps an IPv6 host in its brackets: bracketing it again made `[[::1]]`.
        let hostHeader = URIHost.authority(host: host, port: defaultPort ? nil : port)
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        let endpoint = Endpoint(host: host, port: port, proxy: scheme == "https" ? proxy : nil, resolve: resolve)
        let stream: ByteStream
        var keep: [AnyObject] = []
        if scheme == "https" {
            let socket = try endpoint.openTunnel(timeout: timeout)
            socket.setTimeout(timeout)
            let context = try TLSContext.client(extraCAs: extraCAs, insecure: false)
            let tls = try TLSConnection.connect(socket: socket, context: context, serverName: endpoint.serverName)
            stream = tls
            keep.append(tls)
        } else if let proxy {
            let socket = try endpoint.dialDirect(host: proxy.host, port: proxy.port, timeout: timeout)
            socket.setTimeout(timeout)
            target = "http://\(hostHeader)\(target)"
            stream = PlainStream(socket)
        } else {
            let socket = try endpoint.dialDirect(host: host, port: port, timeout: timeout)
            socket.setTimeout(timeout)
            stream = PlainStream(socket)
        }
        defer { (keep.first as? TLSConnection)?.close() }
        let head = "POST \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nUser-Agent: \(QAVerdict.probeUserAgent)\r\nConnection: close\r\n\r\n"
        try stream.write(Array(head.utf8) + body)
        let (response, _) = try stream.readHead()
        let statusLine = response.split(separator: "\r\n").first ?? ""
        let fields = statusLine.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let status = Int(fields[1]) else {
            throw QAError(.network, "\(uri) answered with something that is not HTTP/1.x: \(statusLine.prefix(80))")
        }
        return status
    }
}
