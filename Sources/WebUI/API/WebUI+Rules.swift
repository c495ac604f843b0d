import CertAuthority
import DevProxy
import Foundation

/// `/api/rules`: the map rules while the proxy runs, as Charles's and Proxyman's Map Local, Map
/// Remote and Block List windows change them (docs/web-ui.md).
extension WebUI {
    func rules(_ request: WebRequest, _ rest: [String]) -> WebResponse {
        guard let board = proxy?.ruleBoard else {
            return .error(409, "no rules to change: this web UI shows a saved session, no proxy runs behind it")
        }
        guard rest.count == 2 else {
            switch request.method {
            case "GET": return .json(object: Self.rulesJSON(board))
            case "POST": return addRule(request, board: board)
            default: return .error(405, "\(request.method) is not allowed on \(request.path): GET or POST")
            }
        }
        guard let id = Int(rest[1]), let rule = board.list.first(where: { $0.id == id }) else {
            return .error(404, "no rule \(rest[1]); GET /api/rules lists them")
        }
        switch request.method {
        case "GET": return .json(object: Self.ruleObject(rule))
        case "PUT": return changeRule(request, id: id, board: board)
        case "DELETE":
            do {
                _ = try board.remove(id)
                return .json(object: Self.rulesJSON(board))
            } catch {
                return .error(409, "\(error)")
            }
        default: return .error(405, "\(request.method) is not allowed on \(request.path): GET, PUT or DELETE")
        }
    }

    /// `POST /api/rules` `{"kind", "text", "answer"?}`.
    private func addRule(_ request: WebRequest, board: RuleBoard) -> WebResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .error(400, "the body must be a JSON object: {\"kind\": \"map-local\", "
                               + "\"text\": \"|URL-REGEX|PATH\"}")
        }
        if let unknown = object.keys.sorted().first(where: { !["kind", "text", "answer"].contains($0) }) {
            return .error(400, "unknown key \(unknown): give kind, text and, for a mock, answer")
        }
        let kinds = RuleBoard.Kind.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = object["kind"] as? String, let kind = RuleBoard.Kind(rawValue: name) else {
            return .error(400, "kind must be one of \(kinds)")
        }
        guard let text = object["text"] as? String else {
            return .error(400, "text must be the rule, as its option takes it")
        }
        let answer: RuleBoard.Answer?
        switch Self.answer(object["answer"], kind: kind) {
        case .success(let value): answer = value
        case .failure(let reason): return .error(400, reason.message)
        }
        do {
            let rule = try board.add(kind, text: text, answer: answer)
            return .json(object: Self.ruleObject(rule), status: 201)
        } catch {
            return .error(400, "\(error)")
        }
    }

    /// `PUT /api/rules/ID` `{"enabled"?, "text"?, "answer"?, "position"?}`.
    private func changeRule(_ request: WebRequest, id: Int, board: RuleBoard) -> WebResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .error(400, "the body must be a JSON object: {\"enabled\": false}")
        }
        let keys = ["enabled", "text", "answer", "position"]
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            return .error(400, "unknown key \(unknown): give enabled, text, answer or position")
        }
        guard let rule = board.list.first(where: { $0.id == id }) else { return .error(404, "no rule \(id)") }
        var enabled: Bool?
        if let value = object["enabled"] {
            guard JSONDocument.isBoolean(value), let flag = value as? Bool else {
                return .error(400, "enabled must be true or false")
            }
            enabled = flag
        }
        var position: Int?
        if let value = object["position"] {
            guard let index = value as? Int, !JSONDocument.isBoolean(value) else {
                return .error(400, "position must be a number (0: first)")
            }
            position = index
        }
        if object["text"] != nil || object["answer"] != nil {
            guard let text = (object["text"] as? String) ?? (object["text"] == nil ? rule.text : nil) else {
                return .error(400, "text must be the rule, as its option takes it")
            }
            let answer: RuleBoard.Answer?
            switch Self.answer(object["answer"], kind: rule.kind) {
            case .success(let value): answer = value
            case .failure(let reason): return .error(400, reason.message)
            }
            do {
                _ = try board.edit(id, text: text, answer: answer)
            } catch let error as ConfigurationError where rule.origin != .web {
                return .error(409, error.description)
            } catch {
                return .error(400, "\(error)")
            }
        }
        if let enabled { board.set(id, enabled: enabled) }
        if let position { board.move(id, to: position) }
        guard let now = board.list.first(where: { $0.id == id }) else { return .error(404, "no rule \(id)") }
        return .json(object: Self.ruleObject(now))
    }

    private struct Refusal: Error { let message: String }

    /// A mock's `answer` object: `{"status": 200, "content_type": "application/json", "body": "…"}`, or
    /// `"body_base64"` in place of `"body"` for bytes that are not text (at most 1 MiB decoded).
    private static func answer(_ value: Any?, kind: RuleBoard.Kind) -> Result<RuleBoard.Answer?, Refusal> {
        guard let value else { return .success(nil) }
        guard kind == .mock else {
            return .failure(Refusal(message: "answer is for a mock rule; a \(kind.rawValue) rule has none"))
        }
        guard let object = value as? [String: Any] else {
            return .failure(Refusal(message: "answer must be an object: {\"status\": 200, \"content_type\": …, "
                                             + "\"body\": …}"))
        }
        let keys = ["status", "content_type", "body", "body_base64"]
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            return .failure(Refusal(message: "unknown key answer.\(unknown): give status, content_type and body "
                                             + "(or body_base64)"))
        }
        guard object["body"] == nil || object["body_base64"] == nil else {
            return .failure(Refusal(message: "answer has body and body_base64: give one of them"))
        }
        var answer = RuleBoard.Answer()
        if let status = object["status"] {
            guard let number = status as? Int, !JSONDocument.isBoolean(status) else {
                return .failure(Refusal(message: "answer.status must be a number (200 to 599)"))
            }
            answer.status = number
        }
        if let type = object["content_type"] {
            guard let text = type as? String else {
                return .failure(Refusal(message: "answer.content_type must be text"))
            }
            answer.contentType = text
        }
        if let body = object["body"] {
            guard let text = body as? String else { return .failure(Refusal(message: "answer.body must be text")) }
            answer.body = text
        }
        if let encoded = object["body_base64"] {
            guard let text = encoded as? String else {
                return .failure(Refusal(message: "answer.body_base64 must be text (the body in base64)"))
            }
            // Checked before decoding: a body over the limit is refused without being held twice.
            guard text.utf8.count / 4 * 3 <= RuleBoard.Answer.bodyLimit + 3 else {
                return .failure(Refusal(message: "answer.body_base64 decodes to over "
                                                 + "\(RuleBoard.Answer.bodyLimit >> 20) MiB, a mock's limit"))
            }
            guard let bytes = Data(base64Encoded: text) else {
                return .failure(Refusal(message: "answer.body_base64 is not base64 (RFC 4648: A-Z a-z 0-9 + /, "
                                                 + "padded with = to a multiple of 4)"))
            }
            guard bytes.count <= RuleBoard.Answer.bodyLimit else {
                return .failure(Refusal(message: "answer.body_base64 decodes to \(bytes.count) bytes, over "
                                                 + "\(RuleBoard.Answer.bodyLimit >> 20) MiB, a mock's limit"))
            }
            answer.bytes = Array(bytes)
        }
        return .success(answer)
    }

    /// `{"rules": [rule…], "kinds": [name…]}`.
    static func rulesJSON(_ board: RuleBoard) -> [String: Any] {
        ["rules": board.list.map(ruleObject), "kinds": RuleBoard.Kind.allCases.map(\.rawValue)]
    }

    /// `{id, kind, text, enabled, origin, answer}` (`answer` for a mock alone: its body as `body` when
    /// it is UTF-8, as `body_base64` when it is not).
    static func ruleObject(_ rule: RuleBoard.Rule) -> [String: Any] {
        var object: [String: Any] = ["id": rule.id, "kind": rule.kind.rawValue, "text": rule.text,
                                     "enabled": rule.enabled, "origin": rule.origin.rawValue]
        if let answer = rule.answer {
            var shown: [String: Any] = ["status": answer.status, "content_type": answer.contentType]
            if let text = answer.text {
                shown["body"] = text
            } else {
                shown["body_base64"] = Data(answer.bytes).base64EncodedString()
            }
            object["answer"] = shown
        }
        return object
    }
}
