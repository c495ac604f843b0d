import CertAuthority
import Foundation
import SessionStore

/// Turns flows into an HTTP Archive (HAR 1.2) that Chrome DevTools, Firefox and Charles import.
///
/// Failed flows become entries with status 0 and `_error` (DevTools shows them as failed);
/// tunnels become `CONNECT` entries with `_mode: tunnel` and `_tunnel`.
public enum HARWriter {
    /// `creator.version` when none is given.
    public static let defaultCreatorVersion = DevProxyVersion.current

    /// The archive for `flows`, the oldest request first, as HAR 1.2 prefers and browsers export
    /// it (`--har` and a flow log have flows in the order they finished: a long request that
    /// started first used to come after those it overlapped). Flows that started in the same
    /// millisecond keep the order given; one whose `started` does not parse goes last.
    /// - Parameter sizes: by flow id, the sizes a HAR gave for flows imported from one, given back
    ///   as they were (`HARSizes`).
    /// - Parameter notes: by flow id, the mark and comment given in the web UI: the entry's
    ///   `_mark` and its `comment` (HAR 1.2's).
    public static func document(for flows: [Flow], creatorVersion: String = defaultCreatorVersion,
                                sizes: [String: HARSizes] = [:], notes: [String: FlowNote] = [:]) -> HARDocument {
        HARDocument(log: .init(version: "1.2", creator: .init(name: "DevProxy", version: creatorVersion),
                               entries: byStart(flows).map { flow in
            var entry = entry(for: flow, sizes: sizes[flow.id])
            entry.comment = notes[flow.id]?.comment
            entry.mark = notes[flow.id]?.mark?.rawValue
            return entry
        }))
    }

    /// `flows` in the order they started; a stable sort (an unparseable `started` sorts last).
    static func byStart(_ flows: [Flow]) -> [Flow] {
        let starts = flows.map { ISO8601.date($0.started)?.timeIntervalSince1970 ?? .infinity }
        guard zip(starts, starts.dropFirst()).contains(where: { $0 > $1 }) else { return flows }
        return flows.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }.map { flows[$0] }
    }

    /// The archive as pretty-printed JSON, keys sorted, slashes unescaped.
    public static func encode(_ flows: [Flow], creatorVersion: String = defaultCreatorVersion,
                              comment: String? = nil, sizes: [String: HARSizes] = [:],
                              notes: [String: FlowNote] = [:]) throws -> [UInt8] {
        let encoder = FlowJSON.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var document = document(for: flows, creatorVersion: creatorVersion, sizes: sizes, notes: notes)
        document.log.comment = comment
        var bytes = [UInt8](try encoder.encode(document))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Writes the archive to `path` atomically, mode 0600 (it holds decrypted traffic).
    /// - Throws: `FlowLogError` when the file cannot be written.
    public static func write(_ flows: [Flow], to path: String, creatorVersion: String = defaultCreatorVersion) throws {
        let bytes: [UInt8]
        do {
            bytes = try encode(flows, creatorVersion: creatorVersion)
        } catch {
            throw FlowLogError(.io, "cannot encode the HAR for \(path): \(error)")
        }
        try FlowFile.writeAtomically(bytes, to: path)
    }

    /// One HAR entry for one flow; `sizes` those its HAR gave, for a flow imported from one.
    static func entry(for flow: Flow, sizes: HARSizes? = nil) -> HARDocument.Entry {
        let timings = timings(for: flow.timings)
        let time = [timings.blocked, timings.dns, timings.connect, timings.send, timings.wait, timings.receive]
            .filter { $0 >= 0 }.reduce(0, +)
        return HARDocument.Entry(
            startedDateTime: flow.started, time: time, request: request(for: flow, sizes: sizes?.request),
            response: response(for: flow, sizes: sizes?.response),
            cache: .init(), timings: timings, serverIPAddress: flow.server.address.map(ipAddress(of:)),
            connection: flow.client, flowID: flow.id, mode: flow.mode.rawValue, error: flow.error, tunnel: flow.tunnel,
            grpc: flow.grpc, webSocketMessages: webSocketMessages(for: flow),
            resourceType: flow.mode == .websocket ? "websocket" : nil, mapped: flow.mapped, intercept: flow.intercept,
            interceptResponse: flow.interceptResponse, throttle: flow.throttle, clientProcess: flow.clientProcess)
    }

    /// The flow's text and binary WebSocket messages in Chrome's `_webSocketMessages` form; nil
    /// for a flow without any.
    static func webSocketMessages(for flow: Flow) -> [HARDocument.WebSocketMessage]? {
        guard let records = flow.websocket else { return nil }
        let started = ISO8601.date(flow.started)?.timeIntervalSince1970 ?? 0
        let messages = records.compactMap { record -> HARDocument.WebSocketMessage? in
            let opcode = record.opcode == "text" ? 1 : record.opcode == "binary" ? 2 : 0
            guard opcode != 0 else { return nil }
            let cut = record.truncated == true
            return HARDocument.WebSocketMessage(type: record.direction == "client_to_server" ? "send" : "receive",
                                                time: record.time ?? started, opcode: opcode,
                                                data: record.text ?? record.base64 ?? "",
                                                truncated: cut ? true : nil, length: cut ? record.length : nil)
        }
        return messages.isEmpty ? nil : messages
    }

    /// HAR's phases from the flow's: HAR counts TLS inside `connect` ("if this field is
    /// defined then the time is also included in the connect field") and requires send,
    /// wait and receive to be non-negative.
    static func timings(for timings: Flow.Timings) -> HARDocument.Timings {
        let connect = timings.connect < 0 && timings.tls < 0 ? -1 : max(timings.connect, 0) + max(timings.tls, 0)
        return HARDocument.Timings(blocked: -1, dns: -1, connect: connect, send: max(timings.send, 0),
                                   wait: max(timings.wait, 0), receive: max(timings.receive, 0),
                                   ssl: timings.tls < 0 ? -1 : timings.tls)
    }

    /// `203.0.113.5` from `203.0.113.5:443`, `::1` from `[::1]:443`.
    static func ipAddress(of address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        guard address.filter({ $0 == ":" }).count == 1, let colon = address.lastIndex(of: ":") else { return address }
        return String(address[..<colon])
    }
}
