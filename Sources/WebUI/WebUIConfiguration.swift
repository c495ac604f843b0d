import Foundation

/// How the web UI listens and what it accepts, with every default stated.
public struct WebUIConfiguration: Sendable {
    /// Where to listen (`--web HOST:PORT`). Default `127.0.0.1:8081`; port 0 picks a free one.
    public var host = "127.0.0.1"
    public var port = 8081
    /// When the port is taken, try the next 20, then any free port. Default true; an explicit
    /// `--web` turns it off.
    public var tryNextPorts = true
    /// A non-loopback address needs this (`--allow-remote`) and a `password`.
    public var allowRemote = false
    /// The password (`--web-password-file`): HTTP Basic or the login form, beside the token.
    public var password: String?
    /// Most connections served at once; more get 503. Default 64.
    public var maxConnections = 64
    /// Largest request body (an edited replay). Default 16 MiB; more gets 413.
    public var maxBodySize = 16 << 20
    /// How long a request head may take once its first byte arrived. Default 10 s.
    public var headerTimeout: TimeInterval = 10
    /// How long an idle keep-alive connection is kept. Default 60 s.
    public var idleTimeout: TimeInterval = 60

    public init() {}
}
