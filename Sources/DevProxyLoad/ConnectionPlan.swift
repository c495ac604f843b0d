import Foundation
import HTTP2
import Synchronization

/// How every connection of a run is made, decided once from the options.
struct ConnectionPlan: Sendable {
    /// Address the TCP connect goes to: the proxy, else `--connect-to`, else the URL's host.
    let dial: LoopbackAddress
    /// TLS context; nil for `http://` URLs.
    let tls: TLSClientContext?
    /// Read-ahead with big buffers (stream mode).
    let largeReads: Bool
    /// HTTP/2: what each connection does, nil for HTTP/1.1.
    let http2: HTTP2Plan?
    private let url: TargetURL
    private let viaProxy: Bool
    private let socks5: Bool
    private let connectTo: HostPort?
    private let newHostEach: Bool
    /// The names every connection uses, unless `newHostEach`.
    private let shared: ConnectionNames
    private let request: Request

    /// Numbers the host names of `--new-host-each` across all worker threads.
    private static let hostCounter = Atomic<Int>(0)

    /// Derives the plan from the options.
    /// - Throws: `SetupError` for an unresolvable or non-loopback address, or a bad CA file.
    init(options: LoadOptions) throws(SetupError) {
        url = options.url
        let origin = options.connectTo ?? HostPort(host: url.host, port: url.port)
        dial = try LoopbackAddress(options.proxy ?? origin)
        tls = url.isTLS ? try TLSClientContext(caFile: options.caFile, insecure: options.insecure,
                                               alpn: options.http2 ? ["h2"] : []) : nil
        largeReads = options.mode == .stream
        http2 = options.http2 ? HTTP2Plan(options: options) : nil
        request = Request(method: options.effectiveMethod, headers: options.headers, body: options.body ?? [])
        viaProxy = options.proxy != nil
        socks5 = options.socks5
        connectTo = options.connectTo
        newHostEach = options.newHostEach
        shared = Self.names(host: url.host, url: url, viaProxy: viaProxy, socks5: socks5, connectTo: connectTo,
                            request: request)
    }

    /// The names for the next connection: the URL's, or with `--new-host-each` a host never used
    /// before in this run (`n<N>-<pid>.<URL host>`) in CONNECT, SNI and Host alike.
    func namesForNextConnection() -> ConnectionNames {
        guard newHostEach else { return shared }
        let number = Self.hostCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return Self.names(host: "n\(number)-\(getpid()).\(url.host)", url: url, viaProxy: viaProxy, socks5: socks5,
                          connectTo: connectTo, request: request)
    }

    private static func names(host: String, url: TargetURL, viaProxy: Bool, socks5: Bool, connectTo: HostPort?,
                              request: Request) -> ConnectionNames {
        var named = url
        named.host = host
        let origin = connectTo ?? HostPort(host: host, port: url.port)
        var socks5Hello: [UInt8]?
        if socks5 {
            // RFC 1928: greeting (no authentication) and CONNECT with a domain name, sent together.
            let name = Array(origin.host.utf8)
            let port = [UInt8(origin.port >> 8), UInt8(origin.port & 0xFF)]
            socks5Hello = [5, 1, 0, 5, 1, 0, 3, UInt8(name.count)] + name + port
        }
        // Through a proxy, https tunnels with CONNECT (SOCKS5 tunnels everything); plain http sends
        // the absolute URI instead.
        let connectTarget = viaProxy && (url.isTLS || socks5) ? origin.description : nil
        let absolute = viaProxy && !url.isTLS && !socks5
        let target = absolute ? "http://\(named.hostHeader)\(url.pathAndQuery)" : url.pathAndQuery
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: \(named.hostHeader)\r\nUser-Agent: devproxy-load\r\n"
        head += request.headers.contains { $0.name == "accept" } ? "" : "Accept: */*\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        if !request.body.isEmpty || request.method == "POST" || request.method == "PUT" {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "\r\n"
        let h2Head = HTTP2HeaderBlock.request(
            method: request.method, scheme: "https", authority: named.hostHeader, path: url.pathAndQuery,
            fields: [HTTP2Field("user-agent", "devproxy-load")]
                + (request.headers.contains { $0.name == "accept" } ? [] : [HTTP2Field("accept", "*/*")])
                + request.headers.map { HTTP2Field($0.name, $0.value) })
        return ConnectionNames(connectTarget: connectTarget, serverName: host, request: Array(head.utf8) + request.body,
                               http2Head: h2Head, socks5Hello: socks5Hello)
    }
}

/// What every request of a run sends, beyond its target.
private struct Request: Sendable {
    var method: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// How an HTTP/2 connection of a run behaves, decided once from the options.
struct HTTP2Plan: Sendable {
    /// Concurrent streams per connection.
    let streams: Int
    /// The body every request sends (empty: the head ends the stream).
    let body: [UInt8]
    /// Settings and windows of the client session. A stalling client advertises a zero stream
    /// window and never raises the connection's, so the server may send no body byte at all.
    let limits: HTTP2Limits

    init(options: LoadOptions) {
        streams = options.streams
        body = options.body ?? []
        var limits = HTTP2Limits()
        limits.maxConcurrentStreams = 100
        if options.mode == .stall {
            limits.initialWindowSize = 0
            limits.connectionWindowSize = 65_535
        } else {
            // Generous windows, acknowledged as bytes arrive: the generator must never be the
            // reason a download waits.
            limits.initialWindowSize = 16 << 20
            limits.connectionWindowSize = 64 << 20
        }
        self.limits = limits
    }
}

/// What one connection says: CONNECT target, SNI and the GET it sends.
struct ConnectionNames: Sendable {
    /// `host:port` for `CONNECT`, when tunnelling TLS through a proxy.
    let connectTarget: String?
    /// SNI and expected certificate name.
    let serverName: String
    /// The HTTP/1.1 request every exchange on the connection sends (head and body), ready to write.
    let request: [UInt8]
    /// The same request's head for HTTP/2.
    let http2Head: HTTP2HeaderBlock
    /// Through a SOCKS5 proxy: the greeting and CONNECT request sent instead of HTTP CONNECT.
    var socks5Hello: [UInt8]? = nil
}
