import DevProxy
import Foundation
import HTTPTypes
import SessionStore

/// `POST /api/flows/ID/replay` and `POST /api/replay` (docs/web-ui.md).
extension WebUI {
    func replay(id: String) throws -> WebResponse {
        guard let link = proxy else { return Self.noProxy }
        guard link.replayPort != 0 else { return Self.noRegularListener }
        switch try replayPlan(of: id) {
        case .refused(let answer): return answer
        case .plan(let plan):
            return try send(link, method: plan.method, url: plan.url, headers: plan.headers, body: plan.body,
                            replayOf: id, host: plan.host, http2: plan.http2)
        }
    }

    /// What a replay of flow `id` sends: its request as recorded, to the server it went to.
    enum PlannedReplay {
        case plan(ReplayPlan)
        /// Why it cannot be replayed (404, 409), said as `POST /api/flows/ID/replay` says it.
        case refused(WebResponse)
    }

    /// The request a replay of flow `id` sends (`replay` and `repeat` send the same).
    func replayPlan(of id: String) throws -> PlannedReplay {
        var running: [UInt8]?
        let flow: Flow
        if let stored = try storedFlow(id) {
            flow = stored
        } else {
            // A flow still running is replayed once its request was received whole (`runningRequest`).
            switch try runningRequest(id) {
            case nil: return .refused(.error(404, "no flow \(id) in this session"))
            case .incomplete(let reason): return .refused(.error(409, reason))
            case .complete(let partial, let body):
                flow = partial
                running = body.bytes
            }
        }
        guard flow.mode == .http || flow.mode == .https, let request = flow.request else {
            return .refused(.error(409, "flow \(id) is a \(flow.mode.rawValue) flow; only HTTP requests can be replayed"))
        }
        var body: [UInt8] = []
        if let running {
            body = running
        } else if let logged = request.body, logged.size > 0 {
            guard let stored = try wholeRequestBody(of: id) else {
                return .refused(.error(409, "the request body of flow \(id) was not stored whole; it cannot be replayed"))
            }
            body = stored
        }
        let headers = request.headers.compactMap { pair -> (String, String)? in
            guard pair.count >= 2, !Self.skippedOnRepeat(pair[0], pair[1]), pair[1] != "<redacted>" else { return nil }
            return (pair[0], pair[1])
        }
        // To the server the original went to, with its Host as recorded (`ReplayTarget`).
        let target = ReplayTarget(replaying: flow, request: request)
        return .plan(ReplayPlan(method: request.method, url: target.url, headers: headers, body: body,
                                host: target.host, http2: request.httpVersion == "HTTP/2"))
    }

    func replayEdited(_ request: WebRequest) throws -> WebResponse {
        guard let link = proxy else { return Self.noProxy }
        guard link.replayPort != 0 else { return Self.noRegularListener }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .error(400, "the body must be a JSON object: {\"method\", \"url\", \"headers\", \"body\"}")
        }
        guard let method = object["method"] as? String, Self.isToken(method) else {
            return .error(400, "method must be an HTTP method token")
        }
        guard let url = object["url"] as? String, let components = URLComponents(string: url),
              components.scheme == "http" || components.scheme == "https", components.host?.isEmpty == false,
              !url.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) else {
            return .error(400, "url must be an absolute http:// or https:// URL")
        }
        var headers: [(String, String)] = []
        var typedHosts: [String] = []
        for pair in object["headers"] as? [Any] ?? [] {
            // CR LF in a value slipped through a check on Characters as a second header line.
            guard let pair = pair as? [String], pair.count == 2, Self.isToken(pair[0]),
                  HTTPFields.isSafeValue(pair[1]) else {
                return .error(400, "headers must be [name, value] pairs of valid field names and values")
            }
            if pair[0].lowercased() == "host" { typedHosts.append(pair[1].trimmingCharacters(in: .whitespaces)) }
            if !Self.skippedOnRepeat(pair[0], pair[1]) { headers.append((pair[0], pair[1])) }
        }
        // RFC 9110 §7.2: one Host. One that differs from the URL's is sent as typed (a virtual
        // host behind a shared front, a staging name on a production address), as mitmproxy and
        // Charles send an edited Host; the connection still goes to the URL's host.
        guard typedHosts.count <= 1 else { return .error(400, "give one Host header, not \(typedHosts.count)") }
        let editedHost = typedHosts.first.flatMap { Self.differs($0, fromAuthorityOf: components) ? $0 : nil }
        if let editedHost, !ReplayMark.canCarry(host: editedHost) {
            return .error(400, "the Host header must be a host name or address (with :port if any), without spaces")
        }
        var body: [UInt8] = []
        guard [object["body"], object["body_base64"], object["body_from"], object["grpc_messages"]].compactMap({ $0 }).count <= 1 else {
            return .error(400, "give one of body (text), body_base64, body_from or grpc_messages, not several")
        }
        if Self.hasGRPCMessages(object) {
            switch grpcBody(request.body, url: components) {
            case .body(let framed): body = framed
            case .refused(let answer): return answer
            }
        } else if let source = object["body_from"] {
            // A body too large for the editor goes as it was stored: the request body of that flow.
            guard let id = source as? String else { return .error(400, "body_from must be a flow id") }
            guard try store.summary(id: id) != nil else { return .error(400, "body_from names no flow in this session: \(id)") }
            guard let stored = try wholeRequestBody(of: id) else {
                return .error(409, "the request body of flow \(id) was not stored whole; it cannot be sent again")
            }
            body = stored
        } else if let base64 = object["body_base64"] as? String {
            guard let data = Data(base64Encoded: base64) else { return .error(400, "body_base64 is not base64") }
            body = [UInt8](data)
        } else if let text = object["body"] as? String {
            body = Array(text.utf8)
            // Text under a declared charset other than UTF-8 is sent in it, as it was captured
            // (its record's `text` is its reading in UTF-8).
            let contentType = headers.last { $0.0.lowercased() == "content-type" }?.1
            if let charset = BodyCharset(contentType: contentType),
               !charset.isASCIICompatible || body.contains(where: { $0 >= 0x80 }) {
                guard let encoded = charset.bytes(of: text) else {
                    return .error(400, "the body has characters \(charset.name) cannot write (its Content-Type says "
                                  + "charset=\(charset.name)): change the charset, or send body_base64")
                }
                body = encoded
            }
            // The editor shows a compressed body decoded: text sent under the Content-Encoding its
            // headers still name goes out in that coding (it went out as plain text, mislabelled).
            if let coding = headers.last(where: { $0.0.lowercased() == "content-encoding" })?.1,
               ContentCoding.list(fromHeader: coding)?.isEmpty == false {
                guard let encoded = ContentEncoder.encode(body, contentEncoding: coding) else {
                    return .error(400, "the body is text but Content-Encoding says \(coding), which DevProxy cannot "
                                  + "write (it writes gzip, deflate, br and zstd): remove the header, or send body_base64")
                }
                body = encoded
            }
        }
        let replayOf = object["replay_of"] as? String
        var original: FlowSummary?
        if let replayOf {
            original = try store.summary(id: replayOf)
            guard original != nil else { return .error(400, "replay_of names no flow in this session: \(replayOf)") }
        }
        return try send(link, method: method, url: url, headers: headers, body: body, replayOf: replayOf,
                        host: editedHost, http2: original?.httpVersion == "HTTP/2")
    }

    /// Whether `host`, a Host header's value, names other than `components`' authority (the
    /// scheme's default port and letter case aside); an empty one names none, so the URL's.
    static func differs(_ host: String, fromAuthorityOf components: URLComponents) -> Bool {
        guard !host.isEmpty, let authority = Replayer.authority(components) else { return false }
        func normal(_ value: String) -> String {
            let lowered = value.lowercased()
            let port = components.scheme?.lowercased() == "https" ? ":443" : ":80"
            return lowered.hasSuffix(port) ? String(lowered.dropLast(port.count)) : lowered
        }
        return normal(host) != normal(authority)
    }

    /// Flow `id`'s request body as the store kept it, when it kept it whole; nil otherwise.
    private func wholeRequestBody(of id: String) throws -> [UInt8]? {
        guard let stored = try store.body(id: id, part: .request) else {
            // A flow still running: its request's body once received whole (`runningRequest`).
            if try store.flowJSON(id: id) == nil, case .complete(_, let body)? = try runningRequest(id) { return body.bytes }
            return nil
        }
        guard !stored.truncated else { return nil }
        return stored.bytes
    }

    static let noProxy = WebResponse.error(409, "replay needs a running proxy: this is devproxy web FILE, "
                                                   + "which proxies nothing; open the session with devproxy run")
    static let noRegularListener = WebResponse.error(409, "replay enters the proxy through a regular listener, and this "
                                                      + "run has none: add --mode regular@127.0.0.1:PORT")

    /// Replays through the proxy, waits until the new flow is in the store, answers its id.
    private func send(_ link: ProxyLink, method: String, url: String, headers: [(String, String)], body: [UInt8],
                      replayOf: String?, host: String? = nil, http2: Bool = false) throws -> WebResponse {
        let plan = ReplayPlan(method: method, url: url, headers: headers, body: body, host: host, http2: http2)
        switch try deliver(plan, through: link, id: Replayer.newFlowID(), replayOf: replayOf) {
        case .flow(let id, _): return .json("{\"id\":\(JSONText.quoted(id))}")
        case .unreachable(let reason): return .error(502, reason)
        case .refused(let reason): return .error(422, reason)
        }
    }

    /// How one send of a replay ended.
    enum ReplayOutcome {
        /// The request became flow `id`; `answer` is the start of the response the proxy sent back.
        case flow(id: String, answer: [UInt8])
        /// The proxy could not be reached (the reason, said for the page).
        case unreachable(String)
        /// The proxy refused the request before it became a flow (the reason, said for the page).
        case refused(String)
    }

    /// Sends `plan` once through the proxy as flow `id` (re-signed when a signature key is known),
    /// and waits until the new flow is in the store.
    func deliver(_ plan: ReplayPlan, through link: ProxyLink, id: String, replayOf: String?) throws -> ReplayOutcome {
        var headers = plan.headers
        if let host = URLComponents(string: plan.url)?.host, let signer = link.signatures?.signer(for: host),
           let signed = signer.resign(method: plan.method, url: plan.url, headers: headers.map { [$0.0, $0.1] },
                                      body: plan.body) {
            headers = signed.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        }
        let answer: [UInt8]
        do {
            answer = try Replayer(link: link).send(method: plan.method, url: plan.url, headers: headers,
                                                   body: plan.body, id: id, replayOf: replayOf, host: plan.host,
                                                   http2: plan.http2)
        } catch let error as NetworkError {
            return .unreachable("cannot reach the proxy at \(link.replayHost):\(link.replayPort) to replay: "
                                + error.message)
        }
        store.flush()
        // The proxy refused the request before it became the replay's flow (a header over its
        // limit: 431): said with the proxy's reason, where the id answered named no flow (404).
        guard try store.summary(id: id) != nil else {
            return .refused("the proxy refused the request before sending it: \(Self.refusal(answer))")
        }
        return .flow(id: id, answer: answer)
    }

    /// A refusal's status line and the first line of its body (DevProxy's reason), or what came:
    /// `HTTP/1.1 400 Bad Request: request target has an invalid IPv6 literal`. DevProxy's own
    /// error bodies start with the status (`400 Bad Request: …`, `ErrorResponse.body`), which is
    /// said once: it was said twice, the status line's and the body's.
    static func refusal(_ answer: [UInt8]) -> String {
        let text = String(decoding: answer, as: UTF8.self)
        guard let status = text.split(separator: "\r\n", maxSplits: 1).first, !status.isEmpty else {
            return "no answer came"
        }
        guard var body = text.components(separatedBy: "\r\n\r\n").dropFirst().first?.split(separator: "\n").first else {
            return String(status)
        }
        if let code = status.split(separator: " ", maxSplits: 2).dropFirst().first, body.hasPrefix(code + " "),
           let colon = body.range(of: ": ") {
            body = body[colon.upperBound...]
        }
        return String(status) + (body.isEmpty ? "" : ": " + body)
    }

    /// RFC 9110 §5.6.2 token characters.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
