import Foundation
import HTTPTypes

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
    /// HTTP/2 only: open `-m` streams on each connection and never grant them flow-control
    /// window (a client that never reads), holding them until the end: what the other side
    /// buffers meanwhile.
    case stall
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
    /// Speak HTTP/2 (ALPN `h2` only) instead of HTTP/1.1.
    var http2 = false
    /// HTTP/2: concurrent streams per connection (`-m`). Default 1.
    var streams = 1
    /// Request method; default GET, or POST with `--data`.
    var method: String?
    /// Request body, sent with every request (`--data FILE`).
    var body: [UInt8]?
    /// Extra request header fields (`-H 'name: value'`), in order.
    var headers: [(name: String, value: String)] = []

    /// The method every request uses.
    var effectiveMethod: String { method ?? (body == nil ? "GET" : "POST") }

    /// Warm-up actually applied: stream and idle runs measure from the start.
    var effectiveWarmup: Double {
        if let warmup { return warmup }
        return mode == .keepalive || mode == .newconn ? 1 : 0
    }

    /// Concurrent exchanges in flight at once: connections × streams.
    var concurrency: Int { connections * (http2 ? streams : 1) }
}

/// What is wrong with the command line; the message says how to fix it.
struct ArgumentError: Error, CustomStringConvertible {
    var description: String
}

extension LoadOptions {
    /// Usage text, as worked examples.
    static let usage = """
    devproxy-load: HTTP/1.1 and HTTP/2 load generator over OpenSSL, for benchmarking DevProxy on loopback.

    usage: devproxy-load URL [--proxy HOST:PORT | --socks5 HOST:PORT] [--connect-to HOST:PORT]
                             [--mode keepalive|newconn|stream|idle|stall] [-c CONNECTIONS] [-t THREADS]
                             [--duration SECONDS] [--warmup SECONDS] [--timeout SECONDS] [--cafile FILE]
                             [--insecure] [--new-host-each] [--json]
                             [--http2 [-m STREAMS]] [-X METHOD] [--data FILE] [-H 'NAME: VALUE']...

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
      # HTTP/2 (ALPN h2 only): 16 connections with 10 concurrent streams each, through a proxy
      devproxy-load https://bench.local:9443/100b --http2 -c 16 -m 10 --proxy 127.0.0.1:8080 --cafile proxy-root.pem
      # gRPC unary calls: POST a length-prefixed message with the gRPC fields; grpc-status must be 0
      devproxy-load https://bench.local:50051/lab.Echo/Unary --http2 -c 4 -m 10 --data msg.bin \\
          -H 'content-type: application/grpc' -H 'te: trailers' --connect-to 127.0.0.1:50051 --cafile ca.pem
      # 100 streams of a large file on one connection that never grants window, held for 10 s
      devproxy-load https://bench.local:9443/10m --http2 --mode stall -m 100 --duration 10 \\
          --proxy 127.0.0.1:8080 --insecure

    HTTP/2 works with --mode keepalive (each stream sends request after request), stream (-m
    downloads at once) and stall. A response counts when its status is 2xx/3xx and, if it has a
    grpc-status field (in trailers or a trailers-only head), that is 0.

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
                    throw ArgumentError(
                        description: "--mode is one of keepalive, newconn, stream, idle, stall; got '\(text)'")
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
            case "--http2", "--h2": options.http2 = true
            case "-m", "--streams": options.streams = try count(arg)
            case "-X", "--method":
                let text = try value(arg)
                guard !text.isEmpty, text.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else {
                    throw ArgumentError(description: "\(arg) wants an upper-case method such as POST, got '\(text)'")
                }
                options.method = text
            case "--data":
                let path = try value(arg)
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ArgumentError(description: "--data: cannot read '\(path)'")
                }
                options.body = Array(data)
            case "-H", "--header":
                let text = try value(arg)
                guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                    throw ArgumentError(description: "\(arg) wants 'NAME: VALUE', got '\(text)'")
                }
                let name = text[..<colon].lowercased()
                let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                // Bytes: CR LF is one Character, equal to neither "\r" nor "\n".
                guard !name.utf8.contains(where: { $0 == 0x20 || $0 == 0x0D || $0 == 0x0A }),
                      HTTPFields.isSafeValue(value) else {
                    throw ArgumentError(description: "\(arg): no spaces in the name, no CR, LF or NUL in the value")
                }
                options.headers.append((name, value))
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
        if options.http2 {
            guard options.url.isTLS else {
                throw ArgumentError(description: "--http2 needs an https:// URL (it negotiates h2 with ALPN)")
            }
            guard [.keepalive, .stream, .stall].contains(options.mode) else {
                throw ArgumentError(
                    description: "--http2 works with --mode keepalive, stream or stall, not \(options.mode.rawValue)")
            }
        } else {
            if options.mode == .stall { throw ArgumentError(description: "--mode stall needs --http2") }
            if options.streams != 1 { throw ArgumentError(description: "-m (streams per connection) needs --http2") }
        }
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
