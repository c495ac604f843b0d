import Foundation
import HTTPTypes
@testable import SessionStore
import TestSupport
import Testing

/// The rule that changed or answered a flow (`flows.mapped`, its record's `mapped.rule`): the
/// writer stores it on every path (many rows at once, one, a running flow updated, a flow log
/// line), summaries carry it, `~mapped` selects by it, and a session from before the column opens
/// with NULL for its flows.
@Suite struct MappedStoreTests {
    /// A finished flow that `rule` changed or answered (nil: none did).
    static func flow(_ id: String, _ rule: String?) -> (FlowRecord, FlowBodies) {
        var record = StoreFixtures.record(id, path: "/\(id)")
        record.summary.mapped = rule
        return (record, FlowBodies())
    }

    /// 16 rules and none (the writer inserts 16 finished rows in one statement) and four more.
    static let flows: [(FlowRecord, FlowBodies)] = (0..<20).map { flow("f\($0)", rule(of: $0)) }

    /// Flow `f<index>`'s rule: each of the five, then none, in turn.
    static func rule(of index: Int) -> String? {
        ["mock", "map-local", "map-remote", "modify-headers", "modify-body", nil][index % 6]
    }

    @Test func theRuleIsStoredAndReadBackAndFiltered() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: Self.flows)
        defer { store.close() }
        for index in 0..<20 {
            #expect(try store.summary(id: "f\(index)")?.mapped == Self.rule(of: index), "f\(index)")
        }
        let page = try store.flows(limit: 100)
        #expect(page.flows.count == 20)
        #expect(page.flows.allSatisfy { $0.mapped == Self.rule(of: Int($0.id.dropFirst())!) })
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flows WHERE mapped IS NOT NULL") == 17)
        let mapped = try store.flows(filter: try FilterExpression(parsing: "~mapped"), limit: 100).flows
        #expect(mapped.count == 17 && mapped.allSatisfy { $0.mapped != nil })
        #expect(try store.count(filter: try FilterExpression(parsing: "!~mapped")) == 3)
        #expect(try store.count(filter: try FilterExpression(parsing: "~MAPPED & ~u /f1$")) == 1)
        // One kind of rule: four or three flows each of the twenty; none was blocked.
        for kind in FilterParser.mappedKinds {
            let expected = (0..<20).filter { Self.rule(of: $0) == kind }.map { "f\($0)" }
            let found = try store.flows(filter: try FilterExpression(parsing: "~mapped \(kind)"), limit: 100).flows
            #expect(Set(found.map(\.id)) == Set(expected) && expected.isEmpty == (kind == "block-list"), "\(kind)")
        }
        #expect(try store.count(filter: try FilterExpression(parsing: "!~mapped mock")) == 16)
        // A sorted page reads the same columns.
        let sorted = try store.flows(filter: try FilterExpression(parsing: "~mapped"), limit: 100,
                                     sort: FlowSort(column: .duration, descending: true))
        #expect(sorted.flows.count == 17 && sorted.flows.allSatisfy { $0.mapped != nil })
    }

    /// A running flow's row is updated in place by its `seq` (`updateFlow`); one stored again
    /// (an import of the same flow) goes through the upsert: the rule follows both.
    @Test func aRunningFlowAndAFlowStoredAgainKeepTheRule() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: [])
        defer { store.close() }
        var running = StoreFixtures.record("running", path: "/running", status: nil)
        running.summary.phase = .started
        store.started(running)
        store.flush()
        #expect(try store.summary(id: "running")?.mapped == nil)
        running.summary.mapped = "map-remote"
        running.summary.status = 200
        store.finished(running, json: StoreFixtures.json("running"), bodies: FlowBodies())
        store.flush()
        #expect(try store.summary(id: "running")?.mapped == "map-remote")
        let (again, bodies) = Self.flow("running", "mock")
        store.finished(again, json: StoreFixtures.json("running"), bodies: bodies)
        store.flush()
        #expect(try store.summary(id: "running")?.mapped == "mock")
    }

    /// The proxy hands the store its flow-log line (as an import reads a `flows.jsonl`): the rule
    /// is read from its `mapped`.
    @Test func aFlowLogLineGivesItsRule() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: [])
        defer { store.close() }
        let mock = #","mapped":{"rule":"mock","from":"http://a/x","to":"mock 200 json","by":[]}"#
        for (id, mapped) in [("line-mock", mock), ("line-none", "")] {
            let line = #"{"id":"\#(id)","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:00.010Z","#
                + #""mode":"http","server":{"host":"a","port":80},"request":{"method":"GET","url":"http://a/x","#
                + #""http_version":"HTTP/1.1","headers":[]},"response":{"status":200,"http_version":"HTTP/1.1","#
                + #""headers":[]}\#(mapped)}"#
            store.finished(flowLogLine: Array(line.utf8))
        }
        store.flush()
        #expect(try store.summary(id: "line-mock")?.mapped == "mock")
        #expect(try store.summary(id: "line-none")?.mapped == nil)
    }

    /// A session of the previous schema (11, before `mapped`) opens, read-only (`devproxy web
    /// FILE`) or to write: its flows read NULL (nothing reads their records again for it), and a
    /// flow written after keeps its rule.
    @Test func aSessionOfThePreviousVersionOpensWithNoRules() throws {
        let directory = TemporaryDirectory()
        try StoreFixtures.store(in: directory, flows: Self.flows).close()
        let path = directory.file("session.sqlite")
        try SQLitePeek.execute(path, "ALTER TABLE flows DROP COLUMN mapped; ALTER TABLE flows DROP COLUMN client; "
                               + "ALTER TABLE flows DROP COLUMN replay_of; ALTER TABLE flows DROP COLUMN client_process; "
                               + "ALTER TABLE flows DROP COLUMN client_exe; "
                               + "ALTER TABLE flows DROP COLUMN client_pid; PRAGMA user_version = 11")
        #expect(try SQLitePeek.integer(path, "SELECT count(*) FROM pragma_table_info('flows') "
                                       + "WHERE name = 'mapped'") == 0)
        let viewed = try SessionStore(path: path, readOnly: true)
        #expect(try SQLitePeek.userVersion(path) == Schema.version)
        #expect(Schema.version == 16)
        #expect(try viewed.count() == 20)
        #expect(try viewed.flows(limit: 100).flows.allSatisfy { $0.mapped == nil })
        #expect(try viewed.count(filter: try FilterExpression(parsing: "~mapped")) == 0)
        viewed.close()
        let reopened = try SessionStore(path: path)
        defer { reopened.close() }
        let (record, bodies) = Self.flow("later", "map-local")
        reopened.finished(record, json: StoreFixtures.json("later"), bodies: bodies)
        reopened.flush()
        #expect(try reopened.summary(id: "later")?.mapped == "map-local")
        #expect(try reopened.summary(id: "f0")?.mapped == nil)
        #expect(try reopened.count(filter: try FilterExpression(parsing: "~mapped")) == 1)
    }
}
