import CertAuthority
import HTTPTypes
/// How a listener learns where a client's connection is going (`--mode SPEC`, repeatable):
/// each mode only decides that, then hands `(host, port, first bytes)` to the one interception
/// path, so every mode keeps what the regular one guarantees.
public struct ListenerMode: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// An explicit HTTP proxy: absolute-form requests and CONNECT.
        case regular
        /// SOCKS5 (RFC 1928; RFC 1929 username/password when `--proxy-auth` is set).
        case socks5
        /// Connections the kernel redirected here (iptables/nftables REDIRECT, TPROXY; Linux):
        /// the destination is the connection's original one.
        case transparent
        /// The listener is the origin for its clients: every request goes to the mode's URL.
        case reverse
        /// A regular proxy whose own upstream connections go through another HTTP proxy.
        case upstream
        /// A WireGuard server (UDP; Linux): a device or VM whose WireGuard app uses the config DevProxy
        /// prints sends it all its traffic, whether or not its apps read proxy settings; each TCP
        /// connection is then served as a transparent one (`WireGuardCapture`).
        case wireguard
    }

    public var kind: Kind
    /// Where this listener binds; nil for the first mode, which takes `--listen`.
    public var host: String?
    public var port: Int?
    /// `reverse:URL`'s origin, `upstream:URL`'s proxy.
    public var url: ModeURL?

    public init(kind: Kind, host: String? = nil, port: Int? = nil, url: ModeURL? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.url = url
    }

    /// Parses `regular`, `socks5`, `transparent`, `reverse:URL` or `upstream:URL`, optionally
    /// followed by `@HOST:PORT` (`socks5@127.0.0.1:1080`, `reverse:https://api.example.com@127.0.0.1:8443`).
    ///
    /// - Throws: `ConfigurationError` naming the modes that exist, or the bad address or URL.
    public init(parsing text: String) throws {
        var spec = text
        var address: String?
        // The address follows the last `@`; URLs here never hold one (credentials go in files).
        if let at = text.lastIndex(of: "@") {
            spec = String(text[..<at])
            address = String(text[text.index(after: at)...])
        }
        let colon = spec.firstIndex(of: ":")
        let name = colon.map { String(spec[..<$0]) } ?? spec
        guard let kind = Kind(rawValue: name.lowercased()) else {
            if let advice = Self.mitmproxyCaptureModes[name.lowercased()] {
                throw ConfigurationError("--mode \(text): \(advice)")
            }
            throw ConfigurationError("--mode \(text) is not a mode; the modes are \(Self.choices)")
        }
        self.kind = kind
        switch kind {
        case .reverse, .upstream:
            guard let colon else {
                throw ConfigurationError("--mode \(text): \(kind.rawValue) needs a URL "
                                         + "(\(kind.rawValue):http://HOST:PORT)")
            }
            url = try ModeURL(parsing: String(spec[spec.index(after: colon)...]), what: "--mode \(text)")
        default:
            guard colon == nil else { throw ConfigurationError("--mode \(text): \(kind.rawValue) takes no URL") }
        }
        // A WireGuard listener never takes `--listen` (a TCP proxy's address): UDP 51820, as wg(8)
        // and mitmproxy's WireGuard mode use, on loopback unless given.
        if kind == .wireguard && address == nil { address = "127.0.0.1:\(Self.wireGuardPort)" }
        if var address {
            let given = address
            // mitmproxy's `@PORT` (`socks5@1080`): loopback, as `--listen`'s default.
            if !address.isEmpty && address.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                address = "127.0.0.1:" + address
            }
            guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
                  (0...65535).contains(port) else {
                throw ConfigurationError("--mode \(text): \(given) is not HOST:PORT")
            }
            var host = String(address[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.host = host.isEmpty ? "127.0.0.1" : host
            self.port = port
        }
    }

    public static var choices: String { "regular, socks5, transparent, reverse:URL, upstream:URL, wireguard" }

    /// WireGuard's own port (wg(8)'s examples, the apps' default).
    public static let wireGuardPort = 51820

    /// mitmproxy's modes that capture apps with no proxy setting, and what does that here.
    static let mitmproxyCaptureModes = [
        "local": "mitmproxy's local capture is `devproxy exec --transparent -- COMMAND` here (every TCP connection "
            + "of that command and what it starts, Linux), beside a regular `devproxy run`; for apps not started from a "
            + "shell, run them as another user than DevProxy and use --mode transparent (devproxy transparent-rules "
            + "--uid-exclude UID prints the rules)",
    ]

    /// `regular`, `reverse:https://api.example.com`: what `listening on … (MODE)` shows.
    public var name: String {
        guard let url else { return kind.rawValue }
        return "\(kind.rawValue):\(url)"
    }

    public var description: String {
        guard let host, let port else { return name }
        return "\(name)@\(URIHost.authority(host: host, port: port))"
    }
}

/// The URL of `reverse:URL`, `upstream:URL` and `--upstream-proxy URL`: a scheme, a host and a
/// port, nothing else (credentials in a URL would show in `ps`; they go in a file).
public struct ModeURL: Sendable, Hashable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int

    public init(tls: Bool, host: String, port: Int) {
        self.tls = tls
        self.host = host
        self.port = port
    }

    /// Parses `http://HOST[:PORT][/]` or `https://…`.
    ///
    /// - Throws: `ConfigurationError` starting with `what`.
    public init(parsing text: String, what: String) throws {
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            tls = true
            rest = text.dropFirst("https://".count)
        } else if lower.hasPrefix("http://") {
            tls = false
            rest = text.dropFirst("http://".count)
        } else {
            // An upstream proxy is spoken to over plain HTTP only: "or https://" sent users to a
            // second refusal (`UpstreamProxy`).
            throw ConfigurationError(what.contains("upstream")
                ? "\(what): \(text) is not an http:// URL (upstream proxies are spoken to over HTTP; SOCKS5 and "
                    + "https:// ones are not supported)"
                : "\(what): \(text) is not an http:// or https:// URL")
        }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else {
                throw ConfigurationError("\(what): \(text) has a path; give only scheme://host[:port]")
            }
            authority = rest[..<slash]
        }
        guard !authority.contains("@") else {
            throw ConfigurationError("\(what): \(text) holds credentials; put them in a file "
                                     + "(--upstream-proxy-auth-file)")
        }
        let defaultPort = tls ? 443 : 80
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.isEmpty ? defaultPort : Int(after.dropFirst()) ?? -1
            guard after.isEmpty || after.first == ":" else { throw ConfigurationError("\(what): \(text) is not a URL") }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = String(authority)
            port = defaultPort
        }
        guard !host.isEmpty, (1...65535).contains(port) else {
            throw ConfigurationError("\(what): \(text) needs a host and a port from 1 to 65535")
        }
        // `http://[::1` and `https://a b` went on as hosts named `[:` and `a b`, failing only at
        // the first connection: a host is a name or an IP literal (an IPv6 one in brackets).
        let bracketed = authority.hasPrefix("[")
        guard case let name? = try? LeafName(host), !name.text.contains("*"),
              bracketed == (host.contains(":") && name == .ip(host)) else {
            throw ConfigurationError("\(what): \(text) does not name a host (a name, an IPv4 address, or an IPv6 "
                                     + "address in brackets)")
        }
    }

    /// `https://api.example.com`, the port shown only when it is not the scheme's default.
    public var description: String {
        let authority = URIHost.authority(host: host, port: port == (tls ? 443 : 80) ? nil : port)
        return "\(tls ? "https" : "http")://\(authority)"
    }
}
