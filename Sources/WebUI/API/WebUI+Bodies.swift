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

    /// The body route. Every answer is read from the store a piece at a time: a first pass learns
    /// the length and whether the body is text (reading only as far as the answer needs), a second
    /// sends it, so memory does not grow with the body. A decoded body is served up to the
    /// session's body limit (`--store-body-limit`) of decoded bytes; past it the answer is cut
    /// there and says so in `X-DevProxy-Decoded-Cut`.
    func body(_ request: WebRequest, id: String, part: StoredBody.Part) throws -> WebResponse {
        let name = part == .request ? "request" : "response"
        guard let extent = try store.bodyExtent(id: id, part: part) else {
            if try store.summary(id: id) == nil { return .error(404, "no flow \(id) in this session") }
            return .error(404, "flow \(id) has no stored \(name) body")
        }
        let raw = request.query["raw"].map { $0 == "1" || $0 == "true" } ?? false
        let range = request.headers["Range"]
        if request.method == "GET", raw, request.query["limit"] == nil, range == nil {
            return try rawDownload(id: id, part: part, extent: extent)
        }
        var limit: Int?
        if let text = request.query["limit"] {
            guard let value = Int(text), value >= 0 else { return .error(400, "limit must be a number of bytes") }
            limit = value
        }
        let headers = try messageHeaders(id: id, part: part)
        let contentType = Self.value(of: "content-type", in: headers)
        let contentEncoding = Self.combinedValue(of: "content-encoding", in: headers)
        // A `?limit=` answer reads one byte past its limit (to know there is more); a range needs the length.
        let window = range == nil ? limit.map { $0 < Int.max ? $0 + 1 : $0 } ?? .max : .max
        let cut = range == nil ? limit : nil
        let store = self.store
        let source = { (content: BodySource.Content) in
            BodySource(store: store, id: id, part: part, content: content, decodedLimit: store.configuration.bodyLimit)
        }
        var chosen = source(.bytes)
        var scan: BodyScan
        var isText = false
        var decoded: String?
        var servedType = "application/octet-stream"
        if raw {
            scan = try chosen.scan(window: window, cutAt: cut)
        } else {
            var decodedScan: BodyScan?
            if let contentEncoding, extent.stored > 0,
               ContentDecodingStream(contentEncoding: contentEncoding, outputLimit: 0) != nil {
                let candidate = try source(.decoded(contentEncoding)).scan(window: window, cutAt: cut)
                if !ContentDecoder.isNoDecoding(produced: candidate.count, end: candidate.end) { decodedScan = candidate }
            }
            // A body kept past the flow log's part (spooled) has its wire bytes stored whole, while
            // its text is the log's decoded prefix: the decoded bytes win when they are longer text.
            let textLength = extent.bytesAreText ? extent.stored : extent.textBytes
            if let decodedScan, let textLength, decodedScan.count > textLength,
               decodedScan.isText(complete: decodedScan.end == .complete), let contentEncoding {
                (chosen, scan, decoded) = (source(.decoded(contentEncoding)), decodedScan, contentEncoding)
                isText = true
            } else if textLength != nil {
                chosen = source(extent.bytesAreText ? .bytes : .text)
                scan = try chosen.scan(window: window, cutAt: cut)
                isText = true
                // Text apart from the bytes is their decoding; text that is the bytes was never
                // decoded (a coding that failed, `identity`), whatever the header says.
                decoded = extent.bytesAreText ? nil : contentEncoding
            } else {
                if let decodedScan, let contentEncoding {
                    (chosen, scan, decoded) = (source(.decoded(contentEncoding)), decodedScan, contentEncoding)
                } else {
                    scan = try chosen.scan(window: window, cutAt: cut)
                }
                let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
                    .lowercased()
                if let mediaType, Self.inlineImageTypes.contains(mediaType) {
                    servedType = mediaType
                } else {
                    isText = scan.isText(complete: decoded == nil ? scan.count < window : scan.end == .complete)
                }
            }
            if isText { servedType = "text/plain; charset=utf-8" }
        }
        var (start, length, status) = (0, scan.count, 200)
        var extra: [(String, String)] = []
        if let range {
            guard let (first, last) = Self.byteRange(range, length: scan.count) else {
                return WebResponse(status: 416, headers: [("Content-Range", "bytes */\(scan.count)")])
            }
            extra.append(("Content-Range", "bytes \(first)-\(last)/\(scan.count)"))
            (start, length, status) = (first, last - first + 1, 206)
        } else if let limit, scan.count > limit {
            length = isText ? scan.boundary ?? 0 : limit
            extra.append(("X-DevProxy-Limited", "1"))
        }
        if case .decoded = chosen.content, scan.end == .outputLimit, scan.count >= chosen.decodedLimit {
            extra.append(("X-DevProxy-Decoded-Cut", String(chosen.decodedLimit)))
        }
        let sendsBody = request.method != "HEAD"
        let (from, count) = (start, length)
        var response = WebResponse(status: status, headers: [("Content-Type", servedType),
                                                            ("Cache-Control", "no-store"), ("Accept-Ranges", "bytes"),
                                                            ("Content-Length", String(length))]) { [chosen] stream in
            guard sendsBody, count > 0 else { return }
            var skipped = 0
            var sent = 0
            _ = try? chosen.read(upTo: from + count) { piece in
                let skip = min(from - skipped, piece.count)
                skipped += skip
                let part = min(piece.count - skip, count - sent)
                guard part > 0, let base = piece.baseAddress else { return }
                try stream.write(UnsafeRawBufferPointer(start: base + skip, count: part), flush: false)
                sent += part
            }
            try? stream.flush()
        }
        if raw { response.headers.append(Self.attachment(id: id, name: name)) }
        // Even if someone opens the URL directly, nothing in it may run or load.
        response.headers.append(("Content-Security-Policy", "sandbox; default-src 'none'"))
        response.headers += extra
        response.headers += Self.storedBodyHeaders(extent, contentType: contentType)
        if let decoded { response.headers.append(("X-DevProxy-Decoded", Self.headerSafe(decoded))) }
        return response
    }

    /// `?raw=1` of a whole body: the stored bytes as an attachment, streamed from the store a piece
    /// at a time (the connection closes after it), with the same headers as any body answer.
    private func rawDownload(id: String, part: StoredBody.Part, extent: SessionStore.BodyExtent) throws -> WebResponse {
        let name = part == .request ? "request" : "response"
        let contentType = try Self.value(of: "content-type", in: messageHeaders(id: id, part: part))
        let store = self.store
        var response = WebResponse(status: 200, headers: [
            ("Content-Type", "application/octet-stream"), ("Cache-Control", "no-store"), ("Accept-Ranges", "bytes"),
            ("Content-Length", String(extent.stored)), Self.attachment(id: id, name: name),
            ("Content-Security-Policy", "sandbox; default-src 'none'"),
        ]) { stream in
            _ = try? store.streamBody(id: id, part: part) { try stream.write($0, flush: false) }
            try? stream.flush()
        }
        response.headers += Self.storedBodyHeaders(extent, contentType: contentType)
        return response
    }

    /// `Content-Disposition` for a body saved as a file: `<id>-request.bin` or `<id>-response.bin`.
    private static func attachment(id: String, name: String) -> (String, String) {
        ("Content-Disposition", "attachment; filename=\"\(safeFileName(id))-\(name).bin\"")
    }

    /// What every body answer says about the stored body: its message's content type, its size on
    /// the wire, how much is stored (and whether that is cut), and its SHA-256.
    private static func storedBodyHeaders(_ extent: SessionStore.BodyExtent,
                                          contentType: String?) -> [(String, String)] {
        var headers: [(String, String)] = []
        if let contentType { headers.append(("X-DevProxy-Content-Type", headerSafe(contentType))) }
        headers.append(("X-DevProxy-Body-Size", String(extent.size)))
        headers.append(("X-DevProxy-Stored", String(extent.stored)))
        if extent.stored < extent.size { headers.append(("X-DevProxy-Truncated", "1")) }
        if let sha = extent.sha256 { headers.append(("X-DevProxy-SHA256", sha)) }
        return headers
    }

    /// The first value of header `name` (lower case) in `headers`, any case.
    static func value(of name: String, in headers: [(String, String)]) -> String? {
        headers.first { $0.0.lowercased() == name }?.1
    }

    /// Every value of the list field `name`, joined (`Content-Encoding` on two lines is one list).
    static func combinedValue(of name: String, in headers: [(String, String)]) -> String? {
        let values = headers.filter { $0.0.lowercased() == name }.map(\.1)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The request's or response's header pairs ([] when there are none): from the store's
    /// header rows, else from the stored record with the bodies' text cut first (parsing a 60 MB
    /// record took seconds).
    func messageHeaders(id: String, part: StoredBody.Part) throws -> [(String, String)] {
        if let fields = try store.headerFields(id: id, part: part) { return fields.map { ($0.name, $0.value) } }
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
