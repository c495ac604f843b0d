import CertAuthority
import Foundation
import GRPCWire
import HTTP1
import SessionStore

/// Everything `devproxy run` can be told, as a value with its defaults stated. The server
/// takes it at start and keeps it `let`.
public struct ProxyConfiguration: Sendable {
    /// Where to listen. Default `127.0.0.1:8080`: loopback only unless `allowRemote`.
    public var listenHost = "127.0.0.1"
    public var listenPort = 8080
    /// The listeners (`--mode`, repeatable): the first without an address takes `listenHost`
    /// and `listenPort`; the others name theirs (`socks5@127.0.0.1:1080`). Default: one regular
    /// HTTP proxy listener.
    public var modes: [ListenerMode] = [ListenerMode(kind: .regular)]
    /// Every upstream connection goes through this HTTP proxy (`--upstream-proxy URL`); an
    /// `upstream:URL` listener uses its own URL instead.
    public var upstreamProxy: UpstreamProxy?
    /// `Proxy-Authorization` for `upstream:URL` listeners' proxies (`--upstream-proxy-auth-file`).
    public var upstreamProxyAuthorization: String?
    /// TLS on `reverse:https://…` listeners, with a leaf for the name the client asked for
    /// (`--reverse-tls`); without it they take plain HTTP and speak TLS to the origin.
    public var reverseTLS = false
    /// Listening on a non-loopback address requires this (`--allow-remote`).
    public var allowRemote = false
    /// `user:password` pairs; when non-empty, clients must send `Proxy-Authorization`.
    public var proxyCredentials: [ProxyCredential] = []
    /// Hosts tunnelled without decryption (`--passthrough`): `*` matches any run of characters,
    /// dots included, so `*.apple.com` matches `a.b.apple.com` but not `apple.com`.
    public var passthrough: [GlobPattern] = []
    /// Upstream address overrides (`--resolve host:port:address`).
    public var resolve: [ResolveOverride] = []
    /// Extra CAs trusted for upstream verification besides the system store (`--upstream-ca`).
    public var upstreamCAs: [Certificate] = []
    /// Client certificates for origins that ask for one (`--client-cert [HOST_GLOB=]FILE`), in order.
    public var clientCertificates: [ClientCertificateRule] = []
    /// Request signatures to check (`--verify-signature HOST_GLOB=KEYFILE[,SCHEME.json]`); each
    /// matching flow records `signature`. A replay re-signs with `signatures?.signer(for:)`.
    public var signatures: SignatureVerifier?
    /// Skip upstream verification (`--insecure-upstream`); every flow records it.
    public var insecureUpstream = false
    /// Open the origin connection while the client's TLS handshake with us runs, so the first
    /// request does not wait for the origin's handshakes; `--lazy-upstream` waits for the request.
    public var eagerUpstream = true
    /// HTTP/2 on both sides (`--no-http2` turns it off): the client is offered h2 in ALPN and
    /// origins are asked for it. Off, both sides speak HTTP/1.1 only.
    public var http2 = true
    /// Bytes of each body kept in the flow log (`--body-limit`), default 1 MiB.
    public var bodyLimit = 1 << 20
    /// Where captures put body bytes past their in-memory head, for the session store (which keeps
    /// up to its own limit); nil keeps `bodyLimit` bytes of each body in memory.
    public var bodySpool: BodySpool? = nil
    /// Message definitions from `--proto` descriptor sets: gRPC messages of the methods they define
    /// are also recorded with field names and types. Nil: schema-less decoding only.
    public var protoSchema: ProtoSchema? = nil
    /// `--grpc-reflection`: ask a gRPC server for the `.proto` of a service `protoSchema` does not
    /// define (server reflection), once, and type its later calls by the answer (`GRPCReflection`).
    public var grpcReflection = false
    /// HTTP parsing limits: request line 64 KiB → 414, header block 64 KiB → 431, 256 headers.
    /// The request line is not the codec's 8 KiB: origins take longer ones (Node.js and hypercorn
    /// 16 KiB, Go 1 MiB, browsers send URLs of up to 2 MB) and an h2 client's `:path` is bounded
    /// only by the 64 KiB header list, so a long URL refused here would fail only through the proxy.
    public var httpLimits = HTTP1Limits(maxStartLineLength: 64 * 1024)
    /// How long a client may take to send a complete request head. Default 30 s.
    public var headerTimeout: TimeInterval = 30
    /// How long an idle keep-alive client connection is kept. Default 120 s.
    public var idleTimeout: TimeInterval = 120
    /// How long to wait for an upstream TCP connection. Default 10 s.
    public var connectTimeout: TimeInterval = 10
    /// How long an upstream may stay silent during its TLS handshake and before its response head
    /// (then 504). A response that has begun is never cut for silence: the client decides how long
    /// to wait (`ResponseRelay`, `expireSilentUpstreams`). Default 60 s.
    public var upstreamTimeout: TimeInterval = 60
    /// Most client connections served at once; more get 503. Default 1,024.
    public var maxConnections = 1024
    /// Most idle keep-alive upstream connections kept for reuse, all hosts together (16 per
    /// host); idle ones older than 4 s are closed. Default 256.
    public var maxIdleUpstream = 256
    /// Time in-flight exchanges get to finish at shutdown. Default 5 s.
    public var shutdownGrace: TimeInterval = 5
    /// Add a `Via` header to forwarded messages (off by default: it changes what apps see).
    public var addVia = false
    /// Relay `Alt-Svc` as the origin sent it (`--keep-alt-svc`). By default the alternatives a
    /// client could not follow through DevProxy (HTTP/3 over QUIC, or any behind a reverse
    /// listener) are removed, so the client stays on the connection DevProxy sees (`AltSvc`).
    public var keepAltSvc = false
    /// Header names whose values are masked in the flow log (`--redact`).
    public var redactHeaders: [String] = []
    /// Requests the proxy answers itself instead of forwarding, for HTTP/1.1 and HTTP/2 alike
    /// (`--sink-reports`, the onboarding site, the web UI's own address); the first match answers.
    public var localRoutes: [LocalRoute] = []
    /// Listeners the proxy must never dial (the web UI's, so no client of the proxy reaches its
    /// API through it: mitmweb's CVE-2025-23217): a destination that resolves to one's port on
    /// any loopback address, or to its exact address, is refused with 403.
    public var forbiddenDestinations: [SocketAddress] = []
    /// The per-run secret of `X-DevProxy-Replay: SECRET NEW_ID [ORIGINAL_ID]`, sent by the web
    /// UI's replayer: the engine takes the header off and records the flow under NEW_ID with
    /// `replay_of`. Nil: the header is only taken off.
    public var replaySecret: String?
    /// The onboarding site (`http://devproxy.test/`, and `GET /` straight to the proxy's port),
    /// answered by DevProxy and never forwarded. Nil: no such site (requests for it are proxied).
    public var onboarding: OnboardingSite?
    /// Pin-set responses rewritten to hold the team root's pin (`--pinset-rewrite`; responses
    /// read over HTTP/1.1 from the origin). Nil relays every response untouched.
    public var pinSetRewrite: PinSetRewrite?
    /// `--map-remote` and `--map-local` rules, put to every request before it is answered or sent
    /// (`MapRules`). Empty: requests go where they name. With a `ruleBoard`, what it has switched
    /// on now (what is set here is then not read).
    public var mapRules: MapRules {
        get { ruleBoard?.rules ?? startRules }
        set { startRules = newValue }
    }
    /// The rules set (`mapRules`), read without the board by `ProxyServer.mapRules`.
    private(set) var startRules = MapRules()
    /// Rules that change while the proxy runs (the web UI's Rules view): every request, on any
    /// connection, is put to what it has switched on then. Nil: `mapRules` stays as set.
    public var ruleBoard: RuleBoard? = nil
    /// Breakpoints on requests (`--intercept FILTER`, the web UI's Intercept box): requests the
    /// filter passes are held until the web UI resumes or aborts them. Nil: none are ever held.
    public var intercepts: Intercepts? = nil
    /// A slow link simulated for each client device, shared by its connections (`--throttle`,
    /// `ThrottledLink`, `ThrottleDevices`). Nil: none.
    public var throttle: ThrottleProfile? = nil
    /// The hosts whose connections are throttled (`--throttle-hosts`, matched as `passthrough`
    /// is); empty: every connection is.
    public var throttleHosts: [GlobPattern] = []
    /// Network conditions that change while the proxy runs (the web UI's throttle menu): every
    /// connection, open or not, follows what it says; it starts as `throttle` and `throttleHosts`
    /// say. Nil: those two stay as the proxy started (and with no `throttle`, no connection is
    /// ever slowed, nor pays for the possibility).
    public var throttleSwitch: ThrottleSwitch? = nil

    public init() {}
}

/// One `user:password` pair for `--proxy-auth`.
public struct ProxyCredential: Sendable, Equatable {
    public let user: String
    public let password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Reads `user:password` lines; blank lines and `#` comments are skipped.
    ///
    /// - Throws: `ConfigurationError` naming the line that has no colon.
    public static func parse(_ text: String, source: String) throws -> [ProxyCredential] {
        var result: [ProxyCredential] = []
        // Any line end: CR LF is one Character, which a split on "\n" does not see (a file saved
        // on Windows read as one line, its first password running into the next line).
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let colon = trimmed.firstIndex(of: ":"), colon != trimmed.startIndex else {
                throw ConfigurationError("\(source) line \(index + 1) is not user:password")
            }
            result.append(ProxyCredential(user: String(trimmed[..<colon]), password: String(trimmed[trimmed.index(after: colon)...])))
        }
        guard !result.isEmpty else { throw ConfigurationError("\(source) has no user:password lines") }
        return result
    }
}

/// `--resolve host:port:address`: connect to `address` when asked for `host:port`.
public struct ResolveOverride: Sendable, Equatable {
    public let host: String
    public let port: Int
    public let address: String
    /// The host as a pattern when it holds `*`, which matches as in `--passthrough`.
    let pattern: GlobPattern?

    /// Parses `host:port:address` (the address may be a bracketed IPv6 literal). A host with
    /// `*` is a pattern: `*.example.com` stands for every name below example.com (any depth,
    /// not the apex).
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port), !parts[2].isEmpty else {
            throw ConfigurationError("--resolve \(text) is not HOST:PORT:ADDRESS")
        }
        host = parts[0].lowercased()
        pattern = host.contains("*") ? GlobPattern(host) : nil
        self.port = port
        let address = String(parts[2])
        self.address = address.hasPrefix("[") && address.hasSuffix("]") ? String(address.dropFirst().dropLast()) : address
        // An address, or a host name to dial instead: `127.0.0.1:8443` (a port where the
        // address goes) or words were taken, and every request to the host got a 502.
        guard LeafName.isIPLiteral(self.address) || (try? LeafName(self.address)) != nil else {
            throw ConfigurationError("--resolve \(text): \(self.address) is not an IP address or host name; "
                                     + "give HOST:PORT:ADDRESS, such as api.example.com:443:127.0.0.1 or [::1] for IPv6")
        }
    }
}

extension Array where Element == ResolveOverride {
    /// Where to dial for `host:port`: the override's address, else the host itself.
    /// An exact `host:port` entry wins over a pattern.
    public func address(host: String, port: Int) -> String {
        let name = host.lowercased()
        if let exact = first(where: { $0.host == name && $0.port == port }) { return exact.address }
        return first { $0.port == port && $0.pattern?.matches(name) == true }?.address ?? host
    }
}

/// A configuration mistake, reported as one line.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
