@testable import SessionStore
import TestSupport
import XCTest

/// Each filter atom and operator evaluated in the store over `StoreFixtures.flows`.
final class FilterMatchTests: XCTestCase {
    nonisolated(unsafe) private static let directory = TemporaryDirectory()
    private static let shared: SessionStore = {
        do { return try StoreFixtures.store(in: directory) } catch { fatalError("fixture store: \(error)") }
    }()

    /// The ids `expression` selects, sorted.
    private func ids(_ expression: String) throws -> [String] {
        let page = try Self.shared.flows(filter: try FilterExpression(parsing: expression), limit: 100)
        XCTAssertEqual(page.total, page.flows.count, expression)
        return page.flows.map(\.id).sorted()
    }

    func testEachAtomSelectsItsFlows() throws {
        let table: [(String, [String])] = [
            ("~d api.example.com", ["get-json", "not-found"]),
            ("~d EXAMPLE\\.COM$", ["failed", "get-json", "not-found", "post-form", "socket"]),
            ("~d ^api", ["get-json", "not-found", "tunnel"]),
            ("users", ["get-json", "not-found"]),
            ("~u logo\\.PNG", ["png"]),
            ("~u ^http://", ["post-form"]),
            ("~m post", ["post-form"]),
            // Parentheses and spaces end a bare word (as in mitmproxy): quote such patterns.
            ("~m '^(DELETE|POST)$'", ["not-found", "post-form"]),
            ("~c 404", ["not-found"]),
            ("~c 101", ["socket"]),
            ("~h set-cookie", ["get-json"]),
            ("~h \"^upgrade: websocket$\"", ["socket"]),
            ("~hq accept", ["get-json"]),
            ("~hs accept", []),
            ("~hs '^location: /home'", ["post-form"]),
            ("~b s3cr3t", ["get-json"]),
            ("~b HUNTER\\d", ["post-form"]),
            ("~bq hunter2", ["post-form"]),
            ("~bs hunter2", []),
            ("~bs magic", ["png"]),
            // A WebSocket's messages are its bodies: the client's on the request side.
            ("~b subscribe:PRICES", ["socket"]),
            ("~bq subscribe", ["socket"]),
            ("~bs subscribe", []),
            ("~bs 'tick \\d+'", ["socket"]),
            ("~bq tick", []),
            ("~b BIN-ZQX", ["socket"]),
            ("~b ^tick", ["socket"]),
            ("~t json", ["get-json"]),
            ("~t form", ["post-form"]),
            ("~tq json", []),
            ("~ts image/", ["png"]),
            // A connection that carried no request ("failed": rejected at the handshake) has none to answer.
            ("~q", ["pending"]),
            ("~s", ["get-json", "not-found", "png", "post-form", "socket"]),
            ("~e", ["failed"]),
            ("~websocket", ["socket"]),
            ("~a", ["png"]),
            ("~tcp", ["tunnel"]),
            ("~http & ~d ^api", ["get-json", "not-found"]),
            ("!~http", ["tunnel"]),
            ("~persona TEAM", ["failed", "get-json"]),
            ("~signer ana@acme.dev", ["get-json"]),
            // Or by the intermediate's serial: one engineer's renewed intermediate signs apart.
            ("~signer 01ab", ["get-json", "post-form"]),
            ("~verdict report-only", ["failed"]),
            ("~all", StoreFixtures.flows.map(\.0.summary.id).sorted()),
        ]
        for (expression, expected) in table {
            XCTAssertEqual(try ids(expression), expected.sorted(), expression)
        }
    }

    /// A WebSocket whose record is too large for a frame (over 16 KiB: a long message) is kept
    /// alone in `flow_records`; `~b` searches its messages there too (the first version read only
    /// framed records, and a real socket with a 70 kB message matched nothing).
    func testMessagesOfARecordKeptAloneAreSearched() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("session.sqlite"))
        defer { store.close() }
        let record = StoreFixtures.record("long-socket", host: "ws.example.com", path: "/feed", status: 101, mode: "websocket")
        let long = String(repeating: "x", count: 20_000) + " needle-in-feed"
        store.finished(record, json: #"{"id":"long-socket","websocket":[{"direction":"server_to_client","opcode":"text","#
                       + #""length":\#(long.utf8.count),"text":"\#(long)"}]}"#, bodies: FlowBodies())
        store.flush()
        for (expression, expected) in [("~b needle-in-feed", ["long-socket"]), ("~bs needle", ["long-socket"]),
                                       ("~bq needle", [])] {
            let page = try store.flows(filter: try FilterExpression(parsing: expression), limit: 10)
            XCTAssertEqual(page.flows.map(\.id), expected, expression)
        }
    }

    /// `~grpc` (gRPC and gRPC-Web calls, by their request's content type) and `~gs` (the
    /// `grpc-status` column, read back with the summary), in a store of their own.
    func testGRPCAtoms() throws {
        func call(_ id: String, _ type: String, _ status: Int?) -> (FlowRecord, FlowBodies) {
            var record = StoreFixtures.record(id, host: "rpc.example.net", method: "POST", path: "/lab.Echo/Unary",
                                              requestHeaders: [["content-type", type]], responseHeaders: [["content-type", type]])
            record.summary.grpcStatus = status
            return (record, FlowBodies())
        }
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: [
            call("grpc-ok", "application/grpc", 0), call("web-fail", "application/grpc-web+proto", 5),
            call("cut-short", "Application/GRPC+proto", nil), call("connect-unary", "application/proto", 0),
            call("connect-stream", "application/connect+json", nil), StoreFixtures.flows[0],
        ])
        defer { store.close() }
        func ids(_ expression: String) throws -> [String] {
            try store.flows(filter: try FilterExpression(parsing: expression), limit: 100).flows.map(\.id).sorted()
        }
        XCTAssertEqual(try ids("~grpc"), ["connect-stream", "connect-unary", "cut-short", "grpc-ok", "web-fail"])
        XCTAssertEqual(try ids("~gs 5"), ["web-fail"])
        XCTAssertEqual(try ids("~gs 0"), ["connect-unary", "grpc-ok"])
        XCTAssertEqual(try ids("~grpc & !~gs 0"), ["connect-stream", "cut-short", "web-fail"])
        XCTAssertEqual(try store.summary(id: "web-fail")?.grpcStatus, 5)
        XCTAssertNil(try store.summary(id: "cut-short")?.grpcStatus)
        XCTAssertNil(try store.summary(id: "get-json")?.grpcStatus)
    }

    func testOperatorsCombineAsWritten() throws {
        let table: [(String, [String])] = [
            ("~d example.com & ~c 404", ["not-found"]),
            ("~d example.com ~c 404", ["not-found"]),
            ("~c 404 | ~c 302", ["not-found", "post-form"]),
            ("!~s", ["failed", "pending", "tunnel"]),
            ("!~c 200", ["failed", "not-found", "pending", "post-form", "socket", "tunnel"]),
            ("!(~c 200 | ~c 404) & ~d example", ["failed", "pending", "post-form", "socket"]),
            ("!~persona team", ["not-found", "pending", "png", "post-form", "socket", "tunnel"]),
            ("~b s3cr3t | ~e", ["failed", "get-json"]),
            ("~u 'users/9' | \"wait\"", ["not-found", "pending"]),
        ]
        for (expression, expected) in table {
            XCTAssertEqual(try ids(expression), expected.sorted(), expression)
        }
    }

    /// 64 terms joined by `&` or `|` run as one flat SQL group: nested two by two, 100 terms
    /// overflowed SQLite's parser stack (`parser stack overflow`, a 500 from the web UI).
    func testALongChainRunsFlat() throws {
        let chain = Array(repeating: "!~c 999", count: 64).joined(separator: " & ")
        XCTAssertEqual(try ids(chain).count, try ids("~all").count)
        XCTAssertEqual(try ids(Array(repeating: "~c 404", count: 64).joined(separator: " | ")), ["not-found"])
        let sql = try FilterExpression(parsing: chain).sql.sql
        let depth = sql.reduce(into: (now: 0, most: 0)) { depth, character in
            if character == "(" { depth.now += 1; depth.most = max(depth.most, depth.now) }
            if character == ")" { depth.now -= 1 }
        }.most
        XCTAssertLessThan(depth, 8, sql)
    }

    func testPatternsAreBoundNotSpliced() throws {
        // A pattern that would break SQL if it were pasted into the statement.
        XCTAssertEqual(try ids("~u \"'; DROP TABLE flows; --\""), [])
        XCTAssertEqual(try Self.shared.count(), StoreFixtures.flows.count)
    }
}
