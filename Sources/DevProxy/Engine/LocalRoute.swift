import Foundation
import HTTP1

/// A request as DevProxy's own answers see it, whatever HTTP version carried it: HTTP/1.1
/// exchanges and HTTP/2 streams both build one, so a local route is written once for both.
public struct LocalRequest: Sendable {
    public var method: String
    /// The absolute URL (`https://host/path?query`).
    public var url: String
    /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`.
    public var httpVersion: String
    /// Header fields in order, names as sent (HTTP/2: lower case, without pseudo-headers).
    public var headers: [(name: String, value: String)]
    /// The whole request body (local routes read at most their `bodyLimit`).
    public var body: [UInt8] = []
    /// The client's address, `ip:port` as the flow's `client` (`~src` in a rule's filter); empty
    /// when not known.
    public var client = ""
    /// The process on this machine that opened the client's connection (`~proc` in a rule's
    /// filter); nil when not known.
    public var clientProcess: Flow.ClientProcess?

    /// The server's address as `~dst` reads it: the URL's host and port (the scheme's default when
    /// it names none), an IPv6 literal in brackets; empty for a URL without a host.
    public var destination: String {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return "" }
        let port = components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return bare.contains(":") ? "[\(bare)]:\(port)" : "\(bare):\(port)"
    }

    public init(method: String, url: String, httpVersion: String, headers: [(name: String, value: String)]) {
        self.method = method
        self.url = url
        self.httpVersion = httpVersion
        self.headers = headers
    }

    /// The first value of header `name`, any case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.equalsCaseInsensitive(name) }?.value
    }

    /// Adds request body bytes a local route reads, up to `limit` bytes in all; false when they
    /// would pass it (they are left out, and the route answers 413). HTTP/1.1 and HTTP/2 alike.
    public mutating func appendBody(_ bytes: [UInt8], upTo limit: Int) -> Bool {
        guard body.count + bytes.count <= limit else { return false }
        body += bytes
        return true
    }

    /// The URL's host, lower case, without brackets or port (`devproxy.test`, `::1`).
    public var host: String {
        withHost { String(decoding: $0, as: UTF8.self) }.lowercased()
    }

    /// Calls `body` with the bytes of the URL's host as sent (any case, without brackets or
    /// port), in place. Every proxied request is asked about its host (the onboarding site's
    /// route), and `host` makes two strings, ~3,600 instructions a request (callgrind).
    public func withHost<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        url.withUTF8Bytes { body(UnsafeBufferPointer(rebasing: $0[Self.hostRange(in: $0)])) }
    }

    /// Where the host is in `utf8` (a URL): after `://` (or from the start), up to `/`, `?`, `#`
    /// or the port's `:`; inside `[…]` for an IPv6 literal. A scan of the bytes, not Foundation's
    /// `range(of:)` nor a search by Characters, which cost ~25k instructions.
    private static func hostRange(in utf8: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var start = 0
        var index = 0
        while index + 2 < utf8.count {
            if utf8[index] == UInt8(ascii: ":"), utf8[index + 1] == UInt8(ascii: "/"), utf8[index + 2] == UInt8(ascii: "/") {
                start = index + 3
                break
            }
            index += 1
        }
        var end = start
        while end < utf8.count, utf8[end] != UInt8(ascii: "/"), utf8[end] != UInt8(ascii: "?"), utf8[end] != UInt8(ascii: "#") {
            end += 1
        }
        if start < end, utf8[start] == UInt8(ascii: "["),
           let close = utf8[start..<end].firstIndex(of: UInt8(ascii: "]")) {
            return (start + 1)..<close
        }
        let colon = utf8[start..<end].firstIndex(of: UInt8(ascii: ":")) ?? end
        return start..<colon
    }

    /// The URL's path (without the query), `/` when empty.
    public var path: String {
        let afterScheme = url.range(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        guard let slash = afterScheme.firstIndex(of: "/") else { return "/" }
        let pathAndQuery = afterScheme[slash...]
        return String(pathAndQuery.prefix { $0 != "?" && $0 != "#" })
    }
}

/// DevProxy's own answer to a request that never goes upstream.
public struct LocalResponse: Sendable {
    public var status: Int
    /// Header fields; `Content-Length` is added by the engine (never for 204 and 304).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// When the answer is a refusal, what the flow records as its error.
    public var error: (kind: FlowErrorKind, message: String)?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                error: (kind: FlowErrorKind, message: String)? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.error = error
    }

    /// A refusal: `status`, a one-line text body that says why, and the flow's error.
    public static func refusal(status: Int, kind: FlowErrorKind, _ message: String) -> LocalResponse {
        LocalResponse(status: status,
                      headers: [("Content-Type", ErrorResponse.textPlain), ("X-DevProxy-Error", kind.rawValue)],
                      body: ErrorResponse.body(status: status, detail: message),
                      error: (kind, message))
    }
}

/// A kind of request DevProxy answers itself rather than forwarding (`--sink-reports`, the
/// onboarding site, requests aimed at the web UI's own listener). Decided from the request head;
/// the body is read (up to `bodyLimit`) before `respond` runs. The same for HTTP/1.1 and HTTP/2.
public struct LocalRoute: Sendable {
    /// A short name for the flow and the `X-DevProxy` header (`sink-reports`, `onboarding`).
    public let name: String
    public let bodyLimit: Int
    public let matches: @Sendable (LocalRequest) -> Bool
    public let respond: @Sendable (LocalRequest) -> LocalResponse

    public init(name: String, bodyLimit: Int = 1 << 20, matches: @escaping @Sendable (LocalRequest) -> Bool,
                respond: @escaping @Sendable (LocalRequest) -> LocalResponse) {
        self.name = name
        self.bodyLimit = bodyLimit
        self.matches = matches
        self.respond = respond
    }

    /// The answer for `request` (with its body read): `respond`'s, or 413 when the body was
    /// longer than `bodyLimit`.
    func answer(_ request: LocalRequest, bodyTooLong: Bool) -> LocalResponse {
        var response = bodyTooLong
            ? .refusal(status: 413, kind: .badRequest, "the request body is longer than the \(bodyLimit) bytes \(name) reads")
            : respond(request)
        if !response.headers.contains(where: { $0.name.equalsCaseInsensitive("X-DevProxy") }) {
            response.headers.append(("X-DevProxy", "answered by DevProxy (\(name))"))
        }
        return response
    }

    /// The header fields sent, `Content-Length` added where the status allows a body.
    static func sentHeaders(_ response: LocalResponse) -> [(name: String, value: String)] {
        var headers = response.headers.filter { !$0.name.equalsCaseInsensitive("Content-Length") }
        if response.status != 204 && response.status != 304 && !(100..<200).contains(response.status) {
            headers.append(("Content-Length", "\(response.body.count)"))
        }
        return headers
    }
}

extension LocalRoute {
    /// `--sink-reports`: pin-failure reports (`isReport(method, url, contentType)`) answered 204
    /// here, never forwarded to production collectors.
    public static func sinkReports(_ isReport: @escaping @Sendable (String, String, String?) -> Bool) -> LocalRoute {
        LocalRoute(name: "--sink-reports", bodyLimit: 16 << 20,
                   matches: { isReport($0.method, $0.url, $0.header("Content-Type")) },
                   respond: { _ in LocalResponse(status: 204) })
    }
}

extension ProxyServer {
    /// The local route that answers `request`, if any (the first that matches: the onboarding
    /// site, then the configuration's routes in order).
    func localRoute(for request: LocalRequest) -> LocalRoute? {
        localRoutes.first { $0.matches(request) }
    }
}
