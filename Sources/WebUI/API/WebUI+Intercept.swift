import CertAuthority
import DevProxy
import Foundation

/// Breakpoints (`/api/intercept`, docs/web-ui.md): the proxy's `Intercepts` board, read, edited
/// and decided from the page or a script. A held request's or response's id is its flow's
/// (`/api/flows/ID`): a flow is held at most once at a time, its request first, then its response.
extension WebUI {
    /// `/api/intercept…`: `rest` is the path after `/api/` (`["intercept", ID, "resume"]`).
    func intercept(_ request: WebRequest, _ rest: [String]) -> WebResponse {
        guard let board = proxy?.intercepts else {
            return .error(404, "no proxy: breakpoints need devproxy run (this is devproxy web FILE, "
                          + "which holds nothing)")
        }
        switch (request.method, rest.count) {
        case ("GET", 1):
            return .json(Self.boardJSON(board))
        case ("PUT", 1):
            return setInterceptFilter(request, board: board)
        case ("POST", 2) where rest[1] == "resume-all":
            return .json("{\"resumed\":\(board.resumeAll())}")
        case ("GET", 2):
            guard let held = board.held(rest[1]) else { return Self.notHeld(rest[1]) }
            var json = JSONText(capacity: held.body.count * 2 + 512)
            Self.write(held, to: &json, withBody: true)
            return .json(json.text)
        case ("POST", 3) where rest[2] == "resume":
            guard let held = board.held(rest[1]) else { return Self.notHeld(rest[1]) }
            // A resume sent for the request (or the response) the page showed: a flow whose
            // request went on meanwhile, now held at its response, is not sent on by it.
            let asked: Intercepts.Phase?
            switch Self.askedPhase(request.body) {
            case .success(let phase): asked = phase
            case .failure(let refusal): return .error(400, refusal.description)
            }
            if let asked, asked != held.phase { return Self.wentOn(rest[1], asked: asked, held: held, "resumed") }
            var edit: Intercepts.Edit?
            switch Self.interceptEdit(request.body, held: held) {
            case .edit(let parsed): edit = parsed
            case .refused(let reason): return .error(400, reason)
            }
            // `{"phase": …}` alone asks for no edit.
            if asked != nil, edit == Intercepts.Edit(), Self.onlyPhase(request.body) { edit = nil }
            if let reason = Self.phaseRefusal(edit, held: held) { return .error(400, reason) }
            // The edit was checked against what was held; a flow whose request was resumed from
            // another page meanwhile, now held at its response, is not given it.
            guard board.resume(rest[1], edit: edit, phase: held.phase) else { return Self.notHeld(rest[1]) }
            return .json("{\"resumed\":\(JSONText.quoted(rest[1]))}")
        case ("POST", 3) where rest[2] == "respond":
            guard let held = board.held(rest[1]) else { return Self.notHeld(rest[1]) }
            let answer: Intercepts.Answer
            switch Self.interceptAnswer(request.body, held: held) {
            case .answer(let parsed): answer = parsed
            case .refused(let reason): return .error(400, reason)
            }
            guard board.respond(rest[1], with: answer) else { return Self.notHeld(rest[1]) }
            return .json("{\"answered\":\(JSONText.quoted(rest[1])),\"status\":\(answer.status)}")
        case ("POST", 3) where rest[2] == "abort":
            // An abort sent for the request (or the response) the page showed: a flow whose request
            // went on meanwhile, now held at its response, is not aborted by it.
            let phase: Intercepts.Phase?
            switch Self.askedPhase(request.body) {
            case .success(let asked): phase = asked
            case .failure(let refusal): return .error(400, refusal.description)
            }
            guard board.abort(rest[1], phase: phase) else {
                if let phase, let held = board.held(rest[1]), held.phase != phase {
                    return Self.wentOn(rest[1], asked: phase, held: held, "aborted")
                }
                return Self.notHeld(rest[1])
            }
            return .json("{\"aborted\":\(JSONText.quoted(rest[1]))}")
        default:
            let exists = rest.count <= 2 || (rest.count == 3 && ["resume", "abort", "respond"].contains(rest[2]))
            return exists ? .error(405, "\(request.method) is not allowed on \(request.path)")
                : .error(404, "no API route \(request.method) \(request.path); see docs/web-ui.md")
        }
    }

    /// `PUT /api/intercept` with `{"filter": "…"}`: null or blank clears it.
    private func setInterceptFilter(_ request: WebRequest, board: Intercepts) -> WebResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
              let value = object["filter"] else {
            return .error(400, "the body must be a JSON object {\"filter\": \"~d api.example.com\"} "
                          + "(null or \"\" clears it)")
        }
        guard value is NSNull || value is String else { return .error(400, "filter must be a string or null") }
        do {
            try board.setFilter(value as? String)
        } catch let error as ConfigurationError {
            // The board names the run's option; here the filter came from the page or a script.
            let prefix = "--intercept: "
            let reason = error.description.hasPrefix(prefix) ? String(error.description.dropFirst(prefix.count))
                : error.description
            return .error(400, reason)
        } catch {
            return .error(400, "\(error)")
        }
        var json = JSONText(capacity: 64)
        json.raw("{\"filter\":")
        json.string(board.filterText)
        json.raw("}")
        return .json(json.text)
    }

    private static func notHeld(_ id: String) -> WebResponse {
        .error(404, "nothing of flow \(id) is held: it was resumed or aborted already, its client left, "
               + "or it was never held")
    }

    /// Why `edit` cannot go with what is held: a request has no status to set, a response's
    /// method and URL are the request's that was sent already, and a response that carries no
    /// body (to HEAD, 204, 304: RFC 9110 §6.4.1) cannot be given one, whose bytes the client would
    /// read as the start of the next response.
    static func phaseRefusal(_ edit: Intercepts.Edit?, held: Intercepts.Held) -> String? {
        guard let edit else { return nil }
        switch held.phase {
        case .request where edit.status != nil:
            return "status: \(held.id) is a held request; a status is a response's to edit"
        case .response where edit.method != nil || edit.url != nil:
            return "\(edit.method != nil ? "method" : "url"): \(held.id) is a held response, whose request was sent "
                + "already; edit its status, headers or body"
        case .response:
            let status = edit.status ?? held.status ?? 200
            guard !(edit.body ?? held.body).isEmpty, edit.body != nil || edit.status != nil else { return nil }
            if held.method.uppercased() == "HEAD" {
                return "body: a response to HEAD carries no body; leave the body empty"
            }
            if status == 204 || status == 304 {
                return "body: a \(status) response carries no body; leave the body empty or give another status"
            }
            return nil
        default:
            return nil
        }
    }

    /// `{"filter", "held": [item…]}` (`GET /api/intercept`).
    static func boardJSON(_ board: Intercepts) -> String {
        let held = board.held
        var json = JSONText(capacity: 256 + held.count * 512)
        json.raw("{\"filter\":")
        json.string(board.filterText)
        json.raw(",\"held\":[")
        for (index, item) in held.enumerated() {
            if index > 0 { json.raw(",") }
            write(item, to: &json, withBody: false)
        }
        json.raw("]}")
        return json.text
    }

    /// `{"filter", "held": [ID…], "responses": [ID…]}`: the event stream's `intercept` message.
    /// `held` names every flow held, oldest first; `responses` those of them held at their response,
    /// so the page tells a response from a request, and sees a flow whose request was resumed and
    /// whose response is held within one batch change from one to the other.
    static func boardEventJSON(_ board: Intercepts) -> String {
        let held = board.held
        var json = JSONText(capacity: 128)
        json.raw("{\"filter\":")
        json.string(board.filterText)
        for (key, items) in [("held", held), ("responses", held.filter { $0.phase == .response })] {
            json.raw(",\"\(key)\":[")
            for (index, item) in items.enumerated() {
                if index > 0 { json.raw(",") }
                json.string(item.id)
            }
            json.raw("]")
        }
        json.raw("}")
        return json.text
    }

    /// One held request or response; `withBody` adds `body_base64` and, for valid UTF-8, `body_text`,
    /// and for a body with content codings or in a declared charset `body_decoded_text` (what the
    /// editor shows), `body_decoded_size`, `body_shown` and `charset`, or `body_note` saying why it
    /// is sent unchanged. `content_encoding` lists the body's codings (none: `[]`).
    /// `phase` says which; a response's `status`, `headers` and body are the response's, its
    /// `method` and `url` the request's that was sent.
    private static func write(_ held: Intercepts.Held, to json: inout JSONText, withBody: Bool, now: Date = Date()) {
        json.raw("{\"id\":")
        json.string(held.id)
        json.raw(",\"phase\":")
        json.string(held.phase.rawValue)
        if let status = held.status {
            json.raw(",\"status\":")
            json.number(status)
        }
        json.raw(",\"method\":")
        json.string(held.method)
        json.raw(",\"url\":")
        json.string(held.url)
        json.raw(",\"http_version\":")
        json.string(held.httpVersion)
        json.raw(",\"headers\":[")
        for (index, field) in held.headers.enumerated() {
            json.raw(index == 0 ? "[" : ",[")
            json.string(field.name)
            json.raw(",")
            json.string(field.value)
            json.raw("]")
        }
        json.raw("],\"body_size\":")
        json.number(held.body.count)
        json.raw(",\"since\":")
        json.string(ISO8601.milliseconds(held.since))
        json.raw(",\"held_ms\":")
        json.number(max(0, Int((now.timeIntervalSince(held.since) * 1000).rounded())))
        json.raw(",\"filter\":")
        json.string(held.filter)
        let shown = withBody ? held.shownBody : Intercepts.ShownBody(headers: held.headers, body: [])
        json.raw(",\"content_encoding\":[")
        for (index, coding) in shown.codings.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(coding)
        }
        json.raw("]")
        if withBody {
            if let text = shown.text {
                json.raw(",\"body_decoded_text\":")
                json.string(text)
                json.raw(",\"body_decoded_size\":")
                json.number(shown.decodedSize ?? 0)
                json.raw(",\"body_shown\":")
                json.string(shown.summary)
            }
            if let charset = shown.charset {
                json.raw(",\"charset\":")
                json.string(charset)
            }
            if let note = shown.note {
                json.raw(",\"body_note\":")
                json.string(note)
            }
            json.raw(",\"body_base64\":")
            json.string(Data(held.body).base64EncodedString())
            if let text = String(validating: held.body, as: UTF8.self) {
                json.raw(",\"body_text\":")
                json.string(text)
            }
        }
        json.raw("}")
    }

    /// What `POST /api/intercept/ID/resume` asks for.
    enum InterceptEditParse: Equatable {
        /// nil: resume as it came (no body, `{}`).
        case edit(Intercepts.Edit?)
        /// A 400's one line: which part cannot go on the wire, and why.
        case refused(String)
    }

    /// Reads a resume's optional body: `{"method", "url", "status", "headers": [[n, v]…], "body" |
    /// "body_base64" | "body_decoded"}`, each optional, each checked so that what goes on is a message
    /// the wire can carry (`method` and `url` for a request, `status` for a response: `phaseRefusal`).
    /// `body_decoded` is an edit of `held`'s `body_decoded_text`: written back in its charset and coded
    /// with the codings of the header fields that go on (`Intercepts.encodeShown`); the same text
    /// under the same fields leaves the body as it came, byte for byte.
    static func interceptEdit(_ body: [UInt8], held: Intercepts.Held? = nil) -> InterceptEditParse {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return .edit(nil) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .refused("the body must be a JSON object: {\"method\", \"url\", \"status\", \"headers\": "
                            + "[[name, value]…], \"body\" or \"body_base64\"}, each optional")
        }
        var edit = Intercepts.Edit()
        if let value = object["method"] {
            guard let method = value as? String, isToken(method) else {
                return .refused("method: \(describe(value)) is not an HTTP method (a token: letters, digits, "
                                + "!#$%&'*+-.^_`|~)")
            }
            edit.method = method
        }
        if let value = object["url"] {
            guard let url = value as? String else { return .refused("url must be a string") }
            if let reason = urlRefusal(url) { return .refused("url: \(reason)") }
            edit.url = url
        }
        if let value = object["status"] {
            // A final response's: 1xx are interim, and a status is three digits (RFC 9110 §15).
            guard let number = value as? NSNumber, !JSONDocument.isBoolean(number),
                  let status = Int(exactly: number.doubleValue), (200...599).contains(status) else {
                return .refused("status: \(describe(value)) is not a final response's status (200 to 599)")
            }
            edit.status = status
        }
        if let value = object["headers"] {
            guard let pairs = value as? [Any] else { return .refused("headers must be a list of [name, value] pairs") }
            var fields: [Intercepts.HeaderField] = []
            for (index, pair) in pairs.enumerated() {
                guard let pair = pair as? [Any], pair.count == 2, let name = pair[0] as? String,
                      let value = pair[1] as? String else {
                    return .refused("headers[\(index)] must be a [name, value] pair of strings")
                }
                guard isToken(name) else {
                    return .refused("headers[\(index)]: the name \(describe(name)) is not a token (no spaces, colons "
                                    + "or control characters)")
                }
                if let bad = value.unicodeScalars.first(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                    let which = bad == "\r" ? "CR" : bad == "\n" ? "LF" : "NUL"
                    return .refused("headers[\(index)]: the value of \(name) holds \(which), which would end the "
                                    + "field on the wire")
                }
                fields.append(Intercepts.HeaderField(name: name, value: value))
            }
            edit.headers = fields
        }
        if let decoded = object["body_decoded"] {
            guard object["body"] == nil, object["body_base64"] == nil else {
                return .refused("give one of body (text), body_base64 or body_decoded, not several")
            }
            guard let text = decoded as? String else { return .refused("body_decoded must be text") }
            guard let held else { return .refused("body_decoded: nothing is held to decode") }
            let shown = held.shownBody
            guard let was = shown.text else {
                return .refused("body_decoded: the held body is not shown decoded ("
                                + (shown.note ?? "it has no content coding and is UTF-8 text") + "); send body or "
                                + "body_base64")
            }
            let fields = edit.headers ?? held.headers
            let sameFraming = ["Content-Encoding", "Content-Type"].allSatisfy { name in
                fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
                    == held.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
            }
            if text != was || !sameFraming {
                do {
                    edit.body = try Intercepts.encodeShown(text, headers: fields)
                } catch {
                    return .refused(error.description)
                }
            }
        }
        switch (object["body"], object["body_base64"]) {
        case (.some, .some):
            return .refused("give body (text) or body_base64, not both")
        case (let text?, nil):
            guard let text = text as? String else { return .refused("body must be text (or give body_base64)") }
            edit.body = Array(text.utf8)
        case (nil, let base64?):
            guard let base64 = base64 as? String, let data = Data(base64Encoded: base64) else {
                return .refused("body_base64 is not base64")
            }
            edit.body = [UInt8](data)
        case (nil, nil):
            break
        }
        if let size = edit.body?.count, size > Intercepts.maxBody {
            return .refused("body: \(size) bytes is over the \(Intercepts.maxBody >> 20) MiB a breakpoint holds")
        }
        return .edit(edit)
    }

    /// 404 for a resume or an abort (`done`) sent for `asked` when `held` is the flow's other phase.
    private static func wentOn(_ id: String, asked: Intercepts.Phase, held: Intercepts.Held, _ done: String)
        -> WebResponse {
        .error(404, "the \(asked.rawValue) of flow \(id) is not held: it went on, and its \(held.phase.rawValue) is "
               + "held now; nothing was \(done)")
    }

    /// Whether `body` is a JSON object with `phase` alone.
    private static func onlyPhase(_ body: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?.keys.sorted() == ["phase"]
    }

    /// The phase a resume or an abort is for: `{"phase": "request" | "response", …}`; nil (no body,
    /// no `phase`) is whatever of the flow is held.
    static func askedPhase(_ body: [UInt8]) -> Result<Intercepts.Phase?, ConfigurationError> {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return .success(nil) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .failure(ConfigurationError("the body must be a JSON object: {\"phase\": \"request\"} or "
                                               + "{\"phase\": \"response\"}, or none"))
        }
        guard let value = object["phase"] else { return .success(nil) }
        guard let text = value as? String, let phase = Intercepts.Phase(rawValue: text) else {
            return .failure(ConfigurationError("phase must be \"request\" or \"response\""))
        }
        return .success(phase)
    }

    /// What `POST /api/intercept/ID/respond` asks for.
    enum InterceptAnswerParse: Equatable {
        case answer(Intercepts.Answer)
        /// A 400's one line.
        case refused(String)
    }

    /// Reads a direct answer to the held request `held`: `{"status", "headers": [[n, v]…], "body" |
    /// "body_base64"}`, each checked as a held response's edit is (`interceptEdit`: a final status,
    /// 200 to 599, 200 when left out; names that are tokens, values without CR, LF or NUL; at most
    /// 4 MiB), and no body where the response carries none (to HEAD, a 204, a 304). Only a held
    /// request is answered so: a held response's request was sent already.
    static func interceptAnswer(_ body: [UInt8], held: Intercepts.Held) -> InterceptAnswerParse {
        guard held.phase == .request else {
            return .refused("\(held.id) is a held response, whose request was sent already; edit it and resume it")
        }
        let parts = ["status", "headers", "body", "body_base64"]
        if let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
           let extra = object.keys.sorted().first(where: { !parts.contains($0) }) {
            return .refused("\(extra): a direct answer has a status, headers and a body (or body_base64)")
        }
        let edit: Intercepts.Edit
        switch interceptEdit(body) {
        case .edit(let parsed): edit = parsed ?? Intercepts.Edit()
        case .refused(let reason): return .refused(reason)
        }
        let answer = Intercepts.Answer(status: edit.status ?? 200, headers: edit.headers ?? [], body: edit.body ?? [])
        if !answer.body.isEmpty {
            if held.method.uppercased() == "HEAD" {
                return .refused("body: a response to HEAD carries no body; leave the body empty")
            }
            if answer.status == 204 || answer.status == 304 {
                return .refused("body: a \(answer.status) response carries no body; leave the body empty or give "
                                + "another status")
            }
        }
        return .answer(answer)
    }

    /// Why `url` cannot be a held request's new target, or nil: it must be absolute, http or
    /// https, with a host, and hold no white space or control characters.
    private static func urlRefusal(_ url: String) -> String? {
        if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            return "\(describe(url)) holds white space or control characters"
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return "\(describe(url)) is not an absolute URL (http://host/path)"
        }
        guard scheme == "http" || scheme == "https" else { return "the scheme must be http or https, not \(scheme)" }
        guard let host = components.host, !host.isEmpty else { return "\(describe(url)) names no host" }
        return nil
    }

    /// A value quoted for a one-line reason, cut to 80 characters.
    private static func describe(_ value: Any) -> String {
        let text = value as? String ?? "\(value)"
        let cut = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return "\"" + cut.unicodeScalars.map { $0.value < 0x20 ? String(format: "\\u%04x", $0.value) : String($0) }
            .joined() + "\""
    }
}
