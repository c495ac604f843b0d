import DevProxy
import Foundation
import HTTPTypes
import SessionStore

/// A recorded request as every "copy as" export sends it again: where it went and what it carried.
///
/// The URL is the server the request went to (`ReplayTarget`, as a replay goes), with the `Host`
/// as recorded first when it named another; framing, hop-by-hop and proxy fields and HTTP/2
/// pseudo-headers are left to the new connection (`WebUI.skippedOnRepeat`); cookies an HTTP/2
/// client split over several fields are joined with "; ". The body is the stored wire bytes
/// (still in their content coding, beside their `Content-Encoding`).
struct RepeatedRequest {
    /// The method as recorded.
    let method: String
    /// Where the request goes (`ReplayTarget.url`).
    let url: String
    /// The header fields to send, in order, `Host` first when it differs from the URL's.
    let headers: [(name: String, value: String)]
    /// The stored request body as on the wire; empty when there was none.
    let body: [UInt8]
    /// The size of the whole body on the wire: more than `body.count` when the store cut it.
    let bodySize: Int
    /// Whether the request went over HTTP/2.
    let http2: Bool
    /// Whether the request opened a WebSocket: an HTTP/1.1 `Upgrade: websocket` GET, or an
    /// HTTP/2 extended CONNECT with `:protocol` websocket (RFC 8441), which no command-line client
    /// sends (`WebUI.curlCommand` writes the HTTP/1.1 handshake for both).
    let webSocket: Bool

    /// True when the store kept less of the body than was sent.
    var bodyCut: Bool { body.count < bodySize }

    /// The body as text when it is UTF-8 without NUL; nil for binary bodies.
    var textBody: String? {
        guard !body.contains(0) else { return nil }
        return String(validating: body, as: UTF8.self)
    }

    /// A request given part by part; `bodySize` is `body`'s size unless the store cut it.
    init(method: String, url: String, headers: [(name: String, value: String)], body: [UInt8], bodySize: Int? = nil,
         http2: Bool = false, webSocket: Bool = false) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.bodySize = bodySize ?? body.count
        self.http2 = http2
        self.webSocket = webSocket
    }

    /// The request of `flow`, its stored request body in `body`; nil when the flow has no request.
    init?(flow: Flow, body: StoredBody?) {
        guard let request = flow.request else { return nil }
        method = request.method
        let target = ReplayTarget(replaying: flow, request: request)
        url = target.url
        http2 = request.httpVersion == "HTTP/2"
        let upgrade = request.headers.first(named: "upgrade") ?? ""
        webSocket = request.method == "CONNECT"
            ? request.pseudoHeaders?.first(named: ":protocol")?.lowercased() == "websocket"
            : request.method == "GET" && upgrade.lowercased().split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == "websocket"
            }
        var headers: [(name: String, value: String)] = []
        if let host = target.host { headers.append(("Host", host)) }
        // An HTTP/2 client may split its cookies over several `cookie` fields (RFC 9113 §8.2.3);
        // repeated, they reach an HTTP/1.1 origin as several Cookie lines, of which servers read
        // one: joined with "; " as the proxy joins them for HTTP/1.1.
        let cookies = request.headers.filter { $0.count >= 2 && $0[0].lowercased() == "cookie" }.map { $0[1] }
        var cookieWritten = false
        for pair in request.headers where pair.count >= 2 && !WebUI.skippedOnRepeat(pair[0], pair[1]) {
            if pair[0].lowercased() == "cookie" && cookies.count > 1 {
                if !cookieWritten { headers.append((pair[0], cookies.joined(separator: "; "))) }
                cookieWritten = true
                continue
            }
            headers.append((pair[0], pair[1]))
        }
        self.headers = headers
        self.body = body?.bytes ?? []
        bodySize = body?.size ?? 0
    }
}

extension WebUI {
    /// The request of `flow` as an export repeats it, its body read from the store.
    func repeatedRequest(for flow: Flow) throws -> RepeatedRequest? {
        guard flow.request != nil else { return nil }
        return RepeatedRequest(flow: flow, body: try store.body(id: flow.id, part: .request))
    }
}
