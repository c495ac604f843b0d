import DevProxy
import Foundation
import HTTP1
import HTTPTypes

/// One UI connection: reads requests with the sans-IO parser, bounded in size and time, answers
/// each through the handler, keeps the connection alive between them.
struct WebConnection {
    let socket: Socket
    let configuration: WebUIConfiguration
    let handler: @Sendable (WebRequest) -> WebResponse
    let isStopping: @Sendable () -> Bool
    /// Told true when a request's head is in and the connection is answering it (or streaming),
    /// false when it waits for or reads the next head: only then may the server close it to make
    /// room (`WebServer`).
    var busy: (Bool) -> Void = { _ in }

    /// Heads beyond these are refused (414/431) before any of them is buffered.
    static let limits = HTTP1Limits(maxStartLineLength: 8192, maxHeaderBlockSize: 32768, maxHeaderCount: 100)

    /// Serves requests until the client closes, a limit or timeout is hit, or the UI stops.
    func run() {
        let stream = PlainStream(socket)
        var parser = HTTP1RequestParser(limits: Self.limits)
        var buffer = [UInt8](repeating: 0, count: 16384)
        var first = true
        while !isStopping() {
            var head: HTTPRequestHead?
            var waiting = true
            var body: [UInt8] = []
            var ended = false
            // The whole head within `headerTimeout` of its first byte, not each read: a client
            // sending a byte every few seconds held its connection for good.
            var headDeadline = Date.distantFuture
            do {
                while !ended {
                    if let event = try parser.next() {
                        switch event {
                        case .head(let value):
                            head = value
                            busy(true)
                            if let length = value.headers["Content-Length"].flatMap(Int.init),
                               length > configuration.maxBodySize {
                                answerAndClose(stream, .error(413, "the request body is over the UI's limit of "
                                                              + "\(configuration.maxBodySize) bytes"))
                                return
                            }
                            if value.headers["Expect"]?.lowercased() == "100-continue" {
                                try stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                            }
                        case .body(let bytes):
                            guard body.count + bytes.count <= configuration.maxBodySize else {
                                answerAndClose(stream, .error(413, "the request body is over the UI's limit of "
                                                              + "\(configuration.maxBodySize) bytes"))
                                return
                            }
                            body += bytes
                        case .end: ended = true
                        }
                        continue
                    }
                    if waiting {
                        // Between requests (nothing of the next one parsed yet): wait for its first
                        // byte up to the idle timeout; from then on the head has the header timeout.
                        // A new connection's first request has only the header timeout: one that
                        // sends nothing was kept a minute, and 64 of them locked the UI.
                        guard waitForInput(first ? configuration.headerTimeout : configuration.idleTimeout) else {
                            if first { answerAndClose(stream, .error(408, "no request within "
                                                                     + "\(Int(configuration.headerTimeout)) s")) }
                            return
                        }
                        socket.setTimeout(configuration.headerTimeout)
                        headDeadline = Date().addingTimeInterval(configuration.headerTimeout)
                        waiting = false
                        first = false
                    } else if head == nil, Date() > headDeadline {
                        answerAndClose(stream, .error(408, "request head not received within "
                                                      + "\(Int(configuration.headerTimeout)) s"))
                        return
                    }
                    let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
                    guard count > 0 else {
                        _ = try parser.finish()
                        return
                    }
                    parser.feed(buffer[0..<count])
                }
            } catch let error as HTTP1ParseError {
                answerAndClose(stream, .error(error.status, error.reason))
                return
            } catch {
                // A timeout or reset mid-request: nothing sensible to answer on this socket.
                if let network = error as? NetworkError, network.kind == .timedOut, head == nil {
                    answerAndClose(stream, .error(408, "request head not received within "
                                                  + "\(Int(configuration.headerTimeout)) s"))
                }
                return
            }
            guard let head else { return }
            if let expectation = head.headers["Expect"], expectation.lowercased() != "100-continue" {
                answerAndClose(stream, .error(417, "unsupported Expect: \(expectation)"))
                return
            }
            let request = WebRequest(head: head, body: body)
            let response = handler(request)
            let keepAlive = head.keepAlive && response.stream == nil && !isStopping()
            do {
                try stream.write(Self.serialize(response, headOnly: head.method == "HEAD", keepAlive: keepAlive))
            } catch {
                return
            }
            if let streaming = response.stream {
                socket.setTimeout(configuration.idleTimeout)
                streaming(stream)
                return
            }
            guard keepAlive else { return }
            // Waiting for the next request (a new connection waits from its accept, `WebServer`).
            busy(false)
        }
    }

    /// Waits for a request's first byte; false after `timeout`, on close or at shutdown.
    private func waitForInput(_ timeout: TimeInterval) -> Bool {
        if socket.queuedBytes > 0 { return true }
        var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        while !isStopping() {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            // Short polls so that shutdown (which aborts the socket anyway) is noticed promptly.
            let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return false }
        }
        return false
    }

    private func answerAndClose(_ stream: PlainStream, _ response: WebResponse) {
        try? stream.write(Self.serialize(response, headOnly: false, keepAlive: false))
    }

    /// The response's bytes with the headers every answer carries (docs/web-ui.md, "Security").
    static func serialize(_ response: WebResponse, headOnly: Bool, keepAlive: Bool) -> [UInt8] {
        var headers = HTTPHeaders()
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        for (name, value) in securityHeaders where !headers.contains(name) { headers.add(name: name, value: value) }
        if response.stream == nil {
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http11, status: response.status, reason: HTTPResponse.standardReason(response.status),
                                    headers: headers)
        var bytes = HTTP1Serializer.serialize(head)
        if !headOnly && response.status != 304 && response.status != 204 { bytes += response.body }
        return bytes
    }

    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; "
        + "img-src 'self' data: blob:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]
}
