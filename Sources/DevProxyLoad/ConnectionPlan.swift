/// How every connection of a run is made, decided once from the options.
struct ConnectionPlan: Sendable {
    /// Address the TCP connect goes to: the proxy, else `--connect-to`, else the URL's host.
    let dial: LoopbackAddress
    /// `host:port` for `CONNECT`, when tunnelling TLS through a proxy.
    let connectTarget: String?
    /// TLS context; nil for `http://` URLs.
    let tls: TLSClientContext?
    /// SNI and expected certificate name: always the URL's host.
    let serverName: String
    /// Read-ahead with big buffers (stream mode).
    let largeReads: Bool
    /// The GET request every exchange sends, ready to write.
    let request: [UInt8]

    /// Derives the plan from the options.
    /// - Throws: `SetupError` for an unresolvable or non-loopback address, or a bad CA file.
    init(options: LoadOptions) throws(SetupError) {
        let url = options.url
        let origin = options.connectTo ?? HostPort(host: url.host, port: url.port)
        dial = try LoopbackAddress(options.proxy ?? origin)
        tls = url.isTLS ? try TLSClientContext(caFile: options.caFile, insecure: options.insecure) : nil
        serverName = url.host
        largeReads = options.mode == .stream
        // Through a proxy, https tunnels with CONNECT; plain http sends the absolute URI instead.
        connectTarget = options.proxy != nil && url.isTLS ? origin.description : nil
        let target: String
        if options.proxy != nil && !url.isTLS {
            target = "http://\(url.hostHeader)\(url.pathAndQuery)"
        } else {
            target = url.pathAndQuery
        }
        let head = "GET \(target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: devproxy-load\r\nAccept: */*\r\n\r\n"
        request = Array(head.utf8)
    }
}
