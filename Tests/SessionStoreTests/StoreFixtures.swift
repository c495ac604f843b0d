import HTTPTypes
import Foundation
import SessionStore
import TestSupport

/// Flows for the store's tests, built in code, and a store in a temporary directory.
enum StoreFixtures {
    /// A finished flow's record with the fields the filters look at.
    static func record(_ id: String, host: String = "api.example.com", method: String? = "GET", path: String = "/",
                       status: Int? = 200, mode: String = "https", requestHeaders: [[String]] = [],
                       responseHeaders: [[String]] = [], errorKind: String? = nil, persona: String? = nil,
                       signer: String? = nil, verdict: String? = nil) -> FlowRecord {
        let scheme = mode == "http" ? "http" : "https"
        let url = method == nil ? nil : "\(scheme)://\(host)\(path)"
        let summary = FlowSummary(
            id: id, started: "2026-03-01T12:00:00.000Z", host: host, mode: mode, method: method, url: url,
            status: status, httpVersion: "HTTP/1.1", errorKind: errorKind,
            contentType: responseHeaders.first { $0[0].lowercased() == "content-type" }?[1],
            requestContentType: requestHeaders.first { $0[0].lowercased() == "content-type" }?[1],
            durationMs: 12, persona: persona, signerEmail: signer, signerSerial: signer == nil ? nil : "01AB",
            verdict: verdict, isWebSocket: mode == "websocket", isTunnel: mode == "tunnel")
        return FlowRecord(summary: summary, requestHeaders: FieldPairs(requestHeaders), responseHeaders: FieldPairs(responseHeaders))
    }

    /// A text body.
    static func text(_ text: String) -> StoredBody {
        StoredBody(bytes: Array(text.utf8), sha256: "00", text: text)
    }

    /// Eight flows covering every filter atom; `expectations` in FilterMatchTests refer to their ids.
    static let flows: [(FlowRecord, FlowBodies)] = [
        (record("get-json", host: "api.example.com", path: "/v1/users?id=7",
                requestHeaders: [["Host", "api.example.com"], ["Accept", "application/json"]],
                responseHeaders: [["Content-Type", "application/json"], ["Set-Cookie", "sid=1"]],
                persona: "team", signer: "ana@acme.dev", verdict: "enforced"),
         FlowBodies(response: text(#"{"user":"Ana","token":"s3cr3t"}"#))),
        (record("post-form", host: "login.example.com", method: "POST", path: "/session", status: 302, mode: "http",
                requestHeaders: [["Content-Type", "application/x-www-form-urlencoded"]],
                responseHeaders: [["Location", "/home"]], persona: "untrusted", signer: "bo@acme.dev"),
         FlowBodies(request: text("user=ana&password=hunter2"))),
        (record("png", host: "cdn.static.test", path: "/logo.png", responseHeaders: [["Content-Type", "image/png"]]),
         FlowBodies(response: StoredBody(bytes: [0x89, 0x50, 0x4E, 0x47, 0x00, 0x4D, 0x61, 0x67, 0x69, 0x63], sha256: "00"))),
        (record("not-found", host: "api.example.com", method: "DELETE", path: "/v1/users/9", status: 404), FlowBodies()),
        (record("pending", host: "slow.example.org", path: "/wait", status: nil), FlowBodies()),
        (record("failed", host: "pinned.example.com", method: nil, status: nil, errorKind: "client_rejected_certificate",
                persona: "team", verdict: "report-only"), FlowBodies()),
        (record("tunnel", host: "api.apple.com", method: nil, status: nil, mode: "tunnel"), FlowBodies()),
        (record("socket", host: "ws.example.com", path: "/chat", status: 101, mode: "websocket",
                requestHeaders: [["Upgrade", "websocket"]]), FlowBodies()),
    ]

    /// The flow log line stored for flow `id`: the WebSocket's carries its messages (a text one
    /// each way and a binary one from the server), which `~b`, `~bq` and `~bs` search.
    static func json(_ id: String) -> String {
        guard id == "socket" else { return #"{"id":"\#(id)"}"# }
        return #"{"id":"socket","mode":"websocket","websocket":["#
            + #"{"direction":"client_to_server","opcode":"text","length":16,"text":"subscribe:prices"},"#
            + #"{"direction":"server_to_client","opcode":"text","length":7,"text":"tick 42"},"#
            + #"{"direction":"server_to_client","opcode":"binary","length":12,"base64":"AAFCSU4tWlFY/w=="}]}"#
    }

    /// A store in `directory` holding `flows`, flushed.
    static func store(in directory: TemporaryDirectory, flows: [(FlowRecord, FlowBodies)] = StoreFixtures.flows,
                      configuration: SessionStoreConfiguration = .init()) throws -> SessionStore {
        let store = try SessionStore(path: directory.file("session.sqlite"), configuration: configuration)
        for (record, bodies) in flows {
            store.finished(record, json: json(record.summary.id), bodies: bodies)
        }
        store.flush()
        return store
    }
}
