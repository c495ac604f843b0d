import CertAuthority
import CTLS
import Foundation
import HTTP1
import HTTPTypes
import Synchronization

/// Intermediates an origin left out of its chain, fetched from the URL its certificate names for
/// its issuer (Authority Information Access `caIssuers`, RFC 5280 §4.2.2.1), as Chromium, Safari
/// and Apple's trust evaluation do.
///
/// An origin that sends its leaf without the intermediate that issued it works in a browser and
/// answered 502 through DevProxy (`unable to get local issuer certificate`), as through curl or
/// mitmproxy. When a handshake fails for that reason, the certificate at the top of the chain the
/// origin sent is looked at: the certificate downloaded from its `caIssuers` URL is kept only if
/// it is a CA certificate, not self-issued, its key verifies the certificate that named it, and
/// it verifies itself against the trust store (chains to a trusted root); it then joins the
/// upstream trust store *as an intermediate* (a certificate in the store that is not self-signed
/// is no anchor without `X509_V_FLAG_PARTIAL_CHAIN`), and the connection is made again. Later connections to any origin
/// with that intermediate find it there, as a browser's intermediate cache does, and their flows
/// say so (`tls.upstream.fetched_issuer`): the origin's chain is incomplete, which an app that
/// does no fetching (Android, OkHttp, Java, Go) fails on without a proxy.
///
/// Only `http://` URLs (as RFC 5280 wants them: no TLS to check a CA's certificate), 5 s, 64 KiB,
/// at most 4 URLs a certificate, through the upstream proxy when there is one; a redirect (301,
/// 302, 303, 307, 308) is followed to another `http://` URL, at most 3 in a row, as browsers'
/// fetchers do (Chromium's refuses any other scheme); a URL that failed is not tried again for a
/// minute; at most 256 URLs and 256 intermediates are kept.
final class IssuerFetcher: Sendable {
    /// A download's result, by URL.
    private enum Outcome {
        case fetched(Certificate)
        case failed(String, at: Date)
    }

    private let outcomes = Mutex<[String: Outcome]>([:])
    /// Every certificate added to the store, by its DER, and the URL it came from.
    private let added = Mutex<[[UInt8]: (certificate: Certificate, url: String)]>([:])

    static let timeout: TimeInterval = 5
    static let maxBytes = 64 * 1024
    static let maxRedirects = 3
    static let retryAfter: TimeInterval = 60

    /// Whether any certificate was fetched (connections check their chains only then).
    var hasFetched: Bool { added.withLock { !$0.isEmpty } }

    /// The URL of the fetched intermediate that issued one of `chain`'s certificates (the chain
    /// an origin sent, which lacks it), if one did. Names and key identifiers are compared, not
    /// signatures: the handshake verified the chain (or resumed a session that had).
    func source(completing chain: [Certificate]) -> String? {
        let fetched = added.withLock { Array($0.values) }
        return fetched.first { issuer, _ in
            !chain.contains(issuer) && chain.contains { $0.names(asIssuer: issuer) }
        }?.url
    }

    /// Finds the issuer of `chain`'s top certificate (the chain as the origin sent it, leaf
    /// first) at its `caIssuers` URL and adds it to `store`.
    /// - Returns: the URL it came from.
    /// - Throws: `TLSError(.verifyFailed)` saying why the chain stays incomplete.
    func complete(_ chain: [Certificate], into store: OpaquePointer, proxy: UpstreamProxy?,
                  forbidden: [SocketAddress]) throws -> String {
        guard let top = Self.top(of: chain) else { throw Self.failure("the origin sent no certificate") }
        let urls = top.caIssuersURLs
        guard !urls.isEmpty else {
            throw Self.failure("the origin did not send the certificate that issued \(Self.name(top)) (issuer: \(top.issuer)), "
                               + "and its certificate names no URL to fetch it from (AIA caIssuers): give that CA "
                               + "certificate with --upstream-ca FILE")
        }
        var reasons: [String] = []
        for url in urls.prefix(4) {
            do {
                let issuer = try certificate(at: url, issuing: top, store: store, proxy: proxy, forbidden: forbidden)
                let der = issuer.der
                let fresh = added.withLock { added in
                    guard added[der] == nil, added.count < Self.maxKept else { return false }
                    added[der] = (issuer, url)
                    return true
                }
                if fresh {
                    issuer.withX509 { _ = X509_STORE_add_cert(store, $0) }
                    ERR_clear_error()
                }
                return url
            } catch let error as TLSError {
                reasons.append(error.message)
            }
        }
        throw Self.failure("the origin did not send the certificate that issued \(Self.name(top)) (issuer: \(top.issuer)), and "
                           + reasons.joined(separator: "; "))
    }

    /// The certificate the origin sent last in its chain that has no issuer among them: the one
    /// whose issuer is missing.
    private static func top(of chain: [Certificate]) -> Certificate? {
        // A chain longer than any real one costs no more than this many signature checks squared.
        let chain = Array(chain.prefix(8))
        var current = chain.first
        var seen = 0
        while let certificate = current, seen < chain.count {
            guard let next = chain.first(where: { $0 !== certificate && certificate.isIssued(by: $0) }) else { break }
            current = next
            seen += 1
        }
        return current
    }

    /// The CA certificate at `url` that issued `child`, from the cache or downloaded. It must
    /// itself verify against `store` (chain to a trusted root): OpenSSL looks in the store first
    /// for every chain's issuers (`X509_V_FLAG_TRUSTED_FIRST`) without trying another candidate
    /// when one fails, so a look-alike intermediate an origin served (an existing CA's name and
    /// key identifier, the origin's own key) would otherwise break every site that CA signs.
    private func certificate(at url: String, issuing child: Certificate, store: OpaquePointer, proxy: UpstreamProxy?,
                             forbidden: [SocketAddress]) throws -> Certificate {
        let cached = outcomes.withLock { $0[url] }
        switch cached {
        case .fetched(let certificate)?:
            return certificate
        case .failed(let reason, let at)? where Date().timeIntervalSince(at) < Self.retryAfter:
            throw TLSError(.verifyFailed, reason)
        default:
            break
        }
        do {
            let bytes = try Self.download(url, proxy: proxy, forbidden: forbidden)
            guard let certificates = try? Certificate.all(fromIssuerDownload: bytes) else {
                throw TLSError(.verifyFailed, "\(url) did not serve a certificate (DER, PEM or PKCS #7)")
            }
            guard let issuer = certificates.first(where: { child.isIssued(by: $0) }) else {
                throw TLSError(.verifyFailed, "the certificate at \(url) did not issue \(Self.name(child))")
            }
            guard issuer.isCA, !issuer.isSelfIssued else {
                throw TLSError(.verifyFailed, "the certificate at \(url) is \(issuer.isCA ? "a root" : "not a CA"): "
                               + "only intermediates are taken from the origin's side")
            }
            if let reason = Self.verification(of: issuer, in: store) {
                throw TLSError(.verifyFailed, "the certificate at \(url) (\(issuer.subject)) does not verify itself: \(reason)")
            }
            remember(url, .fetched(issuer))
            return issuer
        } catch let error as TLSError {
            remember(url, .failed(error.message, at: Date()))
            throw error
        }
    }

    /// Most URLs remembered, and most intermediates added: an origin naming ever new URLs (or
    /// serving ever new CA certificates) must not grow the proxy without bound.
    static let maxKept = 256

    private func remember(_ url: String, _ outcome: Outcome) {
        outcomes.withLock { outcomes in
            if outcomes.count >= Self.maxKept { outcomes.removeAll() }
            outcomes[url] = outcome
        }
    }

    /// Why `certificate` does not verify against `store` as a chain of its own, or nil when it does.
    private static func verification(of certificate: Certificate, in store: OpaquePointer) -> String? {
        guard let context = X509_STORE_CTX_new() else { return "no memory" }
        defer { X509_STORE_CTX_free(context) }
        return certificate.withX509 { x509 in
            guard X509_STORE_CTX_init(context, store, x509, nil) == 1 else { return "cannot set up the check" }
            defer { ERR_clear_error() }
            guard X509_verify_cert(context) != 1 else { return nil }
            return X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(context))).map { String(cString: $0) }
                ?? "unknown reason"
        }
    }

    /// What one GET got: the body of a 200, or where a redirect points.
    private enum Answer {
        case body([UInt8])
        case redirect(String)
    }

    /// GET `url` (http only), following at most `maxRedirects` redirects to other http URLs; at
    /// most `maxBytes`, within `timeout` for each request.
    private static func download(_ url: String, proxy: UpstreamProxy?, forbidden: [SocketAddress]) throws -> [UInt8] {
        var current = url
        for _ in 0...maxRedirects {
            switch try get(current, proxy: proxy, forbidden: forbidden) {
            case .body(let bytes):
                return bytes
            case .redirect(let location):
                guard let next = URL(string: location, relativeTo: URL(string: current))?.absoluteURL,
                      next.scheme?.lowercased() == "http" else {
                    throw TLSError(.verifyFailed, "fetching it from \(url) failed: \(current) redirects to \(location), "
                                   + "and only http:// URLs are fetched")
                }
                current = next.absoluteString
            }
        }
        throw TLSError(.verifyFailed, "fetching it from \(url) failed: more than \(maxRedirects) redirects")
    }

    /// One GET of `url` (http only), at most `maxBytes`, within `timeout`.
    private static func get(_ url: String, proxy: UpstreamProxy?, forbidden: [SocketAddress]) throws -> Answer {
        guard let parts = URLComponents(string: url), parts.scheme?.lowercased() == "http",
              let host = parts.host, !host.isEmpty else {
            throw TLSError(.verifyFailed, "fetching it from \(url) is not done (only http:// URLs are)")
        }
        let port = parts.port ?? 80
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        let target = path + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let authority = URIHost.authority(host: bare, port: parts.port)
        do {
            let socket: Socket
            var requestTarget = target
            var extra = ""
            if let proxy {
                socket = try proxy.open(host: bare, port: port, tunnel: false, timeout: timeout, readTimeout: timeout)
                requestTarget = "http://\(authority)\(target)"
                if let authorization = proxy.authorization { extra = "Proxy-Authorization: \(authorization)\r\n" }
            } else {
                if let refusal = forbidden.refusal(host: bare, port: port) {
                    throw TLSError(.verifyFailed, "fetching it from \(url) was \(refusal)")
                }
                socket = try Socket.connect(host: bare, port: port, timeout: timeout)
                socket.setTimeout(timeout)
            }
            defer { socket.close() }
            let request = "GET \(requestTarget) HTTP/1.1\r\nHost: \(authority)\r\nUser-Agent: devproxy\r\n"
                + "Accept: application/pkix-cert, application/pkcs7-mime, */*\r\n\(extra)Connection: close\r\n\r\n"
            try Array(request.utf8).withUnsafeBytes { try socket.write($0) }
            return try readAnswer(socket, url: url)
        } catch let error as TLSError {
            throw error
        } catch let error as NetworkError where error.kind == .timedOut {
            throw TLSError(.verifyFailed, "fetching it from \(url) timed out")
        } catch let error as NetworkError {
            throw TLSError(.verifyFailed, "fetching it from \(url) failed: \(error.message)")
        } catch let error as UpstreamProxyFailure {
            throw TLSError(.verifyFailed, "fetching it from \(url) failed: \(error.message)")
        } catch {
            throw TLSError(.verifyFailed, "fetching it from \(url) failed: \(error)")
        }
    }

    /// The body of a 200 answer on `socket`, read until its end or the connection's, within
    /// `timeout` in all; or the `Location` of a redirect.
    private static func readAnswer(_ socket: Socket, url: String) throws -> Answer {
        let reader = MessageReader(stream: PlainStream(socket), parser: HTTP1ResponseParser())
        reader.parser.expectResponse(toMethod: "GET")
        let deadline = Date().addingTimeInterval(timeout)
        var body: [UInt8] = []
        var status: Int?
        while let event = try reader.next(deadline: deadline) {
            switch event {
            case .head(let head):
                if [301, 302, 303, 307, 308].contains(head.status), let location = head.headers["Location"], !location.isEmpty {
                    return .redirect(location)
                }
                if head.status >= 200 { status = head.status }
            case .body(let bytes):
                body += bytes
                guard body.count <= maxBytes else {
                    throw TLSError(.verifyFailed, "fetching it from \(url) failed: more than \(maxBytes / 1024) KiB")
                }
            case .end:
                guard status == 200 else {
                    throw TLSError(.verifyFailed, "fetching it from \(url) failed: the server answered \(status ?? 0)")
                }
                return .body(body)
            }
        }
        throw TLSError(.verifyFailed, "fetching it from \(url) failed: the server closed the connection early")
    }

    /// A certificate's subject as the messages name it.
    private static func name(_ certificate: Certificate) -> String {
        certificate.subject.isEmpty ? "the origin's certificate" : certificate.subject
    }

    private static func failure(_ reason: String) -> TLSError {
        TLSError(.verifyFailed, "certificate verify failed: unable to get local issuer certificate: " + reason)
    }
}
