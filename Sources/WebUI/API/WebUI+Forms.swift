import DevProxy
import Foundation
import SessionStore

/// `GET /api/flows/ID/{request,response}/form`: a form body's fields (`FormBody`), read from the
/// body's first MiB (decoded from its content coding), for the detail pane's form view.
extension WebUI {
    /// How much of a body the form view reads.
    static let formReadLimit = 1 << 20

    func form(id: String, part: StoredBody.Part) throws -> WebResponse {
        let name = part == .request ? "request" : "response"
        let headers = try messageHeaders(id: id, part: part)
        guard try !headers.isEmpty || store.summary(id: id) != nil else {
            return .error(404, "no flow \(id) in this session")
        }
        let contentType = headers.first { $0.0.lowercased() == "content-type" }?.1
        guard FormBody.isForm(contentType: contentType) else {
            return .error(404, "the \(name) of flow \(id) is not a form (Content-Type: \(contentType ?? "none"))")
        }
        guard let extent = try store.bodyExtent(id: id, part: part) else {
            return .error(404, "flow \(id) has no stored \(name) body")
        }
        let contentEncoding = headers.first { $0.0.lowercased() == "content-encoding" }?.1
        var content = BodySource.Content.bytes
        if let contentEncoding, ContentDecodingStream(contentEncoding: contentEncoding, outputLimit: 0) != nil {
            content = .decoded(contentEncoding)
        }
        let source = BodySource(store: store, id: id, part: part, content: content,
                                decodedLimit: store.configuration.bodyLimit)
        var bytes: [UInt8] = []
        // One byte past the limit says whether there is more.
        let end = try source.read(upTo: Self.formReadLimit + 1) { bytes.append(contentsOf: $0) }
        var whole = bytes.count <= Self.formReadLimit && extent.stored == extent.size
        if case .decoded = content, end != .complete { whole = false }
        if bytes.count > Self.formReadLimit { bytes.removeLast(bytes.count - Self.formReadLimit) }
        guard let form = FormBody.parse(contentType: contentType, body: bytes, whole: whole) else {
            return .error(422, "the \(name) of flow \(id) says it is a form (\(contentType ?? "")), but its body is not one "
                          + "(no boundary, or the body does not begin with it)")
        }
        var json = JSONText()
        json.raw("{\"kind\":")
        json.string(form.kind.rawValue)
        json.raw(",\"complete\":")
        json.bool(form.isComplete)
        json.raw(",\"read_bytes\":")
        json.number(bytes.count)
        json.raw(",\"fields\":[")
        for (index, field) in form.fields.enumerated() {
            json.raw(index == 0 ? "{\"name\":" : ",{\"name\":")
            json.string(field.name)
            json.raw(",\"value\":")
            json.string(field.value)
            json.raw(",\"file_name\":")
            json.string(field.fileName)
            json.raw(",\"content_type\":")
            json.string(field.contentType)
            json.raw(",\"size\":")
            json.number(field.size)
            json.raw(",\"value_cut\":")
            json.bool(field.valueCut)
            json.raw(",\"cut\":")
            json.bool(field.isCut)
            json.raw("}")
        }
        json.raw("]}")
        return .json(json.text)
    }
}
