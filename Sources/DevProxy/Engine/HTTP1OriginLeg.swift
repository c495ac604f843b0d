import Foundation
import HTTP1
import HTTPTypes

/// An exchange's leg to an HTTP/1.1 origin (or an upstream proxy for plain HTTP): the request
/// written with the HTTP/1 serializer on a pooled `UpstreamConnection`, the response read with
/// its parser. Between two HTTP/1.1 hops the head travels as the client sent it, hop-by-hop
/// fields removed and `Upgrade` kept (WebSocket), rather than through the neutral conversions.
struct HTTP1OriginLeg: UpstreamLeg {
    let upstream: UpstreamConnection
    private let destination: Destination
    private let addVia: Bool
    /// For the timeout's message.
    private let upstreamTimeout: TimeInterval
    /// The request's method: an upstream proxy's 407 names it.
    private var method = ""
    /// The request named a protocol to switch to (`Upgrade`): only then may a 101 follow.
    private var upgradeRequested = false
    /// The request body goes up re-chunked.
    private var chunked = false
    /// The final head arrived.
    private var responseStarted = false
    /// Bytes that followed the response's end, already read: they answer no request.
    private var surplus = 0

    static var relaysContinue: Bool { true }
    static var answersWhileBodyGoesUp: Bool { true }

    init(upstream: UpstreamConnection, destination: Destination, configuration: ProxyConfiguration) {
        self.upstream = upstream
        self.destination = destination
        addVia = configuration.addVia
        upstreamTimeout = configuration.upstreamTimeout
    }

    mutating func sendHead(_ request: UpstreamRequest) throws {
        let head = request.http1
        method = head.method
        upgradeRequested = head.headers["Upgrade"] != nil
        chunked = request.chunked
        var outbound = head
        outbound.headers.removeHopByHop(relayingUpgrade: head.headers["Upgrade"] != nil)
        outbound.headers.collapseContentLength()
        MaxForwards.forward(&outbound.headers, method: head.method)
        if let authorization = upstream.proxyAuthorization {
            // Plain HTTP through an upstream proxy: absolute-form, with its credentials (RFC 9112 §3.2.2).
            outbound.target = destination.url
            if !authorization.isEmpty {
                outbound.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization)
            }
        } else {
            outbound.target = destination.pathAndQuery
        }
        outbound.version = .http11
        // RFC 9112 §3.2.2: a proxy forwarding absolute-form replaces Host with the URL's authority.
        outbound.headers.replaceOrAdd(name: "Host", value: destination.hostHeader)
        if chunked { outbound.headers.add(name: "Transfer-Encoding", value: "chunked") }
        if addVia { outbound.headers.add(name: "Via", value: "1.1 devproxy") }
        upstream.reader.parser.expectResponse(toMethod: head.method)
        try upstream.stream.write(HTTP1Serializer.serialize(outbound))
    }

    func sendBody(_ bytes: [UInt8]) throws {
        try upstream.stream.write(chunked ? HTTP1Serializer.chunk(bytes) : bytes)
    }

    func endRequest(trailers: HTTPFields) throws {
        // Between HTTP/1.1 hops the trailer section goes on as it came.
        guard chunked else { return }
        try upstream.stream.write(HTTP1Serializer.lastChunk(trailers: trailers.isEmpty ? HTTPHeaders()
                                                                                          : HTTPHeaders(trailers)))
    }

    mutating func next() throws -> UpstreamEvent {
        while true {
            guard let event = try upstream.reader.next() else {
                if responseStarted {
                    throw UpstreamClosed(message: "upstream \(upstream.address) closed the connection mid-response")
                }
                throw UpstreamClosed(message: "upstream \(upstream.address) closed the connection without sending a "
                                     + "response" + (upstream.reused ? " (a reused keep-alive connection)" : ""))
            }
            switch event {
            case .head(let head) where !responseStarted:
                let received = UpstreamResponseHead(response: HTTPResponse(head), httpVersion: head.version.description,
                                                    http1: head)
                if head.isInterim { return .interim(received) }
                if head.status == 101 && !upgradeRequested {
                    throw UnrequestedSwitch(target: "\(destination.host):\(destination.port)", http2Client: false)
                }
                if let authorization = upstream.proxyAuthorization, head.status == 407 {
                    // The upstream proxy's own refusal: the client did not ask that proxy anything.
                    let why = authorization.isEmpty ? "it wants credentials; give them with --upstream-proxy-auth-file"
                                                    : "it refused the credentials in --upstream-proxy-auth-file"
                    throw UpstreamProxyFailure(message: "the upstream proxy answered \(method) \(destination.url) "
                                               + "with 407 (\(why))")
                }
                responseStarted = true
                return .final(received)
            case .head:
                throw UpstreamClosed(message: "upstream \(upstream.address) sent a second response head")
            case .body(let bytes) where responseStarted:
                return .body(bytes)
            case .end(let trailers) where responseStarted:
                // Bytes after the end of the response answer no request: reusing the connection
                // would hand them to the next client as its response.
                surplus = upstream.reader.parser.takeRemainingBytes().count
                return .end(trailers: trailers.isEmpty ? HTTPFields() : HTTPFields(trailers))
            case .body, .end:
                // The end of an interim response.
                continue
            }
        }
    }

    func consumed(_ count: Int) {}

    func responseArrived() -> Bool {
        // A failure (a malformed head) is the next read's to report.
        (try? upstream.reader.hasArrivedInput()) ?? true
    }

    func hasBufferedResponse() -> Bool {
        (try? upstream.reader.hasBufferedInput()) == true
    }

    func responsePending() -> Bool {
        (try? upstream.reader.hasBufferedInput()) == true || upstream.stream.inputReady
    }

    func awaitResponse(watching client: Socket, limit: TimeInterval) -> Socket.InputOrClose {
        upstream.stream.socket.waitForInput(watching: client, limit: limit)
    }

    var connectionReusable: Bool { surplus == 0 }

    var overrun: Int { surplus }

    func failureBeforeResponse(_ error: Error, sending: Bool) -> LegFailure {
        let target = "\(destination.host):\(destination.port)"
        if upstream.redirectedBack {
            return LegFailure(kind: .wouldLoop, message: OwnEndpoints.loopReason(target: target))
        }
        if let message = UpstreamFailure.missingClientCertificate(upstream, target: target) {
            return LegFailure(kind: .upstreamClientCertificateRequired, message: message)
        }
        if let message = UpstreamFailure.refusedClientCertificate(upstream, target: target, error: error) {
            return LegFailure(kind: .upstreamClientCertificateRequired, message: message)
        }
        // Plain HTTP through `--upstream-proxy`: the connection is to the proxy, whose failures
        // were told as the origin's (`upstream 127.0.0.1:18080 sent a malformed response`).
        if upstream.proxyAuthorization != nil {
            let proxy = "the upstream proxy \(upstream.address)"
            switch error {
            case let error as HTTP1ParseError:
                return LegFailure(kind: .upstreamProxyFailed, message: "\(proxy) sent a malformed response for \(target): "
                                  + error.reason)
            case let error as NetworkError where error.kind == .timedOut:
                return LegFailure(kind: .upstreamTimeout, message: "no response for \(target) through \(proxy) within "
                                  + "\(Int(upstreamTimeout)) s", status: 504)
            case let error as UpstreamClosed:
                return LegFailure(kind: .upstreamProxyFailed, message: "\(proxy) closed the connection before answering "
                                  + "for \(target) (\(error.message))")
            default:
                break
            }
        }
        switch error {
        case let error as HTTP1ParseError where error.code == .http2Frames:
            // An HTTP/2-only origin without TLS (h2c; with TLS, ALPN would have said h2).
            return LegFailure(kind: .protocolMismatch,
                              message: "upstream \(target) answered with HTTP/2 frames: it speaks only HTTP/2"
                                + (destination.tls ? "" : " without TLS (h2c, as a plaintext gRPC server does)")
                                + ", and this request is HTTP/1.1; h2 by prior knowledge is relayed to it over h2: "
                                + "through a CONNECT tunnel (curl --proxytunnel --http2-prior-knowledge; a gRPC client's "
                                + "plaintext channel), to a reverse:URL listener or on a transparent connection")
        case let error as HTTP1ParseError:
            return LegFailure(kind: .upstreamBadResponse,
                              message: "upstream \(target) sent a malformed response: \(error.reason)")
        case let error as NetworkError where error.kind == .timedOut:
            return .noResponse(target, timeout: upstreamTimeout)
        case let error as UpstreamProxyFailure:
            return LegFailure(kind: .upstreamProxyFailed, message: error.message, status: error.timedOut ? 504 : 502)
        case let error as UpstreamClosed:
            return LegFailure(kind: .upstreamClosed, message: error.message)
        case let error as UnrequestedSwitch:
            return LegFailure(kind: .upstreamBadResponse, message: error.message)
        case let error as TLSError where error.kind == .notTLS:
            return LegFailure(kind: .upstreamTLSFailed, message: "upstream \(target) did not speak TLS")
        default:
            return LegFailure(kind: .upstreamReset, message: "upstream \(target) failed: \(error)")
        }
    }

    func failureMidBody(_ error: Error, relayed: Int) -> LegFailure {
        if let error = error as? NetworkError, error.kind == .timedOut {
            let message = LegFailure.silenceMidBody("\(destination.host):\(destination.port)", timeout: upstreamTimeout)
            return LegFailure(kind: .upstreamTimeout, message: "\(message), after \(relayed) bytes", detail: message)
        }
        let parse = error as? HTTP1ParseError
        let message = parse.map { "upstream sent a malformed body: \($0.reason)" } ?? "upstream failed mid-body: \(error)"
        // A body that does not parse or decode is the origin's fault, not a close (a bad chunk size,
        // a gzip transfer coding that is not gzip: it was recorded as `upstream_closed`).
        let malformed = parse.map { $0.code != .truncated } ?? false
        return LegFailure(kind: malformed ? .upstreamBadResponse : .upstreamClosed, message: "\(message) after \(relayed) bytes",
                          detail: message)
    }
}
