import Foundation
import HTTPTypes

/// `--modify-body` on responses, as mitmproxy's modify_body runs in its response hook on the
/// decoded content: the rules whose filters pass the response's head are found when the head
/// comes; the body is then gathered (up to `BodyEdit.limit`), decoded, every rule applied in
/// order, re-encoded in the same coding, and sent with its new length.
extension MapRules {
    /// The `--modify-body` rules whose filters pass the final response `status` and `fields` of
    /// `request` (as it was sent), in order; empty for an interim response.
    /// The `--modify-body` rules whose filters pass `request` before it is sent (no response yet:
    /// `~q` passes, `~s` does not), in order.
    func requestBodyRules(for request: LocalRequest) -> [ModifyBodyRule] {
        guard !body.isEmpty else { return [] }
        return body.filter { $0.filter?.matches(request) ?? true }
    }

    func bodyRules(for request: LocalRequest, status: Int,
                   fields: [(name: String, value: String)]) -> [ModifyBodyRule] {
        guard !body.isEmpty, status >= 200 else { return [] }
        let response = MapRequestFilter.ResponseHead(status: status, headers: fields)
        return body.filter { $0.filter?.matches(request, response: response) ?? true }
    }
}

/// One response body as `--modify-body` edits it.
enum BodyEdit {
    /// The most body bytes gathered, coded or decoded (mitmproxy holds a whole body; DevProxy
    /// holds this much at most, so memory stays bounded).
    static let limit = 8 << 20   // "8 MiB" in what the flow says

    /// Why a response with this head keeps its body as it comes, whatever the rules: nil when it
    /// can be edited, "" for a response without a body (nothing to say).
    static func skipReason(method: String, status: Int, fields: [(name: String, value: String)]) -> String? {
        func header(_ name: String) -> String? { fields.first { $0.name.equalsCaseInsensitive(name) }?.value }
        if method == "HEAD" || status < 200 || status == 204 || status == 304 { return "" }
        let type = (header("Content-Type") ?? "").lowercased().trimmingCharacters(in: .whitespaces)
        if type.hasPrefix("text/event-stream") { return "an event stream is relayed as it comes" }
        if type.hasPrefix("application/grpc") { return "a gRPC body is relayed as it comes" }
        if let codings = header("Transfer-Encoding")?.lowercased(),
           codings.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) != "chunked" }) {
            return "its transfer coding (\(codings)) is not only chunked"
        }
        if let encoding = header("Content-Encoding"), ContentCoding.list(fromHeader: encoding) == nil {
            return "its Content-Encoding \(encoding) is not one DevProxy decodes (gzip, deflate, br, zstd)"
        }
        if let length = header("Content-Length").flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
           length > limit {
            return "its body (\(HumanUnits.size(length))) is over the 8 MiB --modify-body holds"
        }
        return nil
    }

    /// Why a request with these fields keeps its body as it comes, whatever the rules: nil when it
    /// can be edited, "" for one without a body.
    static func requestSkipReason(fields: [(name: String, value: String)]) -> String? {
        func header(_ name: String) -> String? { fields.first { $0.name.equalsCaseInsensitive(name) }?.value }
        let length = header("Content-Length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let chunked = header("Transfer-Encoding") != nil
        if !chunked && (length ?? 0) == 0 && header("Content-Type") == nil { return "" }
        return skipReason(method: "POST", status: 200, fields: fields)
    }

    /// What the request bodies `--modify-body` gathers from HTTP/2 streams keep at once, across
    /// connections (an HTTP/1.1 request's is read on its own thread, one at a time).
    static let requestBodies = ByteBudget(limit: 64 << 20)

    /// The reason recorded when a body grew past `limit` while it was gathered.
    static var overLimit: String {
        "its body went over the 8 MiB --modify-body holds, and was relayed as it came"
    }

    /// What the rules made of a whole body.
    struct Result {
        /// The bytes to send; nil: send the body as it came (`note` says why when a rule matched).
        var bytes: [UInt8]?
        /// The `Content-Encoding` to send, when it is not the origin's (a br body goes decoded).
        var dropEncoding = false
        var changes: [Flow.BodyChange] = []
        var note: String?
    }

    /// `body` (coded as `contentEncoding` says) with `rules` applied to its decoded bytes, in order.
    static func apply(_ rules: [ModifyBodyRule], to body: [UInt8], contentEncoding: String?,
                      on side: String = "response") -> Result {
        let codings = ContentCoding.list(fromHeader: contentEncoding) ?? []
        var decoded = body
        if !codings.isEmpty {
            guard let output = ContentDecoder.decode(body, contentEncoding: contentEncoding, outputLimit: limit + 1),
                  output.end == .complete else {
                return Result(note: "its \(contentEncoding ?? "") body did not decode to its end")
            }
            guard output.bytes.count <= limit else {
                return Result(note: "its body decodes to over the 8 MiB --modify-body holds")
            }
            decoded = output.bytes
        }
        var result = Result()
        var current = decoded
        var unread: [String] = []
        for rule in rules {
            guard let (bytes, count) = rule.apply(to: current) else {
                unread.append(rule.option)
                continue
            }
            current = bytes
            result.changes.append(Flow.BodyChange(on: side, by: rule.option, replacements: count))
        }
        if !unread.isEmpty {
            result.note = "the replacement file of \(unread.joined(separator: ", ")) could not be read"
        }
        guard result.changes.contains(where: { $0.replacements > 0 }) else { return result }
        if codings.isEmpty {
            result.bytes = current
        } else if let encoded = ContentEncoder.encode(current, contentEncoding: contentEncoding ?? "") {
            result.bytes = encoded
        } else {
            result.bytes = current
            result.dropEncoding = true
            result.note = "sent decoded, without its Content-Encoding \(contentEncoding ?? ""): DevProxy could not "
                + "encode it again"
        }
        return result
    }
}

extension FlowDraft {
    /// Adds what `--modify-body` did (`changes`, `note`) to the flow's `mapped`: beside what
    /// other rules did, or in a `modify-body` record of its own.
    mutating func recordBodyChanges(_ changes: [Flow.BodyChange], note: String?) {
        guard !changes.isEmpty || note != nil else { return }
        if flow.mapped == nil {
            let url = flow.request?.url ?? ""
            flow.mapped = Flow.Mapping(rule: "modify-body", from: url, to: url, by: [])
        }
        if !changes.isEmpty {
            let earlier = flow.mapped?.body ?? []
            flow.mapped?.body = earlier + changes
        }
        // A request's note and its response's are both kept.
        if let note {
            let earlier = flow.mapped?.note
            flow.mapped?.note = earlier.map { "\($0); \(note)" } ?? note
        }
    }
}
