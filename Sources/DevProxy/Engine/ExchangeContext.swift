import Foundation
import HTTP1
import HTTP2

/// What an exchange needs to know about the client connection it runs on. A class: the exchange's
/// parts (transfer, relay, legs) each hold it, and a struct of a dozen strings was copied, with a
/// reference count for each, every time one of them was made (six times per HTTP/1.1 request).
final class ExchangeContext {
    let server: ProxyServer
    let connection: ClientConnection
    let client: MessageReader<HTTP1RequestParser>
    let clientAddress: String
    /// `http` for absolute-form requests, `https` inside an intercepted CONNECT.
    let mode: Flow.Mode
    let clientTLS: Flow.TLSInfo.ClientSide?
    /// `clientTLS` as a new flow's TLS, one value for every flow of the connection (so that the
    /// upstream side is added to it once: `UpstreamConnection.flowTLS(over:)`).
    let clientFlowTLS: Flow.TLSInfo?
    let signer: Flow.SignerInfo?
    let persona: String?

    init(server: ProxyServer, connection: ClientConnection, client: MessageReader<HTTP1RequestParser>,
         clientAddress: String, mode: Flow.Mode, clientTLS: Flow.TLSInfo.ClientSide?, signer: Flow.SignerInfo?,
         persona: String?) {
        self.server = server
        self.connection = connection
        self.client = client
        self.clientAddress = clientAddress
        self.mode = mode
        self.clientTLS = clientTLS
        clientFlowTLS = clientTLS.map { Flow.TLSInfo(client: $0, upstream: nil) }
        self.signer = signer
        self.persona = persona
    }

    /// The server's configuration, lent rather than copied: a getter returning it copied the whole
    /// struct (a retain and a release for each of its references) wherever one field was read, as
    /// `context.configuration.pinSetRewrite` is for every request (perf: 1.6 % of an h2 stream's
    /// cycles, docs/performance.md, run 52).
    var configuration: ProxyConfiguration {
        _read { yield server.configuration }
    }

    /// The map rules switched on now (`ProxyServer.mapRules`: read without copying the configuration).
    var mapRules: MapRules { server.mapRules }

    /// A new flow for this connection, with its request head and HTTP/2 stream when known.
    /// - Parameter sinceAccepted: a flow of the connection itself (it closed without a request):
    ///   it began when the connection was accepted, not now.
    func draft(host: String, port: Int, request: Flow.Request? = nil, h2: Flow.HTTP2Info? = nil,
               sinceAccepted: Bool = false) -> FlowDraft {
        var draft = FlowDraft(client: clientAddress, process: connection.clientProcess,
                              listener: connection.listenerInfo, mode: mode, host: host, port: port,
                              tls: clientFlowTLS, request: request, signer: signer,
                              persona: persona, insecureUpstream: configuration.insecureUpstream && mode == .https ? true : nil,
                              h2: h2, startedAt: sinceAccepted ? connection.accepted : Date())
        if let probe = connection.probe { draft.flow.probe = probe }
        draft.flow.throttle = connection.throttleName
        if mode == .https, let url = request?.url, let named = Self.otherHost(in: url, than: host) {
            draft.flow.server.requestHost = named
        }
        return draft
    }

    /// The host `url` names, lower-cased and without a final dot, when it is not `host`: a request
    /// that went on a connection for another name (`Flow.Server.requestHost`). Nil when they match.
    static func otherHost(in url: String, than host: String) -> String? {
        // Run for every request, so it reads the bytes in place: Foundation's `range(of:)` went
        // through CFString and two `lowercased()` allocated (~4 % of the h2 keep-alive cell's
        // samples, docs/performance.md, run 52), and the `Character` searches that replaced them
        // (`prefix`, `lastIndex(of:)`, `count`) broke graphemes at every step: 20k instructions a
        // stream (run 53). A name is made only when the two differ.
        url.withUTF8Bytes { url in
            host.withUTF8Bytes { host in
                guard let requested = hostBytes(in: url) else { return nil }
                let connection = withoutFinalDot(host[...])
                guard !requested.isEmpty,
                      !requested.elementsEqual(connection, by: { lowerASCII($0) == lowerASCII($1) }) else { return nil }
                // Names that differ in more than ASCII case (rare): compared as Unicode lower-cases them.
                let lowered = String(decoding: requested, as: UTF8.self).lowercased()
                return lowered == String(decoding: connection, as: UTF8.self).lowercased() ? nil : lowered
            }
        }
    }

    /// The host of a URL's bytes: after its first "://", up to the path, query or fragment,
    /// without brackets or a port, and without a final dot; nil when there is no "://".
    private static func hostBytes(in url: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>>? {
        var index = url.startIndex
        var start: Int?
        while index + 2 < url.endIndex {
            if url[index] == UInt8(ascii: ":"), url[index + 1] == UInt8(ascii: "/"), url[index + 2] == UInt8(ascii: "/") {
                start = index + 3
                break
            }
            index += 1
        }
        guard let start else { return nil }
        var end = start
        while end < url.endIndex, url[end] != UInt8(ascii: "/"), url[end] != UInt8(ascii: "?"),
              url[end] != UInt8(ascii: "#") {
            end += 1
        }
        var named = url[start..<end]
        if named.first == UInt8(ascii: "["), let close = named.firstIndex(of: UInt8(ascii: "]")) {
            named = url[(start + 1)..<close]
        } else if let colon = named.lastIndex(of: UInt8(ascii: ":")) {
            named = url[start..<colon]
        }
        return withoutFinalDot(named)
    }

    private static func withoutFinalDot(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>> {
        name.count > 1 && name.last == UInt8(ascii: ".") ? name.dropLast() : name
    }

    private static func lowerASCII(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// `100 Continue`, as DevProxy sends it to the client (the transfer, and a body a breakpoint
    /// or `--modify-body` reads whole).
    static var continueHead: [UInt8] {
        HTTP1Serializer.serialize(HTTPResponseHead(version: .http11, status: 100, reason: "Continue"))
    }

    /// Sends bytes to the client, ignoring failure (the client may already be gone; the flow
    /// records the cause).
    func sendToClient(_ bytes: [UInt8]) {
        try? client.stream.write(bytes)
    }

    /// Hands the sinks that show running flows `draft` as far as `recorder` has gone, when it is
    /// due (`ExchangeRecorder.progress`): a long upload or body is shown while it passes.
    func showProgress(of draft: FlowDraft, recorder: ExchangeRecorder) {
        guard server.showsRunningFlows,
              let flow = recorder.progress(of: draft, redact: configuration.redactHeaders) else { return }
        server.progressed(flow)
    }

    /// Hands the sinks that show running flows `draft` once its request body has ended, whatever
    /// the schedule: the record so far then holds the request whole (`timings.send` set), which the
    /// web UI replays and copies while the response is awaited (a long poll's POST).
    func showRequestSent(of draft: FlowDraft, recorder: ExchangeRecorder) {
        guard server.showsRunningFlows else { return }
        var copy = draft
        recorder.snapshot(into: &copy, redact: configuration.redactHeaders)
        server.progressed(copy.flow)
    }

    /// Removes from a response head on its way to the client the `Alt-Svc` alternatives it could
    /// not follow through this listener (`AltSvc`), unless `--keep-alt-svc`: what was removed,
    /// for `response.alt_svc_removed`; nil when nothing was.
    func filterAltSvc(_ headers: inout HTTPHeaders) -> [String]? {
        altSvcReverse.flatMap { AltSvc.filter(&headers, reverse: $0) }
    }

    /// The same for an HTTP/2 head's fields.
    func filterAltSvc(_ fields: inout [HTTP2Field]) -> [String]? {
        altSvcReverse.flatMap { AltSvc.filter(&fields, reverse: $0) }
    }

    /// nil with `--keep-alt-svc`; otherwise whether every alternative goes (a reverse listener).
    private var altSvcReverse: Bool? {
        configuration.keepAltSvc ? nil : connection.listenerMode.kind == .reverse
    }

    /// Sends the client DevProxy's own error answer (`ErrorResponse.answer`) and records it as
    /// the flow's response; the caller records the failure itself (`draft.fail`).
    func sendError(status: Int, detail: String, kind: FlowErrorKind, draft: inout FlowDraft) {
        sendToClient(ErrorResponse.answer(status: status, detail: detail, kind: kind, bodyLimit: configuration.bodyLimit,
                                          recordingIn: &draft))
    }
}

/// Where a request goes: scheme, host, port and the origin-form target to send upstream.
struct Destination {
    let tls: Bool
    let host: String
    let port: Int
    let pathAndQuery: String
    /// The address to connect to when it is not `host`'s (see `UpstreamPool.connection`).
    var dial: String? = nil
    /// The client's own `Host`, sent on as it came: a plain request in a tunnel names its virtual
    /// host there, which the tunnel's address (`localhost:18080`, an IP) does not.
    var authority: String? = nil
    /// A `Host` edited in the web UI's resend dialog (`ReplayMark.host`): sent in place of the
    /// URL's, while the URL, and so the connection, the flow and any replay of it, stay the URL's.
    var editedHost: String? = nil

    /// The URL the flow log shows; `OPTIONS *` (asterisk-form) has an empty path (RFC 9110 §7.1).
    var url: String {
        if let authority {
            // An authority without a port (grpc's `ssl_target_name_override`, a `Host` that left
            // it out) reached a port that is not the scheme's: the URL names it, or replay and
            // curl export went to the default port.
            let named = Self.hasPort(authority) || port == (tls ? 443 : 80) ? authority : authority + ":" + String(port)
            return (tls ? "https://" : "http://") + named + (pathAndQuery == "*" ? "" : pathAndQuery)
        }
        return joined(tls ? "https://" : "http://", pathAndQuery == "*" ? "" : pathAndQuery)
    }

    /// Whether an authority (`host`, `host:port`, `[v6]`, `[v6]:port`) names a port.
    static func hasPort(_ authority: String) -> Bool {
        // Bytes, for every h2 request: `Character` searches and `isNumber` (a Unicode property,
        // true for other scripts' digits, which no port is) cost ~12k instructions (run 53).
        let utf8 = authority.utf8
        guard let colon = utf8.lastIndex(of: UInt8(ascii: ":")) else { return false }
        if let bracket = utf8.lastIndex(of: UInt8(ascii: "]")), bracket > colon { return false }
        return colon != utf8.startIndex
            && utf8[utf8.index(after: colon)...].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The Host header value for this destination. One built from the URL leaves out an IPv6
    /// literal's zone id (`[fe80::1%25eth0]:8080` sends `Host: [fe80::1]:8080`): it names an
    /// interface of the sending host only, and RFC 6874 §4 keeps it out of Host and `:authority`.
    /// The URL and the dial keep it, as they name where the request went.
    var hostHeader: String { editedHost ?? authority ?? joined("", "", zone: false) }

    /// `prefix`, the host as it appears in an authority (an IPv6 literal in brackets, RFC 3986
    /// §3.2.2), `:port` unless it is the scheme's default, then `suffix`. Every HTTP/1.1 request
    /// builds both: written into one string of the right size, where interpolation or `+=` took
    /// ~5,000 instructions for the URL. `zone: false` leaves out an IPv6 literal's zone id (from
    /// its `%`, RFC 6874).
    private func joined(_ prefix: StaticString, _ suffix: String, zone: Bool = true) -> String {
        let port = port == (tls ? 443 : 80) ? "" : ":" + String(port)
        return host.withUTF8Bytes { host in
            let end = zone ? host.endIndex : host.firstIndex(of: UInt8(ascii: "%")) ?? host.endIndex
            let host = UnsafeBufferPointer(rebasing: host[..<end])
            return suffix.withUTF8Bytes { suffix in
                port.withUTF8Bytes { port in
                    // A byte scan: `String.contains(_: String)` goes through Foundation's search.
                    let bracketed = host.contains(UInt8(ascii: ":"))
                    let count = prefix.utf8CodeUnitCount + host.count + (bracketed ? 2 : 0) + port.count + suffix.count
                    return String(unsafeUninitializedCapacity: count) { out in
                        var offset = 0
                        func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
                            (out.baseAddress! + offset).update(from: base, count: bytes.count)
                            offset += bytes.count
                        }
                        put(UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
                        if bracketed { out[offset] = UInt8(ascii: "["); offset += 1 }
                        put(host)
                        if bracketed { out[offset] = UInt8(ascii: "]"); offset += 1 }
                        put(port)
                        put(suffix)
                        return offset
                    }
                }
            }
        }
    }
}
