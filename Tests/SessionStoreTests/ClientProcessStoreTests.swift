import DevProxy
import Foundation
@testable import SessionStore
import TestSupport
import Testing

/// The process that made a flow (`flows.client_process`, `client_exe`, `client_pid`: the flow log's
/// `client_process`) and the filter `~proc`: the writer stores them on every path (many rows at
/// once, one, a running flow updated, a flow stored again, a flow-log line, a HAR entry's
/// `_client_process`), summaries carry the name, `~proc` searches name and executable; a session
/// from before the columns opens and `~proc` selects none of its flows.
@Suite struct ClientProcessStoreTests {
    /// Flow `p<index>`'s process: curl, python3, none known, and curl whose executable is unreadable.
    static func process(of index: Int) -> (name: String, exe: String?)? {
        [("curl", "/usr/bin/curl"), ("python3", "/usr/bin/python3.11"), nil, ("curl", nil)][index % 4]
    }

    static func flow(_ id: String, process: (name: String, exe: String?)?) -> (FlowRecord, String) {
        var record = StoreFixtures.record(id, path: "/\(id)")
        record.summary.clientProcess = process?.name
        record.summary.clientExecutable = process?.exe
        record.summary.clientPID = process == nil ? nil : 42
        let object = process.map { p in
            #","client_process":{"pid":42,"name":"\#(p.name)""# + (p.exe.map { #","exe":"\#($0)""# } ?? "") + "}"
        } ?? ""
        return (record, #"{"id":"\#(id)"\#(object)}"#)
    }

    /// 20 flows: the writer inserts 16 finished rows in one statement, the other four one by one.
    static func store(in directory: TemporaryDirectory) throws -> SessionStore {
        let store = try SessionStore(path: directory.file("session.sqlite"))
        for index in 0..<20 {
            let (record, json) = flow("p\(index)", process: process(of: index))
            store.finished(record, json: json, bodies: FlowBodies())
        }
        store.flush()
        return store
    }

    func count(_ store: SessionStore, _ filter: String) throws -> Int {
        try store.count(filter: try FilterExpression(parsing: filter))
    }

    @Test func theProcessIsStoredReadBackAndSelectedByProc() throws {
        let directory = TemporaryDirectory()
        let store = try Self.store(in: directory)
        defer { store.close() }
        for index in 0..<20 {
            let summary = try store.summary(id: "p\(index)")
            #expect(summary?.clientProcess == Self.process(of: index)?.name, "p\(index)")
            #expect(summary?.clientExecutable == Self.process(of: index)?.exe, "p\(index)")
            #expect(summary?.clientPID == (Self.process(of: index) == nil ? nil : 42), "p\(index)")
        }
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flows WHERE client_process IS NOT NULL") == 15)
        #expect(try count(store, "~proc curl") == 10)
        #expect(try count(store, "~PROC ^CURL$") == 10)
        #expect(try count(store, "~proc python") == 5)
        // The executable is searched too: curl's, where it was readable.
        #expect(try count(store, #"~proc ^/usr/bin/curl$"#) == 5)
        #expect(try count(store, #"~proc /usr/bin/"#) == 10)
        // A flow whose process is unknown is not any process's.
        #expect(try count(store, "!~proc curl") == 10)
        #expect(try count(store, "~proc .") == 15)
        #expect(try count(store, "~proc firefox") == 0)
    }

    /// A running flow's row is updated in place by its `seq`; one stored again goes through the
    /// upsert; flow-log lines and a HAR's entries are read for it: the process follows each.
    @Test func everyWritePathKeepsTheProcess() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("session.sqlite"))
        defer { store.close() }
        var running = StoreFixtures.record("running", path: "/running", status: nil)
        running.summary.phase = .started
        running.summary.clientProcess = "curl"
        store.started(running)
        store.flush()
        #expect(try store.summary(id: "running")?.clientProcess == "curl")
        running.summary.status = 200
        running.summary.clientExecutable = "/usr/bin/curl"
        store.finished(running, json: #"{"id":"running"}"#, bodies: FlowBodies())
        store.flush()
        #expect(try store.summary(id: "running")?.clientExecutable == "/usr/bin/curl")
        let (again, json) = Self.flow("running", process: ("wget", "/usr/bin/wget"))
        store.finished(again, json: json, bodies: FlowBodies())
        store.flush()
        #expect(try store.summary(id: "running")?.clientProcess == "wget")
        for (id, process) in [("line", #""client_process":{"pid":7,"name":"node","exe":"/usr/bin/node"},"#),
                              ("line-none", "")] {
            let line = #"{"id":"\#(id)","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:00.010Z","#
                + #""client":"127.0.0.1:5000",\#(process)"mode":"http","server":{"host":"a","port":80},"#
                + #""request":{"method":"GET","url":"http://a/x","http_version":"HTTP/1.1","headers":[]},"#
                + #""response":{"status":200,"http_version":"HTTP/1.1","headers":[]}}"#
            store.finished(flowLogLine: Array(line.utf8))
        }
        store.flush()
        #expect(try store.summary(id: "line")?.clientProcess == "node")
        #expect(try store.summary(id: "line")?.clientExecutable == "/usr/bin/node")
        #expect(try store.summary(id: "line")?.clientPID == 7)
        #expect(try store.summary(id: "line-none")?.clientProcess == nil)
        #expect(try count(store, "~proc ^node$") == 1)
    }

    /// DevProxy's HAR export writes the process as `_client_process`; reading the HAR back
    /// stores it and the record has it whole.
    @Test func aHARKeepsTheProcess() throws {
        let directory = TemporaryDirectory()
        let line = #"{"id":"h1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","#
            + #""client":"127.0.0.1:1","client_process":{"pid":4242,"name":"curl","exe":"/usr/bin/curl"},"#
            + #""mode":"http","server":{"host":"api.example.com","port":80},"#
            + #""request":{"method":"GET","url":"http://api.example.com/x","http_version":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":200,"reason":"OK","http_version":"HTTP/1.1","headers":[]},"#
            + #""timings":{"connect":1,"tls":-1,"send":1,"wait":2,"receive":1}}"#
        let flow = try JSONDecoder().decode(Flow.self, from: Data(line.utf8))
        #expect(flow.clientProcess == Flow.ClientProcess(pid: 4242, name: "curl", exe: "/usr/bin/curl"))
        let path = directory.file("session.har")
        try HARWriter.write([flow], to: path)
        let har = try String(contentsOfFile: path, encoding: .utf8)
        #expect(har.contains(#""_client_process""#))
        let (store, _) = try SessionImport.open(path: path)
        defer { store.close() }
        #expect(try store.summary(id: "h1")?.clientProcess == "curl")
        #expect(try store.summary(id: "h1")?.clientPID == 4242)
        let record = try #require(try store.flowJSON(id: "h1"))
        let object = try JSONSerialization.jsonObject(with: Data(record.utf8)) as? [String: Any]
        let process = object?["client_process"] as? [String: Any]
        #expect(process?["pid"] as? Int == 4242 && process?["exe"] as? String == "/usr/bin/curl")
    }

    /// A session of the schema before the columns (14) opens with NULL for its flows'
    /// process (their records never had one), `~proc` selects none of them, and a flow written
    /// after has its columns.
    @Test func aSessionOfThePreviousVersionOpens() throws {
        let directory = TemporaryDirectory()
        try Self.store(in: directory).close()
        let path = directory.file("session.sqlite")
        try SQLitePeek.execute(path, "ALTER TABLE flows DROP COLUMN client_process; "
                               + "ALTER TABLE flows DROP COLUMN client_exe; ALTER TABLE flows DROP COLUMN client_pid; "
                               + "PRAGMA user_version = 14")
        let viewed = try SessionStore(path: path, readOnly: true)
        #expect(try SQLitePeek.userVersion(path) == Schema.version)
        #expect(try viewed.flows(limit: 100).flows.count == 20)
        #expect(try viewed.flows(limit: 100).flows.allSatisfy { $0.clientProcess == nil })
        #expect(try count(viewed, "~proc curl") == 0)
        #expect(try count(viewed, "!~proc curl") == 20)
        viewed.close()
        let reopened = try SessionStore(path: path)
        defer { reopened.close() }
        let (record, json) = Self.flow("later", process: ("curl", "/usr/bin/curl"))
        reopened.finished(record, json: json, bodies: FlowBodies())
        reopened.flush()
        #expect(try reopened.summary(id: "later")?.clientProcess == "curl")
        #expect(try count(reopened, "~proc curl") == 1)
    }
}
