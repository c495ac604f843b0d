import Foundation
import HTTPTypes
@testable import SessionStore
import TestSupport
import Testing

/// GraphQL over WebSocket in the store: a socket whose handshake settled on `graphql-transport-ws`
/// or `graphql-ws` is named from its client's `subscribe`/`start` messages, its errors counted
/// from the server's, while it runs and when it ends; any other socket is not read.
@Suite struct GraphQLWebSocketStoreTests {
    /// A socket's record line with `messages` (`[direction, text]`, `cut` ones marked truncated).
    static func line(_ id: String, _ messages: [(String, String)], cut: Set<Int> = []) throws -> String {
        let list: [[String: Any]] = messages.enumerated().map { index, message in
            var object: [String: Any] = ["direction": message.0 == ">" ? "client_to_server" : "server_to_client",
                                         "opcode": "text", "length": message.1.utf8.count, "text": message.1]
            if cut.contains(index) { object["truncated"] = true }
            return object
        }
        let data = try JSONSerialization.data(withJSONObject: ["id": id, "mode": "websocket", "websocket": list])
        return String(decoding: data, as: UTF8.self)
    }

    static func socket(_ id: String, protocol chosen: String?) -> FlowRecord {
        StoreFixtures.record(id, host: "api.example.com", path: "/graphql", status: 101, mode: "websocket",
                             requestHeaders: [["Upgrade", "websocket"]],
                             responseHeaders: [["Upgrade", "websocket"]] + (chosen.map { [["sec-websocket-PROTOCOL", $0]] } ?? []))
    }

    @Test func theSubprotocolIsReadFromTheResponseHeaders() {
        #expect(GraphQLCall.webSocketProtocol(responseHeaders: "Upgrade: websocket\nSec-WebSocket-Protocol: graphql-transport-ws")
                == .transport)
        #expect(GraphQLCall.webSocketProtocol(responseHeaders: "sec-websocket-protocol:  graphql-ws ") == .legacy)
        #expect(GraphQLCall.webSocketProtocol(responseHeaders: "Sec-WebSocket-Protocol: graphql-transport-ws2") == nil)
        #expect(GraphQLCall.webSocketProtocol(responseHeaders: "X-Note: graphql-ws") == nil)
        #expect(GraphQLCall.webSocketProtocol(responseHeaders: "Sec-WebSocket-Protocol: mqtt") == nil)
        #expect(GraphQLCall.webSocketProtocol(responseHeaders: nil) == nil)
    }

    @Test func operationsAreReadInOrderOnceEachAndErrorsCounted() throws {
        let transport = try Self.line("t", [
            (">", #"{"type":"connection_init"}"#), ("<", #"{"type":"connection_ack"}"#),
            (">", #"{"id":"1","type":"subscribe","payload":{"query":"subscription OnTick { tick }"}}"#),
            ("<", #"{"id":"1","type":"next","payload":{"data":{"tick":1},"errors":[{"message":"a"},{"message":"b"}]}}"#),
            (">", #"{"id":"2","type":"subscribe","payload":{"query":"{ hello }"}}"#),
            (">", #"{"id":"3","type":"subscribe","payload":{"query":"subscription OnTick { tick }"}}"#),
            (">", #"{"id":"4","type":"subscribe","payload":{"query":"mutation Cut { poke }"}}"#),
            (">", "not json"), ("<", #"{"id":"5","type":"error","payload":[{"message":"c"}]}"#),
            // The other protocol's words count for nothing here.
            (">", #"{"id":"6","type":"start","payload":{"query":"query Legacy { hello }"}}"#),
            ("<", #"{"id":"6","type":"data","payload":{"errors":[{"message":"d"}]}}"#),
        ], cut: [6])
        let call = GraphQLCall.detect(webSocket: .transport, record: ArraySlice(transport.utf8))
        #expect(call == GraphQLCall(operations: [GraphQLOperation(kind: .subscription, name: "OnTick"),
                                                 GraphQLOperation(kind: .query, name: nil)], errors: 3))
        let legacy = try Self.line("l", [
            (">", #"{"id":"1","type":"start","payload":{"query":"subscription A { a } subscription B { b }","operationName":"B"}}"#),
            ("<", #"{"id":"1","type":"data","payload":{"data":null,"errors":[{"message":"x"}]}}"#),
            ("<", #"{"id":"1","type":"error","payload":{"message":"y"}}"#), ("<", #"{"type":"ka"}"#),
        ])
        #expect(GraphQLCall.detect(webSocket: .legacy, record: ArraySlice(legacy.utf8))
                == GraphQLCall(operations: [GraphQLOperation(kind: .subscription, name: "B")], errors: 2))
        // A socket that has sent no operation (yet) is none.
        let idle = try Self.line("i", [(">", #"{"type":"connection_init"}"#), ("<", #"{"type":"connection_ack"}"#)])
        #expect(GraphQLCall.detect(webSocket: .transport, record: ArraySlice(idle.utf8)) == nil)
    }

    @Test func aRunningSocketIsNamedAndAnotherSubprotocolIsNot() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("session.sqlite"))
        defer { store.close() }
        let subscribe = (">", #"{"id":"1","type":"subscribe","payload":{"query":"subscription OnTick { tick }"}}"#)
        var running = Self.socket("running", protocol: "graphql-transport-ws")
        running.summary.phase = .responded
        store.progressed(running, jsonLine: Array(try Self.line("running", [subscribe]).utf8))
        store.finished(Self.socket("plain", protocol: nil), json: try Self.line("plain", [subscribe]), bodies: FlowBodies())
        store.finished(Self.socket("mqtt", protocol: "mqtt"), json: try Self.line("mqtt", [subscribe]), bodies: FlowBodies())
        store.flush()
        let named = GraphQLCall(operations: [GraphQLOperation(kind: .subscription, name: "OnTick")], errors: 0)
        #expect(try store.summary(id: "running")?.graphQL == named)
        #expect(try store.summary(id: "running")?.phase != .finished)
        #expect(try store.summary(id: "plain")?.graphQL == nil)
        #expect(try store.summary(id: "mqtt")?.graphQL == nil)
        // It ends with an error from the server: counted.
        store.finished(Self.socket("running", protocol: "graphql-transport-ws"),
                       json: try Self.line("running", [subscribe, ("<", #"{"id":"1","type":"error","payload":[{"message":"e"}]}"#)]),
                       bodies: FlowBodies())
        store.flush()
        #expect(try store.summary(id: "running")?.graphQL?.errors == 1)
        #expect(try store.flows(filter: try FilterExpression(parsing: "~gqlerr"), limit: 10).flows.map(\.id) == ["running"])
        #expect(try store.flows(filter: try FilterExpression(parsing: "~graphql ^OnTick$"), limit: 10).flows.map(\.id)
                == ["running"])
    }
}
