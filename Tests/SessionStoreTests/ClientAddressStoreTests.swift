import Foundation
import HTTPTypes
@testable import SessionStore
import TestSupport
import Testing

/// The client's address (`flows.client`, the flow log's `client`) and the filters `~src` and
/// `~dst`, as mitmproxy has them: the writer stores the address on every path (many rows at once,
/// one, a running flow updated, a flow stored again, a flow-log line), summaries carry it, `~src`
/// searches it and `~dst` the server's `host:port`; a session from before the column still answers
/// `~src` from its records.
@Suite struct ClientAddressStoreTests {
    /// Flow `c<index>`'s client: two devices of a WireGuard tunnel, loopback, and IPv6 loopback in turn.
    static func client(of index: Int) -> String {
        ["10.0.0.2:41000", "10.0.0.3:52000", "127.0.0.1:60001", "[::1]:60002"][index % 4]
    }

    /// A finished flow from `client` to `host`:`port`, and its flow-log record (which names the client).
    static func flow(_ id: String, client: String?, host: String = "api.example.com",
                     port: Int? = 443) -> (FlowRecord, FlowBodies) {
        var record = StoreFixtures.record(id, host: host, path: "/\(id)")
        record.summary.client = client
        record.summary.port = port
        return (record, FlowBodies())
    }

    static func json(_ id: String, client: String?) -> String {
        client.map { #"{"id":"\#(id)","client":"\#($0)"}"# } ?? #"{"id":"\#(id)"}"#
    }

    /// 20 flows: the writer inserts 16 finished rows in one statement, the other four one by one.
    static func store(in directory: TemporaryDirectory) throws -> SessionStore {
        let store = try SessionStore(path: directory.file("session.sqlite"))
        for index in 0..<20 {
            let (record, bodies) = flow("c\(index)", client: client(of: index))
            store.finished(record, json: json("c\(index)", client: client(of: index)), bodies: bodies)
        }
        store.flush()
        return store
    }

    func count(_ store: SessionStore, _ filter: String) throws -> Int {
        try store.count(filter: try FilterExpression(parsing: filter))
    }

    @Test func theClientIsStoredReadBackAndSelectedBySrc() throws {
        let directory = TemporaryDirectory()
        let store = try Self.store(in: directory)
        defer { store.close() }
        for index in 0..<20 {
            #expect(try store.summary(id: "c\(index)")?.client == Self.client(of: index), "c\(index)")
        }
        #expect(try store.flows(limit: 100).flows.allSatisfy { $0.client == Self.client(of: Int($0.id.dropFirst())!) })
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flows WHERE client IS NOT NULL") == 20)
        #expect(try count(store, #"~src 10\.0\.0\.3:"#) == 5)
        #expect(try count(store, #"~src ^10\.0\.0\."#) == 10)
        #expect(try count(store, #"~src \[::1\]"#) == 5)
        #expect(try count(store, #"!~src 127\.0\.0\.1"#) == 15)
        #expect(try count(store, #"~src :52000$ & ~u /c1$"#) == 1)
        #expect(try count(store, "~SRC 10.0.0.9") == 0)
    }

    @Test func dstIsTheServersHostAndPort() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("session.sqlite"))
        defer { store.close() }
        for (id, host, port) in [("v4", "192.0.2.7", 8443), ("v6", "2001:db8::7", 443), ("name", "api.example.com", 443),
                                 ("noport", "old.example.com", nil as Int?)] {
            let (record, bodies) = Self.flow(id, client: "127.0.0.1:5000", host: host, port: port)
            store.finished(record, json: Self.json(id, client: "127.0.0.1:5000"), bodies: bodies)
        }
        store.flush()
        #expect(try count(store, #"~dst :8443$"#) == 1)
        #expect(try count(store, #"~dst ^\[2001:db8::7\]:443$"#) == 1)
        #expect(try count(store, #"~dst ^api\.example\.com:443$"#) == 1)
        #expect(try count(store, #"~dst :443$"#) == 2)
        // A row without a port (stored before the store kept it) is its host alone.
        #expect(try count(store, #"~dst ^old\.example\.com$"#) == 1)
    }

    /// A running flow's row is updated in place by its `seq` (`updateFlow`); one stored again
    /// goes through the upsert; the proxy's flow-log lines are read for it: the client follows each.
    @Test func everyWritePathKeepsTheClient() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("session.sqlite"))
        defer { store.close() }
        var running = StoreFixtures.record("running", path: "/running", status: nil)
        running.summary.phase = .started
        running.summary.client = "10.0.0.2:41000"
        store.started(running)
        store.flush()
        #expect(try store.summary(id: "running")?.client == "10.0.0.2:41000")
        running.summary.status = 200
        store.finished(running, json: Self.json("running", client: "10.0.0.2:41000"), bodies: FlowBodies())
        store.flush()
        #expect(try store.summary(id: "running")?.client == "10.0.0.2:41000")
        let (again, bodies) = Self.flow("running", client: "10.0.0.3:52000")
        store.finished(again, json: Self.json("running", client: "10.0.0.3:52000"), bodies: bodies)
        store.flush()
        #expect(try store.summary(id: "running")?.client == "10.0.0.3:52000")
        for (id, client) in [("line-v4", #""client":"192.168.1.33:50123","#), ("line-none", #""client":"","#)] {
            let line = #"{"id":"\#(id)","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:00.010Z","#
                + #"\#(client)"mode":"http","server":{"host":"a","port":80},"request":{"method":"GET","#
                + #""url":"http://a/x","http_version":"HTTP/1.1","headers":[]},"response":{"status":200,"#
                + #""http_version":"HTTP/1.1","headers":[]}}"#
            store.finished(flowLogLine: Array(line.utf8))
        }
        store.flush()
        #expect(try store.summary(id: "line-v4")?.client == "192.168.1.33:50123")
        #expect(try store.summary(id: "line-none")?.client == nil)
        #expect(try count(store, #"~src ^192\.168\."#) == 1)
    }

    /// A session of the previous schema (12, before `client`) opens with NULL for its flows'
    /// column; `~src` reads their records instead, and a flow written after has its column.
    @Test func aSessionOfThePreviousVersionIsSelectedFromItsRecords() throws {
        let directory = TemporaryDirectory()
        try Self.store(in: directory).close()
        let path = directory.file("session.sqlite")
        try SQLitePeek.execute(path, "ALTER TABLE flows DROP COLUMN client; ALTER TABLE flows DROP COLUMN replay_of; "
                               + "ALTER TABLE flows DROP COLUMN client_process; ALTER TABLE flows DROP COLUMN client_exe; "
                               + "ALTER TABLE flows DROP COLUMN client_pid; PRAGMA user_version = 12")
        let viewed = try SessionStore(path: path, readOnly: true)
        #expect(try SQLitePeek.userVersion(path) == Schema.version)
        #expect(try viewed.flows(limit: 100).flows.allSatisfy { $0.client == nil })
        #expect(try count(viewed, #"~src 10\.0\.0\.3:"#) == 5)
        #expect(try count(viewed, #"~src \[::1\]"#) == 5)
        viewed.close()
        let reopened = try SessionStore(path: path)
        defer { reopened.close() }
        let (record, bodies) = Self.flow("later", client: "10.0.0.3:52999")
        reopened.finished(record, json: Self.json("later", client: "10.0.0.3:52999"), bodies: bodies)
        reopened.flush()
        #expect(try reopened.summary(id: "later")?.client == "10.0.0.3:52999")
        #expect(try count(reopened, #"~src 10\.0\.0\.3:"#) == 6)
    }
}
