import Foundation
import HTTPTypes
@testable import SessionStore
import TestSupport
import XCTest

/// The store's lifecycle, paging, files and bodies.
final class SessionStoreTests: XCTestCase {
    func testLifecycleUpsertsOneRowThatMovesForwardOnly() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        var record = StoreFixtures.record("f1", status: nil)
        store.started(record)
        store.flush()
        var summary = try XCTUnwrap(try store.summary(id: "f1"))
        XCTAssertEqual(summary.phase, .started)
        XCTAssertNil(summary.status)
        XCTAssertNil(try store.flowJSON(id: "f1"), "no record before the flow finishes")
        let sequence = summary.sequence

        record.summary.status = 201
        record.responseHeaders = [["Content-Type", "text/plain"]]
        store.responded(record)
        store.flush()
        summary = try XCTUnwrap(try store.summary(id: "f1"))
        XCTAssertEqual(summary.phase, .responded)
        XCTAssertEqual(summary.status, 201)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~hs text/plain")), 1)

        store.finished(record, json: #"{"id":"f1"}"#, bodies: FlowBodies(response: StoreFixtures.text("hello")))
        // A late `responded` (a retried event) must not take a finished flow back.
        store.responded(record)
        store.flush()
        summary = try XCTUnwrap(try store.summary(id: "f1"))
        XCTAssertEqual(summary.phase, .finished)
        XCTAssertEqual(summary.sequence, sequence, "updates keep the flow's place")
        XCTAssertEqual(try store.count(), 1)
        XCTAssertEqual(try store.flowJSON(id: "f1"), #"{"id":"f1"}"#)
        XCTAssertEqual(try store.body(id: "f1", part: .response)?.text, "hello")
        XCTAssertNil(try store.body(id: "f1", part: .request))
    }

    /// A flow's first write is a plain insert and its later steps update its row by `seq`; an id
    /// already stored (a second `finished`, as a re-import sends) still updates the row in place,
    /// and `bodies_dropped`, once set, stays set.
    /// The header block `~h` searches: `name: value` lines, UTF-8 kept byte for byte (an entry
    /// that was not a pair was made one by `FieldPairs`); and a record that brings its blocks
    /// made is stored with them.
    func testHeaderTextIsOneLinePerFieldAndPrecomputedBlocksAreStored() throws {
        let fields: FieldPairs = [["Host", "a.test"], ["X-Name", "Zoë ✓"], ["lonely"], [], ["Three", "parts", "x"],
                                  ["Empty", ""]]
        XCTAssertEqual(FlowRecord.headerText(fields), "Host: a.test\nX-Name: Zoë ✓\nlonely: \nThree: parts\nEmpty: ")
        XCTAssertNil(FlowRecord.headerText(FieldPairs()))
        XCTAssertEqual(FlowRecord.headerText([["A", "1"]]), "A: 1")
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("heads.sqlite"))
        defer { store.close() }
        var record = StoreFixtures.record("pre")
        record.headerText = FlowRecord.HeaderText(request: [["Accept", "*/*"]], response: [["Server", "ünï"]])
        store.finished(record, jsonLine: Array("{\"id\":\"pre\"}\n".utf8), bodies: FlowBodies())
        store.flush()
        XCTAssertEqual(try store.headerFields(id: "pre", part: .request)?.map(\.name), ["Accept"])
        XCTAssertEqual(try store.headerFields(id: "pre", part: .response)?.map(\.value), ["ünï"])
        XCTAssertEqual(try store.flowJSON(id: "pre"), "{\"id\":\"pre\"}", "the line is stored without its newline")
    }

    func testAnIDWrittenAgainUpdatesItsRowInPlace() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        defer { store.close() }
        var record = StoreFixtures.record("dup")
        record.summary.bodiesDropped = true
        store.finished(record, json: "{}", bodies: .init())
        store.flush()
        let first = try XCTUnwrap(try store.summary(id: "dup"))
        record.summary.bodiesDropped = false
        record.summary.status = 500
        store.finished(record, json: #"{"id":"dup"}"#, bodies: .init())
        store.flush()
        let second = try XCTUnwrap(try store.summary(id: "dup"))
        XCTAssertEqual(second.sequence, first.sequence)
        XCTAssertEqual(second.status, 500)
        XCTAssertTrue(second.bodiesDropped)
        XCTAssertEqual(try store.count(), 1)
        XCTAssertEqual(try store.flowJSON(id: "dup"), #"{"id":"dup"}"#)
        // A flow running at a `clear` stays out of the store when it moves on and ends (as
        // mitmproxy's view.clear drops it): the list does not get back a request pending then.
        // A flow that starts after the clear is written as usual.
        store.started(StoreFixtures.record("run", status: nil))
        store.flush()
        store.clear()
        store.responded(StoreFixtures.record("run"))
        store.started(StoreFixtures.record("new", status: nil))
        store.flush()
        store.finished(StoreFixtures.record("run"), json: "{}", bodies: .init())
        store.finished(StoreFixtures.record("new"), json: "{}", bodies: .init())
        store.flush()
        XCTAssertNil(try store.summary(id: "run"))
        XCTAssertEqual(try store.summary(id: "new")?.phase, .finished)
        XCTAssertEqual(try store.count(), 1)
        // Its id is written again once it has ended (an import of the same flow log, say).
        store.finished(StoreFixtures.record("run"), json: "{}", bodies: .init())
        store.flush()
        XCTAssertEqual(try store.count(), 2)
    }

    /// A flow written again (an import of the same flows) reads back as its newest write, whether
    /// that or the older one was kept in a frame or alone: no stale record, head or body remains
    /// for a filter to find.
    func testAFlowWrittenAgainReadsItsNewestRecordWhereverItIsKept() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        defer { store.close() }
        let large = #"{"id":"dup","pad":""# + String(repeating: "x", count: 20_000) + #""}"#
        let largeBody = StoreFixtures.text("old " + String(repeating: "y", count: 20_000))
        func write(_ json: String, body: StoredBody, header: String) {
            store.finished(StoreFixtures.record("dup", responseHeaders: [["X-Version", header]]), json: json,
                           bodies: FlowBodies(response: body))
            store.flush()
        }
        func count(_ filter: String) throws -> Int { try store.count(filter: FilterExpression(parsing: filter)) }
        write(large, body: largeBody, header: "alone")
        XCTAssertEqual(try store.flowJSON(id: "dup"), large)
        XCTAssertEqual(try count("~bs '^old'"), 1)
        write(#"{"id":"dup","v":2}"#, body: StoreFixtures.text("new"), header: "framed")
        XCTAssertEqual(try store.flowJSON(id: "dup"), #"{"id":"dup","v":2}"#)
        XCTAssertEqual(try store.body(id: "dup", part: .response)?.text, "new")
        XCTAssertEqual(try count("~bs '^old'"), 0, "the older body row is gone")
        XCTAssertEqual(try count("~hs 'alone'"), 0, "the older head row is gone")
        XCTAssertEqual(try count("~hs 'framed'"), 1)
        write(large, body: largeBody, header: "alone again")
        XCTAssertEqual(try store.flowJSON(id: "dup"), large, "a record kept alone replaces the framed one")
        XCTAssertEqual(try store.headerFields(id: "dup", part: .response)?.first?.value, "alone again")
        XCTAssertEqual(try count("~hs 'framed'"), 0)
        XCTAssertEqual(try store.count(), 1)
    }

    func testCursorsPageThroughInBothOrdersAndStayStableWhileFlowsArrive() throws {
        let directory = TemporaryDirectory()
        let flows = (1...25).map { (StoreFixtures.record("f\($0)", host: $0 % 2 == 0 ? "even.test" : "odd.test"), FlowBodies()) }
        let store = try StoreFixtures.store(in: directory, flows: flows)
        let even = try FilterExpression(parsing: "~d even")

        var page = try store.flows(filter: even, limit: 5)
        XCTAssertEqual(page.total, 12)
        XCTAssertEqual(page.flows.map(\.id), ["f24", "f22", "f20", "f18", "f16"])
        // Flows arriving between pages land before the first page, never inside the next ones.
        for index in 26...30 { store.finished(StoreFixtures.record("f\(index)", host: "even.test"), json: "{}", bodies: .init()) }
        store.flush()
        page = try store.flows(filter: even, limit: 5, cursor: page.nextCursor)
        XCTAssertEqual(page.flows.map(\.id), ["f14", "f12", "f10", "f8", "f6"])
        XCTAssertEqual(page.total, 17, "the total counts the new flows too")
        page = try store.flows(filter: even, limit: 5, cursor: page.nextCursor)
        XCTAssertEqual(page.flows.map(\.id), ["f4", "f2"])
        XCTAssertNil(page.nextCursor)

        let oldest = try store.flows(limit: 10, order: .oldestFirst)
        XCTAssertEqual(oldest.flows.map(\.id), (1...10).map { "f\($0)" })
        let cursor = try XCTUnwrap(FlowCursor(oldest.nextCursor?.description ?? ""), "a cursor survives the API's text")
        let next = try store.flows(limit: 100, cursor: cursor, order: .oldestFirst)
        XCTAssertEqual(next.flows.map(\.id), (11...30).map { "f\($0)" })
        XCTAssertNil(next.nextCursor)
    }

    /// Sorted by a column: values missing (a pending flow's status) last in either direction, ties
    /// newest first, host without regard to case, pages by cursor, under a filter too.
    func testPagesSortedByAColumnKeepFlowsWithoutAValueLast() throws {
        let directory = TemporaryDirectory()
        var flows: [(FlowRecord, FlowBodies)] = []
        for (index, status) in [200, 404, nil, 500, 200, 301].enumerated() {
            var record = StoreFixtures.record("s\(index)", host: ["b.test", "A.test", "c.test"][index % 3], status: status)
            record.summary.durationMs = Double(10 * (6 - index))
            flows.append((record, FlowBodies()))
        }
        let store = try StoreFixtures.store(in: directory, flows: flows)
        let ids = { (sort: String, filter: String?) in
            try store.flows(filter: filter.map { try FilterExpression(parsing: $0) }, limit: 100,
                            sort: XCTUnwrap(FlowSort(sort))).flows.map(\.id)
        }
        XCTAssertEqual(try ids("status", nil), ["s4", "s0", "s5", "s1", "s3", "s2"])
        XCTAssertEqual(try ids("-status", nil), ["s3", "s1", "s5", "s4", "s0", "s2"])
        XCTAssertEqual(try ids("duration", nil), ["s5", "s4", "s3", "s2", "s1", "s0"])
        XCTAssertEqual(try ids("host", nil), ["s4", "s1", "s3", "s0", "s5", "s2"])
        XCTAssertEqual(try ids("-time", nil), ["s5", "s4", "s3", "s2", "s1", "s0"])
        XCTAssertEqual(try ids("-status", "!~d c.test"), ["s3", "s1", "s4", "s0"])
        var page = try store.flows(limit: 4, sort: FlowSort(column: .status, descending: true))
        XCTAssertEqual(page.flows.map(\.id), ["s3", "s1", "s5", "s4"])
        XCTAssertEqual(page.total, 6)
        page = try store.flows(limit: 4, cursor: page.nextCursor, sort: FlowSort(column: .status, descending: true))
        XCTAssertEqual(page.flows.map(\.id), ["s0", "s2"])
        XCTAssertNil(page.nextCursor)
        // Page by page, one flow at a time, every column both ways gives the same list as one page.
        for column in FlowSort.Column.allCases {
            for descending in [false, true] {
                let sort = FlowSort(column: column, descending: descending)
                let whole = try store.flows(limit: 100, sort: sort).flows.map(\.id)
                var paged: [String] = []
                var cursor: FlowCursor?
                repeat {
                    let page = try store.flows(limit: 1, cursor: cursor, sort: sort)
                    paged += page.flows.map(\.id)
                    cursor = page.nextCursor
                } while cursor != nil && paged.count < 20
                XCTAssertEqual(paged, whole, "\(sort.description)")
                XCTAssertEqual(whole.count, 6)
            }
        }
        XCTAssertNil(FlowSort("-colour"))
        XCTAssertEqual(FlowSort("-size")?.description, "-size")
    }

    func testPagingWhileAnotherThreadWritesNeverRepeatsOrSkipsAFlow() throws {
        let directory = TemporaryDirectory()
        let initial = (0..<500).map { (StoreFixtures.record("old\($0)"), FlowBodies()) }
        let store = try StoreFixtures.store(in: directory, flows: initial)
        let writing = DispatchSemaphore(value: 0)
        Thread {
            for index in 0..<2000 { store.started(StoreFixtures.record("new\(index)", status: nil)) }
            store.flush()
            writing.signal()
        }.start()
        var seen: [String] = []
        var cursor: FlowCursor?
        var last = Int64.max
        repeat {
            let page = try store.flows(filter: FilterExpression(parsing: "~d example"), limit: 37, cursor: cursor)
            XCTAssertTrue(page.flows.allSatisfy { $0.sequence < last }, "newest first, each page after the last")
            last = page.flows.last?.sequence ?? last
            seen += page.flows.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        XCTAssertEqual(writing.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(Set(seen).count, seen.count, "no flow twice")
        XCTAssertTrue(Set(seen).isSuperset(of: initial.map(\.0.summary.id)), "every flow there at the start")
    }

    func testTheFileAndItsWALAreOwnerOnly() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        XCTAssertEqual(directory.mode("session.sqlite"), 0o600)
        XCTAssertEqual(directory.mode("session.sqlite-wal"), 0o600)
        store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("session.sqlite-wal")),
                       "closing folds the WAL into the one session file")
    }

    func testSchemaVersionIsWrittenAndANewerFileIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        try StoreFixtures.store(in: directory).close()
        // Reopening migrates nothing and keeps the flows.
        let reopened = try SessionStore(path: directory.file("session.sqlite"), readOnly: true)
        XCTAssertEqual(try reopened.count(), StoreFixtures.flows.count)
        reopened.close()

        try SessionStore(path: path).close()
        XCTAssertEqual(try SQLitePeek.userVersion(path), 16)
        XCTAssertEqual(try SQLitePeek.indexes(path, table: "flows"), ["sqlite_autoindex_flows_1"])
        // A version-1 file (with the host index no query used, no record dictionaries, its records
        // as plain text in `flow_records`, no body files, no frames) is migrated on open, flows and
        // records kept.
        let old = directory.file("session.sqlite")
        try SQLitePeek.execute(old, """
            CREATE INDEX flows_host ON flows(host COLLATE NOCASE); DROP TABLE record_dictionaries;
            ALTER TABLE bodies DROP COLUMN file;
            INSERT OR REPLACE INTO flow_records SELECT seq, '{"old":true}' FROM flows;
            ALTER TABLE flows DROP COLUMN record; DROP TABLE record_frames; ALTER TABLE flows DROP COLUMN grpc_status;
            ALTER TABLE flows DROP COLUMN port; ALTER TABLE flows DROP COLUMN informational; DROP TABLE grpc_schemas;
            DROP TABLE flow_notes; ALTER TABLE flows DROP COLUMN graphql; ALTER TABLE flows DROP COLUMN graphql_errors;
            ALTER TABLE flows DROP COLUMN mapped; ALTER TABLE flows DROP COLUMN client;
            ALTER TABLE flows DROP COLUMN replay_of; ALTER TABLE flows DROP COLUMN client_process;
            ALTER TABLE flows DROP COLUMN client_exe; ALTER TABLE flows DROP COLUMN client_pid;
            PRAGMA user_version = 1
            """)
        // Opened for reading only (`devproxy web FILE`, `devproxy sessions`), it is brought
        // forward in place first, as opening it for writing would.
        let viewed = try SessionStore(path: old, readOnly: true)
        XCTAssertEqual(try viewed.count(), StoreFixtures.flows.count)
        XCTAssertEqual(try viewed.flowJSON(id: StoreFixtures.flows[1].0.summary.id), #"{"old":true}"#)
        viewed.close()
        XCTAssertEqual(try SQLitePeek.userVersion(old), Schema.version)
        let migrated = try SessionStore(path: old)
        XCTAssertEqual(try migrated.count(), StoreFixtures.flows.count)
        let someID = StoreFixtures.flows[0].0.summary.id
        XCTAssertEqual(try migrated.flowJSON(id: someID), #"{"old":true}"#)
        migrated.close()
        XCTAssertEqual(try SQLitePeek.userVersion(old), 16)
        XCTAssertEqual(try SQLitePeek.integer(old, "SELECT count(*) FROM grpc_schemas"), 0)
        XCTAssertEqual(try SQLitePeek.integer(old, "SELECT count(*) FROM pragma_table_info('flows') WHERE name = 'record'"), 1)
        XCTAssertEqual(try SQLitePeek.integer(old, "SELECT count(*) FROM pragma_table_info('flows') WHERE name = 'grpc_status'"), 1)
        XCTAssertEqual(try SQLitePeek.integer(old, "SELECT count(*) FROM pragma_table_info('flows') WHERE name IN ('port', 'informational')"), 2)
        XCTAssertEqual(try SQLitePeek.integer(old, "SELECT count(*) FROM pragma_table_info('bodies') WHERE name = 'file'"), 1)
        XCTAssertEqual(try SQLitePeek.indexes(old, table: "flows"), ["sqlite_autoindex_flows_1"], "no host or status index")
        XCTAssertEqual(try SQLitePeek.integer(old, "SELECT count(*) FROM record_dictionaries"), 0)
        try SQLitePeek.setUserVersion(path, 99)
        XCTAssertThrowsError(try SessionStore(path: path)) { error in
            XCTAssertEqual((error as? SessionStoreError)?.code, .schema)
        }
        let notASession = directory.write("plain.sqlite", "")
        XCTAssertThrowsError(try SessionStore(path: notASession, readOnly: true))
    }

    /// `--grpc-reflection`'s answers (`grpc_schemas`): kept after the flows queued before them,
    /// read back in order and from a row on (a viewer reads only the new ones), left by `clear`
    /// (they describe servers, not flows), and readable through a read-only store.
    func testGRPCSchemasAreKeptInOrderAndOutliveClear() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let store = try SessionStore(path: path)
        XCTAssertEqual(try store.grpcSchemas(), [])
        let first = StoredGRPCSchema(host: "api.example", port: 443, service: "lab.Echo", learned: "2026-12-06T17:00:00Z",
                                     descriptorSet: [0x0A, 0x02, 0x0A, 0x00])
        var second = first
        (second.host, second.port, second.service, second.descriptorSet) = ("[::1]", 50051, "lab.Other", Array(repeating: 7, count: 70_000))
        store.saveGRPCSchema(first)
        store.saveGRPCSchema(second)
        store.flush()
        let read = try store.grpcSchemas()
        XCTAssertEqual(read.map(\.service), ["lab.Echo", "lab.Other"])
        XCTAssertEqual(read.map(\.descriptorSet), [first.descriptorSet, second.descriptorSet])
        XCTAssertEqual(read.map(\.host), ["api.example", "[::1]"])
        XCTAssertEqual(read.last?.port, 50051)
        XCTAssertEqual(read.first?.learned, "2026-12-06T17:00:00Z")
        XCTAssertEqual(try store.grpcSchemas(after: read[0].id).map(\.service), ["lab.Other"])
        XCTAssertEqual(try store.grpcSchemas(after: read[1].id), [])
        // A set larger than a reader takes comes without its bytes, its size said.
        let capped = try store.grpcSchemas(largest: 1_000)
        XCTAssertEqual(capped.map(\.descriptorSet), [first.descriptorSet, []])
        XCTAssertEqual(capped.map(\.size), [4, 70_000])
        store.clear()
        XCTAssertEqual(try store.grpcSchemas().count, 2)
        store.close()
        let viewed = try SessionStore(path: path, readOnly: true)
        XCTAssertEqual(try viewed.grpcSchemas().map(\.service), ["lab.Echo", "lab.Other"])
        viewed.saveGRPCSchema(first)
        viewed.close()
    }

    /// An empty body (a GET's request) is stored as no row, and read back exactly as it was
    /// given: empty bytes and text, size 0, the SHA-256 of nothing; a flow whose size is not 0,
    /// or that has not finished, still has no body.
    func testAnEmptyBodyIsNoRowAndReadsBackEmpty() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        defer { store.close() }
        let empty = StoredBody(bytes: [], sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", text: "")
        var record = StoreFixtures.record("get")
        record.summary.requestSize = 0
        record.summary.responseSize = 2
        store.finished(record, json: "{}", bodies: FlowBodies(request: empty, response: StoreFixtures.text("ok")))
        var running = StoreFixtures.record("running")
        running.summary.requestSize = 0
        store.started(running)
        store.flush()
        // Neither body is a row: the empty one is read from the flow's size, the small one from
        // the flow's frame (`FramedBody`).
        XCTAssertEqual(try SQLitePeek.integer(directory.file("s.sqlite"), "SELECT count(*) FROM bodies"), 0)
        XCTAssertEqual(try store.body(id: "get", part: .request), empty)
        XCTAssertEqual(try store.body(id: "get", part: .response)?.bytes, Array("ok".utf8))
        XCTAssertEqual(try store.bodyExtent(id: "get", part: .request),
                       SessionStore.BodyExtent(stored: 0, size: 0, sha256: empty.sha256, bytesAreText: true))
        var pieces = 0
        XCTAssertTrue(try store.streamBody(id: "get", part: .request) { _ in pieces += 1 })
        XCTAssertEqual(pieces, 0)
        XCTAssertFalse(try store.streamBody(id: "get", part: .request, text: true) { _ in })
        XCTAssertNil(try store.body(id: "running", part: .request), "not finished: no body yet")
        XCTAssertNil(try store.bodyExtent(id: "nobody", part: .request))
        // A body with bytes, or a HAR import's empty body without a hash, is still a row.
        let unhashed = StoredBody(bytes: [], text: "")
        var imported = StoreFixtures.record("imported")
        imported.summary.requestSize = 0
        store.finished(imported, json: "{}", bodies: FlowBodies(request: unhashed))
        store.flush()
        XCTAssertEqual(try store.body(id: "imported", part: .request)?.sha256, nil)
    }

    func testBodiesBeyondTheLimitKeepTheirFirstBytesSizeAndHash() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"), configuration: .init(bodyLimit: 8))
        let large = StoredBody(bytes: Array("0123456789abcdef".utf8), sha256: "feed", text: "0123456789abcdef")
        let binary = StoredBody(bytes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], size: 1000, sha256: "beef")
        store.finished(StoreFixtures.record("f"), json: "{}", bodies: FlowBodies(request: binary, response: large))
        store.flush()
        let response = try XCTUnwrap(try store.body(id: "f", part: .response))
        XCTAssertEqual(response.bytes, Array("01234567".utf8))
        XCTAssertEqual(response.text, "01234567")
        XCTAssertEqual(response.size, 16)
        XCTAssertEqual(response.sha256, "feed")
        XCTAssertTrue(response.truncated)
        let request = try XCTUnwrap(try store.body(id: "f", part: .request))
        XCTAssertEqual(request.bytes, [0, 1, 2, 3, 4, 5, 6, 7])
        XCTAssertNil(request.text)
        XCTAssertEqual(request.size, 1000)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~bs 4567")), 1)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~bs 89")), 0, "past the limit is not stored")
    }

    func testADecodedBodyIsSearchedAsTextAndReturnedAsBytes() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        // Bytes as on the wire (say gzip), text as the flow log decodes it.
        let wire: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0xA1, 0x00, 0x42]
        let body = StoredBody(bytes: wire, size: 7, sha256: "aa", text: #"{"greeting":"Grüße"}"#)
        store.finished(StoreFixtures.record("gz"), json: "{}", bodies: FlowBodies(response: body))
        store.flush()
        XCTAssertEqual(try store.body(id: "gz", part: .response), body)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~bs greeting")), 1)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~bs 'grüsse|GRÜSSE|grüße'")), 1,
                       "non-ASCII patterns go to ICU, case-insensitively")
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~bs '\\x8b'")), 0, "the text, not the wire bytes")
    }

    func testObserversReceiveCommittedBatchesAndClear() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        let received = LockedBox<[StoreChanges]>([])
        let token = store.addObserver { changes in received.mutate { $0.append(changes) } }
        store.started(StoreFixtures.record("a", status: nil))
        store.flush()
        store.finished(StoreFixtures.record("a"), json: "{}", bodies: .init())
        store.flush()
        let flows = received.value.flatMap(\.flows)
        XCTAssertEqual(flows.map(\.phase), [.started, .finished])
        XCTAssertEqual(Set(flows.map(\.sequence)).count, 1)
        XCTAssertGreaterThan(flows[0].sequence, 0)

        store.clear()
        XCTAssertEqual(try store.count(), 0)
        XCTAssertEqual(received.value.last?.cleared, true)
        store.removeObserver(token)
        store.finished(StoreFixtures.record("b"), json: "{}", bodies: .init())
        store.flush()
        XCTAssertFalse(received.value.flatMap(\.flows).contains { $0.id == "b" })
        // Sequence numbers are never reused after a clear, so old cursors cannot point at new flows.
        XCTAssertGreaterThan(try XCTUnwrap(try store.summary(id: "b")).sequence, flows[0].sequence)
    }

    /// A flow whose steps arrive in one batch is written once, as finished: the writer skips the
    /// `started` and `responded` steps a later `finished` in the same batch makes stale, and
    /// observers see only the finished flow. Steps of other flows and a `clear` between are kept.
    func testStepsOfAFlowFinishedInTheSameBatchAreCoalesced() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"))
        let received = LockedBox<[StoreChanges]>([])
        _ = store.addObserver { changes in received.mutate { $0.append(changes) } }
        // Queued without a flush between them: one writer batch (the writer may take the first
        // event alone before the rest arrive, so only what follows is checked strictly).
        store.started(StoreFixtures.record("x", status: nil))
        store.started(StoreFixtures.record("a", status: nil))
        store.responded(StoreFixtures.record("a"))
        store.started(StoreFixtures.record("b", status: nil))
        store.finished(StoreFixtures.record("a"), json: "{}", bodies: .init())
        store.flush()
        let seen = received.value.flatMap(\.flows)
        let stepsOfA = seen.filter { $0.id == "a" }.map(\.phase)
        XCTAssertEqual(stepsOfA.last, .finished)
        XCTAssertTrue(stepsOfA.count < 3 || stepsOfA == [.started, .responded, .finished])
        XCTAssertEqual(seen.filter { $0.id == "b" }.map(\.phase), [.started], "a flow still running keeps its step")
        XCTAssertEqual(try store.summary(id: "a")?.phase, .finished)
        XCTAssertEqual(try store.count(), 3)
        let writer = StoreWriterProbe.coalesce(in: directory, [
            .flow(StoreFixtures.record("c", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("c"), phase: .responded, json: nil, bodies: nil),
            .flow(StoreFixtures.record("d", status: nil), phase: .started, json: nil, bodies: nil),
            .clear,
            .flow(StoreFixtures.record("c"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
        ])
        XCTAssertEqual(writer, ["c started", "c responded", "d started", "clear", "c finished"],
                       "a clear between keeps the steps before it")
        let plain = StoreWriterProbe.coalesce(in: directory, [
            .flow(StoreFixtures.record("e", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("f", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("e"), phase: .responded, json: nil, bodies: nil),
            .flow(StoreFixtures.record("e"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
        ])
        XCTAssertEqual(plain, ["e finished", "f started"], "a finished flow takes its first step's place")
        let twice = StoreWriterProbe.coalesce(in: directory, [
            .flow(StoreFixtures.record("g", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("h"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
            .flow(StoreFixtures.record("g"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
            .flow(StoreFixtures.record("g"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
        ])
        XCTAssertEqual(twice, ["g finished", "g finished", "h finished"], "a flow finished twice keeps both, in order")
    }

    /// Flows are numbered (`seq`) in the order they started, not the order they finished: a
    /// request that started first and answered last, as one of a page's parallel requests does,
    /// is listed below those that started after it (newest first), as browsers' network panels
    /// and mitmproxy list them. It used to be numbered, and listed, as the newest of them when its
    /// steps and theirs met in one writer batch.
    func testFlowsAreNumberedInTheOrderTheyStarted() throws {
        let directory = TemporaryDirectory()
        // A long batch delay: every step below meets in the writer's first batch.
        var configuration = SessionStoreConfiguration()
        configuration.batchDelay = 30
        let store = try SessionStore(path: directory.file("s.sqlite"), configuration: configuration)
        defer { store.close() }
        store.started(StoreFixtures.record("slow", status: nil))
        store.started(StoreFixtures.record("quick", status: nil))
        store.started(StoreFixtures.record("running", status: nil))
        store.finished(StoreFixtures.record("quick"), json: "{}", bodies: .init())
        store.started(StoreFixtures.record("late", status: nil))
        store.finished(StoreFixtures.record("late"), json: "{}", bodies: .init())
        store.finished(StoreFixtures.record("slow"), json: "{}", bodies: .init())
        store.flush()
        let page = try store.flows(limit: 10, order: .newestFirst)
        XCTAssertEqual(page.flows.map(\.id), ["late", "running", "quick", "slow"])
        XCTAssertEqual(page.flows.map(\.phase), [.finished, .started, .finished, .finished])
        // A flow that started in an earlier batch keeps the number that batch gave it.
        store.finished(StoreFixtures.record("running"), json: "{}", bodies: .init())
        store.started(StoreFixtures.record("next", status: nil))
        store.flush()
        XCTAssertEqual(try store.flows(limit: 10, order: .newestFirst).flows.map(\.id),
                       ["next", "late", "running", "quick", "slow"])
    }

    /// The writer waits `batchDelay` once an event is queued, so steps offered a few milliseconds
    /// apart (a short exchange's) share one batch and commit: the observer is told once, with the
    /// finished flow only. With no delay, the writer commits a step as soon as it arrives.
    func testTheWriterGathersStepsThatArriveWithinItsBatchDelay() throws {
        let directory = TemporaryDirectory()
        func observed(_ store: SessionStore) -> LockedBox<[[String]]> {
            let received = LockedBox<[[String]]>([])
            _ = store.addObserver { changes in
                received.mutate { $0.append(changes.flows.map { "\($0.id) \($0.phase)" }) }
            }
            return received
        }
        func waitFor(_ received: LockedBox<[[String]]>, _ last: String) {
            // Not flushed: the writer's own timing decides the batches.
            let deadline = Date().addingTimeInterval(10)
            while received.value.flatMap({ $0 }).last != last && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        let gathering = try SessionStore(path: directory.file("gathered.sqlite"),
                                         configuration: SessionStoreConfiguration(batchDelay: 1))
        defer { gathering.close() }
        let gathered = observed(gathering)
        gathering.started(StoreFixtures.record("a", status: nil))
        Thread.sleep(forTimeInterval: 0.02)
        gathering.responded(StoreFixtures.record("a"))
        Thread.sleep(forTimeInterval: 0.02)
        gathering.finished(StoreFixtures.record("a"), json: "{}", bodies: .init())
        waitFor(gathered, "a finished")
        XCTAssertEqual(gathered.value, [["a finished"]])

        let immediate = try SessionStore(path: directory.file("immediate.sqlite"),
                                         configuration: SessionStoreConfiguration(batchDelay: 0))
        defer { immediate.close() }
        let committed = observed(immediate)
        immediate.started(StoreFixtures.record("b", status: nil))
        waitFor(committed, "b started")
        XCTAssertEqual(committed.value, [["b started"]], "without a delay the step is committed alone")
    }

    /// A running flow's steps are held back one batch (`StoreWriter.heldBack`): those of flows that
    /// finish in the batch, steps already held once and anything before a `clear` stay.
    func testTheWriterHoldsBackTheStepsOfFlowsStillRunning() {
        func names(_ events: [StoreEvent]) -> [String] {
            events.map { event in
                switch event {
                case .clear: return "clear"
                case .step(let step): return "\(step.id) \(step.phase)"
                case .flowLogLine: return "line"
                case .grpcSchema: return "grpc schema"
                }
            }
        }
        var batch: [StoreEvent] = [
            .flow(StoreFixtures.record("old", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("a", status: nil), phase: .started, json: nil, bodies: nil),
            .clear,
            .flow(StoreFixtures.record("b", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("c", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("b"), phase: .responded, json: nil, bodies: nil),
            .flow(StoreFixtures.record("c"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
        ]
        let held = StoreWriter.heldBack(from: &batch, after: 1)
        XCTAssertEqual(names(held), ["b started", "b responded"])
        XCTAssertEqual(names(batch), ["old started", "a started", "clear", "c started", "c finished"])
        var finishing: [StoreEvent] = [
            .flow(StoreFixtures.record("d", status: nil), phase: .started, json: nil, bodies: nil),
            .flow(StoreFixtures.record("d"), phase: .finished, json: FlowJSON("{}"), bodies: nil),
        ]
        XCTAssertEqual(names(StoreWriter.heldBack(from: &finishing, after: 0)), [])
        XCTAssertEqual(names(finishing), ["d started", "d finished"], "nothing held: the batch as it was")
    }

    /// A flow whose first step reached the writer in one batch and whose end came in the next is
    /// written once, as finished: its `started` step waited for the next batch. One that is still
    /// running when nothing more comes is written a batch delay later, without a flush.
    func testARunningFlowsStepWaitsOneBatchForItsEnd() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"),
                                     configuration: SessionStoreConfiguration(batchDelay: 1))
        defer { store.close() }
        let received = LockedBox<[[String]]>([])
        _ = store.addObserver { changes in
            received.mutate { $0.append(changes.flows.map { "\($0.id) \($0.phase)" }) }
        }
        func waitFor(_ last: String) {
            let deadline = Date().addingTimeInterval(20)
            while received.value.flatMap({ $0 }).last != last && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        // The writer gathers for 1 s, takes `a started` alone and holds it back, then waits up to
        // 1 s for more: `a finished` comes half way.
        store.started(StoreFixtures.record("a", status: nil))
        Thread.sleep(forTimeInterval: 1.5)
        store.finished(StoreFixtures.record("a"), json: "{}", bodies: .init())
        waitFor("a finished")
        XCTAssertEqual(received.value, [["a finished"]], "the running row was never written")
        // Nothing follows `r started`: it is written once the writer has waited a batch delay.
        store.started(StoreFixtures.record("r", status: nil))
        waitFor("r started")
        XCTAssertEqual(received.value.last, ["r started"])
        XCTAssertEqual(try store.summary(id: "r")?.phase, .started)
    }

    /// Finished flows whose rows go in together (`StoreWriter.rowsPerInsert` to a statement) are
    /// numbered in the order they were applied and keep their own records, heads and bodies; one
    /// whose id is already stored (a flow log read twice) is written over the stored row, as it
    /// was one at a time, and one whose stored row is further on is left as it is.
    func testFinishedFlowsInsertedTogetherKeepTheirOrderAndTheirRecords() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"),
                                     configuration: SessionStoreConfiguration(batchDelay: 30))
        defer { store.close() }
        store.finished(StoreFixtures.record("dup", responseHeaders: [["x-copy", "first"]]), json: #"{"copy":1}"#,
                       bodies: FlowBodies(response: StoreFixtures.text("first copy")))
        store.flush()
        let observed = LockedBox<[FlowSummary]>([])
        _ = store.addObserver { changes in observed.mutate { $0 += changes.flows } }
        // 40 flows in one batch: two statements of 16, then 8 one at a time; the 20th is `dup`
        // again (its statement finds the id stored and goes one row at a time).
        let count = 40
        XCTAssertEqual(StoreWriter.rowsPerInsert, 16)
        for index in 0..<count {
            let id = index == 19 ? "dup" : "f\(index)"
            store.finished(StoreFixtures.record(id, responseHeaders: [["x-copy", id]]), json: "{\"copy\":\"\(id)\"}",
                           bodies: FlowBodies(response: StoreFixtures.text("body of \(id)")))
        }
        store.flush()
        let flows = try store.flows(limit: 100, order: .oldestFirst).flows
        XCTAssertEqual(flows.map(\.id), ["dup"] + (0..<count).filter { $0 != 19 }.map { "f\($0)" })
        XCTAssertEqual(Set(flows.map(\.sequence)).count, flows.count)
        XCTAssertEqual(flows.map(\.sequence), flows.map(\.sequence).sorted())
        XCTAssertTrue(flows.allSatisfy { $0.phase == .finished })
        // The observers (the web UI) are told each row's number as stored.
        let told = Dictionary(observed.value.map { ($0.id, $0.sequence) }, uniquingKeysWith: { $1 })
        XCTAssertEqual(told.count, count)
        for flow in flows { XCTAssertEqual(told[flow.id], flow.sequence, flow.id) }
        for id in ["f0", "f15", "f16", "f31", "f32", "f39", "dup"] {
            XCTAssertEqual(try store.flowJSON(id: id), "{\"copy\":\"\(id)\"}", id)
            XCTAssertEqual(try store.body(id: id, part: .response)?.text, "body of \(id)", id)
            XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~hs x-copy:.\(id)$")), 1, id)
        }
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~hs first")), 0, "the first copy's heads went")
        // A flow stored as finished is not taken back by a later step of it.
        store.responded(StoreFixtures.record("f3", status: 500))
        store.flush()
        XCTAssertEqual(try store.summary(id: "f3")?.status, 200)
    }

    /// `flush()` does not wait out the writer's batch delay: what it waits for is committed at once.
    func testFlushCutsTheBatchDelayShort() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"),
                                     configuration: SessionStoreConfiguration(batchDelay: 30))
        defer { store.close() }
        let started = Date()
        for round in 0..<3 {
            store.finished(StoreFixtures.record("f\(round)"), json: "{}", bodies: .init())
            store.flush()
            XCTAssertEqual(try store.count(), round + 1)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "three flushes, none waiting the 30 s delay")
    }

    func testAFilterScanningEveryBodyKeepsTheReaderCacheWithinItsBound() throws {
        // 1,000 bodies of 17 KiB (larger than a frame takes, so rows of `bodies`): a ~17 MiB
        // file, which a `~b` filter reads whole. The reader's cache holds at most
        // `readerCacheBytes` of it, so the proxy's RSS does not grow with the session; with a
        // larger setting the same scan keeps more (the setting is the bound).
        let directory = TemporaryDirectory()
        let filler = String(repeating: "0123456789abcdef", count: 1_088)
        let flows = (0..<1_000).map { index in
            let marker = index % 10 == 0 ? "needle" : "hay"
            return (StoreFixtures.record("f\(index)"), FlowBodies(response: StoreFixtures.text("\(filler) \(marker)")))
        }
        func cacheAfterScan(readerCacheBytes: Int? = nil, file: String) throws -> Int {
            var configuration = SessionStoreConfiguration(queueCapacity: 10_000, queuedBodyBytes: 64 * 1024 * 1024)
            if let readerCacheBytes { configuration.readerCacheBytes = readerCacheBytes }
            let store = try SessionStore(path: directory.file(file), configuration: configuration)
            defer { store.close() }
            for (record, bodies) in flows { store.finished(record, json: "{}", bodies: bodies) }
            store.flush()
            XCTAssertEqual(store.drops, StoreDrops())
            XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~b needle")), 100)
            return try store.readerCacheBytes()
        }
        let small = try cacheAfterScan(file: "default.sqlite")
        let defaultBound = SessionStoreConfiguration().readerCacheBytes
        XCTAssertGreaterThan(small, defaultBound / 2, "the scan went through the cache")
        // SQLite counts each page's header beside its 4 KiB; allow that much over the bound.
        XCTAssertLessThanOrEqual(small, defaultBound + defaultBound / 8)
        let large = try cacheAfterScan(readerCacheBytes: 32 * 1024 * 1024, file: "large.sqlite")
        XCTAssertGreaterThan(large, 2 * defaultBound)
    }

    func testQueriesOnAClosedStoreThrow() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        store.close()
        XCTAssertThrowsError(try store.count()) { XCTAssertEqual(($0 as? SessionStoreError)?.code, .closed) }
    }
}

/// A value shared with an observer's thread.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

/// Runs `StoreWriter.coalesced` on a batch and names what it keeps (`ID PHASE`, `clear`).
enum StoreWriterProbe {
    static func coalesce(in directory: TemporaryDirectory, _ batch: [StoreEvent]) -> [String] {
        let store = try! SessionStore(path: directory.file("probe-\(UUID().uuidString).sqlite"))
        defer { store.close() }
        return store.coalescedForTesting(batch).map { event in
            switch event {
            case .clear: return "clear"
            case .step(let step): return "\(step.id) \(step.phase)"
            case .flowLogLine: return "line"
            case .grpcSchema: return "grpc schema"
            }
        }
    }
}
