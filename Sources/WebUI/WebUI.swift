import CertAuthority
import DevProxy
import Foundation
import HTTPTypes
import SessionStore

/// The web UI: its listener, token and API over one session store (docs/web-ui.md).
///
/// `devproxy run` makes one beside the proxy (with a `ProxyLink`, so replays go through the
/// proxy); `devproxy web FILE` makes one over an opened file, without.
public final class WebUI: @unchecked Sendable {
    /// The proxy a UI runs beside: its listeners (for `/api/info`) and how replays reach it.
    public struct ProxyLink: Sendable {
        /// `(mode, address)` of each proxy listener, as `listening on` prints them.
        public var listeners: [(mode: String, address: String)]
        /// Where the replayer connects: the regular listener (`127.0.0.1` when it is a wildcard);
        /// port 0 when the run has none (a `socks5` or `reverse:URL` listener alone): replay is refused.
        public var replayHost: String
        public var replayPort: Int
        /// The per-run secret the engine accepts in `X-DevProxy-Replay` (`ProxyConfiguration.replaySecret`).
        public var replaySecret: String
        /// `Proxy-Authorization` for replays when the proxy wants credentials (`--proxy-auth`).
        public var proxyAuthorization: String?
        /// The proxy's breakpoints (`--intercept`, `/api/intercept`): nil when it holds nothing.
        public var intercepts: Intercepts?
        /// The pin-failure reports file (`reports.jsonl`) the proxy appends to, for `/api/pinning`.
        public var reportsPath: String?
        /// The onboarding page's address on the proxy's port (`onboarding:` line), for `/api/info`
        /// and the QR code at `/api/onboarding/qr.svg`.
        public var onboardingURL: String?
        /// `onboardingURL` is a loopback address: `/api/info` offers it without its QR code.
        public var onboardingLoopback = false
        /// `--verify-signature` rules: a replay to a host with a known key is signed afresh (new
        /// timestamp and nonce), so the server does not reject it as stale or replayed.
        public var signatures: SignatureVerifier?
        /// The proxy's `--throttle` profile and `--throttle-hosts`, for `/api/info`'s `throttle`; nil without one.
        public var throttle: (profile: ThrottleProfile, hosts: [String])?
        /// The conditions the proxy's connections follow, which `/api/throttle` changes; nil when
        /// they cannot change (then `throttle` says what they are).
        public var throttleSwitch: ThrottleSwitch?
        /// The map rules the proxy applies, which `/api/rules` changes; nil when they cannot change.
        public var ruleBoard: RuleBoard?

        public init(listeners: [(mode: String, address: String)], replayHost: String, replayPort: Int,
                    replaySecret: String, proxyAuthorization: String? = nil, reportsPath: String? = nil,
                    onboardingURL: String? = nil, signatures: SignatureVerifier? = nil) {
            self.onboardingURL = onboardingURL
            self.signatures = signatures
            self.listeners = listeners
            self.replayHost = replayHost
            self.replayPort = replayPort
            self.replaySecret = replaySecret
            self.proxyAuthorization = proxyAuthorization
            self.reportsPath = reportsPath
        }
    }

    /// Who signs the leaves, for `/api/ca`.
    public struct Authority: Sendable {
        /// The certificate that signs leaves (an engineer's intermediate, or the root itself).
        public var signer: Certificate?
        public var root: Certificate?
        /// The command that renews the signer, shown beside its expiry.
        public var renewCommand: String?

        public init(signer: Certificate?, root: Certificate?, renewCommand: String?) {
            self.signer = signer
            self.root = root
            self.renewCommand = renewCommand
        }
    }

    public let store: SessionStore
    public let configuration: WebUIConfiguration
    /// This run's token (32 hex digits).
    public var token: String { access.token }
    /// The address the UI listens on.
    public var address: SocketAddress { server.listener.address }

    let access: WebAccess
    let passwords = PasswordThrottle()
    let proxy: ProxyLink?
    let authority: Authority?
    let version: String
    let events: EventHub
    /// The "Repeat…" runs (`POST /api/flows/ID/repeat`); stopping the UI ends them.
    let repeats = RepeatBoard()
    // Set once in init (it needs `self` for its handler); never changed after.
    private var server: WebServer!

    /// Binds the UI's listener: when the port is taken and `tryNextPorts`, the next free one of
    /// the following 20, else any free port. Separate from `init` so the proxy can be told the address before it starts
    /// (`ProxyConfiguration.forbiddenDestinations`).
    /// - Throws: `ConfigurationError` for a non-loopback address without `allowRemote` and a
    ///   password; `NetworkError` when nothing can be bound.
    public static func bind(_ configuration: WebUIConfiguration) throws -> Listener {
        var ports = [configuration.port]
        if configuration.tryNextPorts && configuration.port != 0 {
            // The next 20 ports, then any free one: many runs on one machine (tests) still start.
            ports += (1...20).map { configuration.port + $0 }.filter { $0 <= 65535 } + [0]
        }
        var lastError: Error = NetworkError(.failed, "cannot listen on \(configuration.host):\(configuration.port)")
        for port in ports {
            let listener: Listener
            do {
                listener = try Listener(host: configuration.host, port: port, backlog: 64)
            } catch {
                lastError = error
                continue
            }
            // An empty password is none: a remote UI behind it would show decrypted traffic to anyone.
            if !listener.address.isLoopback && !(configuration.allowRemote && !(configuration.password ?? "").isEmpty) {
                throw ConfigurationError("refusing to serve the web UI on \(listener.address): it shows decrypted "
                                         + "traffic; pass --allow-remote and --web-password-file FILE to do it anyway")
            }
            return listener
        }
        throw lastError
    }

    /// A UI on `listener` (from `bind`) over `store`; call `start()` to serve.
    public init(listener: Listener, configuration: WebUIConfiguration, store: SessionStore, proxy: ProxyLink? = nil,
                authority: Authority? = nil, version: String = DevProxyVersion.current) {
        self.configuration = configuration
        self.store = store
        self.proxy = proxy
        self.authority = authority
        self.version = version
        access = WebAccess(token: WebAccess.newToken(), password: configuration.password, host: configuration.host,
                           port: listener.address.port, boundHost: listener.address.host)
        events = EventHub(store: store, intercepts: proxy?.intercepts, rules: proxy?.ruleBoard)
        server = WebServer(listener: listener, configuration: configuration) { [unowned self] request in
            self.respond(to: request)
        }
    }

    /// The line `devproxy run` prints: `http://127.0.0.1:PORT/?token=TOKEN` (the bound host, or
    /// 127.0.0.1 on a wildcard address).
    public var url: String {
        var host = address.host
        if host == "0.0.0.0" || host == "::" { host = "127.0.0.1" }
        return "http://\(URIHost.authority(host: host, port: address.port))/?token=\(token)"
    }

    /// Starts serving (and following the store for the event stream).
    public func start() {
        events.start()
        server.start()
    }

    /// Stops serving: cuts every connection, event streams included.
    public func stop() {
        repeats.stop()
        events.stop()
        server.stop()
    }

    // MARK: Request pipeline

    /// Host check, authentication, CSRF, then the route (docs/web-ui.md, "Security").
    func respond(to request: WebRequest) -> WebResponse {
        guard access.isOwnHost(request.headers["Host"]) else {
            return .error(421, "this is the DevProxy web UI at \(address); the Host header must name it "
                          + "(open the URL devproxy printed)")
        }
        if request.path == "/login", access.password != nil {
            return login(request)
        }
        if let offered = request.query["token"] {
            guard WebAccess.equal(offered, access.token) else {
                return unauthorized("wrong token: open the URL devproxy printed (web ui: …)")
            }
            guard request.method == "GET" || request.method == "HEAD" else {
                return .error(400, "?token= is for opening the UI in a browser; "
                              + "scripts send Authorization: Bearer TOKEN")
            }
            return .redirect(pathWithoutToken(request), cookies: [access.sessionCookie])
        }
        let offersBasic = access.offersBasic(request)
        if offersBasic, let wait = passwords.retryAfter() { return tooManyPasswords(wait) }
        guard let credential = access.credential(of: request) else {
            if offersBasic {
                passwords.failed()
                usleep(500_000)
                return unauthorized("wrong password")
            }
            var refusal = unauthorized("the DevProxy web UI needs its token: open the URL devproxy printed (web ui: …), "
                                       + "or send Authorization: Bearer TOKEN")
            // A browser opening the page (not a script calling the API) gets a page that says so,
            // where it got a line of JSON.
            if request.method == "GET", !request.path.hasPrefix("/api/"),
               request.headers["Accept"]?.contains("text/html") == true {
                refusal.headers.removeAll { $0.0 == "Content-Type" }
                refusal.headers.append(("Content-Type", "text/html; charset=utf-8"))
                refusal.body = Array(Self.signInPage.utf8)
            }
            return refusal
        }
        if request.isStateChanging, let refusal = access.csrfRefusal(request, credential: credential) {
            return .error(403, refusal)
        }
        var response = route(request)
        if credential == .password, access.cookieValue(in: request) == nil {
            response.headers.append(("Set-Cookie", access.sessionCookie))
        }
        return response
    }

    private func tooManyPasswords(_ wait: Int) -> WebResponse {
        var response = WebResponse.error(429, "\(PasswordThrottle.limit) wrong passwords in the last minute: no "
                                         + "password is checked for \(wait) s (the token and the session cookie still work)")
        response.headers.append(("Retry-After", "\(wait)"))
        return response
    }

    /// What a browser without the token is shown: no script, nothing from the request.
    static let signInPage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>DevProxy: open the web UI with its token</title></head>
        <body><main><h1>This DevProxy web UI needs its token</h1>
        <p>Open the address <code>devproxy run</code> (or <code>devproxy web</code>) printed on its <code>web ui:</code> line:
        it ends with <code>?token=…</code>, which signs this browser in. Scripts send <code>Authorization: Bearer TOKEN</code>.</p>
        </main></body></html>

        """

    private func unauthorized(_ message: String) -> WebResponse {
        var response = WebResponse.error(401, message)
        response.headers.append(("WWW-Authenticate", "Bearer realm=\"DevProxy\""))
        if access.password != nil { response.headers.append(("WWW-Authenticate", "Basic realm=\"DevProxy\"")) }
        return response
    }

    /// The request's path and query without `token=…`.
    private func pathWithoutToken(_ request: WebRequest) -> String {
        let kept = (request.rawQuery ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" }
        let path = request.path.hasPrefix("/") && !request.path.hasPrefix("//") ? request.path : "/"
        let encodedPath = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "/"
        return kept.isEmpty ? encodedPath : encodedPath + "?" + kept.joined(separator: "&")
    }

    /// `GET /login`: a password form; `POST /login`: checks `password`, sets the cookie.
    private func login(_ request: WebRequest) -> WebResponse {
        if request.method == "POST" {
            if let origin = request.headers["Origin"], !access.isOwnOrigin(origin) {
                return .error(403, "refused: Origin \(origin) is not this UI")
            }
            if let wait = passwords.retryAfter() { return tooManyPasswords(wait) }
            let form = WebRequest.parseQuery(String(decoding: request.body, as: UTF8.self))
            guard let password = access.password, let given = form["password"], WebAccess.equal(given, password) else {
                // Slowed and counted, so that guessing through the form is slow too (`PasswordThrottle`).
                passwords.failed()
                usleep(500_000)
                return unauthorized("wrong password")
            }
            return .redirect("/", cookies: [access.sessionCookie])
        }
        let page = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>DevProxy: sign in</title></head>
        <body><form method="post" action="/login"><label>DevProxy web UI password
        <input type="password" name="password" autofocus></label> <button>Sign in</button></form></body></html>
        """
        // `same-origin`, not the UI's `no-referrer`: under that, Chromium posts the form with
        // `Origin: null`, which the check above refuses, and the right password never signed in.
        return WebResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                  ("Cache-Control", "no-store"), ("Referrer-Policy", "same-origin")],
                           body: Array(page.utf8))
    }
}

extension WebUI {
    /// A new per-run secret (128 random bits, hex) for `ProxyConfiguration.replaySecret`.
    public static func newSecret() -> String { WebAccess.newToken() }
}
