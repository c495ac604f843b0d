import DevProxy
import Foundation
import GRPCWire
import SessionStore

/// Bodies read into structure for the detail pane, from their first bytes (decoded from their
/// content coding): `GET /api/flows/ID/{request,response}/form`, a form's fields (`FormBody`),
/// and `GET /api/flows/ID/{request,response}/protobuf`, a protobuf body decoded without a schema
/// (`ProtobufRawDecoder`, as `protoc --decode_raw`).
extension WebUI {
    /// How much of a body the form view reads.
    static let formReadLimit = 1 << 20
    /// How much of a body the protobuf view decodes: the decoder's own input bound.
    static let protobufReadLimit = ProtobufRawDecoder.Limits().maxInputBytes

    /// Media types whose bodies are protobuf messages outside gRPC (which has its own view):
    /// the spellings APIs use, and any `+protobuf` or `+proto` suffix.
    static func isProtobuf(contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        else { return false }
        return ["application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf",
                "application/x-google-protobuf", "application/x-protobuffer"].contains(type)
            || type.hasSuffix("+protobuf") || type.hasSuffix("+proto")
    }

    func form(id: String, part: StoredBody.Part) throws -> WebResponse {
        let body: DecodedPrefix
        switch try decodedPrefix(id: id, part: part, limit: Self.formReadLimit, what: "a form",
                                  accepting: FormBody.isForm) {
        case .answer(let response): return response
        case .body(let prefix): body = prefix
        }
        guard let form = FormBody.parse(contentType: body.contentType, body: body.bytes, whole: body.whole) else {
            return .error(422, "the \(body.name) of flow \(id) says it is a form (\(body.contentType ?? "")), but its body "
                          + "is not one (no boundary, or the body does not begin with it)")
        }
        var json = JSONText()
        json.raw("{\"kind\":")
        json.string(form.kind.rawValue)
        json.raw(",\"complete\":")
        json.bool(form.isComplete)
        json.raw(",\"read_bytes\":")
        json.number(body.bytes.count)
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

    func protobuf(id: String, part: StoredBody.Part) throws -> WebResponse {
        let body: DecodedPrefix
        switch try decodedPrefix(id: id, part: part, limit: Self.protobufReadLimit, what: "protobuf",
                                  accepting: Self.isProtobuf) {
        case .answer(let response): return response
        case .body(let prefix): body = prefix
        }
        let message = ProtobufRawDecoder().decode(body.bytes)
        var json = JSONText()
        json.raw("{\"complete\":")
        json.bool(body.whole)
        json.raw(",\"read_bytes\":")
        json.number(body.bytes.count)
        json.raw(",\"decoded\":")
        json.raw(String(decoding: try JSONEncoder().encode(message.json), as: UTF8.self))
        json.raw("}")
        return .json(json.text)
    }

    /// A body's first bytes, decoded, for a view of its structure.
    struct DecodedPrefix {
        let name: String
        let contentType: String?
        let bytes: [UInt8]
        /// `bytes` is the whole body (the store kept it whole and it fitted the limit).
        let whole: Bool
    }

    enum DecodedPrefixOutcome {
        case body(DecodedPrefix)
        /// The route's answer instead: no such flow, not that kind of body, no body stored.
        case answer(WebResponse)
    }

    /// Reads the first `limit` bytes of flow `id`'s body, decoded from its content coding, when
    /// its `Content-Type` is one `accepting` takes (`what` names that kind in the 404 otherwise).
    func decodedPrefix(id: String, part: StoredBody.Part, limit: Int, what: String,
                       accepting: (String?) -> Bool) throws -> DecodedPrefixOutcome {
        let name = part == .request ? "request" : "response"
        let headers = try messageHeaders(id: id, part: part)
        guard try !headers.isEmpty || store.summary(id: id) != nil else {
            return .answer(.error(404, "no flow \(id) in this session"))
        }
        let contentType = Self.value(of: "content-type", in: headers)
        guard accepting(contentType) else {
            return .answer(.error(404, "the \(name) of flow \(id) is not \(what) (Content-Type: \(contentType ?? "none"))"))
        }
        guard let extent = try store.bodyExtent(id: id, part: part) else {
            return .answer(.error(404, "flow \(id) has no stored \(name) body"))
        }
        let contentEncoding = Self.combinedValue(of: "content-encoding", in: headers)
        var content = BodySource.Content.bytes
        if let contentEncoding, ContentDecodingStream(contentEncoding: contentEncoding, outputLimit: 0) != nil {
            content = .decoded(contentEncoding)
        }
        var bytes: [UInt8] = []
        // One byte past the limit says whether there is more.
        func read(_ content: BodySource.Content) throws -> ContentDecoder.End? {
            try BodySource(store: store, id: id, part: part, content: content, decodedLimit: store.configuration.bodyLimit)
                .read(upTo: limit + 1) { bytes.append(contentsOf: $0) }
        }
        var end = try read(content)
        if case .decoded = content, ContentDecoder.isNoDecoding(produced: bytes.count, end: end) {
            // Labelled with a coding it does not have (a client that says gzip and sends the
            // form as it is, or gzip bytes labelled br, which read as a brotli stream that never
            // ends): read as sent, as the body view does.
            content = .bytes
            end = try read(content)
        }
        var whole = bytes.count <= limit && extent.stored == extent.size
        if case .decoded = content, end != .complete { whole = false }
        if bytes.count > limit { bytes.removeLast(bytes.count - limit) }
        return .body(DecodedPrefix(name: name, contentType: contentType, bytes: bytes, whole: whole))
    }
}
