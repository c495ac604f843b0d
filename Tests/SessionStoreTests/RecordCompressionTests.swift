import Foundation
@testable import SessionStore
import TestSupport
import XCTest

/// Flow records are stored compressed against earlier records of the session
/// (`RecordCompression.swift`); every reader must still get each record back byte for byte.
final class RecordCompressionTests: XCTestCase {
    /// A flow-log line shaped like the proxy's (its fields in the same order), with what varies
    /// from flow to flow varying: id, timestamps, ports, a random body.
    static func line(_ index: Int, host: String, bodyBytes: Int = 100, extra: String = "") -> String {
        var generator = SystemRandomNumberGenerator()
        let body = Data((0..<bodyBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
        let second = String(format: "%02d", index % 60)
        return """
            {"client":"127.0.0.1:\(40000 + index)","ended":"2026-12-02T12:15:\(second).452Z","id":"49c69c8-\(index)",\
            "listener":{"address":"127.0.0.1:37395","mode":"regular"},"mode":"https","persona":"team",\(extra)\
            "request":{"body":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":0,\
            "text":"","truncated":false},"headers":[["Host","\(host)"],["User-Agent","devproxy-load"],["Accept","*/*"]],\
            "http_version":"HTTP/1.1","method":"GET","url":"https://\(host)/item/\(index)"},"response":{"body":\
            {"base64":"\(body)","sha256":"22c54400226734fe82fefbdca3fb4d5856e59562b2744fff65abd6faf98296e4",\
            "size":\(bodyBytes),"truncated":false},"headers":[["Server","nginx/1.22.1"],\
            ["Date","Wed, 02 Dec 2026 12:15:\(second) GMT"],["Content-Type","application/octet-stream"],\
            ["Content-Length","\(bodyBytes)"],["Connection","keep-alive"],["ETag","\\"6b100bcc-\(index)\\""]],\
            "http_version":"HTTP/1.1","reason":"OK","status":200},"server":{"address":"127.0.0.1:47457",\
            "host":"\(host)","port":443},"signer":{"email":"ana@acme.dev","serial":"2360f0e2438798e5823cc26349dc0fd0"},\
            "started":"2026-12-02T12:15:\(second).452Z","timings":{"connect":0,"receive":0.12,"send":0.062,"tls":-1,\
            "wait":0.24},"tls":{"client":{"cipher":"TLS_AES_128_GCM_SHA256","sni":"\(host)","version":"TLSv1.3"},\
            "upstream":{"alpn":"http/1.1","chain":[{"issuer":"CN = Example CA","not_after":"2027-01-01T12:15:08Z",\
            "pin":"sha256/Axp8kI0cvLx3uerLXWxhGaAwT3twMRl/TpUjqL8+8zI=","subject":"CN = \(host)"}],\
            "cipher":"TLS_AES_128_GCM_SHA256","verified":true,"version":"TLSv1.3"}}}
            """
    }

    private func store(_ store: SessionStore, _ lines: [(id: String, host: String, json: String)]) {
        for line in lines {
            store.finished(StoreFixtures.record(line.id, host: line.host), json: line.json, bodies: FlowBodies())
        }
        store.flush()
    }

    private func flows(_ count: Int, hosts: [String], from start: Int = 0) -> [(id: String, host: String, json: String)] {
        (start..<start + count).map { index in
            let host = hosts[index % hosts.count]
            return ("49c69c8-\(index)", host, Self.line(index, host: host))
        }
    }

    func testRecordsComeBackExactlyAndTakeAFractionOfTheirSize() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        let lines = flows(300, hosts: ["api.example.com", "cdn.example.net", "login.example.org"])
        store(session, lines)
        for line in lines {
            XCTAssertEqual(try session.flowJSON(id: line.id), line.json, line.id)
        }
        session.close()
        let plain = lines.reduce(0) { $0 + $1.json.utf8.count }
        let stored = try SQLitePeek.integer(path, "SELECT sum(length(data)) FROM record_frames")
            + SQLitePeek.integer(path, "SELECT coalesce(sum(length(record)), 0) FROM flows")
        let dictionaries = try SQLitePeek.integer(path, "SELECT sum(length(data)) FROM record_dictionaries")
        XCTAssertLessThan(stored + dictionaries, plain / 3, "stored \(stored) + dictionaries \(dictionaries) of \(plain) bytes")
        XCTAssertLessThanOrEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM record_dictionaries"), 3,
                                 "one dictionary serves many records")
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flows WHERE record IS NOT NULL"), 300)
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flow_records"), 0)
        XCTAssertGreaterThan(try SQLitePeek.integer(path, "SELECT count(*) FROM record_frames WHERE typeof(data) = 'blob'"), 0)

        // Another process (devproxy web FILE) reads them with dictionaries it loads from the file.
        let reader = try SessionStore(path: path, readOnly: true)
        for line in lines.shuffled().prefix(50) {
            XCTAssertEqual(try reader.flowJSON(id: line.id), line.json, line.id)
        }
        reader.close()
    }

    func testALargeRecordIsNoDictionaryAndComesBackExactly() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        store(session, flows(20, hosts: ["api.example.com"]))
        let before = try SQLitePeek.integer(path, "SELECT count(*) FROM record_dictionaries")
        let large = Self.line(1_000, host: "files.example.com", bodyBytes: 200_000)
        let small = Self.line(1_001, host: "files.example.com")
        store(session, [("large", "files.example.com", large), ("small", "files.example.com", small)])
        XCTAssertEqual(try session.flowJSON(id: "large"), large)
        XCTAssertEqual(try session.flowJSON(id: "small"), small)
        session.close()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM record_dictionaries"), before,
                       "the large record made no dictionary; the small one fits the existing one")
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT max(length(data)) FROM record_dictionaries") < 16 * 1024, true)
    }

    func testADifferentKindOfRecordGetsItsOwnDictionaryOnceTheOldOneHasServed() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        store(session, flows(40, hosts: ["api.example.com"]))
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM record_dictionaries"), 1)
        // The same host, now with records the first dictionary hardly helps with: gRPC calls
        // whose decoded messages (the same long text in each) it has never seen.
        var seed: UInt64 = 7
        let message = Data((0..<600).map { _ -> UInt8 in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: seed >> 33)
        }).base64EncodedString()
        let tunnels = (0..<30).map { index in
            ("t\(index)", "api.example.com",
             #"{"grpc":{"messages":[{"decoded":"\#(message)","direction":"response"}],"method":"List","service":"inventory.v1.Stock","status":\#(index % 3)},"id":"t\#(index)"}"#)
        }
        // One batch each, as under light traffic: each record is a frame of its own, compressed
        // against its host's dictionary alone (in a frame of many they would match each other).
        for tunnel in tunnels { store(session, [tunnel]) }
        for (id, _, json) in tunnels { XCTAssertEqual(try session.flowJSON(id: id), json) }
        session.close()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM record_dictionaries"), 2)
    }

    func testClearRemovesTheDictionariesAndLaterRecordsStillRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        store(session, flows(10, hosts: ["api.example.com"]))
        session.clear()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM record_dictionaries"), 0,
                       "a dictionary is a captured record: clear takes it too")
        let later = flows(10, hosts: ["api.example.com"], from: 100)
        store(session, later)
        for line in later { XCTAssertEqual(try session.flowJSON(id: line.id), line.json) }
        XCTAssertGreaterThan(try SQLitePeek.integer(path, "SELECT min(id) FROM record_dictionaries"), 1,
                             "ids are never reused, so a reader's cached dictionary never names another")
        session.close()
    }

    func testReplayOriginsAreReadFromCompressedRecords() throws {
        let directory = TemporaryDirectory()
        let session = try SessionStore(path: directory.file("s.sqlite"))
        var lines = flows(10, hosts: ["api.example.com"])
        lines.append(("replay", "api.example.com", Self.line(50, host: "api.example.com", extra: #""replay_of":"49c69c8-3","#)))
        store(session, lines)
        XCTAssertEqual(try session.replayOrigins(ids: lines.map(\.id)), ["replay": "49c69c8-3"])
        session.close()
    }

    func testADamagedRecordIsAClearErrorNotACrash() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        let lines = flows(6, hosts: ["api.example.com"])
        // One batch each: flow n's texts are frame n + 1.
        for line in lines { store(session, [line]) }
        session.close()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM record_frames WHERE typeof(data) = 'blob'"), 6)
        // One frame cut short, another pointing at a dictionary that is not there, one gone, and
        // one flow's reference pointing past the end of its frame.
        try SQLitePeek.execute(path, """
            UPDATE record_frames SET data = substr(data, 1, 20) WHERE id = 2;
            UPDATE record_frames SET data = CAST(x'01ff00000000000000' || substr(data, 10) AS BLOB) WHERE id = 3;
            DELETE FROM record_frames WHERE id = 4;
            UPDATE flows SET record = CAST(substr(record, 1, 13) || x'ffff0000' || substr(record, 18) AS BLOB)
                WHERE id = '\(lines[4].id)';
            """)
        let reader = try SessionStore(path: path, readOnly: true)
        for (index, expected) in [(1, "flow record cannot be read"), (2, "dictionary"), (3, "frame 4 is missing"),
                                  (4, "points past the end of frame 5")] {
            XCTAssertThrowsError(try reader.flowJSON(id: lines[index].id)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        XCTAssertThrowsError(try reader.headerFields(id: lines[3].id, part: .response)) { error in
            XCTAssertTrue("\(error)".contains("frame 4 is missing"), "\(error)")
        }
        XCTAssertEqual(try reader.flowJSON(id: lines[5].id), lines[5].json, "the other records still read")
        XCTAssertEqual(try reader.flowJSON(id: lines[0].id), lines[0].json)
        reader.close()
    }

    /// A record kept alone (larger than a frame takes) or in the format of older files (in
    /// `flow_records`, compressed or as text) still reads, and a flow read is one of its frame.
    func testRecordsOutsideFramesStillRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        let lines = flows(4, hosts: ["api.example.com"])
        store(session, lines)
        let large = Self.line(1_000, host: "api.example.com", bodyBytes: 40_000)
        store(session, [("large", "api.example.com", large)])
        session.close()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flows WHERE record IS NULL"), 1)
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flow_records"), 1)
        // As an older devproxy stored it: text in `flow_records`, no reference.
        try SQLitePeek.execute(path, """
            INSERT INTO flow_records SELECT seq, '{"older":true}' FROM flows WHERE id = '\(lines[2].id)';
            UPDATE flows SET record = NULL WHERE id = '\(lines[2].id)';
            """)
        let reader = try SessionStore(path: path, readOnly: true)
        XCTAssertEqual(try reader.flowJSON(id: "large"), large)
        XCTAssertEqual(try reader.flowJSON(id: lines[2].id), #"{"older":true}"#)
        XCTAssertEqual(try reader.flowJSON(id: lines[3].id), lines[3].json)
        XCTAssertNil(try reader.flowJSON(id: "unknown"))
        reader.close()
    }
}

extension RecordCompressionTests {
    func testHeaderBlocksAreCompressedAndStillFilteredAndRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        let records = (0..<100).map { index in
            StoreFixtures.record("h\(index)", host: "api.example.com", path: "/v1/items/\(index)",
                                 requestHeaders: [["Host", "api.example.com"], ["User-Agent", "ExampleApp/4.2 (iPhone; iOS 18.1)"],
                                                  ["Accept", "application/json"], ["Authorization", "Bearer token-\(index)"],
                                                  ["X-Request-Id", "req-\(index * 7919)"]],
                                 responseHeaders: [["Content-Type", "application/json; charset=utf-8"],
                                                   ["Cache-Control", "private, max-age=0, no-cache"],
                                                   ["Date", "Wed, 02 Dec 2026 12:15:\(String(format: "%02d", index % 60)) GMT"],
                                                   ["Set-Cookie", "sid=\(index); Path=/; HttpOnly; Secure"]])
        }
        for record in records { session.finished(record, json: #"{"id":"\#(record.summary.id)"}"#, bodies: FlowBodies()) }
        session.flush()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flow_heads"), 0, "finished flows' heads are in frames")
        XCTAssertEqual(try session.count(filter: FilterExpression(parsing: "~hq 'Bearer token-42$'")), 1)
        XCTAssertEqual(try session.count(filter: FilterExpression(parsing: "~hs 'sid=7;'")), 1)
        XCTAssertEqual(try session.count(filter: FilterExpression(parsing: "~h '^date: wed'")), 100)
        XCTAssertEqual(try session.matchingIDs(["h3", "h30", "h99"], filter: FilterExpression(parsing: "~hq 'req-23757$'")), ["h3"])
        let fields = try XCTUnwrap(try session.headerFields(id: "h42", part: .request))
        XCTAssertEqual(fields.map(\.name), ["Host", "User-Agent", "Accept", "Authorization", "X-Request-Id"])
        XCTAssertEqual(fields.map(\.value)[3], "Bearer token-42")
        session.close()
        let plain = records.reduce(0) { total, record in
            let blocks = FlowRecord.HeaderText(request: record.requestHeaders, response: record.responseHeaders)
            return total + (blocks.request?.utf8.count ?? 0) + (blocks.response?.utf8.count ?? 0) + 12
        }
        XCTAssertLessThan(try SQLitePeek.integer(path, "SELECT sum(length(data)) FROM record_frames"), plain / 2)
    }
}

extension RecordCompressionTests {
    /// The flows one batch finishes share frames (`RecordFrames.swift`), each read back exactly in
    /// any order; a running flow's heads are a row of `flow_heads` until it finishes, and header
    /// filters and look-ups find them in either place.
    func testFinishedFlowsShareFramesAndRunningFlowsKeepTheirHeadsInRows() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        let running = StoreFixtures.record("running", host: "api.example.com",
                                           requestHeaders: [["Host", "api.example.com"], ["X-Trace", "trace-77"]])
        session.started(running)
        session.flush()
        let filter = try FilterExpression(parsing: "~hq 'trace-77$'")
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flow_heads"), 1)
        XCTAssertEqual(try session.headerFields(id: "running", part: .request)?.map(\.value), ["api.example.com", "trace-77"])
        XCTAssertEqual(try session.count(filter: filter), 1)
        XCTAssertEqual(try session.matchingIDs(["running"], filter: filter), ["running"])
        XCTAssertNil(try session.flowJSON(id: "running"), "no record until it finishes")

        var finished = running
        finished.responseHeaders = [["Content-Type", "text/plain"]]
        let lines = flows(200, hosts: ["api.example.com", "cdn.example.net"])
        session.finished(finished, json: #"{"id":"running"}"#, bodies: FlowBodies())
        for line in lines {
            session.finished(StoreFixtures.record(line.id, host: line.host, responseHeaders: [["X-Line", line.id]]),
                             json: line.json, bodies: FlowBodies())
        }
        session.flush()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM flow_heads"), 0, "the running flow's row went")
        let frames = try SQLitePeek.integer(path, "SELECT count(*) FROM record_frames")
        XCTAssertTrue((5..<40).contains(frames), "\(frames) frames for 200 records of ~1.8 KB")
        XCTAssertEqual(try session.count(filter: filter), 1)
        XCTAssertEqual(try session.matchingIDs(["running", lines[7].id], filter: filter), ["running"])
        XCTAssertEqual(try session.headerFields(id: "running", part: .response)?.map(\.name), ["Content-Type"])
        XCTAssertEqual(try session.flowJSON(id: "running"), #"{"id":"running"}"#)
        XCTAssertEqual(try session.count(filter: FilterExpression(parsing: "~hs '^x-line: 49c69c8-1[0-9]$'")), 10)
        for line in lines.shuffled() { XCTAssertEqual(try session.flowJSON(id: line.id), line.json) }
        session.close()
    }
}

extension RecordCompressionTests {
    /// Small bodies ride in their flow's frame (`FramedBody`), larger ones stay rows of `bodies`;
    /// every reader (the body, its extent, its pieces, `~b` and its request/response forms, a
    /// live list's match) gets the same from either.
    func testSmallBodiesAreKeptInFramesAndReadLikeRows() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let session = try SessionStore(path: path)
        let binary = StoredBody(bytes: [0x00, 0xff, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00], size: 9, sha256: "b1")
        // A gzip body: its wire bytes and, beside them, its decoded text.
        let decoded = StoredBody(bytes: [0x1f, 0x8b, 0x08, 0x00, 0x01], size: 5, sha256: "d2", text: #"{"token":"needle"}"#)
        let large = StoredBody(bytes: Array(String(repeating: "hay ", count: 5_000).utf8) + Array("needle".utf8),
                               sha256: "e3", text: String(repeating: "hay ", count: 5_000) + "needle")
        session.finished(StoreFixtures.record("text"), json: #"{"id":"text"}"#,
                         bodies: FlowBodies(request: StoreFixtures.text("q=needle"), response: StoreFixtures.text("ok")))
        session.finished(StoreFixtures.record("binary"), json: #"{"id":"binary"}"#, bodies: FlowBodies(response: binary))
        session.finished(StoreFixtures.record("decoded"), json: #"{"id":"decoded"}"#, bodies: FlowBodies(response: decoded))
        session.finished(StoreFixtures.record("large"), json: #"{"id":"large"}"#, bodies: FlowBodies(response: large))
        session.finished(StoreFixtures.record("none"), json: #"{"id":"none"}"#, bodies: FlowBodies(response: StoreFixtures.text("hay")))
        session.flush()
        XCTAssertEqual(try SQLitePeek.integer(path, "SELECT count(*) FROM bodies"), 1, "only the large body is a row")

        XCTAssertEqual(try session.body(id: "text", part: .request), StoreFixtures.text("q=needle"))
        XCTAssertEqual(try session.body(id: "binary", part: .response), binary)
        XCTAssertEqual(try session.body(id: "decoded", part: .response), decoded)
        XCTAssertEqual(try session.body(id: "large", part: .response)?.bytes, large.bytes)
        XCTAssertNil(try session.body(id: "binary", part: .request))
        XCTAssertEqual(try session.bodyExtent(id: "text", part: .response),
                       SessionStore.BodyExtent(stored: 2, size: 2, sha256: "00", bytesAreText: true))
        XCTAssertEqual(try session.bodyExtent(id: "decoded", part: .response),
                       SessionStore.BodyExtent(stored: 5, size: 5, sha256: "d2", textBytes: 18))
        var pieces: [[UInt8]] = []
        XCTAssertTrue(try session.streamBody(id: "binary", part: .response, chunkSize: 4) { pieces.append(Array($0)) })
        XCTAssertEqual(pieces, [[0x00, 0xff, 0x6e, 0x65], [0x65, 0x64, 0x6c, 0x65], [0x00]])
        var text: [UInt8] = []
        XCTAssertTrue(try session.streamBody(id: "decoded", part: .response, text: true) { text += $0 })
        XCTAssertEqual(String(decoding: text, as: UTF8.self), #"{"token":"needle"}"#)
        XCTAssertFalse(try session.streamBody(id: "text", part: .response, text: true) { _ in },
                       "a body that is its own text has no text beside it")

        func ids(_ filter: String) throws -> Set<String> {
            try session.matchingIDs(["text", "binary", "decoded", "large", "none"], filter: FilterExpression(parsing: filter))
        }
        XCTAssertEqual(try ids("~b needle"), ["text", "binary", "decoded", "large"])
        XCTAssertEqual(try ids("~bq needle"), ["text"])
        XCTAssertEqual(try ids("~bs needle"), ["binary", "decoded", "large"])
        XCTAssertEqual(try ids("!~b needle"), ["none"])
        XCTAssertEqual(try session.count(filter: FilterExpression(parsing: "~bs '^ok$'")), 1)
        session.close()

        // A damaged section is a clear error, not a crash or a wrong body.
        let reader = try SessionStore(path: path, readOnly: true)
        try SQLitePeek.execute(path, "UPDATE record_frames SET data = CAST(x'09' AS BLOB) || data")
        XCTAssertThrowsError(try reader.body(id: "binary", part: .response)) { error in
            XCTAssertTrue("\(error)".contains("flow record cannot be read"), "\(error)")
        }
        reader.close()
    }
}
