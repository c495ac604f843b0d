import DevProxy
import Foundation
import HTTPTypes
import SessionStore

/// `GET /api/flows/ID/export?format=curl|har|raw|fetch|node|python|httpie|powershell|wget|swift|okhttp|kotlin`
/// and `GET /api/export/har?filter=|ids=`.
extension WebUI {
    /// The most flows one HAR export holds.
    static let maximumExport = 10_000

    func export(_ request: WebRequest, id: String) throws -> WebResponse {
        guard let (flow, record) = try storedRecord(id) else {
            switch try runningRequest(id) {
            case nil: return .error(404, "no flow \(id) in this session")
            case .incomplete(let reason): return .error(409, reason)
            case .complete(let flow, let body): return try exportRunning(flow, body: body, format: request.query["format"] ?? "")
            }
        }
        switch request.query["format"] ?? "" {
        case "curl":
            guard flow.request != nil else { return .error(409, "flow \(id) has no HTTP request to repeat") }
            return .text(try curlCommand(for: flow) + "\n")
        case "har":
            // A flow imported from a HAR gives back the sizes that HAR gave.
            let sizes = HARSizes.of(record: record).map { [flow.id: $0] } ?? [:]
            return .attachment(try HARWriter.encode([try typedForHAR(flow)], creatorVersion: version, sizes: sizes,
                                                    notes: try store.notes(ids: [flow.id])),
                               filename: "\(Self.safeFileName(id)).har", contentType: "application/json")
        case "raw":
            return .attachment(try rawExchange(flow), filename: "\(Self.safeFileName(id)).http",
                               contentType: "text/plain")
        case let name where RequestCode(rawValue: name) != nil:
            guard let code = RequestCode(rawValue: name), let repeated = try repeatedRequest(for: flow) else {
                return .error(409, "flow \(id) has no HTTP request to repeat")
            }
            if let refusal = code.refusal(of: repeated) { return .error(422, "cannot copy as \(name): \(refusal)") }
            return .text(code.write(repeated))
        case let other:
            return .error(400, "format must be curl, har, raw or \(RequestCode.names), "
                               + "not \(other.isEmpty ? "nothing" : other)")
        }
    }

    /// A running flow's request, received whole (`runningRequest`), as curl or code; HAR and raw
    /// hold the response too and wait for the flow to end.
    private func exportRunning(_ flow: Flow, body: StoredBody, format: String) throws -> WebResponse {
        guard let repeated = RepeatedRequest(flow: flow, body: body) else {
            return .error(409, "flow \(flow.id) has no HTTP request to repeat")
        }
        switch format {
        case "curl":
            return .text(try curlCommand(for: flow, repeated: repeated) + "\n")
        case "har", "raw":
            return .error(409, "flow \(flow.id) has not finished yet: a \(format == "har" ? "HAR" : "raw") export holds its "
                               + "response; copy its request (curl or code) meanwhile")
        case let name where RequestCode(rawValue: name) != nil:
            guard let code = RequestCode(rawValue: name) else { return .error(400, "unknown format \(name)") }
            if let refusal = code.refusal(of: repeated) { return .error(422, "cannot copy as \(name): \(refusal)") }
            return .text(code.write(repeated))
        case let other:
            return .error(400, "format must be curl, har, raw or \(RequestCode.names), "
                               + "not \(other.isEmpty ? "nothing" : other)")
        }
    }

    func exportHAR(_ request: WebRequest) throws -> WebResponse {
        var ids: [String]
        var cut: String?
        if let list = request.query["ids"] {
            // Each once: `ids=A,A` wrote two entries with one `_flowId`.
            var seen = Set<String>()
            ids = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && seen.insert($0).inserted }
            guard ids.count <= Self.maximumExport else {
                return .error(400, "at most \(Self.maximumExport) ids in one export")
            }
        } else {
            let (filter, refusal) = try filter(of: request)
            if let refusal { return refusal }
            // The newest, as the list shows them on top (the oldest 10,000 were exported, and the
            // flows the user was looking at were left out), and the archive says what it left out.
            let page = try store.flows(filter: filter, limit: Self.maximumExport, order: .newestFirst)
            ids = page.flows.map(\.id).reversed()
            if page.total > ids.count {
                cut = "the newest \(ids.count) of \(page.total) flows: narrow the filter to export the others"
            }
        }
        var flows: [Flow] = []
        var sizes: [String: HARSizes] = [:]
        for id in ids {
            guard let (flow, record) = try storedRecord(id) else { continue }
            flows.append(try typedForHAR(flow))
            // A flow imported from a HAR gives back the sizes that HAR gave.
            sizes[flow.id] = HARSizes.of(record: record)
        }
        var response = WebResponse.attachment(try HARWriter.encode(flows, creatorVersion: version, comment: cut,
                                                                   sizes: sizes, notes: try store.notes(ids: ids)),
                                              filename: "devproxy.har", contentType: "application/json")
        if let cut { response.headers.append(("X-DevProxy-Export-Cut", cut)) }
        return response
    }

    /// The finished flow `id` decoded from its stored record; nil when there is none.
    func storedFlow(_ id: String) throws -> Flow? {
        try storedRecord(id)?.flow
    }

    /// The finished flow `id` and the record it was decoded from (read once: an export also
    /// takes an imported HAR's sizes from the record); nil when there is none.
    func storedRecord(_ id: String) throws -> (flow: Flow, record: String)? {
        guard let json = try store.flowJSON(id: id), let flow = FlowLogReader.parse(Array(json.utf8)).flows.first
        else { return nil }
        return (flow, json)
    }

    /// A shell command that repeats the request: curl with single-quoted arguments; a binary body
    /// goes through `base64 -d`.
    /// `repeated`: the request to write when it is not read from the store (a running flow's).
    func curlCommand(for flow: Flow, repeated given: RepeatedRequest? = nil) throws -> String {
        guard let request = flow.request else { return "" }
        // To the server the request went to, with its Host as recorded, as a replay goes: a
        // request that named another host than its connection's (`server.request_host`) was
        // copied with the Host's name as its URL, which curl could not resolve.
        guard let repeated = try given ?? repeatedRequest(for: flow) else { return "" }
        if repeated.webSocket { return Self.webSocketHandshake(repeated) }
        var parts = ["curl"]
        if request.method == "HEAD" {
            // `-X HEAD` has curl wait for the body the answer's Content-Length announces, which
            // never comes (curl's manual says so): `--head` is how curl asks for a head.
            parts.append("--head")
        } else if request.method != "GET" || (request.body?.size ?? 0) > 0 {
            // (A GET's empty body is recorded as size 0: that is no reason for `-X 'GET'`.)
            parts += ["-X", Self.shellQuoted(request.method)]
        }
        parts += Self.curlURLOptions(repeated.url)
        if repeated.http2 {
            // As it was sent (a gRPC call needs it): over TLS by ALPN, without TLS by prior knowledge.
            parts.append(request.url.lowercased().hasPrefix("https:") ? "--http2" : "--http2-prior-knowledge")
        }
        // A browser's Accept-Encoding (`gzip, deflate, br, zstd`) had curl print the coded bytes
        // ("Binary output can mess up your terminal"): as Chrome's "Copy as cURL", `--compressed`
        // asks in its place for the codings this curl decodes, and curl decodes what comes.
        // (`identity` alone asks for no coding: that header stays.)
        let accepts = repeated.headers.contains {
            $0.name.lowercased() == "accept-encoding"
                && $0.value.trimmingCharacters(in: .whitespaces).lowercased() != "identity"
        }
        for (name, value) in repeated.headers where !(accepts && name.lowercased() == "accept-encoding") {
            parts += ["-H", Self.shellQuoted("\(name): \(value)")]
        }
        if accepts { parts.append("--compressed") }
        guard repeated.bodySize > 0 else { return parts.joined(separator: " ") }
        guard let feed = Self.shellFeed(of: repeated.body) else {
            parts += ["--data-binary", Self.shellQuoted(repeated.textBody ?? "")]
            return parts.joined(separator: " ")
        }
        parts += ["--data-binary", "@-"]
        return feed + parts.joined(separator: " ")
    }

    /// `url` as curl's argument, after `-g` when it has `[ ] { }`: curl reads them as its globbing
    /// (`?a[]=1` failed with "bad range in URL"), `-g` sends them as they are, as Chrome's "Copy as
    /// cURL" does.
    static func curlURLOptions(_ url: String) -> [String] {
        (url.contains(where: { "[]{}".contains($0) }) ? ["-g"] : []) + [shellQuoted(url)]
    }

    /// The curl command that opens a WebSocket as the recorded one was opened. curl sends no
    /// WebSocket over HTTP/2 (RFC 8441's extended CONNECT: the `-X CONNECT --http2` written before
    /// had no `:protocol`, and hypercorn dropped the stream), and an HTTP/1.1 handshake's copy lost
    /// `Upgrade` and `Connection` (hop-by-hop fields, left out of every copy). Both are written as
    /// the HTTP/1.1 GET with `Upgrade: websocket` (RFC 6455 §4.1), its version and a key (the RFC's
    /// sample one when the request had none, as over HTTP/2), then the recorded fields; `-i` shows
    /// the `101 Switching Protocols` and `-N` the frames as they come, until Ctrl-C. An origin that
    /// speaks only HTTP/2 cannot take it.
    static func webSocketHandshake(_ repeated: RepeatedRequest) -> String {
        var parts = ["curl", "--http1.1", "-i", "-N"]
        parts += curlURLOptions(repeated.url)
        var fields: [(name: String, value: String)] = [("Connection", "Upgrade"), ("Upgrade", "websocket")]
        let has = { (name: String) in repeated.headers.contains { $0.name.lowercased() == name } }
        if !has("sec-websocket-version") { fields.append(("Sec-WebSocket-Version", "13")) }
        if !has("sec-websocket-key") { fields.append(("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")) }
        // Accept-Encoding is kept: a handshake's answer has no body to decode.
        for field in fields + repeated.headers { parts += ["-H", shellQuoted("\(field.name): \(field.value)")] }
        return parts.joined(separator: " ")
    }

    /// A shell pipeline's start (`printf … | `) that writes `body` to the next command's standard
    /// input, when the body cannot go inline in single quotes; nil when it can.
    ///
    /// Text goes inline, but a control character (a multipart body's CR LF, an escape) pasted into
    /// a terminal is not what the shell reads (the terminal turns CR into LF): such text goes
    /// through printf's escapes, which POSIX shells all read alike; a binary body through `base64 -d`.
    static func shellFeed(of body: [UInt8]) -> String? {
        if !body.contains(0), String(validating: body, as: UTF8.self) != nil {
            guard body.contains(where: { ($0 < 0x20 && $0 != 0x0a && $0 != 0x09) || $0 == 0x7f }) else { return nil }
            return "printf \(shellQuoted(printfEscaped(body))) | "
        }
        return "printf %s \(shellQuoted(Data(body).base64EncodedString())) | base64 -d | "
    }

    /// The request and response as text with their stored (wire) bodies, each head as it came:
    /// an HTTP/1.x request line as the client sent it (absolute-form to a proxy, origin-form in a
    /// tunnel, its own version), an HTTP/2 one as `curl -v` shows it (`GET /path HTTP/2`, `Host`
    /// from `:authority` when the request has none; `HTTP/2 200` for the response). Trailers
    /// (gRPC's status among them) follow the body sent as one chunk, as HTTP/1.1 carries them.
    func rawExchange(_ flow: Flow) throws -> [UInt8] {
        var bytes: [UInt8] = []
        if let request = flow.request {
            bytes += Array((Self.requestLine(request) + "\r\n").utf8)
            if request.headers.first(named: "host") == nil, let authority = request.pseudoHeaders?.first(named: ":authority") {
                bytes += Array("Host: \(authority)\r\n".utf8)
            }
            Self.appendMessage(Self.headersAsSent(by: request), body: try store.body(id: flow.id, part: .request)?.bytes ?? [],
                               trailers: request.trailers, to: &bytes)
        }
        if let response = flow.response {
            let statusLine = Self.isHTTP2(response.httpVersion, pseudo: response.pseudoHeaders)
                ? "HTTP/2 \(response.status)"
                : "\(Self.version(response.httpVersion)) \(response.status) \(response.reason)"
            bytes += Array("\r\n\r\n\(statusLine)\r\n".utf8)
            Self.appendMessage(response.headers, body: try store.body(id: flow.id, part: .response)?.bytes ?? [],
                               trailers: response.trailers, to: &bytes)
        }
        return bytes
    }

    /// The request's header fields as the client sent them: the flow records the `Host` that went
    /// to the origin, and the client's, when DevProxy replaced it, as `client_host`.
    static func headersAsSent(by request: Flow.Request) -> FieldPairs {
        guard let clientHost = request.clientHost else { return request.headers }
        var headers = request.headers
        for index in headers.indices where headers.name(at: index).lowercased() == "host" {
            headers[index] = [headers.name(at: index), clientHost]
            break
        }
        return headers
    }

    /// The request line as the client sent it: HTTP/1.x's target as it came (`Flow.Request.target`
    /// for absolute-form, else the URL's path and query as they were, never re-encoded), an
    /// HTTP/2 request's `:method` and `:path` with `HTTP/2`.
    static func requestLine(_ request: Flow.Request) -> String {
        if isHTTP2(request.httpVersion, pseudo: request.pseudoHeaders) {
            let method = request.pseudoHeaders?.first(named: ":method") ?? request.method
            let path = request.pseudoHeaders?.first(named: ":path") ?? HARWriter.requestTarget(of: request.url)
            return "\(method) \(path) HTTP/2"
        }
        let target = request.target ?? HARWriter.requestTarget(of: request.url, method: request.method)
        return "\(request.method) \(target) \(version(request.httpVersion))"
    }

    /// Whether a message came over HTTP/2 (its flow says so, or it has pseudo-header fields).
    private static func isHTTP2(_ version: String, pseudo: FieldPairs?) -> Bool {
        pseudo != nil || HARWriter.isHTTP2(version)
    }

    /// `HTTP/1.0` whether the flow says `HTTP/1.0` or `1.0`.
    private static func version(_ text: String) -> String {
        text.uppercased().hasPrefix("HTTP/") ? text : "HTTP/" + text
    }

    /// A message's header lines, blank line and body. The stored body is the content without
    /// its transfer codings: a message that had some, or has trailers, gets it as one chunk and
    /// its trailer section after it (`Transfer-Encoding: chunked` alone, as the bytes are now, and
    /// no `Content-Length`).
    private static func appendMessage(_ headers: FieldPairs, body: [UInt8], trailers: FieldPairs?, to bytes: inout [UInt8]) {
        let transferCoded = headers.first(named: "transfer-encoding") != nil
        let trailers = trailers ?? []
        let chunked = transferCoded || !trailers.isEmpty
        for pair in headers where pair.count >= 2 {
            switch pair[0].lowercased() {
            case "content-length" where chunked: continue
            case "transfer-encoding": bytes += Array("\(pair[0]): chunked\r\n".utf8)
            default: bytes += Array("\(pair[0]): \(pair[1])\r\n".utf8)
            }
        }
        guard chunked else {
            bytes += Array("\r\n".utf8)
            bytes += body
            return
        }
        if !transferCoded { bytes += Array("transfer-encoding: chunked\r\n".utf8) }
        bytes += Array("\r\n".utf8)
        if !body.isEmpty {
            bytes += Array("\(String(body.count, radix: 16))\r\n".utf8)
            bytes += body
            bytes += Array("\r\n".utf8)
        }
        bytes += Array("0\r\n".utf8)
        for pair in trailers where pair.count >= 2 { bytes += Array("\(pair[0]): \(pair[1])\r\n".utf8) }
        bytes += Array("\r\n".utf8)
    }

    /// Fields a repeated request must not copy: framing and hop-by-hop fields (the new
    /// connection sets its own), the proxy's own, and values the log redacted. `TE: trailers` is
    /// kept: gRPC servers refuse a call without it (grpcio resets the stream), and it is the one
    /// `TE` HTTP/2 allows (RFC 9113 §8.2.2).
    static func skippedOnRepeat(_ name: String, _ value: String) -> Bool {
        let lowered = name.lowercased()
        if lowered == "te" { return value.trimmingCharacters(in: .whitespaces).lowercased() != "trailers" }
        return ["host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection",
                "proxy-authorization", "upgrade", "x-devproxy-replay"].contains(lowered) || name.hasPrefix(":")
    }

    /// `bytes` as a printf format that prints them back: `%` and `\` doubled, CR, LF and tab as
    /// `\r`, `\n`, `\t`, other control bytes (and a leading `-`) as three-digit octal; the rest as
    /// it is.
    static func printfEscaped(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "-") where index == 0:
                // A format starting with `-` reads as an option (a multipart body's boundary).
                out += Array("\\055".utf8)
            case UInt8(ascii: "%"): out += Array("%%".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0d: out += Array("\\r".utf8)
            case 0x0a: out += Array("\\n".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20, 0x7f:
                let octal = String(byte, radix: 8)
                out += Array(("\\" + String(repeating: "0", count: 3 - octal.count) + octal).utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `'text'` with each `'` written `'\''`: safe in any POSIX shell.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
