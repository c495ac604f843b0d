import DevProxy
import Foundation
import SessionStore

/// `GET /api/flows/ID/{request,response}/body`: decoded by default, `?raw=1` as sent, cut by
/// `?limit=` or one `Range`. Captured bytes are never served as markup or script.
extension WebUI {
    /// Types a page may show inline from a body route (`<img src>`); everything else is text or
    /// an opaque download. SVG is left out on purpose: it can carry script.
    static let inlineImageTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
                                                "image/x-icon", "image/vnd.microsoft.icon", "image/bmp"]

    func body(_ request: WebRequest, id: String, part: StoredBody.Part) throws -> WebResponse {
        let name = part == .request ? "request" : "response"
        if request.method == "GET", request.query["raw"] == "1" || request.query["raw"] == "true",
           request.query["limit"] == nil, request.headers["Range"] == nil,
           let extent = try store.bodyExtent(id: id, part: part) {
            return try rawDownload(id: id, part: part, extent: extent)
        }
        guard let stored = try store.body(id: id, part: part) else {
            if try store.summary(id: id) == nil { return .error(404, "no flow \(id) in this session") }
            return .error(404, "flow \(id) has no stored \(name) body")
        }
        let headers = try messageHeaders(id: id, part: part)
        let contentType = headers.first { $0.0.lowercased() == "content-type" }?.1
        let contentEncoding = headers.first { $0.0.lowercased() == "content-encoding" }?.1
        var limit: Int?
        if let text = request.query["limit"] {
            guard let value = Int(text), value >= 0 else { return .error(400, "limit must be a number of bytes") }
            limit = value
        }
        let raw = request.query["raw"].map { $0 == "1" || $0 == "true" } ?? false
        var bytes: [UInt8]
        var servedType: String
        var decoded: String?
        var isText = false
        // A body kept past the flow log's part (spooled) has its wire bytes stored whole, while its
        // text is the log's decoded prefix: decode the bytes when they are in the named coding.
        let wholeDecode = raw || stored.text == nil || contentEncoding == nil ? nil
            : ContentDecoder.decode(stored.bytes, contentEncoding: contentEncoding,
                                    outputLimit: store.configuration.bodyLimit)
                .flatMap { output in output.bytes.count > stored.text?.utf8.count ?? 0 ? output.bytes : nil }
        if raw {
            bytes = stored.bytes
            servedType = "application/octet-stream"
        } else if let wholeDecode, String(validating: wholeDecode, as: UTF8.self) != nil, !wholeDecode.contains(0) {
            bytes = wholeDecode
            isText = true
            servedType = "text/plain; charset=utf-8"
            decoded = contentEncoding
        } else if let text = stored.text {
            bytes = Array(text.utf8)
            isText = true
            servedType = "text/plain; charset=utf-8"
            if contentEncoding != nil { decoded = contentEncoding }
        } else {
            bytes = stored.bytes
            if let output = ContentDecoder.decode(stored.bytes, contentEncoding: contentEncoding,
                                                  outputLimit: store.configuration.bodyLimit) {
                bytes = output.bytes
                decoded = contentEncoding
            }
            let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            if let mediaType, Self.inlineImageTypes.contains(mediaType) {
                servedType = mediaType
            } else if String(validating: bytes, as: UTF8.self) != nil && !bytes.contains(0) {
                isText = true
                servedType = "text/plain; charset=utf-8"
            } else {
                servedType = "application/octet-stream"
            }
        }
        var status = 200
        var extra: [(String, String)] = []
        if let range = request.headers["Range"] {
            guard let (start, end) = Self.byteRange(range, length: bytes.count) else {
                return WebResponse(status: 416, headers: [("Content-Range", "bytes */\(bytes.count)")])
            }
            extra.append(("Content-Range", "bytes \(start)-\(end)/\(bytes.count)"))
            bytes = Array(bytes[start...end])
            status = 206
        } else if let limit, bytes.count > limit {
            let cut = isText ? Self.utf8Boundary(bytes, atMost: limit) : limit
            bytes = Array(bytes[..<cut])
            extra.append(("X-DevProxy-Limited", "1"))
        }
        var response = WebResponse(status: status, headers: [("Content-Type", servedType),
                                                            ("Cache-Control", "no-store"), ("Accept-Ranges", "bytes")],
                                   body: bytes)
        if raw {
            let file = "\(Self.safeFileName(id))-\(name).bin"
            response.headers.append(("Content-Disposition", "attachment; filename=\"\(file)\""))
        }
        // Even if someone opens the URL directly, nothing in it may run or load.
        response.headers.append(("Content-Security-Policy", "sandbox; default-src 'none'"))
        response.headers += extra
        if let contentType { response.headers.append(("X-DevProxy-Content-Type", Self.headerSafe(contentType))) }
        response.headers.append(("X-DevProxy-Body-Size", String(stored.size)))
        response.headers.append(("X-DevProxy-Stored", String(stored.bytes.count)))
        if stored.truncated { response.headers.append(("X-DevProxy-Truncated", "1")) }
        if let sha = stored.sha256 { response.headers.append(("X-DevProxy-SHA256", sha)) }
        if let decoded { response.headers.append(("X-DevProxy-Decoded", Self.headerSafe(decoded))) }
        return response
    }

    /// `?raw=1` of a whole body: the stored bytes as an attachment, streamed from the store a piece
    /// at a time (the connection closes after it), with the same headers as any body answer.
    private func rawDownload(id: String, part: StoredBody.Part, extent: SessionStore.BodyExtent) throws -> WebResponse {
        let name = part == .request ? "request" : "response"
        let contentType = try messageHeaders(id: id, part: part).first { $0.0.lowercased() == "content-type" }?.1
        let store = self.store
        var response = WebResponse(status: 200, headers: [
            ("Content-Type", "application/octet-stream"), ("Cache-Control", "no-store"), ("Accept-Ranges", "bytes"),
            ("Content-Length", String(extent.stored)),
            ("Content-Disposition", "attachment; filename=\"\(Self.safeFileName(id))-\(name).bin\""),
            ("Content-Security-Policy", "sandbox; default-src 'none'"),
        ]) { stream in
            _ = try? store.streamBody(id: id, part: part) { try stream.write($0, flush: false) }
            try? stream.flush()
        }
        if let contentType { response.headers.append(("X-DevProxy-Content-Type", Self.headerSafe(contentType))) }
        response.headers.append(("X-DevProxy-Body-Size", String(extent.size)))
        response.headers.append(("X-DevProxy-Stored", String(extent.stored)))
        if extent.stored < extent.size { response.headers.append(("X-DevProxy-Truncated", "1")) }
        if let sha = extent.sha256 { response.headers.append(("X-DevProxy-SHA256", sha)) }
        return response
    }

    /// The request's or response's header pairs from the stored record ([] when there is none).
    /// The bodies' text is cut from the record first: parsing a 60 MB record took seconds.
    func messageHeaders(id: String, part: StoredBody.Part) throws -> [(String, String)] {
        guard let whole = try store.flowJSON(id: id) else { return [] }
        let json = FlowRecordPreview.cut(whole, limit: 0)
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let message = object[part == .request ? "request" : "response"] as? [String: Any],
              let pairs = message["headers"] as? [[String]] else { return [] }
        return pairs.compactMap { $0.count >= 2 ? ($0[0], $0[1]) : nil }
    }

    /// The first and last index of a single `bytes=A-B`, `bytes=A-` or `bytes=-N` range; nil when
    /// it is malformed, multiple or unsatisfiable (RFC 9110 §14.1.2).
    static func byteRange(_ header: String, length: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(","), length > 0 else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            return (max(0, length - suffix), length - 1)
        }
        guard let start = Int(parts[0]), start >= 0, start < length else { return nil }
        if parts[1].isEmpty { return (start, length - 1) }
        guard let end = Int(parts[1]), end >= start else { return nil }
        return (start, min(end, length - 1))
    }

    /// The largest count ≤ `limit` that ends on a UTF-8 character boundary.
    static func utf8Boundary(_ bytes: [UInt8], atMost limit: Int) -> Int {
        var cut = min(limit, bytes.count)
        while cut > 0 && cut < bytes.count && bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return cut
    }

    /// A flow id fit for a file name (ids are hex and dashes; anything else becomes `_`).
    static func safeFileName(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
    }

    /// A captured value fit for a response header: no control characters, at most 1 KiB.
    static func headerSafe(_ text: String) -> String {
        let kept = text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && $0.isASCII }.prefix(1024)
        return String(kept.map(Character.init))
    }
}
