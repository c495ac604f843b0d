import Foundation

/// A flow record with its bodies' text cut short (`GET /api/flows/ID?preview=N`).
///
/// The flow log writes a body's text (or base64) up to `--body-limit`, so a record can hold tens
/// of megabytes; the detail pane shows bodies from `…/body` (streamed into its worker) and needs
/// from the record only the facts and a short prefix for when the body cannot be loaded. Parsing
/// a 28 MB record took the page's main thread 350 ms.
enum FlowRecordPreview {
    /// Records this small go out as they are.
    static let untouchedBelow = 64 * 1024

    /// `json` with `request.body` and `response.body` `text`/`base64` cut to `limit` characters,
    /// and `"preview": true` on a body that was cut. Unchanged when small or not an object.
    static func cut(_ json: String, limit: Int) -> String {
        guard json.utf8.count > untouchedBelow,
              var record = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            return json
        }
        var changed = false
        for side in ["request", "response"] {
            guard var message = record[side] as? [String: Any], var body = message["body"] as? [String: Any] else {
                continue
            }
            for (key, unit) in [("text", 1), ("base64", 4)] {
                guard let value = body[key] as? String, value.count > limit else { continue }
                // base64 is cut on a 4-character boundary, so the prefix still decodes.
                body[key] = String(value.prefix(limit - limit % unit))
                body["preview"] = true
                changed = true
            }
            message["body"] = body
            record[side] = message
        }
        guard changed,
              let data = try? JSONSerialization.data(withJSONObject: record, options: [.withoutEscapingSlashes]) else {
            return json
        }
        return String(decoding: data, as: UTF8.self)
    }
}
