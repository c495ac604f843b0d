import Foundation
import HTTPTypes
@testable import SessionStore
import TestSupport
import Testing

/// GraphQL calls in the store: the writer reads the finished flow's bodies for them
/// (`flows.graphql`, `flows.graphql_errors`), summaries carry them, and `~graphql`,
/// `~graphql REGEX` and `~gqlerr` select by them.
@Suite struct GraphQLStoreTests {
    /// A finished POST of `body` to /graphql, answered 200 with `response`.
    static func graphQL(_ id: String, _ body: String, response: String,
                        contentType: String = "application/json") -> (FlowRecord, FlowBodies) {
        (StoreFixtures.record(id, method: "POST", path: "/graphql", requestHeaders: [["Content-Type", contentType]],
                              responseHeaders: [["Content-Type", "application/graphql-response+json"]]),
         FlowBodies(request: StoreFixtures.text(body), response: StoreFixtures.text(response)))
    }

    static let flows: [(FlowRecord, FlowBodies)] = StoreFixtures.flows + [
        graphQL("get-user", #"{"query":"query GetUser($id: ID!) { user(id: $id) { name } }","variables":{"id":"7"}}"#,
                response: #"{"data":{"user":{"name":"Ana"}}}"#),
        graphQL("like", #"{"query":"mutation Like { like(id: 1) { ok } }"}"#,
                response: #"{"errors":[{"message":"not allowed","extensions":{"code":"FORBIDDEN"}}],"data":null}"#),
        graphQL("batch", #"[{"query":"query GetUser { me { id } }"},{"query":"{ feed { id } }"}]"#,
                response: #"[{"data":{"me":{"id":1}}},{"data":{"feed":[]}}]"#),
        // JSON whose `query` is a search phrase, answered with an `errors` list: no GraphQL call.
        graphQL("search", #"{"query":"mutation testing tools"}"#, response: #"{"errors":["none found"]}"#),
    ]

    @Test func summariesNameTheOperationsAndCountTheErrors() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: Self.flows)
        defer { store.close() }
        #expect(try store.summary(id: "get-user")?.graphQL
                == GraphQLCall(operations: [GraphQLOperation(kind: .query, name: "GetUser")], errors: 0))
        #expect(try store.summary(id: "like")?.graphQL
                == GraphQLCall(operations: [GraphQLOperation(kind: .mutation, name: "Like")], errors: 1))
        #expect(try store.summary(id: "batch")?.graphQL?.operations.map(\.name) == ["GetUser", nil])
        #expect(try store.summary(id: "search")?.graphQL == nil)
        #expect(try store.summary(id: "get-json")?.graphQL == nil)
        // Pages carry them too.
        let page = try store.flows(limit: 100)
        #expect(page.flows.filter { $0.graphQL != nil }.map(\.id).sorted() == ["batch", "get-user", "like"])
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flows WHERE graphql IS NOT NULL") == 3)
    }

    @Test func theFiltersSelectGraphQLCallsByNameAndByErrors() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: Self.flows)
        defer { store.close() }
        func ids(_ filter: String) throws -> [String] {
            try store.flows(filter: try FilterExpression(parsing: filter), limit: 100).flows.map(\.id).sorted()
        }
        #expect(try ids("~graphql") == ["batch", "get-user", "like"])
        #expect(try ids("~graphql getuser") == ["batch", "get-user"], "any of a batch's names, ignoring case")
        #expect(try ids("~graphql ^Like$") == ["like"])
        #expect(try ids("~graphql mutation") == [], "the name, not the type")
        #expect(try ids("~gqlerr") == ["like"])
        #expect(try ids("~graphql & !~gqlerr") == ["batch", "get-user"])
        #expect(try ids("~GRAPHQL Get ~c 200") == ["batch", "get-user"])
        #expect(try ids("!~graphql & ~m POST") == ["post-form", "search"])
        // `~graphql` takes no pattern from what is no word: a parenthesis, an operator, a filter.
        #expect(try ids("(~graphql) & !~gqlerr") == ["batch", "get-user"])
        #expect(try ids("~graphql !~gqlerr") == ["batch", "get-user"])
        #expect(try ids("~graphql ~c 200 ~gqlerr") == ["like"])
        #expect(throws: FilterSyntaxError.self) { try FilterExpression(parsing: "~graphql '('") }
        #expect(throws: FilterSyntaxError.self) { try FilterExpression(parsing: "~gqlerr x(") }
    }

    /// A HAR from a browser (`devproxy web FILE`) gets the same columns: its GraphQL calls are
    /// named, and the failed one found by `~gqlerr`.
    @Test func anImportedHARNamesItsGraphQLCalls() throws {
        let directory = TemporaryDirectory()
        let entry = { (started: String, body: String, answer: String) in
            #"{"startedDateTime":"2026-03-01T10:00:0\#(started).000Z","time":5,"#
                + #""request":{"method":"POST","url":"https://api.example/graphql","httpVersion":"HTTP/2","#
                + #""headers":[{"name":"content-type","value":"application/json"}],"#
                + #""postData":{"mimeType":"application/json","text":\#(body)}},"#
                + #""response":{"status":200,"statusText":"","httpVersion":"HTTP/2","#
                + #""headers":[{"name":"content-type","value":"application/json"}],"#
                + #""content":{"mimeType":"application/json","text":\#(answer)}}}"#
        }
        let quoted = { (text: String) in
            String(decoding: try JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]),
                   as: UTF8.self)
        }
        let har = directory.write("browser.har", #"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"#
            + #""entries":["#
            + entry("1", try quoted(#"{"query":"query Feed { feed { id } }"}"#), try quoted(#"{"data":{"feed":[]}}"#))
            + ","
            + entry("2", try quoted(#"{"operationName":"Save","query":"mutation Save { save }"}"#),
                    try quoted(#"{"errors":[{"message":"denied"}],"data":null}"#))
            + "]}}")
        let (store, report) = try SessionImport.open(path: har)
        defer { store.close() }
        #expect(report?.problems == [])
        let flows = try store.flows(limit: 10, order: .oldestFirst).flows
        #expect(flows.map { $0.graphQL?.operations.first?.name } == ["Feed", "Save"])
        #expect(flows.map { $0.graphQL?.errors } == [0, 1])
        #expect(try store.flows(filter: try FilterExpression(parsing: "~gqlerr"), limit: 10).flows.map(\.id)
                == [flows[1].id])
    }

    /// A session of the previous schema (10, before `graphql`) opens, read-only (`devproxy web
    /// FILE`) or to write, with its flows; its GraphQL calls are named as new ones are.
    @Test func aSessionOfThePreviousVersionIsBroughtForward() throws {
        let directory = TemporaryDirectory()
        try StoreFixtures.store(in: directory, flows: Self.flows).close()
        let path = directory.file("session.sqlite")
        try SQLitePeek.execute(path, """
            ALTER TABLE flows DROP COLUMN graphql; ALTER TABLE flows DROP COLUMN graphql_errors;
            ALTER TABLE flows DROP COLUMN mapped; ALTER TABLE flows DROP COLUMN client;
            ALTER TABLE flows DROP COLUMN replay_of; ALTER TABLE flows DROP COLUMN client_process;
            ALTER TABLE flows DROP COLUMN client_exe; ALTER TABLE flows DROP COLUMN client_pid;
            PRAGMA user_version = 10
            """)
        #expect(try SQLitePeek.integer(path, "SELECT count(*) FROM pragma_table_info('flows') "
                                       + "WHERE name LIKE 'graphql%'") == 0)
        let viewed = try SessionStore(path: path, readOnly: true)
        #expect(try SQLitePeek.userVersion(path) == Schema.version)
        #expect(Schema.graphQLVersion == 11)
        #expect(try viewed.count() == Self.flows.count)
        #expect(try viewed.count(filter: try FilterExpression(parsing: "~graphql")) == 3)
        #expect(try viewed.summary(id: "like")?.graphQL?.errors == 1)
        viewed.close()
        let reopened = try SessionStore(path: path)
        #expect(try reopened.count() == Self.flows.count)
        let (record, bodies) = Self.graphQL("later", #"{"query":"subscription OnTick { tick }"}"#, response: "{}")
        reopened.finished(record, json: StoreFixtures.json("later"), bodies: bodies)
        reopened.flush()
        #expect(try reopened.summary(id: "later")?.graphQL?.operations == [GraphQLOperation(kind: .subscription,
                                                                                             name: "OnTick")])
        reopened.close()
    }
}
