import Foundation
import Synchronization

/// How every connection of a run is made, decided once from the options.
struct ConnectionPlan: Sendable {
    /// Address the TCP connect goes to: the proxy, else `--connect-to`, else the URL's host.
    let dial: LoopbackAddress
    /// TLS context; nil for `http://` URLs.
    let tls: TLSClientContext?
    /// Read-ahead with big buffers (stream mode).
    let largeReads: Bool
    private let url: TargetURL
    private let viaProxy: Bool
    private let socks5: Bool
    private let connectTo: HostPort?
    private let newHostEach: Bool
    /// The names every connection uses, unless `newHostEach`.
    private let shared: ConnectionNames

    /// Numbers the host names of `--new-host-each` across all worker threads.
    private static let hostCounter = Atomic<Int>(0)

    /// Derives the plan from the options.
    /// - Throws: `SetupError` for an unresolvable or non-loopback address, or a bad CA file.
    init(options: LoadOptions) throws(SetupError) {
        url = options.url
        let origin = options.connectTo ?? HostPort(host: url.host, port: url.port)
        dial = try LoopbackAddress(options.proxy ?? origin)
        tls = url.isTLS ? try TLSClientContext(caFile: options.caFile, insecure: options.insecure) : nil
        largeReads = options.mode == .stream
        viaProxy = options.proxy != nil
        socks5 = options.socks5
        connectTo = options.connectTo
        newHostEach = options.newHostEach
        shared = Self.names(host: url.host, url: url, viaProxy: viaProxy, socks5: socks5, connectTo: connectTo)
    }

    /// The names for the next connection: the URL's, or with `--new-host-each` a host never used
    /// before in this run (`n<N>-<pid>.<URL host>`) in CONNECT, SNI and Host alike.
    func namesForNextConnection() -> ConnectionNames {
        guard newHostEach else { return shared }
        let number = Self.hostCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return Self.names(host: "n\(number)-\(getpid()).\(url.host)", url: url, viaProxy: viaProxy, socks5: socks5,
                          connectTo: connectTo)
    }

    private static func names(host: String, url: TargetURL, viaProxy: Bool, socks5: Bool,
                              connectTo: HostPort?) -> ConnectionNames {
        var named = url
        named.host = host
        let origin = connectTo ?? HostPort(host: host, port: url.port)
        if socks5 {
            // RFC 1928: greeting (no authentication) and CONNECT with a domain name, sent together.
            let name = Array(origin.host.utf8)
            let port = [UInt8(origin.port >> 8), UInt8(origin.port & 0xFF)]
            let hello: [UInt8] = [5, 1, 0, 5, 1, 0, 3, UInt8(name.count)] + name + port
            let head = "GET \(url.pathAndQuery) HTTP/1.1\r\nHost: \(named.hostHeader)\r\n"
                + "User-Agent: devproxy-load\r\nAccept: */*\r\n\r\n"
            return ConnectionNames(connectTarget: origin.description, serverName: host, request: Array(head.utf8),
                                   socks5Hello: hello)
        }
        // Through a proxy, https tunnels with CONNECT; plain http sends the absolute URI instead.
        let connectTarget = viaProxy && url.isTLS ? origin.description : nil
        let target = viaProxy && !url.isTLS ? "http://\(named.hostHeader)\(url.pathAndQuery)" : url.pathAndQuery
        let head = "GET \(target) HTTP/1.1\r\nHost: \(named.hostHeader)\r\nUser-Agent: devproxy-load\r\nAccept: */*\r\n\r\n"
        return ConnectionNames(connectTarget: connectTarget, serverName: host, request: Array(head.utf8))
    }
}

/// What one connection says: CONNECT target, SNI and the GET it sends.
struct ConnectionNames: Sendable {
    /// `host:port` for `CONNECT`, when tunnelling TLS through a proxy.
    let connectTarget: String?
    /// SNI and expected certificate name.
    let serverName: String
    /// The GET request every exchange on the connection sends, ready to write.
    let request: [UInt8]
    /// Through a SOCKS5 proxy: the greeting and CONNECT request sent instead of HTTP CONNECT.
    var socks5Hello: [UInt8]? = nil
}
