import Foundation
import HTTPTypes

extension SessionImport {
    /// Stores every entry of the HAR 1.2 file at `path` in `store`, then flushes.
    ///
    /// Each entry becomes a flow-log-shaped record (DevProxy's `_flowId`, `_mode`, `_error`,
    /// `_tunnel` and `_grpc` fields are used when present, and a WebSocket's `_webSocketMessages`
    /// as Chrome's DevTools and DevProxy export them), so the UI shows imported and captured flows
    /// alike.
    /// - Throws: `SessionStoreError` when the file is unreadable or not a HAR document.
    public static func har(at path: String, into store: SessionStore) throws -> Report {
        try har(Data(try contents(of: path)), path: path, into: store)
    }

    /// Stores every entry of the HAR document `data` (read from `path`) in `store`, then flushes.
    static func har(_ data: Data, path: String, into store: SessionStore) throws -> Report {
        let data = data.starts(with: byteOrderMark) ? data.dropFirst(3) : data
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            // Where it broke (a file cut short, a lone surrogate escape), not only that it did.
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            throw SessionStoreError(.importFormat, "\(path) is not valid JSON, so not a HAR file it can read: \(detail)")
        }
        guard let document = parsed as? [String: Any], let log = document["log"] as? [String: Any],
              let entries = log["entries"] as? [[String: Any]] else {
            throw SessionStoreError(.importFormat, "\(path) is not a HAR file (no log.entries)")
        }
        var report = Report(flows: 0, problems: [])
        var ids = Set<String>()
        var notes: [(id: String, note: FlowNote)] = []
        // In the order the requests started, as the list shows a live session's (a HAR merged
        // from others, or written by a tool in another order, was listed in file order); ties
        // keep the file's order.
        let starts = entries.map { ($0["startedDateTime"] as? String).flatMap(FlowTimestamps.date) ?? .distantPast }
        let ordered = entries.indices.sorted { starts[$0] < starts[$1] || (starts[$0] == starts[$1] && $0 < $1) }
        for index in ordered {
            let entry = entries[index]
            do {
                var object = try HAREntry.flowObject(entry, index: index)
                object["id"] = SessionImport.uniqueID(object["id"] as? String, fallback: "har-\(index + 1)", seen: &ids)
                let stored = try FlowLogEntry(object)
                let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                store.importFinished(stored.record, json: String(decoding: json, as: UTF8.self), bodies: stored.bodies)
                report.flows += 1
                if let note = HAREntry.note(entry), let id = object["id"] as? String { notes.append((id, note)) }
            } catch let error as SessionStoreError {
                report.problems.append(Problem(number: index + 1, reason: error.reason, unit: "entry"))
            }
        }
        store.flush()
        // Once the flows are in: a note is kept by its flow's row.
        for (id, note) in notes {
            try store.setNote(id: id, mark: .set(note.mark), comment: .set(note.comment))
        }
        return report
    }
}

/// One HAR entry rewritten as a flow-log object.
enum HAREntry {
    /// The entry's note: HAR 1.2's `comment` (what DevProxy, Charles and others write there; cut
    /// to `FlowNote.maximumCommentLength`) and DevProxy's `_mark` (a colour it knows, else none);
    /// nil when it has neither.
    static func note(_ entry: [String: Any]) -> FlowNote? {
        let comment = (entry["comment"] as? String).map { String($0.prefix(FlowNote.maximumCommentLength)) }
        let note = FlowNote(mark: (entry["_mark"] as? String).flatMap(FlowMark.init(name:)), comment: comment)
        return note.isEmpty ? nil : note
    }

    /// - Throws: `SessionStoreError(.importFormat)` when the entry lacks its request.
    static func flowObject(_ entry: [String: Any], index: Int) throws -> [String: Any] {
        guard let request = entry["request"] as? [String: Any], let method = request["method"] as? String,
              let url = request["url"] as? String, let started = entry["startedDateTime"] as? String else {
            throw SessionStoreError(.importFormat, "not a HAR entry: missing request, url or startedDateTime")
        }
        let components = URLComponents(string: url)
        let scheme = components?.scheme?.lowercased() ?? "http"
        let secure = scheme == "https" || scheme == "wss"
        let messages = entry["_webSocketMessages"] as? [[String: Any]]
        let socket = entry["_resourceType"] as? String == "websocket" || messages != nil || scheme == "ws" || scheme == "wss"
        let mode = entry["_mode"] as? String ?? (socket ? "websocket" : secure ? "https" : "http")
        // Flows say when in UTC with milliseconds; a HAR may use an offset (Charles: `+02:00`).
        let start = FlowTimestamps.date(started)
        let port = components?.port ?? (secure ? 443 : 80)
        var server: [String: Any] = ["host": components?.host ?? "", "port": port]
        if let ip = entry["serverIPAddress"] as? String, !ip.isEmpty {
            // Older Chrome DevTools wrote an IPv6 address in its brackets.
            server["address"] = URIHost.authority(host: ip, port: port)
        }
        var object: [String: Any] = [
            "id": entry["_flowId"] as? String ?? "har-\(index + 1)",
            "started": start.map(FlowTimestamps.string) ?? started,
            "client": entry["connection"] as? String ?? "",
            "mode": mode,
            "server": server,
            "timings": timings(entry["timings"] as? [String: Any]),
        ]
        // HAR's `time` is milliseconds; a value no exchange takes (negative, not finite, years) is left out.
        if let time = entry["time"] as? Double, (0...1e11).contains(time), let start {
            object["ended"] = FlowTimestamps.string(start.addingTimeInterval(time / 1000))
        } else {
            // A flow has an end; without a usable `time` it is its start (its record did not
            // decode as a flow without one).
            object["ended"] = object["started"]
        }
        if mode != "tunnel" {
            let (pseudo, headers) = splitPseudo(nameValues(request["headers"]))
            var requestObject: [String: Any] = [
                "method": method, "url": url, "http_version": version(request["httpVersion"]), "headers": headers,
            ]
            if !pseudo.isEmpty { requestObject["pseudo_headers"] = pseudo }
            if let post = request["postData"] as? [String: Any], let text = post["text"] as? String ?? formText(post) {
                // `_encoding`: where DevProxy's export marks a base64 request body (HAR 1.2 has
                // `encoding` only on a response's content); read back as the bytes, not the base64.
                let encoding = post["encoding"] as? String ?? post["_encoding"] as? String
                requestObject["body"] = body(text: text, encoding: encoding, size: request["bodySize"] as? Int)
            }
            object["request"] = requestObject
        }
        if let response = entry["response"] as? [String: Any], let status = response["status"] as? Int, status > 0 {
            let (pseudo, headers) = splitPseudo(nameValues(response["headers"]))
            var responseObject: [String: Any] = [
                "status": status, "reason": response["statusText"] as? String ?? "",
                "http_version": version(response["httpVersion"]), "headers": headers,
            ]
            if !pseudo.isEmpty { responseObject["pseudo_headers"] = pseudo }
            if let content = response["content"] as? [String: Any], let text = content["text"] as? String {
                let size = (response["bodySize"] as? Int).flatMap { $0 >= 0 ? $0 : nil } ?? content["size"] as? Int
                responseObject["body"] = body(text: text, encoding: content["encoding"] as? String, size: size)
            }
            object["response"] = responseObject
        }
        // The sizes the HAR gave, for its export to give them back (`HARSizes`): the flow keeps one
        // body size, and a gzip body's three (wire, decoded, saved) came back as one.
        var sizes: [String: Any] = [:]
        if object["request"] != nil, let request = sizeFields(request, content: nil) { sizes["request"] = request }
        if let response = entry["response"] as? [String: Any], object["response"] != nil,
           let fields = sizeFields(response, content: response["content"] as? [String: Any]) {
            sizes["response"] = fields
        }
        if !sizes.isEmpty { object["har_sizes"] = sizes }
        for key in ["error", "tunnel", "grpc", "mapped", "intercept"] { if let value = entry["_\(key)"] { object[key] = value } }
        if let value = entry["_interceptResponse"] { object["intercept_response"] = value }
        if let value = entry["_client_process"] { object["client_process"] = value }
        // Chrome writes a failed request's `_error` as its net error (`net::ERR_CONNECTION_REFUSED`),
        // Playwright as `_failureText`, both on the response object (DevTools' `_buildResponse`;
        // a Playwright HAR of Chromium) and some tools on the entry; DevProxy's own is an object
        // on the entry, kept as it is.
        let failed = entry["_error"] is [String: Any] ? nil : entry["response"] as? [String: Any]
        if let text = entry["_error"] as? String ?? entry["_failureText"] as? String ?? failed?["_error"] as? String
            ?? failed?["_failureText"] as? String, !text.isEmpty {
            object["error"] = ["kind": "request_failed", "message": text + " (as the HAR's tool recorded it)"]
        } else if object["response"] == nil, object["error"] == nil, mode != "tunnel" {
            // Firefox and others write a request that got no answer (blocked, cancelled, failed) as
            // `status: 0` with no reason: a finished flow without a response or an error, which the
            // UI showed as "waiting for the response…" in a file where nothing more will come.
            object["error"] = ["kind": "request_failed",
                               "message": "the HAR records no response for this request (status 0: blocked, cancelled "
                                   + "or failed before an answer, as its tool wrote it)"]
        }
        if let messages { object["websocket"] = messages.compactMap(webSocketMessage) }
        return object
    }

    /// One of `_webSocketMessages` (`type` send or receive, `time`, `opcode` 1 text or 2 binary,
    /// `data` the text or base64; DevProxy's `_truncated` and `_length` for a message kept in part)
    /// as the flow log's `websocket[]` record; nil for one without its fields.
    private static func webSocketMessage(_ message: [String: Any]) -> [String: Any]? {
        guard let type = message["type"] as? String, let opcode = message["opcode"] as? Int,
              let data = message["data"] as? String else { return nil }
        var record: [String: Any] = ["direction": type == "send" ? "client_to_server" : "server_to_client"]
        if opcode == 1 {
            record["opcode"] = "text"
            record["text"] = data
            record["length"] = message["_length"] as? Int ?? data.utf8.count
        } else {
            // The names the flow log gives opcodes (RFC 6455 §5.2).
            record["opcode"] = [2: "binary", 8: "close", 9: "ping", 10: "pong"][opcode]
                ?? "opcode 0x" + String(opcode, radix: 16, uppercase: true)
            record["base64"] = data
            record["length"] = message["_length"] as? Int ?? Data(base64Encoded: data)?.count ?? 0
        }
        if let time = message["time"] as? Double { record["time"] = time }
        if message["_truncated"] as? Bool == true { record["truncated"] = true }
        return record
    }

    /// A URL-encoded form's body from `postData.params` when the HAR has no `text` (the HAR 1.2
    /// spec makes the two exclusive, and Charles and Firefox write `params` alone); nil for
    /// anything else (a multipart form's files are not in its params).
    private static func formText(_ post: [String: Any]) -> String? {
        guard let params = post["params"] as? [[String: Any]], !params.isEmpty,
              (post["mimeType"] as? String ?? "").lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            return nil
        }
        // application/x-www-form-urlencoded as browsers write it: ASCII letters, digits and `-._*`
        // as they are, a space as `+`, every other byte percent-encoded.
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._* ")
        let encode = { (text: String) in
            (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text).replacingOccurrences(of: " ", with: "+")
        }
        return params.compactMap { param in
            (param["name"] as? String).map { "\(encode($0))=\(encode(param["value"] as? String ?? ""))" }
        }.joined(separator: "&")
    }

    /// A HAR's `httpVersion` as DevProxy's flows write it: browsers and tools spell HTTP/2 as
    /// `http/2.0` (Chrome), `HTTP/2.0` (Playwright), `h2` or `HTTP/2` (Firefox, DevProxy).
    static func version(_ value: Any?) -> String {
        guard let text = value as? String, !text.isEmpty else { return "HTTP/1.1" }
        switch text.lowercased() {
        case "h2", "http/2", "http/2.0": return "HTTP/2"
        case "h3", "http/3", "http/3.0": return "HTTP/3"
        case "http/1.1", "http/1.0", "http/0.9": return text.uppercased()
        default: return text
        }
    }

    /// Chrome and Playwright list an HTTP/2 message's pseudo-header fields (`:authority`,
    /// `:status`) among its headers; a flow keeps them apart, as the proxy records them.
    private static func splitPseudo(_ fields: [[String]]) -> (pseudo: [[String]], headers: [[String]]) {
        var pseudo: [[String]] = [], headers: [[String]] = []
        for field in fields {
            if field.first?.hasPrefix(":") == true { pseudo.append(field) } else { headers.append(field) }
        }
        return (pseudo, headers)
    }

    /// A message's sizes as the HAR gave them (`headersSize`, `bodySize`; a response's
    /// `content.size`, `content.compression` and Chrome's `_transferSize`), in `HARSizes`' keys;
    /// nil when it gave none. Only whole numbers are sizes.
    private static func sizeFields(_ message: [String: Any], content: [String: Any]?) -> [String: Int]? {
        func whole(_ value: Any?) -> Int? {
            if let int = value as? Int { return int }
            guard let double = value as? Double, double.isFinite, double == double.rounded(), abs(double) < 1e15 else {
                return nil
            }
            return Int(double)
        }
        var fields: [String: Int] = [:]
        fields["headers_size"] = whole(message["headersSize"])
        fields["body_size"] = whole(message["bodySize"])
        fields["content_size"] = whole(content?["size"])
        fields["compression"] = whole(content?["compression"])
        fields["transfer_size"] = whole(message["_transferSize"])
        return fields.isEmpty ? nil : fields
    }

    /// HAR's `[{name, value}]` as the flow log's `[[name, value]]`.
    private static func nameValues(_ value: Any?) -> [[String]] {
        (value as? [[String: Any]])?.compactMap { field in
            guard let name = field["name"] as? String, let value = field["value"] as? String else { return nil }
            return [name, value]
        } ?? []
    }

    /// HAR's phases as the flow's: HAR counts `ssl` inside `connect` (and `dns` before it, which
    /// the flow counts in `connect`); -1 (or anything not a number) is a phase that did not happen.
    private static func timings(_ har: [String: Any]?) -> [String: Double] {
        func phase(_ name: String) -> Double {
            guard let value = har?[name] as? Double, value.isFinite, value >= 0, value < 1e11 else { return -1 }
            return value
        }
        let ssl = phase("ssl"), connect = phase("connect"), dns = phase("dns")
        var flowConnect = connect < 0 ? -1 : max(connect - max(ssl, 0), 0)
        if dns > 0 { flowConnect = max(flowConnect, 0) + dns }
        return ["connect": flowConnect, "tls": ssl, "send": phase("send"), "wait": phase("wait"), "receive": phase("receive")]
    }

    /// A HAR body (text, or base64 when `encoding` says so) as a flow-log body object.
    private static func body(text: String, encoding: String?, size: Int?) -> [String: Any] {
        let size = size.flatMap { $0 >= 0 ? $0 : nil }   // -1: unknown (HAR 1.2)
        if encoding == "base64", let data = Data(base64Encoded: text) {
            return ["base64": text, "size": size ?? data.count, "sha256": SHA256Hex.digest([UInt8](data)),
                    "truncated": false]
        }
        let bytes = Array(text.utf8)
        return ["text": text, "size": size ?? bytes.count, "sha256": SHA256Hex.digest(bytes), "truncated": false]
    }
}
