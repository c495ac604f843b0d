import CertAuthority
import Foundation
import QRCode
import Synchronization

/// The onboarding site DevProxy answers itself, never forwarding: `http://devproxy.test/` (and
/// `https://` through an intercepted CONNECT) through the proxy, and `GET /` sent straight to the
/// proxy's port, so a phone can fetch the root before its proxy is set.
///
/// Sans-IO: a method and a path in, a response out. It serves public material only: the team
/// root (the anchor the leaves chain to) in several forms, and a page about it.
public final class OnboardingSite: Sendable {
    /// The name the site answers through the proxy (RFC 6761 reserves `.test`: it never resolves).
    public static let host = "devproxy.test"

    /// The root certificate the page installs.
    public let root: Certificate
    private let der: [UInt8]
    private let pem: [UInt8]
    private let profile: [UInt8]
    /// `http://HOST:PORT/` of the proxy's own port, known once it listens (`setAddress`).
    private let addressState = Mutex<String?>(nil)
    /// The address is a loopback one: no other device reaches it.
    private let loopbackState = Mutex<Bool>(false)

    public init(root: Certificate) {
        self.root = root
        der = root.der
        pem = Array(root.pem.utf8)
        profile = Array(MobileConfig(root: root).xml.utf8)
    }

    /// The site as a local route, the same for HTTP/1.1 and HTTP/2: requests for `devproxy.test`
    /// (and, given explicitly, requests sent straight to the proxy's port).
    public var route: LocalRoute {
        LocalRoute(name: "onboarding", bodyLimit: 64 << 10, matches: { $0.withHost(Self.names) }, respond: { [self] request in
            let answer = response(method: request.method, path: request.path)
            return LocalResponse(status: answer.status, headers: answer.headers.map { (name: $0.0, value: $0.1) },
                                 body: answer.body)
        })
    }

    /// Where a device reaches the page without the proxy set, e.g. `http://192.168.1.20:8080/`:
    /// shown on the page and encoded in `/qr.svg` and `/qr.png`.
    public var address: String? { addressState.withLock { $0 } }

    /// The address is a loopback one, which no other device reaches (`setAddress`).
    public var isLoopbackOnly: Bool { loopbackState.withLock { $0 } }

    /// - Parameter loopbackOnly: the proxy listens on loopback only: the page says how to reach
    ///   it from a device instead of offering a QR code of `127.0.0.1`, which the phone would open
    ///   as itself.
    public func setAddress(_ address: String, loopbackOnly: Bool = false) {
        addressState.withLock { $0 = address }
        loopbackState.withLock { $0 = loopbackOnly }
    }

    /// Whether `host` (from a request target, a CONNECT or a SOCKS5 request) names the site:
    /// `devproxy.test`, any case, with or without the root's trailing dot.
    public static func names(_ host: String) -> Bool {
        host.withUTF8Bytes(names)
    }

    /// `names` on the bytes of a host name, wherever they are: the route asks it of every
    /// proxied request's URL, in place (`LocalRequest.withHost`).
    static func names(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        let bare = host.last == UInt8(ascii: ".") ? UnsafeBufferPointer(rebasing: host.dropLast()) : host
        return bare.equalsCaseInsensitive(Self.host)
    }

    /// The paths the site serves (any query is ignored).
    public static let paths: Set<String> = ["/", "/index.html", "/root.crt", "/root.pem", "/root.mobileconfig",
                                            "/qr.svg", "/qr.png", "/onboarding.css"]

    /// Whether `path` (with or without a query) is one of the site's resources.
    public static func serves(_ path: String) -> Bool {
        paths.contains(String(path.prefix { $0 != "?" }))
    }

    /// The answer to `method path`: GET and HEAD only (405 otherwise), 404 for an unknown path.
    public func response(method: String, path: String) -> OnboardingResponse {
        guard method == "GET" || method == "HEAD" else {
            return .text(405, "Method Not Allowed", "405 Method Not Allowed: the onboarding pages take GET and HEAD",
                         extra: [("Allow", "GET, HEAD")])
        }
        switch String(path.prefix { $0 != "?" }) {
        case "/", "/index.html":
            return OnboardingResponse(status: 200, reason: "OK", contentType: "text/html; charset=utf-8",
                                      body: Array(OnboardingPage(root: root, address: address,
                                                                                     loopbackOnly: isLoopbackOnly).html.utf8))
        case "/root.crt":
            return download(der, type: "application/x-x509-ca-cert", name: "devproxy-root.crt")
        case "/root.pem":
            return download(pem, type: "application/x-pem-file", name: "devproxy-root.pem")
        case "/root.mobileconfig":
            return download(profile, type: MobileConfig.contentType, name: "devproxy-root.mobileconfig")
        case "/onboarding.css":
            return OnboardingResponse(status: 200, reason: "OK", contentType: "text/css; charset=utf-8",
                                      body: Array(OnboardingPage.stylesheet.utf8))
        case "/qr.svg", "/qr.png":
            return qr(png: path.hasPrefix("/qr.png"))
        default:
            return .text(404, "Not Found",
                         "404 Not Found: the onboarding site has /, /root.crt, /root.pem and /root.mobileconfig")
        }
    }

    private func download(_ body: [UInt8], type: String, name: String) -> OnboardingResponse {
        OnboardingResponse(status: 200, reason: "OK", contentType: type, body: body,
                           extra: [("Content-Disposition", "attachment; filename=\"\(name)\"")])
    }

    /// The QR code of `address`, 404 until the proxy listens.
    private func qr(png: Bool) -> OnboardingResponse {
        guard let address, let code = try? QRCode(encoding: address) else {
            return .text(404, "Not Found", "404 Not Found: the proxy's address is not known yet")
        }
        if png { return OnboardingResponse(status: 200, reason: "OK", contentType: "image/png", body: code.png()) }
        return OnboardingResponse(status: 200, reason: "OK", contentType: "image/svg+xml", body: Array(code.svg().utf8))
    }
}
