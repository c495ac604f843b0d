import Foundation
import SessionStore
import TestSupport
import Testing
@testable import WebUI

/// `/api/flows` paging and filters, `/api/flows/ID`, the body routes and exports, against flows
/// stored as the flow log writes them.
@Suite struct WebUIFlowsAPITests {
    /// A flow-log line: `GET|POST URL` → `status`, with optional headers and a JSON response body.
    static func line(id: String, method: String = "GET", host: String, path: String = "/", status: Int = 200,
                     requestHeaders: String = "", responseText: String? = nil, error: String? = nil,
                     persona: String = "team") -> String {
        let body = responseText.map {
            #","body":{"size":\#($0.utf8.count),"sha256":"00","#
                + #""text":"\#($0.replacingOccurrences(of: "\"", with: "\\\""))","truncated":false}"#
        } ?? ""
        let response = error == nil ? #","response":{"status":\#(status),"reason":"R","http_version":"HTTP/1.1","#
            + #""headers":[["Content-Type","application/json"]]\#(body)}"# : ""
        let failure = error.map { #","error":{"kind":"\#($0)","message":"m"}"# } ?? ""
        return #"{"id":"\#(id)","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:00.010Z","#
            + #""client":"127.0.0.1:1","mode":"https","persona":"\#(persona)","server":{"host":"\#(host)","port":443},"#
            + #""request":{"method":"\#(method)","url":"https://\#(host)\#(path)","http_version":"HTTP/1.1","#
            + #""headers":[["Host","\#(host)"]\#(requestHeaders)]}\#(response)\#(failure),"#
            + #""timings":{"connect":-1,"tls":-1,"send":1,"wait":1,"receive":1}}"#
    }

    @Test func pagesFollowCursorsWithoutGapsOrRepeats() throws {
        let ui = try WebUIHarness()
        for index in 1...25 { ui.add(Self.line(id: "p\(index)", host: "h\(index % 3).test")) }
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let answer = try ui.request("/api/flows?limit=10" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(answer.status == 200)
            #expect(answer.json["total"] as? Int == 25)
            seen += (answer.json["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = answer.json["next_cursor"] as? String
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(seen == (1...25).reversed().map { "p\($0)" })
        let oldest = try ui.request("/api/flows?limit=2&order=oldest").json["flows"] as? [[String: Any]]
        #expect(oldest?.compactMap { $0["id"] as? String } == ["p1", "p2"])
        let summary = try #require((try ui.request("/api/flows?limit=1").json["flows"] as? [[String: Any]])?.first)
        for key in ["id", "started", "method", "url", "host", "status", "http_version", "mode", "error_kind",
                    "content_type", "request_size", "response_size", "duration_ms", "persona", "signer_email",
                    "replay_of", "phase"] {
            #expect(summary.keys.contains(key), "summary lacks \(key)")
        }
        #expect(try ui.request("/api/flows?limit=0").status == 400)
        #expect(try ui.request("/api/flows?cursor=abc").status == 400)
        #expect(try ui.request("/api/flows?order=sideways").status == 400)
    }

    /// A summary names the server's port (a tunnel's row shows it: a tunnel has no URL) and the
    /// codes of the informational responses before the final one, each once in the order they came
    /// (the list marks a flow that had 103 Early Hints); `[]` when none came. Neither was in it.
    @Test func aSummaryNamesThePortAndTheInformationalCodes() throws {
        let ui = try WebUIHarness()
        ui.add(#"{"id":"t1","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:01.000Z","#
            + #""client":"127.0.0.1:1","mode":"tunnel","server":{"host":"db.internal","port":5432},"#
            + #""tunnel":{"bytes_up":10,"bytes_down":20}}"#)
        var hinted = Self.line(id: "h1", host: "shop.test")
        hinted.removeLast()
        hinted += #","informational":[{"status":102,"headers":[],"time":"2026-03-01T12:00:00.001Z"},"#
            + #"{"status":103,"headers":[["Link","</a.css>; rel=preload"]],"time":"2026-03-01T12:00:00.002Z"},"#
            + #"{"status":103,"headers":[],"time":"2026-03-01T12:00:00.003Z"}]}"#
        ui.add(hinted)
        ui.add(Self.line(id: "p1", host: "plain.test"))
        let flows = try #require(try ui.request("/api/flows").json["flows"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: flows.compactMap { flow in (flow["id"] as? String).map { ($0, flow) } })
        #expect(byID["t1"]?["port"] as? Int == 5432 && byID["t1"]?["is_tunnel"] as? Bool == true, "\(flows)")
        #expect(byID["h1"]?["informational"] as? [Int] == [102, 103] && byID["h1"]?["port"] as? Int == 443, "\(flows)")
        #expect(byID["p1"]?["informational"] as? [Int] == [], "\(flows)")
    }

    /// A list over the export's 10,000 flows exports the newest 10,000 (those the list shows on
    /// top), in the order they started, and says what it left out in the HAR's `log.comment` and
    /// `X-DevProxy-Export-Cut`: it exported the oldest, without a word.
    @Test func aHARExportOverTheLimitKeepsTheNewestAndSaysSo() throws {
        let ui = try WebUIHarness()
        for index in 1...(WebUI.maximumExport + 2) {
            ui.store.finished(flowLogLine: Array(Self.line(id: "e\(index)", host: "h.test").utf8))
            // In steps the writer keeps up with: a queue offered 10,002 at once on a loaded machine
            // drops records once it is full (as it is built to), and the test counts on every one.
            if index.isMultiple(of: 1_000) { ui.store.flush() }
        }
        ui.store.flush()
        let answer = try ui.request("/api/export/har")
        #expect(answer.status == 200)
        let log = answer.json["log"] as? [String: Any]
        let entries = log?["entries"] as? [[String: Any]] ?? []
        #expect(entries.count == WebUI.maximumExport)
        #expect(entries.first?["_flowId"] as? String == "e3" && entries.last?["_flowId"] as? String == "e10002",
                "\(String(describing: entries.first?["_flowId"])) … \(String(describing: entries.last?["_flowId"]))")
        #expect(log?["comment"] as? String == "the newest 10000 of 10002 flows: narrow the filter to export the others")
        #expect(answer.headers["x-devproxy-export-cut"] != nil)
    }

    /// `sort=` orders by a column (`-` for descending), pages by cursor in that order, and a
    /// column it does not know, or `order=` beside it, is a 400 that says what it takes.
    @Test func sortOrdersByAColumnAndPagesInThatOrder() throws {
        let ui = try WebUIHarness()
        for (index, status) in [200, 503, 404, 201, 302].enumerated() {
            ui.add(Self.line(id: "s\(index)", host: "h.test", status: status))
        }
        let ids = { (query: String) -> [String] in
            (try ui.request("/api/flows?" + query).json["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        #expect(try ids("sort=-status") == ["s1", "s2", "s4", "s3", "s0"])
        let first = try ui.request("/api/flows?sort=status&limit=2")
        #expect(try ids("sort=status&limit=2") == ["s0", "s3"])
        let cursor = try #require(first.json["next_cursor"] as? String)
        #expect(try ids("sort=status&limit=2&cursor=\(cursor)") == ["s4", "s2"])
        #expect(try ids("sort=-status&filter=%21%7Ec%20503") == ["s2", "s4", "s3", "s0"])
        let unknown = try ui.request("/api/flows?sort=colour")
        #expect(unknown.status == 400
                && unknown.text.contains("time, method, host, path, status, type, size, duration, client"),
                "\(unknown.text)")
        #expect(try ui.request("/api/flows?sort=size&order=oldest").status == 400)
    }

    /// `sort=client` orders by what the list's Client cell shows: the process's name, else the
    /// client's address; without regard to case (ties newest first, across a page's end too), a
    /// flow with neither last either way.
    @Test func sortByClientOrdersByProcessElseAddress() throws {
        let ui = try WebUIHarness()
        for (index, (process, client)) in [("python3", "127.0.0.1:1"), (nil, "10.0.0.3:5"), ("Curl", "127.0.0.1:2"),
                                           ("curl", "127.0.0.1:3"), (nil, nil)].enumerated() {
            let named = process.map { #","client_process":{"pid":\#(100 + index),"name":"\#($0)"}"# } ?? ""
            let line = Self.line(id: "c\(index)", host: "h.test")
                .replacingOccurrences(of: #""client":"127.0.0.1:1","#, with: client.map { #""client":"\#($0)","# } ?? "")
            ui.add(String(line.dropLast()) + named + "}")
        }
        let ids = { (query: String) -> [String] in
            (try ui.request("/api/flows?" + query).json["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        #expect(try ids("sort=client") == ["c1", "c3", "c2", "c0", "c4"])
        #expect(try ids("sort=-client") == ["c0", "c3", "c2", "c1", "c4"])
        let first = try ui.request("/api/flows?sort=client&limit=2")
        #expect(try ids("sort=client&limit=2") == ["c1", "c3"])
        let cursor = try #require(first.json["next_cursor"] as? String)
        #expect(try ids("sort=client&limit=2&cursor=\(cursor)") == ["c2", "c0"])
        #expect(try ids("sort=-client&filter=%7Eproc%20curl") == ["c3", "c2"])
    }

    /// Every page says the largest `seq` its `total` counted up to (`max_seq`, the store's newest
    /// flow then, whatever the filter or sort): a live flow numbered above it is new since, which
    /// a sorted list counts when it lands below the loaded rows. 0 for an empty store.
    @Test func aPageSaysUpToWhichFlowItsTotalCounts() throws {
        let ui = try WebUIHarness()
        #expect(try ui.request("/api/flows").json["max_seq"] as? Int == 0)
        for index in 1...3 { ui.add(Self.line(id: "m\(index)", host: "h\(index).test")) }
        let newest = try #require((try ui.request("/api/flows?limit=1").json["flows"] as? [[String: Any]])?.first)
        let seq = try #require(newest["seq"] as? Int)
        for query in ["limit=1", "sort=host&limit=1", "filter=%7Ed%20h1.test", "sort=-size&filter=%7Ed%20h1.test"] {
            let page = try ui.request("/api/flows?" + query).json
            #expect(page["max_seq"] as? Int == seq, "\(query): \(page)")
        }
        ui.add(Self.line(id: "m4", host: "h4.test"))
        let later = try ui.request("/api/flows?sort=host&limit=1").json
        let added = try #require((try ui.request("/api/flows?filter=%7Ed%20h4.test").json["flows"] as? [[String: Any]])?.first)
        #expect((added["seq"] as? Int ?? 0) > seq && later["max_seq"] as? Int == added["seq"] as? Int && later["total"] as? Int == 4)
    }

    @Test func filtersRunInTheStoreAndBadOnesSayWhere() throws {
        let ui = try WebUIHarness()
        ui.add(Self.line(id: "a", host: "api.acme.test", path: "/login", status: 200,
                         responseText: #"{"token":"needle-42"}"#))
        ui.add(Self.line(id: "b", method: "POST", host: "api.acme.test", path: "/items", status: 404))
        ui.add(Self.line(id: "c", host: "cdn.other.test", path: "/app.js", status: 200,
                         requestHeaders: #",["X-Trace","abc123"]"#))
        ui.add(Self.line(id: "d", host: "down.test", error: "upstream_refused"))
        let table: [(String, [String])] = [
            ("~d acme", ["b", "a"]),
            ("~c 404", ["b"]),
            ("~m POST", ["b"]),
            ("login", ["a"]),
            ("~u /items | ~u app", ["c", "b"]),
            ("~d acme & !~c 404", ["a"]),
            ("!(~d acme)", ["d", "c"]),
            ("~hq 'x-trace: abc'", ["c"]),
            ("~bs 'needle-\\d+'", ["a"]),
            ("~e", ["d"]),
            ("~s & ~d ACME", ["b", "a"]),
            ("~all", ["d", "c", "b", "a"]),
        ]
        for (expression, expected) in table {
            let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let answer = try ui.request("/api/flows?filter=\(encoded)")
            #expect(answer.status == 200, "\(expression)")
            let ids = (answer.json["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(ids == expected, "\(expression)")
            #expect(answer.json["total"] as? Int == expected.count, "\(expression)")
        }
        let invalid: [(String, Int)] = [("~d", 3), ("~c abc", 4), ("a &", 4), ("(a", 3), ("~nosuch x", 1), ("a )", 3)]
        for (expression, column) in invalid {
            let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let answer = try ui.request("/api/flows?filter=\(encoded)")
            #expect(answer.status == 400, "\(expression)")
            #expect(answer.json["column"] as? Int == column, "\(expression): \(answer.text)")
            #expect((answer.json["error"] as? String)?.contains("column \(column)") == true, "\(expression)")
        }
    }

    /// A filter ICU backtracks on without end (alternatives under a repetition against one
    /// 80-character path) held the store's readers for good: that request, and every later one,
    /// never answered, and Ctrl-C no longer stopped devproxy. It is stopped after 10 s of searching
    /// and answered 400 with the reason, and the UI answers the next request.
    @Test func aFilterThatBacktracksWithoutEndIsStoppedAndSaysSo() throws {
        let ui = try WebUIHarness()
        ui.add(Self.line(id: "long", host: "api.acme.test", path: "/" + String(repeating: "a", count: 80), status: 200))
        let clock = ContinuousClock()
        let start = clock.now
        let encoded = #"~u "(a|aa)*b""#.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let answer = try ui.request("/api/flows?filter=\(encoded)")
        let took = clock.now - start
        #expect(answer.status == 400, "\(answer.text)")
        #expect((answer.json["error"] as? String)?.contains("searched for more than 10 s and was stopped") == true,
                "\(answer.text)")
        #expect(took < .seconds(25), "\(took)")
        #expect(try ui.request("/api/flows?filter=~u%20aaaa").json["total"] as? Int == 1)
    }

    @Test func aFlowIsItsLogRecordAndUnknownIdsAre404() throws {
        let ui = try WebUIHarness()
        let line = Self.line(id: "r1", host: "x.test", responseText: "<script>alert(1)</script>")
        ui.add(line)
        let answer = try ui.request("/api/flows/r1")
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "application/json")
        #expect(answer.text == line)
        #expect(try ui.request("/api/flows/nope").status == 404)
        #expect(try ui.request("/api/flows/nope/response/body").status == 404)
    }

    /// A flow still running answers `pending` with its summary and the header fields known so
    /// far: the request's from its start, the response's once its head came.
    @Test func aPendingFlowComesWithTheHeadersKnownSoFar() throws {
        let ui = try WebUIHarness()
        let summary = FlowSummary(id: "p1", started: "2026-03-01T12:00:00.000Z", host: "slow.test", mode: "https",
                                  method: "POST", url: "https://slow.test/wait")
        ui.store.started(FlowRecord(summary: summary, requestHeaders: [["X-Probe", "a \"quoted\" value"], ["Accept", "*/*"]]))
        ui.store.flush()
        let waiting = try ui.request("/api/flows/p1")
        #expect(waiting.status == 200)
        #expect(waiting.json["pending"] as? Bool == true)
        #expect((waiting.json["request"] as? [String: Any])?["headers"] as? [[String]]
                == [["X-Probe", "a \"quoted\" value"], ["Accept", "*/*"]], "\(waiting.text)")
        #expect(waiting.json["response"] == nil, "no response head yet: \(waiting.text)")
        var answered = summary
        answered.status = 200
        ui.store.responded(FlowRecord(summary: answered, requestHeaders: [["X-Probe", "a \"quoted\" value"]],
                                      responseHeaders: [["Content-Type", "text/event-stream"]]))
        ui.store.flush()
        let streaming = try ui.request("/api/flows/p1")
        #expect(streaming.json["pending"] as? Bool == true)
        #expect((streaming.json["response"] as? [String: Any])?["headers"] as? [[String]]
                == [["Content-Type", "text/event-stream"]], "\(streaming.text)")
        #expect((streaming.json["summary"] as? [String: Any])?["status"] as? Int == 200)
        #expect(streaming.json["record"] == nil, "no record so far was handed over: \(streaming.text)")
        // A long call's record so far comes with the pending answer, the finished one alone.
        let soFar = #"{"grpc":{"response_messages":2},"id":"p1"}"#
        ui.store.progressed(FlowRecord(summary: answered), jsonLine: Array((soFar + "\n").utf8))
        ui.store.flush()
        let progressed = try ui.request("/api/flows/p1")
        #expect(progressed.json["pending"] as? Bool == true)
        #expect(((progressed.json["record"] as? [String: Any])?["grpc"] as? [String: Any])?["response_messages"] as? Int == 2,
                "\(progressed.text)")
        #expect(try ui.store.flowJSON(id: "p1") == nil, "a record so far is no finished record")
        // The pane's preview (4 KiB) leaves a record so far's body at least 64 KiB of room.
        let events = String(repeating: "data: tick; ", count: 1000)
        let streamed = "{\"id\":\"p1\",\"response\":{\"body\":{\"sha256\":\"\",\"size\":\(events.utf8.count),"
            + "\"text\":\"\(events)\",\"truncated\":false},\"status\":200}}"
        ui.store.progressed(FlowRecord(summary: answered), jsonLine: Array(streamed.utf8))
        ui.store.flush()
        let previewed = try ui.request("/api/flows/p1?preview=4096")
        let body = ((previewed.json["record"] as? [String: Any])?["response"] as? [String: Any])?["body"] as? [String: Any]
        #expect((body?["text"] as? String)?.count == events.count && body?["preview"] == nil, "\(previewed.text.prefix(300))")
        var finished = answered
        finished.phase = .finished
        let line = #"{"grpc":{"response_messages":3},"id":"p1"}"#
        ui.store.finished(FlowRecord(summary: finished), json: line, bodies: FlowBodies())
        ui.store.flush()
        let done = try ui.request("/api/flows/p1")
        #expect(done.text == line)
        #expect(try ui.store.partialJSON(id: "p1") == nil)
    }

    /// `?preview=N` cuts a big record's body text to N characters (the detail pane's fetch); a
    /// small record, or one asked for without it, is the log line as written.
    @Test func aPreviewCutsABigRecordsBodyText() throws {
        let ui = try WebUIHarness()
        let big = String(repeating: "0123456789", count: 20_000)
        ui.add(Self.line(id: "big", host: "x.test", responseText: big))
        ui.add(Self.line(id: "small", host: "x.test", responseText: "small body"))
        let preview = try ui.request("/api/flows/big?preview=100").json
        let body = (preview["response"] as? [String: Any])?["body"] as? [String: Any]
        #expect((body?["text"] as? String) == String(big.prefix(100)))
        #expect(body?["preview"] as? Bool == true)
        #expect(body?["size"] as? Int == big.utf8.count)
        #expect(preview["id"] as? String == "big")
        let whole = try ui.request("/api/flows/big").json
        #expect(((whole["response"] as? [String: Any])?["body"] as? [String: Any])?["text"] as? String == big)
        // Cut on a character and escape boundary: what is left is still JSON, and a prefix.
        let tricky = String(repeating: "é\"ab", count: 30_000)
        ui.add(Self.line(id: "tricky", host: "x.test", responseText: tricky))
        for limit in [100, 101, 102, 103] {
            let cut = try ui.request("/api/flows/tricky?preview=\(limit)").json
            let text = ((cut["response"] as? [String: Any])?["body"] as? [String: Any])?["text"] as? String
            #expect(text.map { tricky.hasPrefix($0) && !$0.isEmpty && $0.utf8.count <= limit } == true, "\(limit)")
        }
        let small = try ui.request("/api/flows/small?preview=4")
        #expect(small.text == Self.line(id: "small", host: "x.test", responseText: "small body"))
    }

    @Test func bodiesAreServedDecodedAsTextRawAsAttachmentsAndInParts() throws {
        let ui = try WebUIHarness()
        let text = "<html><script>alert(1)</script>" + String(repeating: "é", count: 100) + "</html>"
        ui.add(Self.line(id: "b1", host: "x.test", responseText: text))
        let decoded = try ui.request("/api/flows/b1/response/body")
        #expect(decoded.status == 200)
        #expect(decoded.text == text)
        #expect(decoded.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(decoded.headers["x-devproxy-content-type"] == "application/json")
        #expect(decoded.headers["x-content-type-options"] == "nosniff")
        #expect(decoded.headers["content-security-policy"] == "sandbox; default-src 'none'")
        let raw = try ui.request("/api/flows/b1/response/body?raw=1")
        #expect(raw.headers["content-disposition"] == "attachment; filename=\"b1-response.bin\"")
        #expect(raw.headers["content-type"] == "application/octet-stream")
        #expect(raw.text == text)
        // 40 bytes would split an é (2 bytes each, starting at byte 31): the cut keeps whole characters.
        let limited = try ui.request("/api/flows/b1/response/body?limit=40")
        #expect(limited.body.count == 39)
        #expect(text.hasPrefix(limited.text))
        let range = try ui.request("/api/flows/b1/response/body", headers: ["Range: bytes=6-13"])
        #expect(range.status == 206)
        #expect(range.text == "<script>")
        #expect(range.headers["content-range"] == "bytes 6-13/\(text.utf8.count)")
        #expect(try ui.request("/api/flows/b1/response/body", headers: ["Range: bytes=99999-"]).status == 416)
        #expect(try ui.request("/api/flows/b1/request/body").status == 404)
    }

    @Test(.enabled(if: HARWriterTests.validatorAvailable))
    func exportsAreValidHARAndTheRawExchange() throws {
        let ui = try WebUIHarness()
        ui.add(Self.line(id: "e1", host: "a.test", path: "/one", responseText: #"{"n":1}"#))
        ui.add(Self.line(id: "e2", host: "b.test", path: "/two", status: 500))
        let one = try ui.request("/api/flows/e1/export?format=har")
        #expect(one.status == 200)
        #expect(one.headers["content-disposition"] == "attachment; filename=\"e1.har\"")
        #expect(try HARWriterTests().schemaComplaint(one.body) == nil)
        let filtered = try ui.request("/api/export/har?filter=~c%20500")
        #expect(try HARWriterTests().schemaComplaint(filtered.body) == nil)
        let entries = (filtered.json["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 1)
        let selection = try ui.request("/api/export/har?ids=e2,e1").json["log"] as? [String: Any]
        #expect((selection?["entries"] as? [[String: Any]])?.count == 2)
        let raw = try ui.request("/api/flows/e1/export?format=raw").text
        #expect(raw.hasPrefix("GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n"))
        #expect(raw.contains("HTTP/1.1 200 R\r\nContent-Type: application/json\r\n\r\n{\"n\":1}"))
        #expect(try ui.request("/api/flows/e1/export?format=zip").status == 400)
    }

    /// An HTTP/2 exchange exported raw reads as `curl -v` shows one (`POST /path HTTP/2`, `Host`
    /// from `:authority`, which the h2 request has instead, `HTTP/2 200`), and the gRPC
    /// status, a trailer, after the body sent as one chunk (it was left out before). A message
    /// without trailers keeps its `content-length` and plain body.
    @Test func aRawExportOfAnHTTP2ExchangeHasItsHostAndTrailers() throws {
        let ui = try WebUIHarness()
        let message = "AAAAAAUKAXgQBw=="   // a gRPC message: uncompressed, 5 bytes (field 1 "x", field 2 7)
        ui.add(#"{"id":"g1","started":"2026-03-01T12:00:00.000Z","ended":"2026-03-01T12:00:00.010Z","client":"127.0.0.1:1","mode":"https","#
               + #""server":{"host":"g.test","port":8443},"#
               + #""request":{"method":"POST","url":"https://g.test:8443/lab.Echo/Unary","http_version":"HTTP/2","#
               + #""pseudo_headers":[[":method","POST"],[":scheme","https"],[":authority","g.test:8443"],"#
               + #"[":path","/lab.Echo/Unary"]],"headers":[["content-type","application/grpc"],["te","trailers"]],"#
               + #""body":{"size":10,"sha256":"00","base64":"\#(message)","truncated":false}},"#
               + #""response":{"status":200,"reason":"OK","http_version":"HTTP/2","#
               + #""headers":[["content-type","application/grpc"],["content-length","10"]],"#
               + #""body":{"size":10,"sha256":"00","base64":"\#(message)","truncated":false},"#
               + #""trailers":[["grpc-status","0"],["grpc-message",""]]},"#
               + #""timings":{"connect":-1,"tls":-1,"send":1,"wait":1,"receive":1}}"#)
        let raw = try ui.request("/api/flows/g1/export?format=raw").body
        let body = try #require(Data(base64Encoded: message)).map { $0 }
        let request = Array("POST /lab.Echo/Unary HTTP/2\r\nHost: g.test:8443\r\ncontent-type: application/grpc\r\n".utf8)
            + Array("te: trailers\r\n\r\n".utf8) + body
        let response = Array("\r\n\r\nHTTP/2 200\r\ncontent-type: application/grpc\r\ntransfer-encoding: chunked\r\n\r\n".utf8)
            + Array("a\r\n".utf8) + body + Array("\r\n0\r\ngrpc-status: 0\r\ngrpc-message: \r\n\r\n".utf8)
        #expect(raw == request + response, "\(String(decoding: raw, as: UTF8.self).debugDescription)")
        // An HTTP/1.1 response that came `gzip, chunked`: its body is stored decoded, so the text
        // says `chunked` alone and carries it as one chunk, its trailer after it.
        ui.add(Self.line(id: "t1", host: "t.test", responseText: "hello").replacingOccurrences(
            of: #"[["Content-Type","application/json"]]"#,
            with: #"[["Content-Type","text/plain"],["Transfer-Encoding","gzip, chunked"]],"trailers":[["X-Sum","5"]]"#))
        let coded = try ui.request("/api/flows/t1/export?format=raw").text
        #expect(coded.hasSuffix("HTTP/1.1 200 R\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                                + "5\r\nhello\r\n0\r\nX-Sum: 5\r\n\r\n"), "\(coded.debugDescription)")
    }

    /// A body whose coding could not be undone (gzip bytes labelled `br`, which read as a brotli
    /// stream that never ends) is served as sent, with no `X-DevProxy-Decoded`: it was served as
    /// an empty "decoded" body.
    @Test func aBodyWhoseCodingCouldNotBeUndoneIsServedAsSent() throws {
        let ui = try WebUIHarness()
        let hex = "1f8b0800003e146b02ffab56ca2c49cd2d56b28aae56ca4bcc4d55b2524acc29c84854d251ca4c51b232acd5818b27a5"
            + "96c0848d6a637594f2f24b40c2e9559905ba59c5f979bab98945d9a9454ab50076e4509154000000"
        let gzipped = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        let base64 = Data(gzipped).base64EncodedString()
        ui.add(Self.line(id: "m1", host: "m.test").replacingOccurrences(
            of: #"[["Content-Type","application/json"]]"#,
            with: #"[["Content-Type","application/json"],["Content-Encoding","br"]],"#
                + #""body":{"size":\#(gzipped.count),"sha256":"00","base64":"\#(base64)","truncated":false,"#
                + #""decode_error":"could not be decoded as br: kept as sent"}"#))
        let body = try ui.request("/api/flows/m1/response/body")
        #expect(body.status == 200)
        #expect(body.body == gzipped, "\(body.body.count) bytes")
        #expect(body.headers["x-devproxy-decoded"] == nil, "\(body.headers)")
        let flow = try ui.request("/api/flows/m1").json
        let logged = (flow["response"] as? [String: Any])?["body"] as? [String: Any]
        #expect(logged?["decode_error"] as? String == "could not be decoded as br: kept as sent", "\(flow)")
    }

    @Test func errorKindsComeWithTheirExplanation() throws {
        let ui = try WebUIHarness()
        let kinds = try ui.request("/api/error-kinds").json
        #expect(kinds["destination_refused"] as? String
                == "DevProxy did not send it on: a --block-list rule, or a destination that is DevProxy itself "
                + "(its web UI or one of its listeners)")
        #expect(kinds.count > 20)
    }

    @Test func clearEmptiesTheSessionAndReplayWithoutAProxyIs409() throws {
        let ui = try WebUIHarness()
        ui.add(Self.line(id: "c1", host: "a.test"))
        #expect(try ui.request("/api/flows/c1/replay", method: "POST").status == 409)
        #expect(try ui.request("/api/clear", method: "POST").json["cleared"] as? Bool == true)
        #expect(try ui.request("/api/flows").json["total"] as? Int == 0)
    }
}
