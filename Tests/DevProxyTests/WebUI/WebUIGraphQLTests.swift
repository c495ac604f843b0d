@testable import DevProxy
import Foundation
import TestSupport
import Testing
@testable import WebUI

/// GraphQL calls through a real proxy, from curl to an origin that executes a real schema
/// (`Resources/graphql_origin.py`, graphql-core): the store names their operations and counts
/// their errors, the API's summaries carry them, `~graphql` and `~gqlerr` select them, and the
/// page (`Resources/webui_graphql.py`, Chromium) shows them in the list and the GraphQL tab.
@Suite struct WebUIGraphQLTests {
    /// The origin, on 127.0.0.1 with a free port; stopped when released.
    final class GraphQLOrigin {
        private let server: ScriptServer
        var port: Int { server.port }

        init() throws {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../TestSupport/Resources/graphql_origin.py").standardized.path
            server = try ScriptServer([script], hint: "is graphql-core installed?")
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
    }

    /// Whether graphql-core is there for the origin (`scripts/test` installs it).
    static let missing: String? = {
        let probe = try? Subprocess.run("python3", ["-c", "import graphql"], timeout: 30)
        return probe?.status == 0 ? nil : "the Python package graphql-core is not installed"
    }()

    /// Sends the calls the page test looks for, through the proxy: a named query with variables,
    /// a mutation the server refuses (errors under HTTP 200), a batch, a GET, a query holding
    /// markup in a string, and JSON with a `query` field that is no GraphQL.
    static func sendCalls(_ proxy: ProxyHarness, _ origin: GraphQLOrigin) throws {
        let json = ["-H", "Content-Type: application/json", "--data-binary"]
        let calls: [[String]] = [
            json + [#"{"query":"query GetUser($id: ID!) { user(id: $id) { name } }","variables":{"id":"7"}}"#],
            json + [#"{"operationName":"Like","query":"mutation Like { like(id: 1) }"}"#],
            json + [#"[{"query":"query GetUser { user(id: 1) { id } }"},{"query":"query GetFeed { feed { id } }"}]"#],
            json + [#"{"query":"query Search { search(text: \"<script>window.__pwned = true</script>\") }"}"#],
            ["-G", "--data-urlencode", "query={ feed { id } }"],
        ]
        for call in calls {
            let sent = try proxy.curl(call + [origin.url("/graphql")])
            #expect(sent.status == 0 && sent.stdout.contains(#""data""#), "\(sent.output)")
        }
        let search = try proxy.curl(json + [#"{"query":"red shoes"}"#, origin.url("/search")])
        #expect(search.stdout.contains("results"), "\(search.output)")
    }

    /// The summaries of the flows `filter` selects, once `count` of them are finished (up to 10 s).
    static func summaries(_ ui: WebUIHarness, filter: String, count: Int) throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(10)
        var flows: [[String: Any]] = []
        while Date() < deadline {
            ui.store.flush()
            let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            flows = try ui.request("/api/flows?filter=" + encoded).json["flows"] as? [[String: Any]] ?? []
            if flows.count >= count, flows.allSatisfy({ $0["phase"] as? String == "finished" }) { return flows }
            usleep(50_000)
        }
        return flows
    }

    @Test(.enabled(if: missing == nil, "needs graphql-core"))
    func callsThroughTheProxyAreNamedCountedAndFiltered() throws {
        let origin = try GraphQLOrigin()
        let ui = try WebUIHarness(withProxy: true)
        let proxy = try #require(ui.proxy)
        // Open pages hear of each call on the live stream, named as the list's pages name it.
        let events = try WebUIHarness.EventStream(ui)
        #expect(events.read(until: "event: hello"))
        try Self.sendCalls(proxy, origin)
        #expect(events.read(until: #""graphql":{"operations":[{"type":"mutation","name":"Like","persisted":false}],"#
                             + #""errors":1}"#), "\(events.received.suffix(2000))")
        let all = try Self.summaries(ui, filter: "~graphql", count: 5)
        func operations(_ summary: [String: Any]) -> [String] {
            let list = (summary["graphql"] as? [String: Any])?["operations"] as? [[String: Any]] ?? []
            return list.map { "\($0["type"] as? String ?? "?") \($0["name"] as? String ?? "-")" }
        }
        #expect(Set(all.map(operations)) == [["query GetUser"], ["mutation Like"], ["query GetUser", "query GetFeed"],
                                             ["query Search"], ["query -"]], "\(all)")
        let failed = try Self.summaries(ui, filter: "~gqlerr", count: 1)
        #expect(failed.count == 1 && operations(failed[0]) == ["mutation Like"], "\(failed)")
        #expect(failed.first?["status"] as? Int == 200)
        #expect((failed.first?["graphql"] as? [String: Any])?["errors"] as? Int == 1)
        let named = try Self.summaries(ui, filter: "~graphql getuser", count: 2)
        #expect(named.count == 2, "\(named)")
        // The JSON search with a `query` field is listed as any flow, without `graphql`.
        let search = try Self.summaries(ui, filter: "~u /search", count: 1)
        #expect(search.count == 1 && search.first?["graphql"] == nil, "\(search)")
    }

    /// The page over the same calls: the list's names and `200 · errors`, the filters, the tab's
    /// document, variables and errors, markup in the query as text.
    @Test(.enabled(if: missing == nil && WebUIBrowser.missing == nil, "needs graphql-core, chromium and playwright"))
    func thePageNamesTheOperationsAndShowsTheGraphQLTab() throws {
        let origin = try GraphQLOrigin()
        let ui = try WebUIHarness(withProxy: true)
        let proxy = try #require(ui.proxy)
        try Self.sendCalls(proxy, origin)
        _ = try Self.summaries(ui, filter: "~graphql", count: 5)
        let result = try WebUIBrowser.run(ui: "\(ui.base)/?token=\(ui.token)", proxy: proxy.proxyURL,
                                          script: "webui_graphql.py", timeout: 120)
        let expected: Set = ["list-names-operation", "list-names-batch", "list-names-get", "search-json-is-no-graphql",
                             "status-says-errors", "status-plain-without-errors", "path-tooltip-names-operation",
                             "opens-on-graphql-tab", "tab-shows-query", "tab-shows-variables", "tab-shows-errors",
                             "tab-shows-data", "markup-stays-text", "filter-gqlerr",
                             "filter-graphql-name", "filter-help-names-them", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }
}
