import CertAuthority
import Foundation
import HTTPTypes
import Synchronization

/// The UI's access rules (docs/web-ui.md, "Security"): the Host check against DNS rebinding, the
/// per-run token (query once, then a cookie; or a bearer header), the optional password, and the
/// CSRF checks on requests that change state.
struct WebAccess: Sendable {
    /// 32 hex digits: 128 random bits.
    let token: String
    let password: String?
    /// `host:port` values (lowercase) the Host header may carry.
    let allowedHosts: Set<String>
    /// When listening on a wildcard address: any IP literal with this port is the UI too.
    let wildcardPort: Int?
    /// The cookie carrying the token; named after the port, as cookies ignore ports and two runs
    /// on one machine must not overwrite each other's.
    let cookieName: String

    /// How a request proved it may use the UI.
    enum Credential: Equatable {
        case bearer, cookie, password
    }

    /// A new random token (128 bits from the system's CSPRNG, getrandom on Linux).
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return bytes.hex
    }

    init(token: String, password: String?, host: String, port: Int, boundHost: String) {
        self.token = token
        self.password = password
        cookieName = "devproxy_token_\(port)"
        var hosts: Set<String> = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
        hosts.insert(URIHost.authority(host: boundHost, port: port).lowercased())
        hosts.insert(URIHost.authority(host: host, port: port).lowercased())
        allowedHosts = hosts
        wildcardPort = boundHost == "0.0.0.0" || boundHost == "::" ? port : nil
    }

    /// Whether `value` (the Host header) names this UI.
    func isOwnHost(_ value: String?) -> Bool {
        guard let value = value?.lowercased(), !value.isEmpty else { return false }
        if allowedHosts.contains(value) { return true }
        guard let port = wildcardPort, value.hasSuffix(":\(port)") else { return false }
        var host = String(value.dropLast(":\(port)".count))
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return Self.isIPLiteral(host)
    }

    private static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Whether the request offers the password by HTTP Basic (right or wrong).
    func offersBasic(_ request: WebRequest) -> Bool {
        password != nil && request.headers["Authorization"]?.prefix(6).lowercased() == "basic "
    }

    /// The credential the request carries, or nil.
    func credential(of request: WebRequest) -> Credential? {
        if let authorization = request.headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            let scheme = parts.first?.lowercased()
            if parts.count == 2, scheme == "bearer", Self.equal(String(parts[1]), token) { return .bearer }
            if parts.count == 2, scheme == "basic", let password, let decoded = Data(base64Encoded: String(parts[1])),
               let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
               Self.equal(String(text[text.index(after: colon)...]), password) {
                return .password
            }
        }
        if let cookie = cookieValue(in: request), Self.equal(cookie, token) { return .cookie }
        return nil
    }

    /// The value of this UI's cookie in the request's `Cookie` headers.
    func cookieValue(in request: WebRequest) -> String? {
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == cookieName { return String(parts[1]) }
            }
        }
        return nil
    }

    /// `Set-Cookie` for the token: HttpOnly (scripts never see it), SameSite=Strict (no other
    /// site's page sends it).
    var sessionCookie: String { "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }

    /// Why a state-changing request is refused (CSRF), or nil when it may go on.
    func csrfRefusal(_ request: WebRequest, credential: Credential) -> String? {
        if let site = request.headers["Sec-Fetch-Site"]?.lowercased(), site != "same-origin" && site != "none" {
            return "refused: Sec-Fetch-Site is \(site); the UI only takes changes from its own pages"
        }
        if let origin = request.headers["Origin"], !isOwnOrigin(origin) {
            return "refused: Origin \(origin) is not this UI"
        }
        if credential != .bearer && request.headers["X-DevProxy-CSRF"] != "1" {
            return "refused: a request that changes state needs Authorization: Bearer TOKEN or X-DevProxy-CSRF: 1"
        }
        return nil
    }

    /// Whether `origin` is `http://` + one of this UI's hosts.
    func isOwnOrigin(_ origin: String) -> Bool {
        let lowered = origin.lowercased()
        guard lowered.hasPrefix("http://") else { return false }
        return isOwnHost(String(lowered.dropFirst("http://".count)))
    }

    /// Compares secrets in time independent of where they differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}


/// Wrong passwords, by HTTP Basic or the login form, from every client together: past `limit`
/// in the last `window`, every password is refused (429) until the oldest failure leaves the
/// window; the token and the cookie still work. Each wrong one is also answered after half a
/// second. Basic used to answer a wrong password at once, and the form's delay was per request:
/// 4,500-9,500 guesses a second by Basic, about 95 by the form over 48 connections.
final class PasswordThrottle: Sendable {
    static let limit = 20
    static let window: TimeInterval = 60
    private let failures = Mutex<[Date]>([])

    /// Seconds until a password may be tried again; nil when one may be now.
    func retryAfter(now: Date = Date()) -> Int? {
        failures.withLock { failures in
            failures.removeAll { now.timeIntervalSince($0) >= Self.window }
            guard failures.count >= Self.limit, let oldest = failures.first else { return nil }
            return max(1, Int((Self.window - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    /// Counts a wrong password.
    func failed(now: Date = Date()) {
        failures.withLock { $0.append(now) }
    }
}
