import DevProxy
import Foundation
import QRCode
import SessionStore

/// The routes (docs/web-ui.md, "Routes").
extension WebUI {
    func route(_ request: WebRequest) -> WebResponse {
        let segments = request.segments
        guard segments.first == "api" else { return staticFile(request) }
        let rest = Array(segments.dropFirst())
        let method = request.method
        do {
            switch (method, rest.count, rest.first ?? "") {
            case ("GET", 1, "info"): return info()
            case ("GET", 1, "error-kinds"):
                let kinds = FlowErrorKind.allCases.map { ($0.rawValue, $0.explanation) }
                return .json(object: Dictionary(uniqueKeysWithValues: kinds))
            case ("GET", 1, "flows"): return try flowList(request)
            case ("GET", 2, "flows"): return try flow(rest[1], preview: request.query["preview"].flatMap { Int($0) })
            case ("GET", 4, "flows") where rest[3] == "body" && (rest[2] == "request" || rest[2] == "response"):
                return try body(request, id: rest[1], part: rest[2] == "request" ? .request : .response)
            case ("GET", 4, "flows") where rest[3] == "form" && (rest[2] == "request" || rest[2] == "response"):
                return try form(id: rest[1], part: rest[2] == "request" ? .request : .response)
            case ("GET", 4, "flows") where rest[3] == "protobuf" && (rest[2] == "request" || rest[2] == "response"):
                return try protobuf(id: rest[1], part: rest[2] == "request" ? .request : .response)
            case ("GET", 3, "flows") where rest[2] == "export": return try export(request, id: rest[1])
            case ("POST", 3, "flows") where rest[2] == "replay": return try replay(id: rest[1])
            case ("POST", 3, "flows") where rest[2] == "repeat": return try startRepeat(request, id: rest[1])
            case ("GET", 2, "repeats"): return repeatProgress(id: rest[1])
            case ("DELETE", 2, "repeats"): return cancelRepeat(id: rest[1])
            case ("PUT", 3, "flows") where rest[2] == "mark": return try setNote(request, id: rest[1])
            case ("POST", 1, "replay"): return try replayEdited(request)
            case ("GET", 2, "export") where rest[1] == "har": return try exportHAR(request)
            case ("POST", 1, "clear"): return clear()
            case ("GET", 1, "events"): return try eventStream(request)
            case ("GET", 1, "ca"): return certificateAuthority()
            case ("GET", 1, "pinning"): return try pinning()
            case ("GET", 2, "onboarding") where rest[1] == "qr.svg": return onboardingQRCode()
            case (_, _, "intercept"): return intercept(request, rest)
            case (_, 1, "throttle"): return throttle(request)
            case (_, 1...2, "rules"): return rules(request, rest)
            case (_, _, "wireguard"): return wireGuard(request, rest)
            default:
                if Self.knownRoutes.contains(rest.first ?? "") && Self.exists(rest) {
                    return .error(405, "\(method) is not allowed on \(request.path)")
                }
                return .error(404, "no API route \(method) \(request.path); see docs/web-ui.md")
            }
        } catch let error as SessionStoreError where error.code == .bodyFile {
            // A session opened without its `-bodies` directory: that body is not here; nothing failed.
            return .error(404, error.reason)
        } catch let error as SessionStoreError where error.code == .note {
            // A session file that is not writable: nothing failed, the mark cannot be kept.
            return .error(409, error.reason)
        } catch let error as SessionStoreError where error.code == .filterTimedOut {
            // The filter's fault, not the store's: said like a filter that does not parse.
            return .error(400, error.reason)
        } catch let error as SessionStoreError {
            return .error(500, "the session store failed: \(error.reason)")
        } catch {
            return .error(500, "\(error)")
        }
    }

    private static let knownRoutes: Set<String> = ["info", "flows", "replay", "export", "clear", "events", "ca",
                                                   "pinning", "error-kinds", "repeats"]

    /// Whether the path is a route under some method (so the answer is 405, not 404).
    private static func exists(_ rest: [String]) -> Bool {
        switch (rest.count, rest.first ?? "") {
        case (1, _): return true
        case (2, "flows"), (2, "export"), (2, "repeats"): return true
        case (3, "flows"): return ["export", "replay", "mark", "repeat"].contains(rest[2])
        case (4, "flows"): return ["body", "form", "protobuf"].contains(rest[3])
        default: return false
        }
    }

    /// `GET /` and the embedded files, with ETag revalidation.
    private func staticFile(_ request: WebRequest) -> WebResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .error(405, "\(request.method) is not allowed on \(request.path)")
        }
        guard let asset = WebAssets.asset(forPath: request.path) else {
            return .error(404, "no file \(request.path) in the web UI")
        }
        let headers = [("Content-Type", asset.contentType), ("Cache-Control", "no-cache"), ("ETag", asset.etag)]
        if let tags = request.headers["If-None-Match"], tags == "*"
            || tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) {
            return WebResponse(status: 304, headers: headers)
        }
        return WebResponse(status: 200, headers: headers, body: asset.bytes)
    }

    /// `GET /api/info`.
    private func info() -> WebResponse {
        let drops = store.drops
        var object: [String: Any] = [
            "version": version,
            "mode": proxy == nil ? "viewer" : "proxy",
            "proxy": (proxy?.listeners ?? []).map { ["mode": $0.mode, "address": $0.address] },
            "session": store.path,
            "read_only": store.isReadOnly,
            // Whether flows can be marked and commented, and if not why (a session file not writable).
            "can_mark": store.noteRefusal == nil,
            "mark_refusal": store.noteRefusal.map { $0 as Any } ?? NSNull(),
            // Through the regular listener: none in a socks5- or reverse-only run.
            "replay": proxy.map { $0.replayPort != 0 } ?? false,
            "flows": (try? store.count()) ?? 0,
            "store_drops": ["records": drops.records, "bodies": drops.bodies],
            "store_error": store.writeFailure.map { $0.reason as Any } ?? NSNull(),
        ]
        // `devproxy web FILE`: what it imported and the records it skipped (the page says so).
        if let imported = configuration.imported { object["import"] = imported.json }
        // `--throttle` or the throttle menu: the page may say why every flow is slow. Absent at full speed.
        if let conditions = proxy?.throttleSwitch {
            if let setting = conditions.setting { object["throttle"] = Self.throttleObject(setting) }
            object["can_throttle"] = true
        } else if let throttle = proxy?.throttle {
            object["throttle"] = ["profile": throttle.profile.name, "description": throttle.profile.description,
                                  "hosts": throttle.hosts] as [String: Any]
        }
        guard let onboarding = proxy?.onboardingURL else { return .json(object: object) }
        // A loopback address is offered without its QR code: a phone would open 127.0.0.1 as itself.
        if proxy?.onboardingLoopback == true {
            return .json(object: object.merging(["onboarding_url": onboarding, "onboarding_loopback": true]) { $1 })
        }
        return .json(object: object.merging(["onboarding_url": onboarding, "qr_svg_path": "/api/onboarding/qr.svg"]) { $1 })
    }

    /// `GET /api/onboarding/qr.svg`: the QR code of the onboarding page's address (DevProxy's own
    /// markup, not captured content), 404 without a proxy.
    private func onboardingQRCode() -> WebResponse {
        guard let url = proxy?.onboardingURL, let svg = try? QRCode.svg(for: url) else {
            return .error(404, "no onboarding address: the UI runs without a proxy")
        }
        return WebResponse(status: 200, headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "no-cache")],
                           body: Array(svg.utf8))
    }

    /// The `filter` query parameter, parsed (nil when absent or blank), or the 400 that names the
    /// column where it does not parse: the list, the event stream and the export all take one.
    /// `~verdict` terms are resolved to the flows judged so (`resolvingVerdicts`).
    func filter(of request: WebRequest) throws -> (filter: FilterExpression?, refusal: WebResponse?) {
        guard let text = request.query["filter"], !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            return (nil, nil)
        }
        let parsed: FilterExpression
        do {
            parsed = try FilterExpression(parsing: text)
        } catch {
            return (nil, .error(400, error.description, extra: ["column": error.column]))
        }
        return (try resolvingVerdicts(parsed), nil)
    }

    /// `GET /api/flows?filter=&limit=&cursor=&order=&sort=`.
    private func flowList(_ request: WebRequest) throws -> WebResponse {
        let (filter, refusal) = try filter(of: request)
        if let refusal { return refusal }
        var limit = 100
        if let text = request.query["limit"] {
            guard let value = Int(text), (1...SessionStore.maximumPageSize).contains(value) else {
                return .error(400, "limit must be a number from 1 to \(SessionStore.maximumPageSize)")
            }
            limit = value
        }
        var cursor: FlowCursor?
        if let text = request.query["cursor"], !text.isEmpty {
            guard let value = FlowCursor(text) else { return .error(400, "cursor \(text) is not one this API gave") }
            cursor = value
        }
        let order: FlowOrder
        switch request.query["order"] {
        case nil, "", "newest": order = .newestFirst
        case "oldest": order = .oldestFirst
        case let other?: return .error(400, "order must be newest or oldest, not \(other)")
        }
        var sort: FlowSort?
        if let text = request.query["sort"], !text.isEmpty {
            guard let value = FlowSort(text) else {
                let names = FlowSort.Column.allCases.map(\.rawValue).joined(separator: ", ")
                return .error(400, "sort must be one of \(names), with - before it for descending (-size), not \(text)")
            }
            guard request.query["order"]?.isEmpty != false else { return .error(400, "give sort or order, not both") }
            sort = value
        }
        let page = try store.flows(filter: filter, limit: limit, cursor: cursor, order: order, sort: sort)
        let origins = try store.replayOrigins(ids: page.flows.map(\.id))
        var json = JSONText(capacity: page.flows.count * 420 + 64)
        json.raw("{\"flows\":")
        json.raw(FlowSummary.jsonArray(page.flows, origins: origins))
        json.raw(",\"total\":")
        json.number(page.total)
        json.raw(",\"next_cursor\":")
        json.string(page.nextCursor?.description)
        // What `total` counted up to: a live flow numbered above it is new since (the list counts it).
        json.raw(",\"max_seq\":")
        json.raw(String(page.newestSequence))
        json.raw("}")
        return .json(json.text)
    }

    /// `GET /api/events?filter=EXPR&last_event_id=N`: the live stream, filtered when asked. The
    /// `Last-Event-ID` header (an `EventSource` reconnecting) wins over the query's id.
    private func eventStream(_ request: WebRequest) throws -> WebResponse {
        let (filter, refusal) = try filter(of: request)
        if let refusal { return refusal }
        let resume = request.headers["Last-Event-ID"] ?? request.query["last_event_id"]
        return events.stream(lastEventID: resume, filter: filter)
    }

    /// `GET /api/flows/ID`: the stored record, or for a flow still in progress its summary and
    /// the header fields known so far (the request's, and the response's once its head came), so
    /// a request that hangs can be read while it hangs, and for a long gRPC call its record so
    /// far (`record`: the messages until now).
    /// `?preview=N`: bodies' text cut to N characters (`FlowRecordPreview`).
    private func flow(_ id: String, preview: Int?) throws -> WebResponse {
        if let stored = try store.flowJSON(id: id) {
            let record = try typedLater(stored, id: id)
            guard let preview else { return .json(try withNote(record, id: id)) }
            return .json(try withNote(FlowRecordPreview.cut(record, limit: min(max(preview, 0), 1 << 20)), id: id))
        }
        guard let summary = try store.summary(id: id) else { return .error(404, "no flow \(id) in this session") }
        var json = JSONText()
        json.raw("{\"id\":")
        json.string(id)
        json.raw(",\"pending\":true,\"summary\":")
        summary.write(to: &json, replayOf: nil)
        // Whether its request was received whole (Replay, Copy as and Edit and resend take it then),
        // or why not yet (`runningRequest`).
        switch try runningRequest(id) {
        case .complete?: json.raw(",\"request_complete\":true")
        case .incomplete(let reason)?:
            json.raw(",\"request_complete\":false,\"request_waits\":")
            json.string(reason)
        case nil: break
        }
        if let fields = try store.headerFields(id: id, part: .request) {
            json.raw(",\"request\":{\"headers\":")
            Self.write(fields, to: &json)
            json.raw("}")
        }
        if summary.status != nil, let fields = try store.headerFields(id: id, part: .response) {
            json.raw(",\"response\":{\"headers\":")
            Self.write(fields, to: &json)
            json.raw("}")
        }
        if let partial = try store.partialJSON(id: id) {
            // A long stream's record so far. Its bodies hold at most their in-memory head, so the
            // preview gives them room (64 KiB): a live event stream shows more than its first lines.
            json.raw(",\"record\":")
            json.raw(preview.map { FlowRecordPreview.cut(partial, limit: max(min(max($0, 0), 1 << 20), Self.partialPreview)) }
                     ?? partial)
        }
        json.raw("}")
        return .json(try withNote(json.text, id: id))
    }

    /// The least a running flow's record so far keeps of each body when a preview is asked for.
    static let partialPreview = 64 * 1024

    /// Header fields as the flow log writes them: `[[name, value], …]`.
    static func write(_ fields: [(name: String, value: String)], to json: inout JSONText) {
        json.raw("[")
        for (index, field) in fields.enumerated() {
            json.raw(index == 0 ? "[" : ",[")
            json.string(field.name)
            json.raw(",")
            json.string(field.value)
            json.raw("]")
        }
        json.raw("]")
    }

    /// `POST /api/clear`.
    private func clear() -> WebResponse {
        guard !store.isReadOnly else {
            return .error(409, "this session is open read-only (devproxy web FILE); nothing to clear")
        }
        store.clear()
        return .json("{\"cleared\":true}")
    }
}
