import DevProxy
import Foundation
import SessionStore

/// The request of a flow still running (a long poll, a slow answer, a stream), once it has been
/// received whole: Copy as, Replay, Repeat and Edit and resend take it as they take a finished
/// flow's (mitmproxy, Proxyman and Charles replay or copy a request while it is pending).
///
/// The request is complete when its record so far says it was sent on (`timings.send`, set when
/// its body ended: the engine hands one on then, `ExchangeContext.showRequestSent`), or, before any
/// record so far, when its HTTP/1.x head announces no body (no `Content-Length` but 0, no
/// `Transfer-Encoding`). Its body is the record so far's, which must hold it whole and as sent
/// (text neither decoded from a content coding nor from another charset, or base64).
extension WebUI {
    enum RunningRequest {
        /// The flow as far as it went, its request whole, and the request's body.
        case complete(Flow, body: StoredBody)
        /// Why it cannot be sent or copied yet: one line, for a 409.
        case incomplete(String)
    }

    /// The request of running flow `id`; nil when there is no such running flow.
    func runningRequest(_ id: String) throws -> RunningRequest? {
        guard let summary = try store.summary(id: id) else { return nil }
        guard summary.mode == "http" || summary.mode == "https" else {
            return .incomplete("flow \(id) is a \(summary.mode) flow still running; only HTTP requests can be sent again")
        }
        if let partial = try store.partialJSON(id: id),
           let flow = FlowLogReader.parse(Array(partial.utf8)).flows.first, let request = flow.request {
            guard flow.timings.send >= 0 else {
                return .incomplete("the request of flow \(id) is still being received (its body has not ended): "
                                   + "it can be sent or copied once it has")
            }
            guard let logged = request.body, logged.size > 0 else { return .complete(flow, body: StoredBody(bytes: [])) }
            guard let bytes = Self.wholeBytes(of: logged) else {
                return .incomplete("the request body of flow \(id) (\(logged.size) bytes) is not held whole while the flow "
                                   + "runs: it can be sent or copied once the flow ends")
            }
            return .complete(flow, body: StoredBody(bytes: bytes, size: logged.size))
        }
        guard let url = summary.url, let method = summary.method,
              let fields = try store.headerFields(id: id, part: .request) else {
            return .incomplete("the request head of flow \(id) is not known yet")
        }
        let version = summary.httpVersion ?? "HTTP/1.1"
        let length = fields.last { $0.name.lowercased() == "content-length" }?.value.trimmingCharacters(in: .whitespaces)
        let chunked = fields.contains { $0.name.lowercased() == "transfer-encoding" }
        // Over HTTP/2 a head says nothing of the body: it is known from the record so far, which
        // comes after the stream's first second.
        guard !version.uppercased().contains("2"), !chunked, length == nil || length == "0" else {
            return .incomplete("the request body of flow \(id) is still being received or not shown yet: "
                               + "it can be sent or copied once it has ended (a second later at most)")
        }
        var json = JSONText()
        json.raw("{\"id\":")
        json.string(id)
        json.raw(",\"started\":")
        json.string(summary.started)
        json.raw(",\"ended\":\"\",\"client\":")
        json.string(summary.client ?? "")
        json.raw(",\"mode\":")
        json.string(summary.mode)
        json.raw(",\"server\":{\"host\":")
        json.string(summary.host)
        json.raw(",\"port\":\(summary.port ?? (summary.mode == "https" ? 443 : 80))")
        if summary.mode == "https", let named = Self.otherHost(in: url, than: summary.host) {
            json.raw(",\"request_host\":")
            json.string(named)
        }
        json.raw("},\"request\":{\"method\":")
        json.string(method)
        json.raw(",\"url\":")
        json.string(url)
        json.raw(",\"http_version\":")
        json.string(version)
        json.raw(",\"headers\":")
        Self.write(fields, to: &json)
        json.raw("},\"timings\":{\"connect\":-1,\"tls\":-1,\"send\":-1,\"wait\":-1,\"receive\":-1}}")
        guard let flow = FlowLogReader.parse(Array(json.text.utf8)).flows.first else {
            return .incomplete("the request of flow \(id) cannot be read while it runs")
        }
        return .complete(flow, body: StoredBody(bytes: []))
    }

    /// A running body's bytes as sent, when its record so far holds them all: base64, or text
    /// that is the bytes themselves (not decoded from a content coding or another charset).
    private static func wholeBytes(of body: Flow.Body) -> [UInt8]? {
        guard !body.truncated else { return nil }
        var bytes: [UInt8]?
        if let base64 = body.base64 {
            bytes = Data(base64Encoded: base64).map { [UInt8]($0) }
        } else if let text = body.text, body.decoded?.isEmpty != false,
                  body.charset == nil || body.charset?.lowercased() == "utf-8" {
            bytes = Array(text.utf8)
        }
        return bytes.flatMap { $0.count == body.size ? $0 : nil }
    }

    /// The host `url` names when it is not `host` (`ExchangeContext.otherHost`, as the engine
    /// records `server.request_host`).
    private static func otherHost(in url: String, than host: String) -> String? {
        guard let named = URLComponents(string: url)?.host?.lowercased() else { return nil }
        let plain = named.hasSuffix(".") ? String(named.dropLast()) : named
        let trimmed = plain.hasPrefix("[") ? String(plain.dropFirst().dropLast()) : plain
        return trimmed.isEmpty || trimmed == host.lowercased() ? nil : trimmed
    }
}
