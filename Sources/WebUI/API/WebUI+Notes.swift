import Foundation
import SessionStore

/// `PUT /api/flows/ID/mark`: a flow's mark and comment (mitmproxy's `m`, Proxyman's highlight
/// colours and comments).
extension WebUI {
    /// Sets what `{"mark": "red"|null, "comment": "…"|null}` gives (a key left out is left as it
    /// is) and answers the flow's summary, which the live stream also carries to the other pages.
    func setNote(_ request: WebRequest, id: String) throws -> WebResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .error(400, "the body must be a JSON object: {\"mark\": \"red\" or null, "
                               + "\"comment\": \"text\" or null}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "mark" && $0 != "comment" }) {
            return .error(400, "unknown key \(unknown): give mark, comment or both")
        }
        var mark = FlowNoteChange<FlowMark>.keep
        switch object["mark"] {
        case nil: break
        case is NSNull: mark = .set(nil)
        case let name as String:
            guard let value = FlowMark(name: name) else {
                return .error(400, "mark must be \(FlowMark.names), or null for none; not \(name)")
            }
            mark = .set(value)
        default: return .error(400, "mark must be \(FlowMark.names), or null for none")
        }
        var comment = FlowNoteChange<String>.keep
        switch object["comment"] {
        case nil: break
        case is NSNull: comment = .set(nil)
        case let text as String:
            if let refusal = FlowNote.refusal(ofComment: text) { return .error(400, refusal) }
            comment = .set(text)
        default: return .error(400, "comment must be text, or null for none")
        }
        if let refusal = store.noteRefusal { return .error(409, refusal) }
        guard let summary = try store.setNote(id: id, mark: mark, comment: comment) else {
            return .error(404, "no flow \(id) in this session")
        }
        var json = JSONText()
        summary.write(to: &json, replayOf: try store.replayOrigins(ids: [id])[id])
        return .json(json.text)
    }

    /// `record` (a flow's JSON object) with flow `id`'s `mark` and `comment` first, when it has
    /// a note; as it is otherwise.
    func withNote(_ record: String, id: String) throws -> String {
        guard let note = try store.notes(ids: [id])[id], record.first == "{" else { return record }
        var json = JSONText()
        json.raw("{")
        if let mark = note.mark {
            json.raw("\"mark\":")
            json.string(mark.rawValue)
            json.raw(",")
        }
        if let comment = note.comment {
            json.raw("\"comment\":")
            json.string(comment)
            json.raw(",")
        }
        let rest = record.dropFirst().drop { $0.isWhitespace }
        // An empty object gets no trailing comma.
        if rest.first == "}" { return String(json.text.dropLast()) + "}" }
        return json.text + rest
    }
}
