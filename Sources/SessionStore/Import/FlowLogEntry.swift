import CertAuthority
import Foundation
import HTTPTypes

/// One flow-log record (a `flows.jsonl` line, parsed with `JSONSerialization`) read as what the
/// store keeps: its summary, header fields and bodies. The HAR importer builds the same shape.
struct FlowLogEntry {
    var record: FlowRecord
    var bodies: FlowBodies

    /// Reads a flow-log object.
    /// - Throws: `SessionStoreError(.importFormat)` naming the missing field.
    init(_ object: [String: Any]) throws {
        guard let id = object["id"] as? String else { throw Self.missing("id") }
        guard let started = object["started"] as? String else { throw Self.missing("started") }
        guard let mode = object["mode"] as? String else { throw Self.missing("mode") }
        guard let server = object["server"] as? [String: Any], let host = server["host"] as? String else {
            throw Self.missing("server.host")
        }
        let request = object["request"] as? [String: Any]
        let response = object["response"] as? [String: Any]
        let requestHeaders = Self.headers(request?["headers"])
        let responseHeaders = Self.headers(response?["headers"])
        let requestBody = (request?["body"] as? [String: Any]).map(Self.body)
        let responseBody = (response?["body"] as? [String: Any]).map(Self.body)
        let signer = object["signer"] as? [String: Any]
        var summary = FlowSummary(
            id: id, started: started, host: host, mode: mode,
            method: request?["method"] as? String, url: request?["url"] as? String,
            status: response?["status"] as? Int,
            httpVersion: (response?["http_version"] ?? request?["http_version"]) as? String,
            errorKind: (object["error"] as? [String: Any])?["kind"] as? String,
            contentType: responseHeaders.first(named: "content-type"),
            requestContentType: requestHeaders.first(named: "content-type"),
            requestSize: requestBody?.size, responseSize: responseBody?.size,
            durationMs: Self.milliseconds(from: started, to: object["ended"] as? String),
            persona: object["persona"] as? String, signerEmail: signer?["email"] as? String,
            signerSerial: signer?["serial"] as? String, verdict: object["verdict"] as? String,
            isWebSocket: mode == "websocket" || object["websocket"] != nil,
            isTunnel: mode == "tunnel" || object["tunnel"] != nil,
            grpcStatus: (object["grpc"] as? [String: Any])?["status"] as? Int)
        summary.phase = .finished
        summary.port = server["port"] as? Int
        // A HAR entry's `_mapped` is here as `mapped` too (`HAREntry`).
        summary.mapped = (object["mapped"] as? [String: Any])?["rule"] as? String
        summary.client = (object["client"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        summary.replayOf = object["replay_of"] as? String
        // A HAR entry's `_client_process` is here as `client_process` too (`HARImport`).
        let process = object["client_process"] as? [String: Any]
        summary.clientProcess = process?["name"] as? String
        summary.clientExecutable = process?["exe"] as? String
        summary.clientPID = process?["pid"] as? Int
        summary.informational = FlowSummary.informationalCodes(
            ((object["informational"] as? [Any]) ?? []).compactMap { ($0 as? [String: Any])?["status"] as? Int })
        record = FlowRecord(summary: summary, requestHeaders: requestHeaders, responseHeaders: responseHeaders)
        bodies = FlowBodies(request: requestBody, response: responseBody)
    }

    private static func missing(_ field: String) -> SessionStoreError {
        SessionStoreError(.importFormat, "not a flow record: missing field `\(field)`")
    }

    /// `[[name, value]]` pairs; anything else is no headers.
    static func headers(_ value: Any?) -> FieldPairs {
        var fields = FieldPairs()
        for pair in value as? [[Any]] ?? [] {
            guard pair.count == 2, let name = pair[0] as? String, let value = pair[1] as? String else { continue }
            fields.append(name: name, value: value)
        }
        return fields
    }

    /// A logged body: `text` (decoded) or `base64` of the kept prefix, with the whole's size and hash.
    static func body(_ object: [String: Any]) -> StoredBody {
        let text = object["text"] as? String
        var bytes = text.map { Array($0.utf8) }
            ?? (object["base64"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
        // Text read in a declared charset (`charset`, not a content coding) is written back in it:
        // the bytes as they were sent (download, raw export, curl), not their UTF-8 reading.
        if let text, object["decoded"] == nil, let name = object["charset"] as? String,
           let charset = BodyCharset(contentType: "text/plain; charset=" + name), let original = charset.bytes(of: text) {
            bytes = original
        }
        return StoredBody(bytes: bytes, size: object["size"] as? Int, sha256: object["sha256"] as? String, text: text)
    }

    /// `ended - started` in milliseconds, from RFC 3339 timestamps with fractional seconds.
    static func milliseconds(from started: String, to ended: String?) -> Double? {
        guard let ended, let start = FlowTimestamps.date(started), let end = FlowTimestamps.date(ended) else { return nil }
        return (end.timeIntervalSince(start) * 1000).rounded()
    }
}

/// RFC 3339 timestamps as the flow log and HAR write them.
enum FlowTimestamps {
    /// The date `text` names (with or without fractional seconds), or nil.
    static func date(_ text: String) -> Date? {
        // Every finished flow's two timestamps pass here (the writer reads each flow-log line):
        // the hand-written parse first, since an ISO8601DateFormatter sets up ICU on each use and
        // cost more than the rest of a proxied HTTP/2 request (perf, bench/run h2ka16).
        if let date = ISO8601.date(text) { return date }
        // Other spellings (imported HAR files): a formatter per call, as it is not Sendable.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// `date` as the flow log writes it: UTC, milliseconds.
    static func string(_ date: Date) -> String {
        ISO8601.milliseconds(date)
    }
}
