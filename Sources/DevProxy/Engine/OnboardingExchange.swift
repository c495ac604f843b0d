import Foundation
import HTTP1

/// Answers one request for the onboarding site (`OnboardingSite`) from DevProxy itself: nothing
/// is resolved or forwarded. The flow records the request and the answer, whose
/// `X-DevProxy: answered by DevProxy (onboarding)` header marks it as DevProxy's own.
struct OnboardingExchange {
    let context: ExchangeContext
    let head: HTTPRequestHead
    let site: OnboardingSite
    /// What the flow records as the server and URL.
    let destination: Destination

    /// Runs the exchange; returns whether the client connection can carry another request.
    func run() -> Bool {
        var draft = context.draft(host: destination.host, port: destination.port)
        let redact = context.configuration.redactHeaders
        draft.flow.request = Flow.Request(method: head.method, url: destination.url,
                                          httpVersion: head.version.description,
                                          headers: FlowDraft.headerPairs(head.headers, redact: redact), body: nil)
        defer { context.server.emit(draft.finished()) }
        // The site takes no bodies, but a request may carry one: read it off (bounded by its own
        // framing) so the connection stays in step, and keep what the flow log keeps of it.
        let capture = BodyCapture(limit: context.configuration.bodyLimit)
        do {
            while let event = try context.client.next() {
                if case .body(let bytes) = event { capture.append(bytes) }
                if case .end = event { break }
            }
        } catch {
            draft.fail(.badRequest, "the request body could not be read: \(error)")
            return false
        }
        draft.flow.request?.body = capture.finish(contentEncoding: head.headers["Content-Encoding"],
                                                  contentType: head.headers["Content-Type"])
        let response = site.response(method: head.method, path: destination.pathAndQuery)
        let keepAlive = head.keepAlive && !context.server.isStopping
        let responseHead = response.head(keepAlive: keepAlive)
        let recorded = BodyCapture(limit: context.configuration.bodyLimit)
        recorded.append(response.body)
        let body = recorded.finish(contentEncoding: nil, contentType: response.header("Content-Type"))
        draft.flow.response = Flow.Response(status: response.status, reason: response.reason, httpVersion: "HTTP/1.1",
                                            headers: FlowDraft.headerPairs(responseHead.headers, redact: []),
                                            body: body)
        do {
            try context.client.stream.write(response.bytes(keepAlive: keepAlive, headOnly: head.method == "HEAD"))
        } catch {
            draft.fail(.clientClosed, "the client closed before the onboarding answer was sent: \(error)")
            return false
        }
        return keepAlive
    }

    /// Where an onboarding request on the proxy's plain listener goes, or nil when it is not one:
    /// an absolute-form request for `devproxy.test` (any path), or an origin-form request for one
    /// of the site's paths sent straight to the proxy's port (recorded under the `Host` it named).
    static func destination(of head: HTTPRequestHead, listenerAddress: String) -> Destination? {
        switch try? head.requestTarget() {
        case .absolute(let scheme, let host, let port, let path)? where OnboardingSite.names(host):
            let tls = scheme == "https"
            return Destination(tls: tls, host: OnboardingSite.host, port: port ?? (tls ? 443 : 80), pathAndQuery: path)
        case .origin(let path)? where OnboardingSite.serves(path):
            let authority = head.headers["Host"].flatMap { $0.isEmpty ? nil : $0 } ?? listenerAddress
            let (host, port) = split(authority)
            return Destination(tls: false, host: host, port: port, pathAndQuery: path)
        default:
            return nil
        }
    }

    /// `host:port` (IPv6 in brackets) into its parts; port 80 when absent.
    private static func split(_ authority: String) -> (String, Int) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) ?? 80 : 80)
        }
        guard let colon = authority.lastIndex(of: ":") else { return (authority, 80) }
        return (String(authority[..<colon]), Int(authority[authority.index(after: colon)...]) ?? 80)
    }
}
