import Foundation

/// How the generator uses its connections.
enum LoadMode: String, Sendable {
    /// C connections, each sending GETs back to back (HTTP/1.1 keep-alive).
    case keepalive
    /// Every request on a fresh TCP connection (+ CONNECT) and a full TLS handshake.
    case newconn
    /// One GET per connection for a large body, read in large chunks: MB/s and time to first byte.
    case stream
    /// Open C connections (one GET each, to prove the path works), then hold them idle.
    case idle
}

/// A `host:port` pair given on the command line.
struct HostPort: Sendable, CustomStringConvertible {
    /// Host name or IPv4 literal, as typed.
    var host: String
    /// TCP port.
    var port: UInt16

    var description: String { "\(host):\(port)" }

    /// Parses `host:port`; returns nil when either part is missing or the port is not a number.
    init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"),
              let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return nil }
        let host = String(text[..<colon])
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }
}

/// The target URL, reduced to what an HTTP/1.1 client needs.
struct TargetURL: Sendable {
    /// `true` for `https`.
    var isTLS: Bool
    /// Host used for SNI, certificate name check and the `Host` header.
    var host: String
    /// Port from the URL, or the scheme's default.
    var port: UInt16
    /// Path plus query, at least `/`.
    var pathAndQuery: String

    /// The `Host` header value: the port is omitted when it is the scheme's default.
    var hostHeader: String {
        let defaultPort: UInt16 = isTLS ? 443 : 80
        return port == defaultPort ? host : "\(host):\(port)"
    }
}

/// Everything one run needs; built once from argv and never changed.
struct LoadOptions: Sendable {
    var url: TargetURL
    /// Explicit HTTP proxy to CONNECT through (https) or send absolute-form requests to (http).
    var proxy: HostPort?
    /// `proxy` is a SOCKS5 proxy (RFC 1928, no authentication, the host name in the request).
    var socks5 = false
    /// Address actually dialled instead of the URL's host (the URL's host stays in SNI and `Host`).
    /// Through a proxy it becomes the CONNECT target.
    var connectTo: HostPort?
    var mode: LoadMode = .keepalive
    /// Total connections; default 1.
    var connections = 1
    /// Worker threads; default the number of active cores, never more than `connections`.
    var threads = ProcessInfo.processInfo.activeProcessorCount
    /// Measured seconds (after warm-up). Default 10.
    var duration = 10.0
    /// Seconds of traffic before measuring starts. Default 1 (0 for stream and idle).
    var warmup: Double?
    /// Per-operation timeout in seconds: connect, CONNECT, handshake, each response. Default 10.
    var timeout = 10.0
    /// PEM file of roots to trust; nil means the system store.
    var caFile: String?
    /// Skip certificate and host name verification.
    var insecure = false
    /// Print one JSON object instead of text.
    var json = false
    /// Every connection asks for a host name not used before (`n<N>-<pid>.<URL host>`): what a
    /// proxy's first connection to a new host costs (minting a leaf).
    var newHostEach = false

    /// Warm-up actually applied: stream and idle runs measure from the start.
    var effectiveWarmup: Double {
        if let warmup { return warmup }
        return mode == .keepalive || mode == .newconn ? 1 : 0
    }
}

/// What is wrong with the command line; the message says how to fix it.
struct ArgumentError: Error, CustomStringConvertible {
    var description: String
}

extension LoadOptions {
    /// Usage text, as worked examples.
    static let usage = """
    devproxy-load: HTTP/1.1 load generator over OpenSSL, for benchmarking DevProxy on loopback.

    usage: devproxy-load URL [--proxy HOST:PORT | --socks5 HOST:PORT] [--connect-to HOST:PORT]
                             [--mode keepalive|newconn|stream|idle]
                             [-c CONNECTIONS] [-t THREADS] [--duration SECONDS] [--warmup SECONDS]
                             [--timeout SECONDS] [--cafile FILE] [--insecure] [--new-host-each] [--json]

    examples:
      # 16 keep-alive connections for 10 s straight to a TLS server, trusting a test CA
      devproxy-load https://bench.local:8443/100b --connect-to 127.0.0.1:8443 --cafile ca.pem -c 16
      # the same through a proxy (CONNECT bench.local:8443, then TLS to the proxy's leaf)
      devproxy-load https://bench.local:8443/100b --proxy 127.0.0.1:8080 --cafile proxy-root.pem -c 16
      # 8 concurrent fresh connections, full handshake per request
      devproxy-load https://bench.local:8443/100b --mode newconn -c 8 --connect-to 127.0.0.1:8443 --cafile ca.pem
      # the same, each connection to a host name never seen before (n1-PID.bench.local, ...):
      # through a proxy this measures minting a leaf on the spot
      devproxy-load https://bench.local:8443/100b --mode newconn -c 8 --new-host-each --proxy 127.0.0.1:8080 --cafile proxy-root.pem
      # download one large body, report MB/s and time to first byte
      devproxy-load https://bench.local:8443/256m --mode stream --duration 60 --connect-to 127.0.0.1:8443 --insecure
      # hold 1000 idle TLS connections through a proxy for 5 s
      devproxy-load https://bench.local:8443/100b --mode idle -c 1000 --duration 5 --proxy 127.0.0.1:8080 --insecure

    Only loopback addresses (127.0.0.0/8) are dialled. Exit codes: 0 run completed (see errors in the
    report), 1 the run could not start (bad TLS setup, unresolvable address), 2 bad arguments.
    """

    /// Parses argv (without the program name).
    /// - Throws: `ArgumentError` naming the offending argument.
    static func parse(_ args: [String]) throws(ArgumentError) -> LoadOptions {
        var urlText: String?
        var options = LoadOptions(url: TargetURL(isTLS: true, host: "", port: 443, pathAndQuery: "/"))
        var threadsGiven = false
        var index = 0

        func value(_ name: String) throws(ArgumentError) -> String {
            index += 1
            guard index < args.count else { throw ArgumentError(description: "\(name) needs a value") }
            return args[index]
        }
        func number(_ name: String) throws(ArgumentError) -> Double {
            let text = try value(name)
            guard let number = Double(text), number >= 0, number.isFinite else {
                throw ArgumentError(description: "\(name) wants a non-negative number, got '\(text)'")
            }
            return number
        }
        func count(_ name: String) throws(ArgumentError) -> Int {
            let text = try value(name)
            guard let number = Int(text), number >= 1, number <= 100_000 else {
                throw ArgumentError(description: "\(name) wants a whole number from 1 to 100000, got '\(text)'")
            }
            return number
        }
        func hostPort(_ name: String) throws(ArgumentError) -> HostPort {
            let text = try value(name)
            guard let parsed = HostPort(parsing: text) else {
                throw ArgumentError(description: "\(name) wants HOST:PORT, got '\(text)'")
            }
            return parsed
        }

        while index < args.count {
            let arg = args[index]
            switch arg {
            case "--proxy": options.proxy = try hostPort(arg)
            case "--socks5":
                options.proxy = try hostPort(arg)
                options.socks5 = true
            case "--connect-to": options.connectTo = try hostPort(arg)
            case "--mode":
                let text = try value(arg)
                guard let mode = LoadMode(rawValue: text) else {
                    throw ArgumentError(description: "--mode is one of keepalive, newconn, stream, idle; got '\(text)'")
                }
                options.mode = mode
            case "-c", "--connections": options.connections = try count(arg)
            case "-t", "--threads":
                options.threads = try count(arg)
                threadsGiven = true
            case "--duration": options.duration = try number(arg)
            case "--warmup": options.warmup = try number(arg)
            case "--timeout": options.timeout = max(0.001, try number(arg))
            case "--cafile": options.caFile = try value(arg)
            case "--insecure", "-k": options.insecure = true
            case "--json": options.json = true
            case "--new-host-each": options.newHostEach = true
            default:
                guard !arg.hasPrefix("-"), urlText == nil else {
                    throw ArgumentError(description: "unknown argument '\(arg)'; run with --help for usage")
                }
                urlText = arg
            }
            index += 1
        }
        guard let urlText else { throw ArgumentError(description: "no URL given; run with --help for usage") }
        options.url = try parseURL(urlText)
        if !threadsGiven { options.threads = max(1, options.threads) }
        options.threads = min(options.threads, options.connections)
        return options
    }

    /// Splits `http(s)://host[:port][/path]` without Foundation's URL, whose IPv6 and
    /// percent-encoding rules are more than a loopback benchmark needs.
    private static func parseURL(_ text: String) throws(ArgumentError) -> TargetURL {
        let isTLS: Bool
        let rest: Substring
        if text.hasPrefix("https://") {
            isTLS = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            isTLS = false
            rest = text.dropFirst(7)
        } else {
            throw ArgumentError(description: "URL must start with http:// or https://, got '\(text)'")
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = String(rest[..<slash])
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        let defaultPort: UInt16 = isTLS ? 443 : 80
        if authority.contains(":") {
            guard let hostPort = HostPort(parsing: authority) else {
                throw ArgumentError(description: "cannot read host:port in URL '\(text)'")
            }
            return TargetURL(isTLS: isTLS, host: hostPort.host, port: hostPort.port, pathAndQuery: path)
        }
        guard !authority.isEmpty else { throw ArgumentError(description: "URL '\(text)' has no host") }
        return TargetURL(isTLS: isTLS, host: authority, port: defaultPort, pathAndQuery: path)
    }
}
