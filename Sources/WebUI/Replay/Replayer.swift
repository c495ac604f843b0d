import DevProxy
import Foundation
import HTTP1

/// Sends a request through the proxy's own regular listener, as a client would, so a replay gets
/// everything a real request gets (upstream TLS and HTTP/2, `--resolve`, sinks, the session
/// store). The request carries `X-DevProxy-Replay` (`ReplayMark`), which the engine takes off and
/// turns into the new flow's id, its `replay_of`, and the `Host` it sends when one was edited.
struct Replayer {
    let link: WebUI.ProxyLink
    /// How long the whole exchange may take.
    var timeout: TimeInterval = 60

    private static let counter = Counter()
    private static let prefix = String(WebAccess.newToken().prefix(8))

    /// A fresh flow id for a replay (distinct from the engine's `RUN-N` ids).
    static func newFlowID() -> String { "\(prefix)-replay-\(counter.next())" }

    /// Whether `id` is one `newFlowID` made in this process: the live event stream asks the store
    /// for `replay_of` only for these (the engine's own flows are `RUN-N` and never replays).
    static func isReplayID(_ id: String) -> Bool { id.hasPrefix(prefix + "-replay-") }

    /// Sends the request and reads the response to its end (or the proxy's close).
    /// - Parameters:
    ///   - host: a `Host` to send in place of the URL's (one the user edited); the connection
    ///     still goes to the URL's host.
    ///   - http2: the replayed flow went over HTTP/2: the origin is offered h2 first.
    /// - Returns: the response's first bytes (its head, and the start of a refusal's reason).
    /// - Throws: `NetworkError` when the proxy cannot be reached.
    @discardableResult
    func send(method: String, url: String, headers: [(String, String)], body: [UInt8], id: String,
              replayOf: String?, host: String? = nil, http2: Bool = false) throws -> [UInt8] {
        let socket = try Socket.connect(host: link.replayHost, port: link.replayPort, timeout: 10)
        defer { socket.close() }
        socket.setTimeout(timeout)
        var fields = HTTPHeaders()
        if let host = host ?? URLComponents(string: url).flatMap(Self.authority) { fields.add(name: "Host", value: host) }
        for (name, value) in headers { fields.add(name: name, value: value) }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
            fields.add(name: "Content-Length", value: String(body.count))
        }
        // RFC 9110 §10.1.4: a TE field (gRPC's `TE: trailers`) comes with a `TE` connection option.
        fields.add(name: "Connection", value: fields.contains("TE") ? "TE, close" : "close")
        if let authorization = link.proxyAuthorization { fields.add(name: "Proxy-Authorization", value: authorization) }
        fields.add(name: ReplayMark.header,
                   value: ReplayMark(id: id, original: replayOf, host: host, http2: http2).value(secret: link.replaySecret))
        let stream = PlainStream(socket)
        try stream.write(HTTP1Serializer.serialize(HTTPRequestHead(method: method, target: url, version: .http11,
                                                                   headers: fields)) + body)
        // The proxy closes after the response (Connection: close) and records the flow first.
        var buffer = [UInt8](repeating: 0, count: 65536)
        var first: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 { break }
            if first.count < 4096 { first += buffer[..<min(count, 4096 - first.count)] }
        }
        return first
    }

    /// `host[:port]` of a URL, as the Host header writes it.
    static func authority(_ components: URLComponents) -> String? {
        guard let host = components.percentEncodedHost, !host.isEmpty else { return nil }
        return components.port.map { "\(host):\($0)" } ?? host
    }
}

/// A thread-safe increasing counter.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}
