import Foundation

/// Another HTTP proxy DevProxy's own upstream connections go through (`--upstream-proxy URL`
/// for every listener, `upstream:URL` for one): CONNECT for TLS and for raw tunnels,
/// absolute-form requests for plain HTTP (RFC 9110 §9.3.6, RFC 9112 §3.2.2).
public struct UpstreamProxy: Sendable, Equatable {
    public var url: ModeURL
    /// The `Proxy-Authorization` value sent to it (`Basic …`, from `--upstream-proxy-auth-file`).
    public var authorization: String?

    /// - Throws: `ConfigurationError` for an https:// proxy (TLS to the proxy is not built).
    public init(url: ModeURL, authorization: String? = nil) throws {
        guard !url.tls else {
            throw ConfigurationError("upstream proxy \(url): only http:// proxies are supported "
                                     + "(TLS to the proxy is not)")
        }
        self.url = url
        self.authorization = authorization
    }

    /// `Basic base64(user:password)` from the first `user:password` line of a credentials file.
    public static func basicAuthorization(_ credential: ProxyCredential) -> String {
        "Basic " + Data("\(credential.user):\(credential.password)".utf8).base64EncodedString()
    }

    /// Connects to the proxy; for `tunnel`, asks it to CONNECT to `host:port` and returns once it
    /// answered 2xx, the socket then carrying the tunnel.
    ///
    /// - Throws: `UpstreamProxyFailure` (refused, unreachable, 407, any other answer).
    func open(host: String, port: Int, tunnel: Bool, timeout: TimeInterval,
              readTimeout: TimeInterval) throws -> Socket {
        let socket: Socket
        do {
            socket = try Socket.connect(host: url.host, port: url.port, timeout: timeout)
        } catch let error as NetworkError {
            throw UpstreamProxyFailure(message: "the upstream proxy \(url) cannot be reached: \(error.message)",
                                       timedOut: error.kind == .timedOut)
        }
        socket.setTimeout(readTimeout)
        guard tunnel else { return socket }
        let authority = HostPort(host: host, port: port).description
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        do {
            try Array(request.utf8).withUnsafeBytes { try socket.write($0) }
            let head = try Self.readHead(socket)
            let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                throw UpstreamProxyFailure(message: "the upstream proxy \(url) answered CONNECT \(authority) "
                                           + "with \"\(statusLine.prefix(80))\", not HTTP")
            }
            guard (200..<300).contains(status) else {
                let hint = status == 407
                    ? (authorization == nil ? ": it wants credentials; give them with --upstream-proxy-auth-file"
                                            : ": it refused the credentials in --upstream-proxy-auth-file")
                    : ""
                throw UpstreamProxyFailure(message: "the upstream proxy \(url) answered CONNECT \(authority) "
                                           + "with \(statusLine)\(hint)")
            }
            return socket
        } catch let error as NetworkError {
            throw UpstreamProxyFailure(message: "the upstream proxy \(url) failed during CONNECT \(authority): "
                                       + error.message,
                                       timedOut: error.kind == .timedOut)
        }
    }

    /// Reads exactly the proxy's response head (peeking first, so no tunnel byte after it is consumed).
    private static func readHead(_ socket: Socket) throws -> String {
        var buffer = [UInt8](repeating: 0, count: 8192)
        let deadline = Date().addingTimeInterval(socket.timeout)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try socket.peek(into: $0) }
            guard count > 0 else { throw NetworkError(.closed, "it closed the connection") }
            let window = buffer[0..<count]
            if let end = window.firstRange(of: [13, 10, 13, 10]) {
                var head = [UInt8](repeating: 0, count: end.upperBound)
                var read = 0
                while read < head.count {
                    let got = try head.withUnsafeMutableBytes {
                        try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[read...]))
                    }
                    guard got > 0 else { throw NetworkError(.closed, "it closed the connection") }
                    read += got
                }
                return String(decoding: head, as: UTF8.self)
            }
            guard count < buffer.count else { throw NetworkError(.failed, "its response head is over 8 KiB") }
            // Not HTTP (an SSH banner, a TLS alert), or the head's start and then a close: said at
            // once. Peeking shows the same bytes after the proxy's FIN, so this waited out the whole
            // upstream timeout and was reported as one.
            let version = Array("HTTP/".utf8)
            if !window.starts(with: version.prefix(min(count, version.count))) {
                let line = String(decoding: window.prefix { $0 != 13 && $0 != 10 }.prefix(80), as: UTF8.self)
                throw NetworkError(.failed, "it answered \"\(line)\", not HTTP")
            }
            if socket.peerHasClosed {
                throw NetworkError(.closed, "it closed the connection after \(count) bytes of an incomplete response head")
            }
            // More of the head is on its way (peek returns what is there at once).
            guard Date() < deadline else {
                throw NetworkError(.timedOut, "no complete response head within \(Int(socket.timeout)) s")
            }
            usleep(1_000)
        }
    }
}

/// The upstream proxy refused, could not be reached, or did not answer CONNECT with 2xx.
struct UpstreamProxyFailure: Error, CustomStringConvertible {
    let message: String
    var timedOut = false
    var description: String { message }
}
