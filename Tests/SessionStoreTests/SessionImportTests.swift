import DevProxy
import Foundation
import GRPCWire
import SessionStore
import TestSupport
import XCTest

/// `devproxy web FILE`: flow logs and HAR files written by DevProxy's own writers, read into a store.
final class SessionImportTests: XCTestCase {
    private static let samples: [Flow] = [
        #"{"id":"g1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","client":"127.0.0.1:1","#
            + #""mode":"https","server":{"host":"api.example.com","port":443},"persona":"team","#
            + #""signer":{"serial":"0A","email":"ana@acme.dev"},"#
            + #""request":{"method":"GET","url":"https://api.example.com/v1/x","http_version":"HTTP/1.1","#
            + #""headers":[["Host","api.example.com"]]},"#
            + #""response":{"status":200,"reason":"OK","http_version":"HTTP/1.1","#
            + #""headers":[["Content-Type","application/json"]],"#
            + #""body":{"size":11,"sha256":"ab","text":"{\"ok\":true}","truncated":false}},"#
            + #""timings":{"connect":1,"tls":2,"send":1,"wait":20,"receive":4}}"#,
        #"{"id":"p2","started":"2026-03-01T12:01:03.000Z","ended":"2026-03-01T12:01:03.010Z","client":"127.0.0.1:2","#
            + #""mode":"http","server":{"host":"upload.example.com","port":80},"#
            + #""request":{"method":"POST","url":"http://upload.example.com/put","http_version":"HTTP/1.1","#
            + #""headers":[["Content-Type","image/png"]],"body":{"size":4,"sha256":"cd","base64":"iVBORw==","truncated":false}},"#
            + #""response":{"status":302,"reason":"Found","http_version":"HTTP/1.1","headers":[["Location","/done"]]},"#
            + #""timings":{"connect":1,"tls":-1,"send":2,"wait":3,"receive":1}}"#,
        #"{"id":"e3","started":"2026-03-01T12:01:04.000Z","ended":"2026-03-01T12:01:04.020Z","client":"127.0.0.1:3","#
            + #""mode":"https","server":{"host":"pinned.example.com","port":443},"#
            + #""error":{"kind":"client_rejected_certificate","message":"alert unknown_ca","alert":"unknown_ca"},"#
            + #""timings":{"connect":-1,"tls":-1,"send":-1,"wait":-1,"receive":-1}}"#,
    ].map { try! JSONDecoder().decode(Flow.self, from: Data($0.utf8)) }

    /// A flow log written with JSON spacing (Python's json.dumps, jq without -c) is stored compact:
    /// the web UI's `?preview=` finds a body's `"text":"` to cut it, and a spaced record came back
    /// whole each time its flow was opened.
    func testASpacedFlowLogLineIsStoredCompact() throws {
        let directory = TemporaryDirectory()
        let object: [String: Any] = ["id": "s1", "started": "2026-03-01T12:01:02.100Z", "ended": "2026-03-01T12:01:02.200Z",
                                     "client": "127.0.0.1:1", "mode": "https", "server": ["host": "a.example", "port": 443],
                                     "request": ["method": "GET", "url": "https://a.example/", "http_version": "HTTP/1.1",
                                                 "headers": [] as [Any]],
                                     "response": ["status": 200, "reason": "OK", "http_version": "HTTP/1.1", "headers": [] as [Any],
                                                  "body": ["size": 5, "sha256": "ab", "text": "hello", "truncated": false]]]
        let spaced = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ")
        XCTAssertTrue(spaced.contains(#""text" : "hello""#) || spaced.contains(#""text": "hello""#), spaced)
        let log = directory.write("spaced.jsonl", spaced + "\n")
        let (store, report) = try SessionImport.open(path: log)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        let stored = try XCTUnwrap(try store.flowJSON(id: "s1"))
        XCTAssertTrue(stored.contains(#""text":"hello""#), stored)
    }

    func testAFlowLogWrittenByTheProxyImportsWithBodiesAndRecords() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flows.jsonl")
        let log = try JSONLinesFlowLog(path: path)
        for flow in Self.samples { log.record(flow) }
        log.close()
        // A torn last line, as a killed proxy leaves, is reported with its number.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"id":"torn","sta"#.utf8))
        try handle.close()

        XCTAssertEqual(try SessionImport.format(of: path), .flowLog)
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.flows, 3)
        XCTAssertEqual(report?.problems.map(\.number), [4])
        let page = try store.flows(limit: 10, order: .oldestFirst)
        XCTAssertEqual(page.flows.map(\.id), ["g1", "p2", "e3"])
        let get = page.flows[0]
        XCTAssertEqual(get.host, "api.example.com")
        XCTAssertEqual(get.status, 200)
        XCTAssertEqual(get.contentType, "application/json")
        XCTAssertEqual(get.durationMs, 35)
        XCTAssertEqual(get.signerEmail, "ana@acme.dev")
        XCTAssertEqual(get.responseSize, 11)
        XCTAssertEqual(page.flows[2].errorKind, "client_rejected_certificate")
        XCTAssertEqual(try store.body(id: "p2", part: .request)?.bytes, [0x89, 0x50, 0x4E, 0x47])
        XCTAssertEqual(try store.body(id: "g1", part: .response)?.text, #"{"ok":true}"#)
        // The stored record is the log's own line, byte for byte.
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(try store.flowJSON(id: "g1"), String(lines[0]))
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~b ok & ~signer ana@acme.dev")), 1)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~e | ~t png")), 2)
    }

    /// A body read in a declared charset imports as the bytes that were sent (its text written
    /// back in that charset), not as its UTF-8 reading: download, raw export and curl gave bytes
    /// that were never sent, under the original's SHA-256.
    func testABodyInADeclaredCharsetImportsAsItsOriginalBytes() throws {
        let directory = TemporaryDirectory()
        let line = #"{"id":"j1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","client":"127.0.0.1:1","#
            + #""mode":"https","server":{"host":"jp.example.com","port":443},"#
            + #""request":{"method":"GET","url":"https://jp.example.com/","http_version":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":200,"reason":"OK","http_version":"HTTP/1.1","#
            + #""headers":[["Content-Type","text/html; charset=Shift_JIS"]],"#
            + #""body":{"size":6,"sha256":"ab","text":"日本語","charset":"shift_jis","truncated":false}},"#
            + #""timings":{"connect":1,"tls":2,"send":1,"wait":20,"receive":4}}"#
        let path = directory.write("flows.jsonl", line + "\n")
        let (store, _) = try SessionImport.open(path: path)
        defer { store.close() }
        let body = try XCTUnwrap(try store.body(id: "j1", part: .response))
        XCTAssertEqual(body.bytes, [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA])
        XCTAssertEqual(body.text, "日本語")
    }

    func testAHARFileWrittenByTheProxyImports() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("session.har")
        try HARWriter.write(Self.samples, to: path)
        XCTAssertEqual(try SessionImport.format(of: path), .har)
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.flows, 3)
        XCTAssertEqual(report?.problems, [])
        let page = try store.flows(limit: 10, order: .oldestFirst)
        XCTAssertEqual(page.flows.map(\.id), ["g1", "p2", "e3"], "DevProxy's _flowId is kept")
        XCTAssertEqual(page.flows.map(\.status), [200, 302, nil])
        XCTAssertEqual(page.flows.map(\.errorKind), [nil, nil, "client_rejected_certificate"])
        XCTAssertEqual(page.flows[0].method, "GET")
        XCTAssertEqual(try store.body(id: "g1", part: .response)?.text, #"{"ok":true}"#)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~hq ^host: api")), 1)
        let json = try XCTUnwrap(try store.flowJSON(id: "g1"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual((object["response"] as? [String: Any])?["status"] as? Int, 200, "a flow-log-shaped record")
    }

    /// The two importers as functions of a path and a store, as the fuzz target (fuzz/Sources/
    /// FuzzSessionImport) takes them: a flow log's line check is an overload, not a new argument.
    func testTheImportersTakeAPathAndAStore() throws {
        let directory = TemporaryDirectory()
        let log = directory.write("one.jsonl", OneFlowLogLine.flow + "\n")
        for (importer, flows) in [(SessionImport.har(at:into:), 0), (SessionImport.flowLog(at:into:), 1)] {
            let store = try SessionStore.temporary()
            defer { store.close() }
            XCTAssertEqual((try? importer(log, store))?.flows ?? 0, flows)
        }
    }

    /// DevProxy's export of an HTTP/2 flow lists its pseudo-header fields among the headers, as
    /// Chrome's does; read back, they are the flow's `pseudo_headers` again, never ordinary
    /// headers (the store's headers, which replay and curl export send, have no `:method`).
    func testAnExportedHTTP2HARReimportsWithItsPseudoHeadersApart() throws {
        let directory = TemporaryDirectory()
        let flow = try JSONDecoder().decode(Flow.self, from: Data((
            #"{"id":"h2","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","client":"127.0.0.1:1","#
            + #""mode":"https","server":{"host":"h2.example.com","port":443},"#
            + #""request":{"method":"POST","url":"https://h2.example.com/a","http_version":"HTTP/2","#
            + #""pseudo_headers":[[":method","POST"],[":scheme","https"],[":authority","h2.example.com"],[":path","/a"]],"#
            + #""headers":[["accept","*/*"]]},"#
            + #""response":{"status":200,"reason":"","http_version":"HTTP/2","pseudo_headers":[[":status","200"]],"#
            + #""headers":[["content-type","text/plain"]]},"#
            + #""timings":{"connect":1,"tls":2,"send":1,"wait":20,"receive":4}}"#).utf8))
        let path = directory.file("h2.har")
        try HARWriter.write([flow], to: path)
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        let imported = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "h2")).utf8))
        XCTAssertEqual(imported.request?.pseudoHeaders, flow.request?.pseudoHeaders)
        XCTAssertEqual(imported.request?.headers, [["accept", "*/*"]])
        XCTAssertEqual(imported.response?.headers, [["content-type", "text/plain"]])
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~hq accept")), 1)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~hq :method")), 0, "no pseudo-header as a header")
        // Exported again, the entry lists them as the first export did.
        let again = HARWriter.document(for: [imported]).log.entries[0]
        XCTAssertEqual(again, HARWriter.document(for: [flow]).log.entries[0])
    }

    /// Two entries with one `_flowId` (the UI's `ids=A,A` export wrote them) were one flow after
    /// import, and an id that is not safe in a URL path (`..`, `../../api/clear`) could not be
    /// opened: each gets an id of its own. A flow log's repeated id is made unique the same way.
    func testRepeatedAndUnsafeIDsImportAsFlowsOfTheirOwn() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("session.har")
        try HARWriter.write([Self.samples[0], Self.samples[0], Self.samples[1]], to: path)
        var document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
                                     as? [String: Any])
        var harLog = try XCTUnwrap(document["log"] as? [String: Any])
        var entries = try XCTUnwrap(harLog["entries"] as? [[String: Any]])
        entries[2]["_flowId"] = "../../api/clear"
        harLog["entries"] = entries
        document["log"] = harLog
        let text = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.flows, 3)
        XCTAssertEqual(try store.flows(limit: 10, order: .oldestFirst).flows.map(\.id).sorted(), ["g1", "g1-2", "har-3"], text)
        let log = directory.file("flows.jsonl")
        let line = String(decoding: try JSONEncoder().encode(Self.samples[0]), as: UTF8.self)
        try (line + "\n" + line + "\n").write(toFile: log, atomically: true, encoding: .utf8)
        let (logStore, logReport) = try SessionImport.open(path: log)
        defer { logStore.close() }
        XCTAssertEqual(logReport?.flows, 2)
        XCTAssertEqual(try logStore.flows(limit: 10, order: .oldestFirst).flows.map(\.id).sorted(), ["g1", "g1-2"])
        XCTAssertNotNil(try logStore.flowJSON(id: "g1-2")?.contains("\"g1-2\""))
    }

    /// A WebSocket's messages and a gRPC call's view come back from a HAR file: DevProxy's own
    /// export (`_webSocketMessages`, `_resourceType`, `_grpc`) and Chrome's DevTools' (no `_mode`).
    func testAHARFileBringsBackWebSocketMessagesAndGRPC() throws {
        let socket = try JSONDecoder().decode(Flow.self, from: Data((
            #"{"id":"ws1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.600Z","client":"127.0.0.1:1","#
            + #""mode":"websocket","server":{"host":"chat.example.com","port":443},"#
            + #""request":{"method":"GET","url":"https://chat.example.com/socket","http_version":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":101,"reason":"Switching Protocols","http_version":"HTTP/1.1","headers":[]},"#
            + #""websocket":[{"direction":"client_to_server","opcode":"text","length":4,"text":"ping","time":1772366462.2},"#
            + #"{"direction":"server_to_client","opcode":"binary","length":3,"base64":"AQID","time":1772366462.3},"#
            + #"{"direction":"server_to_client","opcode":"text","length":70000,"text":"long","truncated":true,"#
            + #""time":1772366462.4}],"timings":{"connect":-1,"tls":-1,"send":-1,"wait":-1,"receive":-1}}"#).utf8))
        let call = try JSONDecoder().decode(Flow.self, from: Data((
            #"{"id":"rpc1","started":"2026-03-01T12:01:03.100Z","ended":"2026-03-01T12:01:03.110Z","client":"127.0.0.1:2","#
            + #""mode":"https","server":{"host":"rpc.example.com","port":443},"#
            + #""request":{"method":"POST","url":"https://rpc.example.com/lab.Echo/Unary","http_version":"HTTP/2","#
            + #""headers":[["content-type","application/grpc"]]},"#
            + #""response":{"status":200,"reason":"OK","http_version":"HTTP/2","headers":[["grpc-status","5"]]},"#
            + #""grpc":{"service":"lab.Echo","method":"Unary","status":5,"trailers_only":true,"request_messages":1,"#
            + #""response_messages":0,"notes":[],"messages":[{"direction":"request","compressed":false,"length":5,"#
            + #""first_bytes":"CgNhZGE=","time":1772366463.105}]},"#
            + #""timings":{"connect":-1,"tls":-1,"send":-1,"wait":-1,"receive":-1}}"#).utf8))
        let directory = TemporaryDirectory()
        let path = directory.file("session.har")
        try HARWriter.write([socket, call], to: path)
        // Chrome's export of a socket: no DevProxy fields but `_resourceType` and the messages.
        let chrome = directory.write("chrome.har", #"{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"#
            + #""entries":[{"startedDateTime":"2026-03-01T12:01:02.100Z","time":50,"_resourceType":"websocket","#
            + #""request":{"method":"GET","url":"wss://chat.example.com/socket","httpVersion":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":101,"statusText":"Switching Protocols","httpVersion":"HTTP/1.1","headers":[]},"#
            + #""_webSocketMessages":[{"type":"send","time":1772366462.2,"opcode":1,"data":"hello"},"#
            + #"{"type":"receive","time":1772366462.3,"opcode":1,"data":"world"}]}]}}"#)
        for file in [path, chrome] {
            let (store, report) = try SessionImport.open(path: file)
            defer { store.close() }
            XCTAssertEqual(report?.problems, [], file)
            let sockets = try store.flows(filter: try FilterExpression(parsing: "~websocket"), limit: 10, order: .oldestFirst)
            XCTAssertEqual(sockets.flows.count, 1, file)
            let id = try XCTUnwrap(sockets.flows.first?.id)
            let json = try XCTUnwrap(try store.flowJSON(id: id))
            let flow = try JSONDecoder().decode(Flow.self, from: Data(json.utf8))
            XCTAssertEqual(flow.mode, .websocket, file)
            if file == chrome {
                XCTAssertEqual(flow.websocket?.map(\.text), ["hello", "world"])
                XCTAssertEqual(flow.websocket?.map(\.direction), ["client_to_server", "server_to_client"])
                XCTAssertEqual(flow.server.port, 443, "wss is TLS")
                continue
            }
            XCTAssertEqual(flow.websocket?.map(\.opcode), ["text", "binary", "text"])
            XCTAssertEqual(flow.websocket?.map(\.length), [4, 3, 70_000], "a cut message keeps its whole length")
            XCTAssertEqual(flow.websocket?.map { $0.truncated == true }, [false, false, true])
            XCTAssertEqual(flow.websocket?[1].base64, "AQID")
            XCTAssertEqual(flow.websocket?[0].time, 1_772_366_462.2)
            let rpc = try XCTUnwrap(try store.flowJSON(id: "rpc1"))
            let imported = try JSONDecoder().decode(Flow.self, from: Data(rpc.utf8))
            XCTAssertEqual(imported.grpc, call.grpc, "the gRPC view as exported")
            XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~gs 5")), 1)
        }
    }

    /// What a map rule did (`_mapped`) and a breakpoint's record (`_intercept`) come back from
    /// DevProxy's own HAR export; the import left both out, so a reopened HAR lost them.
    func testAHARBringsBackMappedAndIntercept() throws {
        var flow = try JSONDecoder().decode(Flow.self, from: Data((
            #"{"id":"m1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.600Z","client":"127.0.0.1:1","#
            + #""mode":"https","server":{"host":"localhost","port":3000},"#
            + #""request":{"method":"PUT","url":"http://localhost:3000/v2/user","http_version":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":200,"reason":"OK","http_version":"HTTP/1.1","headers":[]},"#
            + #""timings":{"connect":-1,"tls":-1,"send":-1,"wait":-1,"receive":-1}}"#).utf8))
        flow.mapped = Flow.Mapping(rule: "map-remote", from: "https://api.example.com/v1/user",
                                   to: "http://localhost:3000/v2/user", by: ["|~d api|https://api.example.com/v1|http://localhost:3000/v2"])
        flow.intercept = Flow.Intercept(pausedMs: 2412.5, outcome: "resumed", edited: ["method", "body"],
                                        filter: "~d api & ~m POST", originalMethod: "POST")
        let directory = TemporaryDirectory()
        let path = directory.file("session.har")
        try HARWriter.write([flow], to: path)
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        let json = try XCTUnwrap(try store.flowJSON(id: "m1"))
        let imported = try JSONDecoder().decode(Flow.self, from: Data(json.utf8))
        XCTAssertEqual(imported.mapped, flow.mapped)
        XCTAssertEqual(imported.intercept, flow.intercept)
        XCTAssertTrue(json.contains(#""intercept":{"edited":["method","body"],"filter":"~d api & ~m POST","#
                                    + #""original_method":"POST","outcome":"resumed","paused_ms":2412.5}"#), json)
    }

    /// Chrome exports HTTP/2 as `http/2.0` and Playwright as `HTTP/2.0`, each with the
    /// pseudo-header fields among the headers: the flows showed `HTTP/2.0` beside captured
    /// `HTTP/2` ones, and `:authority` as a header.
    func testABrowsersHTTP2HARReadsAsTheProxyRecordsHTTP2() throws {
        let directory = TemporaryDirectory()
        let entry = { (version: String) in
            #"{"startedDateTime":"2026-03-01T12:01:02.100Z","time":5,"#
                + #""request":{"method":"GET","url":"https://h2.example.com/a","httpVersion":"\#(version)","#
                + #""headers":[{"name":":authority","value":"h2.example.com"},{"name":":method","value":"GET"},"#
                + #"{"name":"accept","value":"*/*"}]},"#
                + #""response":{"status":200,"statusText":"","httpVersion":"\#(version)","#
                + #""headers":[{"name":":status","value":"200"},{"name":"content-type","value":"text/plain"}]}}"#
        }
        let path = directory.write("browser.har", #"{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"#
            + #""entries":["# + ["http/2.0", "HTTP/2.0", "h2", "http/1.1"].map(entry).joined(separator: ",") + "]}}")
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        var versions: [String] = []
        for id in ["har-1", "har-2", "har-3", "har-4"] {
            let json = try XCTUnwrap(try store.flowJSON(id: id), id)
            let flow = try JSONDecoder().decode(Flow.self, from: Data(json.utf8))
            versions.append(flow.request?.httpVersion ?? "-")
            XCTAssertEqual(flow.response?.httpVersion, flow.request?.httpVersion)
            XCTAssertEqual(flow.request?.pseudoHeaders, [[":authority", "h2.example.com"], [":method", "GET"]], id)
            XCTAssertEqual(flow.request?.headers, [["accept", "*/*"]], id)
            XCTAssertEqual(flow.response?.pseudoHeaders, [[":status", "200"]], id)
            XCTAssertEqual(flow.response?.headers, [["content-type", "text/plain"]], id)
        }
        XCTAssertEqual(versions, ["HTTP/2", "HTTP/2", "HTTP/2", "HTTP/1.1"])
        XCTAssertEqual(try store.flows(filter: nil, limit: 10, order: .oldestFirst).flows.map(\.httpVersion),
                       ["HTTP/2", "HTTP/2", "HTTP/2", "HTTP/1.1"], "the list's column too")
    }

    /// What other tools' HARs hold: `bodySize: -1` ("unknown", Charles) beside a posted body,
    /// which crashed `devproxy web` (the store's writer trapped on the negative size); a form as
    /// `params` without `text` (the HAR spec makes them exclusive), imported bodiless; a start time
    /// with an offset, kept as written; Chrome's failed request (`_error` a string), imported with
    /// no error; a `time` no exchange takes (1e300 ms), a trap. A flow log line with a negative
    /// size crashed it the same way.
    /// What other tools and DevProxy's own export put in a HAR comes back: a base64 request body
    /// marked `_encoding` (DevProxy's export; it came back as its base64 text), a failure text on
    /// the response object (where Chrome's DevTools and Playwright write `_error`/`_failureText`),
    /// the timings (`ssl` inside `connect`), `serverIPAddress` and `connection` (all were dropped,
    /// and a re-export said `time: 0`), a leading byte order mark, and entries listed in the
    /// order they started whatever the file's order.
    func testAHARBringsBackBodiesFailuresTimingsAndOrder() throws {
        let directory = TemporaryDirectory()
        let har = directory.write("other.har", "\u{FEFF}" + #"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":["#
            + #"{"startedDateTime":"2026-03-01T10:00:02.000Z","time":60,"serverIPAddress":"2001:db8::1","connection":"7",""#
            + #"timings":{"blocked":-1,"dns":-1,"connect":30,"ssl":20,"send":1,"wait":25,"receive":4},"#
            + #""request":{"method":"POST","url":"https://a.example/up","httpVersion":"HTTP/1.1","headers":[],"bodySize":4,"#
            + #""postData":{"mimeType":"application/octet-stream","text":"AAH//w==","_encoding":"base64"}},"#
            + #""response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],"content":{"size":0}}},"#
            + #"{"startedDateTime":"2026-03-01T10:00:01.000Z","time":3,"#
            + #""request":{"method":"GET","url":"http://b.example:6666/","httpVersion":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":-1,"statusText":"","httpVersion":"","headers":[],"_failureText":"net::ERR_UNSAFE_PORT"}}]}}"#)
        XCTAssertEqual(try SessionImport.format(of: har), .har)
        let (store, report) = try SessionImport.open(path: har)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        XCTAssertEqual(try store.flows(limit: 10, order: .oldestFirst).flows.map(\.id), ["har-2", "har-1"], "by start")
        let upload = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-1")).utf8))
        XCTAssertEqual(try store.body(id: "har-1", part: .request)?.bytes, [0x00, 0x01, 0xFF, 0xFF])
        let timings = upload.timings
        XCTAssertEqual([timings.connect, timings.tls, timings.send, timings.wait, timings.receive], [10, 20, 1, 25, 4])
        XCTAssertEqual(upload.server.address, "[2001:db8::1]:443")
        XCTAssertEqual(upload.client, "7")
        let failed = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-2")).utf8))
        XCTAssertEqual(failed.error?.message, "net::ERR_UNSAFE_PORT (as the HAR's tool recorded it)")
        // The same through the export: the timings add up to the entry's time again.
        let exported = directory.file("again.har")
        try HARWriter.write([upload], to: exported)
        let again = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: exported))) as? [String: Any])
        let entry = try XCTUnwrap(((again["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        XCTAssertEqual(entry["time"] as? Double, 60)
        XCTAssertEqual(entry["serverIPAddress"] as? String, "2001:db8::1")
    }

    /// Chrome's DevTools wrote an IPv6 `serverIPAddress` in its brackets until its export learnt
    /// to strip them (`[2001:db8::1]`); it imported as `[[2001:db8::1]]:443`.
    func testAHARsBracketedIPv6ServerAddressIsBracketedOnce() throws {
        let directory = TemporaryDirectory()
        let har = directory.write("chrome.har", #"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"#
            + #""entries":[{"startedDateTime":"2026-03-01T10:00:02.000Z","time":6,"serverIPAddress":"[2001:db8::1]","#
            + #""request":{"method":"GET","url":"https://a.example/","httpVersion":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":204,"statusText":"","httpVersion":"HTTP/1.1","headers":[],"#
            + #""content":{"size":0}}}]}}"#)
        let (store, report) = try SessionImport.open(path: har)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        let flow = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-1")).utf8))
        XCTAssertEqual(flow.server.address, "[2001:db8::1]:443")
    }

    /// A flow log is written as flows finish: a slow request's line comes after the quick one it
    /// overlapped, and the list showed it in that order.
    func testAFlowLogImportsInTheOrderFlowsStarted() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flows.jsonl")
        let log = try JSONLinesFlowLog(path: path)
        var slow = Self.samples[0], fast = Self.samples[1]
        (slow.id, slow.started, slow.ended) = ("slow", "2026-03-01T10:00:00.000Z", "2026-03-01T10:00:05.000Z")
        (fast.id, fast.started, fast.ended) = ("fast", "2026-03-01T10:00:01.000Z", "2026-03-01T10:00:01.100Z")
        log.record(fast)
        log.record(slow)
        log.close()
        let (store, _) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.flows(limit: 10, order: .oldestFirst).flows.map(\.id), ["slow", "fast"])
    }

    /// A HAR cut short says where, not only that it is "not a HAR file".
    func testADamagedHARSaysWhereItBroke() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("cut.har")
        try HARWriter.write(Self.samples, to: path)
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: path))
        FileManager.default.createFile(atPath: path, contents: bytes.prefix(bytes.count / 2))
        XCTAssertThrowsError(try SessionImport.open(path: path)) { error in
            let reason = (error as? SessionStoreError)?.reason ?? ""
            XCTAssertTrue(reason.hasPrefix("\(path) is not valid JSON, so not a HAR file it can read: "), reason)
            XCTAssertGreaterThan(reason.count, "\(path) is not valid JSON, so not a HAR file it can read: ".count + 5, reason)
        }
    }

    func testOtherToolsHARsAndBadSizesImportWithoutLoss() throws {
        let directory = TemporaryDirectory()
        let har = directory.write("charles.har", #"{"log":{"version":"1.2","creator":{"name":"Charles Proxy","version":"4.6"},"#
            + #""entries":[{"startedDateTime":"2026-03-01T12:01:02.1+02:00","time":12.5,"#
            + #""request":{"method":"POST","url":"https://a.example/form","httpVersion":"HTTP/1.1","headers":[],"#
            + #""bodySize":-1,"postData":{"mimeType":"application/x-www-form-urlencoded","#
            + #""params":[{"name":"a","value":"1"},{"name":"b c","value":"x y&z=é"}]}},"#
            + #""response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],"#
            + #""content":{"size":-1,"mimeType":"text/plain","text":"ok"},"bodySize":-1}},"#
            + #"{"startedDateTime":"2026-03-01T10:01:03.000Z","time":0,"#
            + #""request":{"method":"POST","url":"https://b.example/","httpVersion":"HTTP/1.1","headers":[],"bodySize":-1,"#
            + #""postData":{"mimeType":"text/plain","text":"hello"}},"#
            + #""response":{"status":0,"statusText":"","httpVersion":"","headers":[],"content":{"size":0}},"#
            + #""_error":"net::ERR_CONNECTION_REFUSED"},"#
            + #"{"startedDateTime":"2026-03-01T10:01:04.000Z","time":1e300,"#
            + #""request":{"method":"GET","url":"https://c.example/","httpVersion":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":204,"statusText":"","httpVersion":"HTTP/1.1","headers":[]}},"#
            // Firefox's blocked request: status 0, no reason.
            + #"{"startedDateTime":"2026-03-01T10:01:05.000Z","time":3,"#
            + #""request":{"method":"GET","url":"https://d.example/ad.js","httpVersion":"HTTP/1.1","headers":[]},"#
            + #""response":{"status":0,"statusText":"","httpVersion":"","headers":[],"content":{"size":0}}}]}}"#)
        let (store, report) = try SessionImport.open(path: har)
        defer { store.close() }
        XCTAssertEqual(report?.problems, [])
        let form = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-1")).utf8))
        XCTAssertEqual(form.started, "2026-03-01T10:01:02.100Z", "UTC, as flows write it")
        XCTAssertEqual(form.request?.body?.text, "a=1&b+c=x+y%26z%3D%C3%A9")
        XCTAssertEqual(form.response?.body?.size, 2)
        let failed = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-2")).utf8))
        XCTAssertEqual(failed.request?.body?.size, 5)
        XCTAssertEqual(failed.error?.kind, "request_failed")
        XCTAssertEqual(failed.error?.message, "net::ERR_CONNECTION_REFUSED (as the HAR's tool recorded it)")
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~e")), 2, "the failures show as such")
        let blocked = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-4")).utf8))
        XCTAssertNil(blocked.response)
        XCTAssertEqual(blocked.error?.kind, "request_failed", "status 0 without a reason was shown as still waiting")
        XCTAssertTrue(blocked.error?.message.contains("records no response for this request (status 0") == true)
        let forever = try JSONDecoder().decode(Flow.self, from: Data(try XCTUnwrap(try store.flowJSON(id: "har-3")).utf8))
        XCTAssertEqual(forever.response?.status, 204, "a time of 1e300 ms trapped the import; it is left out")

        let log = directory.write("edited.jsonl", #"{"id":"n1","started":"2026-03-01T12:01:02.100Z","#
            + #""ended":"2026-03-01T12:01:02.135Z","client":"127.0.0.1:1","mode":"https","#
            + #""server":{"host":"api.example.com","port":443},"request":{"method":"POST","#
            + #""url":"https://api.example.com/v1","http_version":"HTTP/1.1","headers":[],"#
            + #""body":{"size":-5,"sha256":"ab","text":"abc","truncated":false}},"#
            + #""timings":{"connect":1,"tls":2,"send":1,"wait":20,"receive":4}}"# + "\n")
        let (logStore, logReport) = try SessionImport.open(path: log)
        defer { logStore.close() }
        XCTAssertEqual(logReport?.flows, 1)
        XCTAssertEqual(try logStore.body(id: "n1", part: .request)?.size, 3)
    }

    /// `devproxy web <(zcat flows.jsonl.gz)`: the format sniff read the pipe's first 4 KiB and the
    /// import then read on from there, so the first flows were lost without a word (and before,
    /// the import could not read a pipe at all). A pipe is now copied once and imported whole.
    func testAFlowLogThroughAPipeImportsWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flows.jsonl")
        let log = try JSONLinesFlowLog(path: path)
        for round in 0..<40 {
            for var flow in Self.samples {
                flow.id += "-\(round)"
                log.record(flow)
            }
        }
        log.close()
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: path))
        XCTAssertGreaterThan(bytes.count, 4096, "more than the sniff reads")
        let pipe = Pipe()
        let writer = Thread {
            pipe.fileHandleForWriting.write(bytes)
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        let (store, report) = try SessionImport.open(path: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        defer { store.close() }
        XCTAssertEqual(report?.flows, 120)
        XCTAssertEqual(report?.problems, [])
        XCTAssertNotNil(try store.flowJSON(id: Self.samples[0].id + "-0"), "the first flow, within the first 4 KiB")
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        XCTAssertEqual(after.subtracting(before).filter { $0.hasPrefix("devproxy-import-") }, [], "the copy is removed")
    }

    /// A flow log is read a piece at a time, one line in memory: lines that cross the 1 MiB
    /// pieces' boundaries import whole, and a last line without its newline is still read.
    func testAFlowLogLongerThanOneReadImportsEveryLine() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flows.jsonl")
        let log = try JSONLinesFlowLog(path: path)
        for round in 0..<3_000 {
            var flow = Self.samples[round % Self.samples.count]
            flow.id += "-\(round)"
            log.record(flow)
        }
        log.close()
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: path))
        XCTAssertGreaterThan(bytes.count, 1 << 20, "more than one read")
        XCTAssertEqual(bytes.removeLast(), UInt8(ascii: "\n"))
        FileManager.default.createFile(atPath: path, contents: bytes)
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.flows, 3_000)
        XCTAssertEqual(report?.problems, [])
        XCTAssertNotNil(try store.flowJSON(id: Self.samples[2].id + "-2999"), "the last line, without its newline")
    }

    /// `devproxy web`'s line check runs on another thread, a batch of lines ahead of the import
    /// (it was run inline, doubling the parse of each line): its verdicts still land on their
    /// own lines, in file order, across batches, for a log whose first line has a byte order mark
    /// and whose last is torn.
    func testTheLineCheckRunsAheadAndEachVerdictLandsOnItsLine() throws {
        let directory = TemporaryDirectory()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lines: [String] = []
        for number in 1...1_000 {
            var flow = Self.samples[number % Self.samples.count]
            flow.id += "-\(number)"
            let good = String(decoding: try encoder.encode(flow), as: UTF8.self)
            lines.append(number % 97 == 0 ? "not json \(number)" : number % 89 == 0 ? "" : number % 131 == 0 ? #"{"id":"x"}"# : good)
        }
        lines[0] = "\u{FEFF}" + lines[0]
        lines[999] = String(lines[999].prefix(40))
        let path = directory.write("mixed.jsonl", lines.joined(separator: "\n"))
        let callers = LockedSet()
        let importing = pthread_self()
        let check: SessionImport.LineCheck = { line, terminated in
            callers.insert(pthread_equal(pthread_self(), importing) != 0 ? "importing thread" : "another thread")
            // Beside the full decode: a rule of this test's own, to see each verdict land on its line.
            if line.starts(with: Array(#"{"client":"127.0.0.1:"#.utf8)), String(decoding: line, as: UTF8.self).contains("-7\"") {
                return "the test's rule"
            }
            return FlowLogReader.problem(in: line, terminated: terminated)
        }
        let (store, report) = try SessionImport.open(path: path, checkingLines: check)
        defer { store.close() }

        var expected: [SessionImport.Problem] = []
        for (index, line) in lines.enumerated() {
            let bytes = Array((index == 0 ? String(line.dropFirst()) : line).utf8)[...]
            if let reason = check(bytes, index < 999) { expected.append(SessionImport.Problem(number: index + 1, reason: reason)) }
        }
        XCTAssertEqual(report?.problems, expected)
        XCTAssertEqual(report?.flows, 1_000 - expected.count)
        XCTAssertEqual(Set(expected.map(\.reason)).count, 5, "empty, not JSON, not a flow, the test's rule, torn: \(Set(expected.map(\.reason)))")
        XCTAssertNotNil(try store.flowJSON(id: Self.samples[1].id + "-1"), "the first line, after its byte order mark")
        XCTAssertNotNil(try store.flowJSON(id: Self.samples[998 % 3].id + "-998"))
        XCTAssertNil(try store.flowJSON(id: Self.samples[7 % 3].id + "-7"), "refused by the check alone")
        XCTAssertTrue(callers.values.contains("another thread"), "\(callers.values)")
    }

    /// A device or file whose "line" never ends is refused once a line passes 256 MiB, with the
    /// reason: `devproxy web /dev/zero` read it into memory without end.
    func testALineThatNeverEndsIsRefused() throws {
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        XCTAssertThrowsError(try SessionImport.open(path: "/dev/zero")) { error in
            XCTAssertEqual((error as? SessionStoreError)?.reason,
                           "line 1 is longer than 256 MiB: not a flow log this devproxy reads")
        }
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        XCTAssertEqual(after.subtracting(before).filter { $0.hasPrefix("devproxy-session-") }, [],
                       "the temporary store is removed")
    }

    /// A HAR document through a pipe is read whole after the bytes its format was told by.
    func testAHARFileThroughAPipeImports() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("session.har")
        try HARWriter.write(Self.samples, to: path)
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let pipe = Pipe()
        let writer = Thread {
            pipe.fileHandleForWriting.write(bytes)
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let (store, report) = try SessionImport.open(path: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        defer { store.close() }
        XCTAssertEqual(report?.flows, 3)
        XCTAssertEqual(try store.flows(limit: 10, order: .oldestFirst).flows.map(\.id), ["g1", "p2", "e3"])
    }

    func testASavedSessionOpensReadOnly() throws {
        let directory = TemporaryDirectory()
        try StoreFixtures.store(in: directory).close()
        let path = directory.file("session.sqlite")
        XCTAssertEqual(try SessionImport.format(of: path), .session)
        let (store, report) = try SessionImport.open(path: path)
        XCTAssertNil(report)
        XCTAssertTrue(store.isReadOnly)
        XCTAssertEqual(try store.count(filter: FilterExpression(parsing: "~c 404")), 1)
        store.close()
    }

    func testAFileThatIsNeitherIsReportedLineByLine() throws {
        let directory = TemporaryDirectory()
        let path = directory.write("notes.txt", "hello\n{\"id\":1}\n")
        let (store, report) = try SessionImport.open(path: path)
        defer { store.close() }
        XCTAssertEqual(report?.flows, 0)
        XCTAssertEqual(report?.problems.map(\.number), [1, 2])
    }
}

/// One flow-log line.
private enum OneFlowLogLine {
    static let flow = #"{"id":"o1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","#
        + #""client":"127.0.0.1:1","mode":"https","server":{"host":"a.example","port":443},"#
        + #""timings":{"connect":1,"tls":2,"send":1,"wait":20,"receive":4}}"#
}

/// Strings inserted from any thread.
private final class LockedSet: @unchecked Sendable {  // `set` is only touched under `lock`
    private let lock = NSLock()
    private var set = Set<String>()

    func insert(_ value: String) { lock.withLock { _ = set.insert(value) } }
    var values: Set<String> { lock.withLock { set } }
}
