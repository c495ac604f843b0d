import Foundation
import SessionStore
import TestSupport
import Testing

/// GraphQL subscriptions over WebSocket through `devproxy run`: a real origin speaking
/// `graphql-transport-ws` and `graphql-ws` (`Resources/graphql_ws.py serve`, graphql-core under
/// hypercorn) and a real client (`graphql_ws.py client`, wsproto). The store names each socket's
/// operations from the client's `subscribe`/`start` messages and counts the errors the server
/// sent; `~graphql` and `~gqlerr` select them; a socket of no GraphQL subprotocol is none, what
/// it sends notwithstanding; the flow log read again (`devproxy web FILE`) names them the same.
@Suite struct WebUIGraphQLWebSocketTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../TestSupport/Resources/graphql_ws.py").standardized.path

    /// The origin (`graphql_ws.py serve`), on 127.0.0.1 with a free port; stopped when released.
    static func origin() throws -> ScriptServer { try ScriptServer([script, "serve"]) }

    /// Whether graphql-core, hypercorn and wsproto are there (`scripts/test` installs them).
    static let missing: String? = {
        let probe = try? Subprocess.run("python3", ["-c", "import graphql, hypercorn, wsproto"], timeout: 30)
        return probe?.status == 0 ? nil : "the Python packages graphql-core, hypercorn and wsproto are not installed"
    }()

    /// One client session: `payloads` sent over a socket offering `subprotocol` ("-": none).
    static func session(proxy: Int, origin: Int, path: String = "/graphql", subprotocol: String,
                        _ payloads: String) throws {
        let run = try Subprocess.run("python3", [script, "client", String(proxy), String(origin), path, subprotocol,
                                                 payloads], timeout: 30)
        #expect(run.status == 0 && run.stdout.hasSuffix("done\n"), "\(run.output)")
    }

    /// `type name` of each operation of a `/api/flows` summary.
    static func operations(_ summary: [String: Any]) -> [String] {
        let list = (summary["graphql"] as? [String: Any])?["operations"] as? [[String: Any]] ?? []
        return list.map { "\($0["type"] as? String ?? "?") \($0["name"] as? String ?? "-")" }
    }

    @Test(.enabled(if: missing == nil, "needs graphql-core, hypercorn and wsproto"))
    func subscriptionsOverWebSocketAreNamedCountedAndFiltered() throws {
        let origin = try Self.origin()
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"),
                                         "--log", dir.file("flows.jsonl"), "--web", "127.0.0.1:0", "--quiet"],
                                        webUI: true)
        defer { _ = proxy.stop() }
        let (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        let tick = #"{"query":"subscription OnTick($n: Int!) { tick(count: $n) }","operationName":"OnTick","variables":{"n":3}}"#
        // graphql-transport-ws: a subscription, a query over the socket, the subscription again.
        try Self.session(proxy: proxy.port, origin: origin.port, subprotocol: "graphql-transport-ws",
                         "[\(tick),{\"query\":\"query Hello { hello }\"},\(tick)]")
        // A result that carries `errors` (a `next` payload's).
        try Self.session(proxy: proxy.port, origin: origin.port, subprotocol: "graphql-transport-ws",
                         #"[{"query":"subscription Broken { broken }"}]"#)
        // graphql-ws (subscriptions-transport-ws): `start`, and an invalid one answered with `error`.
        try Self.session(proxy: proxy.port, origin: origin.port, subprotocol: "graphql-ws",
                         #"[{"query":"subscription Legacy { tick(count: 2) }"},{"query":"subscription Bad { nope }"}]"#)
        // No GraphQL subprotocol: a `subscribe` message is only a message.
        try Self.session(proxy: proxy.port, origin: origin.port, path: "/plain", subprotocol: "-",
                         #"[{"type":"subscribe","id":"1","payload":{"query":"subscription Plain { tick(count: 1) }"}}]"#)

        func summaries(_ filter: String, count: Int) throws -> [[String: Any]] {
            let deadline = Date().addingTimeInterval(10)
            var flows: [[String: Any]] = []
            while Date() < deadline {
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let got = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(token)",
                                                      "\(base)/api/flows?filter=\(encoded)"], timeout: 20)
                let json = try? JSONSerialization.jsonObject(with: Data(got.stdout.utf8)) as? [String: Any]
                flows = json?["flows"] as? [[String: Any]] ?? []
                if flows.count >= count, flows.allSatisfy({ $0["phase"] as? String == "finished" }) { return flows }
                usleep(100_000)
            }
            return flows
        }
        let sockets = try summaries("~websocket", count: 4)
        #expect(sockets.count == 4, "\(sockets)")
        let named = try summaries("~graphql", count: 3)
        #expect(Set(named.map(Self.operations)) == [["subscription OnTick", "query Hello"], ["subscription Broken"],
                                                    ["subscription Legacy", "subscription Bad"]], "\(named)")
        #expect(named.allSatisfy { ($0["url"] as? String)?.hasSuffix("/graphql") == true }, "\(named)")
        let onTick = try summaries("~graphql OnTick", count: 1)
        #expect(onTick.map(Self.operations) == [["subscription OnTick", "query Hello"]], "\(onTick)")
        #expect((onTick.first?["graphql"] as? [String: Any])?["errors"] as? Int == 0, "\(onTick)")
        #expect(try summaries("~graphql Other", count: 0).isEmpty)
        let failed = try summaries("~gqlerr", count: 2)
        #expect(Set(failed.map(Self.operations)) == [["subscription Broken"], ["subscription Legacy", "subscription Bad"]],
                "\(failed)")
        #expect(Set(failed.map { ($0["graphql"] as? [String: Any])?["errors"] as? Int }) == [1], "\(failed)")
        let plain = try summaries("~websocket & !~graphql", count: 1)
        #expect(plain.count == 1 && plain.first?["graphql"] == nil
                && (plain.first?["url"] as? String)?.hasSuffix("/plain") == true, "\(plain)")

        // The flow log read again, as `devproxy web flows.jsonl` does, goes through the same writer.
        let (store, report) = try SessionImport.open(path: dir.file("flows.jsonl"))
        defer { store.close() }
        #expect(report?.problems == [])
        let imported = try store.flows(filter: try FilterExpression(parsing: "~graphql"), limit: 10).flows
        #expect(Set(imported.map { $0.graphQL?.operations.compactMap(\.name) ?? [] })
                == [["OnTick", "Hello"], ["Broken"], ["Legacy", "Bad"]])
        #expect(try store.count(filter: try FilterExpression(parsing: "~gqlerr")) == 2)
    }

    /// The page over such sockets (`Resources/webui_graphql_ws.py`, Chromium): the list's names,
    /// the status's errors, the socket opening on its messages, the GraphQL tab's operations.
    @Test(.enabled(if: missing == nil && WebUIBrowser.missing == nil,
                   "needs graphql-core, hypercorn, wsproto, chromium and playwright"))
    func thePageListsASocketsOperations() throws {
        let origin = try Self.origin()
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        defer { _ = proxy.stop() }
        let tick = #"{"query":"subscription OnTick($n: Int!) { tick(count: $n) }","variables":{"n":3}}"#
        try Self.session(proxy: proxy.port, origin: origin.port, subprotocol: "graphql-transport-ws", "[\(tick)]")
        try Self.session(proxy: proxy.port, origin: origin.port, subprotocol: "graphql-transport-ws",
                         #"[{"query":"subscription Broken { broken }"}]"#)
        try Self.session(proxy: proxy.port, origin: origin.port, subprotocol: "graphql-ws",
                         #"[{"query":"subscription Legacy { tick(count: 2) }"},{"query":"subscription Bad { nope }"}]"#)
        try Self.session(proxy: proxy.port, origin: origin.port, path: "/plain", subprotocol: "-",
                         #"[{"type":"subscribe","id":"1","payload":{"query":"subscription Plain { tick(count: 1) }"}}]"#)
        let result = try proxy.runPage(script: "webui_graphql_ws.py", timeout: 120)
        let expected: Set = ["list-names-subscription", "list-names-legacy-operations", "plain-socket-unnamed",
                             "status-says-errors", "opens-on-messages-with-graphql-tab", "tab-lists-operation",
                             "tab-shows-id-and-results", "tab-shows-document", "tab-shows-variables", "tab-shows-errors",
                             "tab-lists-legacy-operations", "tab-shows-error-message", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }
}
