import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// HAR 1.2 export: valid against the spec's schema (checked by Python's jsonschema when it is
/// installed), and the mapping from flows checked field by field in Swift either way.
@Suite struct HARWriterTests {
    let dir = TemporaryDirectory()

    static let validatorAvailable: Bool = {
        (try? Subprocess.run("python3", ["-c", "import jsonschema"]).status) == 0
    }()

    /// Runs jsonschema on `har`; returns its complaint, or nil when the document is valid.
    func schemaComplaint(_ har: [UInt8]) throws -> String? {
        let schema = dir.write("har.schema.json", HARSchema.json)
        let document = dir.write("candidate.har", bytes: har)
        let result = try Subprocess.run("python3", ["-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft7Validator.check_schema(schema)
            errors = list(jsonschema.Draft7Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
            for e in errors: print(list(e.absolute_path), e.message)
            sys.exit(1 if errors else 0)
            """, schema, document])
        return result.status == 0 ? nil : result.output
    }

    @Test(.enabled(if: HARWriterTests.validatorAvailable))
    func theArchiveIsValidHAR12() throws {
        #expect(try schemaComplaint(try HARWriter.encode(FlowSamples.all)) == nil)
    }

    /// The schema check would catch a missing field: the test above can fail.
    @Test(.enabled(if: HARWriterTests.validatorAvailable))
    func theSchemaRejectsAnEntryWithoutAStatus() throws {
        let encoded = Data(try HARWriter.encode([FlowSamples.get]))
        var json = try JSONSerialization.jsonObject(with: encoded) as! [String: Any]
        var log = json["log"] as! [String: Any]
        var entries = log["entries"] as! [[String: Any]]
        var response = entries[0]["response"] as! [String: Any]
        response["status"] = nil
        response["misspelled"] = 1
        entries[0]["response"] = response
        log["entries"] = entries
        json["log"] = log
        let complaint = try schemaComplaint([UInt8](try JSONSerialization.data(withJSONObject: json)))
        #expect(complaint?.contains("'status' is a required property") == true)
        #expect(complaint?.contains("misspelled") == true)
    }

    @Test func theLogNamesItsVersionAndCreator() {
        let har = HARWriter.document(for: FlowSamples.all, creatorVersion: "9.9")
        #expect(har.log.version == "1.2")
        #expect(har.log.creator == .init(name: "DevProxy", version: "9.9"))
        #expect(har.log.entries.map(\.flowID) == ["f3", "f1", "f4", "f2"])
    }

    /// Entries come oldest request first, as HAR 1.2 prefers and browsers export them, whatever
    /// order the flows came in: `--har` and a flow log have them in the order they finished, so a
    /// long request that started first used to come last. Same-millisecond starts keep their
    /// order; a start that does not parse goes last.
    @Test func entriesAreInTheOrderTheRequestsStarted() {
        let byEnd = [FlowSamples.get, FlowSamples.all[3], FlowSamples.all[1], FlowSamples.all[2]]
        #expect(byEnd.map(\.id) == ["f1", "f4", "f2", "f3"])
        #expect(HARWriter.document(for: byEnd).log.entries.map(\.flowID) == ["f3", "f1", "f4", "f2"])
        var twin = FlowSamples.get
        twin.id = "twin"
        var undated = FlowSamples.get
        undated.id = "undated"
        undated.started = "yesterday"
        let entries = HARWriter.document(for: [undated, twin, FlowSamples.all[1], FlowSamples.get]).log.entries
        #expect(entries.map(\.flowID) == ["twin", "f1", "f2", "undated"])
    }

    /// A form post's fields are `postData.params`, as Chrome exports them (DevTools' Payload tab
    /// lists them after an import): URL-encoded pairs decoded, multipart text fields with their
    /// values and files with their names and types; other bodies have none, and the whole is still
    /// valid HAR 1.2.
    @Test func formPostsCarryTheirFieldsAsParams() throws {
        var encoded = FlowSamples.post
        encoded.request?.headers = [["Content-Type", "application/x-www-form-urlencoded"]]
        encoded.request?.body = .init(size: 22, sha256: "00", text: "q=a+b%26c&lang=fr-%E2%82%AC", truncated: false)
        var multipart = FlowSamples.post
        multipart.id = "f5"
        multipart.request?.headers = [["Content-Type", "multipart/form-data; boundary=XyZ"]]
        let parts = "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n"
        let bytes = Array(parts.utf8) + [0x89, 0x50, 0x4E, 0x47, 0x00] + Array("\r\n--XyZ--\r\n".utf8)
        multipart.request?.body = .init(size: bytes.count, sha256: "00", base64: Data(bytes).base64EncodedString(),
                                        truncated: false)
        let entries = HARWriter.document(for: [encoded, multipart]).log.entries
        #expect(entries.map(\.flowID) == ["f2", "f5"])
        #expect(entries[0].request.postData?.params == [
            .init(name: "q", value: "a b&c"), .init(name: "lang", value: "fr-€")])
        #expect(entries[1].request.postData?.params == [
            .init(name: "title", value: "Hello"), .init(name: "f", fileName: "a.png", contentType: "image/png")])
        #expect(HARWriter.entry(for: FlowSamples.post).request.postData?.params == nil, "an image body has no params")
        if Self.validatorAvailable {
            #expect(try schemaComplaint(try HARWriter.encode([encoded, multipart])) == nil)
        }
    }

    /// Cookies split over several `cookie` fields (HTTP/2 crumbs, as Chromium sends them) all
    /// reach the entry's `cookies`; names and values lose the blanks around `=` both ways.
    @Test func cookieCrumbsAndBlanksAroundTheEqualsSign() throws {
        var flow = FlowSamples.get
        flow.request?.headers = [["host", "api.example.com"], ["cookie", "session=abc"], ["cookie", "theme = dark; x=1"]]
        flow.response?.headers = [["set-cookie", "id = 7 ; Path=/; HttpOnly"]]
        let entry = HARWriter.entry(for: flow)
        #expect(entry.request.cookies.map { "\($0.name)=\($0.value)" } == ["session=abc", "theme=dark", "x=1"])
        let cookie = try #require(entry.response.cookies.first)
        #expect(cookie.name == "id" && cookie.value == "7" && cookie.path == "/" && cookie.httpOnly == true)
    }

    @Test func anExchangeMapsFieldByField() throws {
        let entry = HARWriter.entry(for: FlowSamples.get)
        #expect(entry.startedDateTime == "2026-03-01T12:01:02.100Z")
        #expect(entry.request.method == "GET")
        #expect(entry.request.queryString == [.init(name: "q", value: "a b"), .init(name: "lang", value: "en")])
        #expect(entry.request.cookies.map(\.name) == ["session", "theme"])
        #expect(entry.request.headersSize == "GET /v1/x?q=a%20b&lang=en HTTP/1.1\r\n".utf8.count
                + "Host: api.example.com\r\n".utf8.count + "Cookie: session=abc; theme=dark\r\n".utf8.count + 2)
        #expect(entry.request.postData == nil)
        #expect(entry.response.status == 200 && entry.response.statusText == "OK")
        #expect(entry.response.content.mimeType == "application/json")
        #expect(entry.response.content.text == "{\"ok\":true}")
        #expect(entry.response.content.encoding == nil)
        #expect(entry.response.bodySize == 1234)
        let cookie = try #require(entry.response.cookies.first)
        #expect(cookie.name == "id" && cookie.value == "7" && cookie.path == "/")
        #expect(cookie.httpOnly == true && cookie.secure == true)
        #expect(entry.serverIPAddress == "203.0.113.5")
        #expect(entry.connection == "127.0.0.1:53122")
        #expect(entry.mode == "https")
    }

    /// TLS time is inside `connect` (HAR 1.2), and `time` is the sum of the phases without
    /// counting `ssl` twice.
    @Test func timingsFollowHARsRules() {
        let entry = HARWriter.entry(for: FlowSamples.get)
        #expect(entry.timings == .init(blocked: -1, dns: -1, connect: 10, send: 1, wait: 20, receive: 4, ssl: 7))
        #expect(entry.time == 35)
        let tunnel = HARWriter.entry(for: FlowSamples.tunnel)
        #expect(tunnel.timings.send == 0 && tunnel.timings.ssl == -1 && tunnel.time == 12)
    }

    @Test func binaryBodiesAreBase64() {
        let entry = HARWriter.entry(for: FlowSamples.post)
        #expect(entry.request.postData == .init(mimeType: "image/png", text: "iVBORw==", encoding: "base64"))
        #expect(entry.response.content.text == "AAEC" && entry.response.content.encoding == "base64")
        #expect(entry.response.redirectURL == "/done")
        #expect(entry.serverIPAddress == "2001:db8::1")
    }

    /// A body cut at `--body-limit` says so: a 4.8 MB JSON went out as its first MiB (invalid
    /// JSON), with nothing to tell it from the whole. The entry stays valid HAR 1.2.
    @Test func aCutBodySaysItWasCut() throws {
        var flow = FlowSamples.post
        flow.request?.body?.truncated = true
        flow.request?.body?.size = 5_000_000
        flow.response?.body = Flow.Body(size: 4_853_463, sha256: "ab", text: "{\"items\": [", base64: nil, truncated: true)
        let entry = HARWriter.entry(for: flow)
        #expect(entry.response.content.truncated == true)
        #expect(entry.response.content.comment == "DevProxy kept only the start of this body (--body-limit); 4853463 bytes "
                + "went over the wire")
        #expect(entry.request.postData?.truncated == true && entry.request.postData?.comment?.contains("5000000 bytes") == true)
        #expect(HARWriter.entry(for: FlowSamples.post).response.content.truncated == nil)
        if Self.validatorAvailable {
            #expect(try schemaComplaint(try HARWriter.encode([flow])) == nil)
        }
    }

    /// Chrome DevTools shows status-0 entries with `_error` as failed requests.
    @Test func aFailedFlowIsAStatusZeroEntryWithItsError() {
        let entry = HARWriter.entry(for: FlowSamples.rejected)
        #expect(entry.request.method == "CONNECT" && entry.request.url == "https://pinned.example.com:443/")
        #expect(entry.response.status == 0)
        #expect(entry.error?.kind == "client_rejected_certificate" && entry.error?.alert == "unknown_ca")
        #expect(entry.response.error == "client_rejected_certificate: client sent TLS alert unknown_ca")
        #expect(entry.serverIPAddress == nil)
    }

    @Test func aTunnelIsAConnectEntryWithItsCounts() {
        let entry = HARWriter.entry(for: FlowSamples.tunnel)
        #expect(entry.request.method == "CONNECT" && entry.response.status == 200)
        #expect(entry.mode == "tunnel")
        #expect(entry.tunnel?.bytesFromServer == 30_000)
    }

    /// A WebSocket's text and binary messages go out in Chrome's `_webSocketMessages` form
    /// (DevTools reads them back), the entry's `_resourceType` `websocket`; control frames do not; a message recorded before messages
    /// carried a time takes the flow's start.
    @Test func webSocketMessagesAreExportedAsChromeDoes() throws {
        var flow = FlowSamples.get
        flow.mode = .websocket
        flow.websocket = [
            .init(direction: "client_to_server", opcode: "text", length: 4, text: "ping", base64: nil,
                  compressedLength: 6, time: 1_796_407_500.588),
            .init(direction: "server_to_client", opcode: "binary", length: 3, text: nil, base64: "AQID", time: 1_796_407_500.6),
            .init(direction: "server_to_client", opcode: "ping", length: 0, text: nil, base64: nil, time: 1_796_407_501),
            .init(direction: "client_to_server", opcode: "text", length: 2, text: "hi", base64: nil),
            .init(direction: "server_to_client", opcode: "text", length: 70_000, text: "long", base64: nil, truncated: true,
                  time: 1_796_407_502),
        ]
        let entry = HARWriter.entry(for: flow)
        let started = try #require(ISO8601.date(flow.started)).timeIntervalSince1970
        #expect(entry.webSocketMessages == [
            .init(type: "send", time: 1_796_407_500.588, opcode: 1, data: "ping"),
            .init(type: "receive", time: 1_796_407_500.6, opcode: 2, data: "AQID"),
            .init(type: "send", time: started, opcode: 1, data: "hi"),
            .init(type: "receive", time: 1_796_407_502, opcode: 1, data: "long", truncated: true, length: 70_000),
        ])
        let json = String(decoding: try HARWriter.encode([flow]), as: UTF8.self)
        #expect(json.contains("\"_webSocketMessages\""), "\(json.prefix(400))")
        // Only a cut message carries the two extra keys.
        #expect(json.components(separatedBy: "\"_truncated\"").count == 2 && json.components(separatedBy: "\"_length\"").count == 2)
        #expect(HARWriter.entry(for: FlowSamples.get).webSocketMessages == nil)
        // Marked as Chrome marks a socket's entry; other entries carry no resource type.
        #expect(entry.resourceType == "websocket" && json.contains("\"_resourceType\""), "\(json.prefix(400))")
        #expect(HARWriter.entry(for: FlowSamples.get).resourceType == nil)
        if Self.validatorAvailable { #expect(try schemaComplaint(try HARWriter.encode([flow])) == nil) }
    }

    /// An HTTP/2 request lists `:method`, `:authority`, `:scheme` and `:path` among its headers, as
    /// received and first, as Chrome's DevTools export them (a diff by header saw none); the
    /// response no `:status` (Chrome lists none); both heads' `headersSize` is -1, as Chrome's: an
    /// HPACK block has no text to count. HTTP/1.1 entries keep theirs.
    @Test func anHTTP2EntryListsItsPseudoHeadersAsChromeDoes() throws {
        let flow = FlowSamples.decode("""
        {"id":"h2","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","client":"127.0.0.1:53122",
         "mode":"https","server":{"host":"api.example.com","port":443},
         "request":{"method":"GET","url":"https://api.example.com/v1/x?q=1","http_version":"HTTP/2",
           "pseudo_headers":[[":method","GET"],[":scheme","https"],[":authority","api.example.com"],[":path","/v1/x?q=1"]],
           "headers":[["user-agent","curl/8"],["cookie","a=1"]]},
         "response":{"status":200,"reason":"","http_version":"HTTP/2","pseudo_headers":[[":status","200"]],
           "headers":[["content-type","text/plain"]],
           "body":{"size":2,"sha256":"00","text":"ok","truncated":false}},
         "timings":{"connect":3,"tls":7,"send":1,"wait":20,"receive":4}}
        """)
        let entry = HARWriter.entry(for: flow)
        #expect(entry.request.headers.map(\.name) == [":method", ":scheme", ":authority", ":path", "user-agent", "cookie"])
        #expect(entry.request.headers[3].value == "/v1/x?q=1")
        #expect(entry.request.cookies.map(\.name) == ["a"])
        #expect(entry.request.headersSize == -1 && entry.response.headersSize == -1)
        #expect(entry.response.headers.map(\.name) == ["content-type"])
        #expect(entry.response.status == 200)
        let http1 = HARWriter.entry(for: FlowSamples.get)
        #expect(http1.request.headers.map(\.name) == ["Host", "Cookie"] && http1.request.headersSize > 0)
        #expect(http1.response.headersSize > 0)
        // Read back by Python's json as any HAR consumer would.
        let document = dir.write("h2.har", bytes: try HARWriter.encode([flow]))
        let names = try Subprocess.run("python3", ["-c", """
            import json, sys
            e = json.load(open(sys.argv[1]))["log"]["entries"][0]
            print(",".join(h["name"] for h in e["request"]["headers"]), e["request"]["headersSize"])
            """, document])
        #expect(names.output.trimmingCharacters(in: .whitespacesAndNewlines)
                == ":method,:scheme,:authority,:path,user-agent,cookie -1")
        if Self.validatorAvailable { #expect(try schemaComplaint(try HARWriter.encode([flow])) == nil) }
    }

    /// A decoded, whole body reports its decoded size and what compression saved.
    @Test func decodedContentReportsCompression() {
        var flow = FlowSamples.get
        flow.response?.body = Flow.Body(size: 20, sha256: "00", text: String(repeating: "a", count: 100), base64: nil,
                                        truncated: false, decoded: "gzip")
        let content = HARWriter.entry(for: flow).response.content
        #expect(content.size == 100 && content.compression == 80)
    }

    @Test func theSinkWritesAPrivateFileAtClose() throws {
        let sink = HARFlowSink(path: dir.file("session.har"))
        FlowSamples.all.forEach(sink.record)
        #expect(!FileManager.default.fileExists(atPath: dir.file("session.har")))
        sink.close()
        #expect(sink.writeError == nil)
        #expect(dir.mode("session.har") == 0o600)
        let har = try JSONDecoder().decode(HARDocument.self, from: Data(dir.read("session.har").utf8))
        #expect(har.log.entries.count == 4)
    }

    @Test func theSinkKeepsAWriteFailure() {
        let sink = HARFlowSink(path: dir.file("missing/session.har"))
        sink.record(FlowSamples.get)
        sink.close()
        #expect(sink.writeError?.code == .notWritable)
    }
}

/// `Set-Cookie`'s `Expires` in HAR: ISO 8601, as HAR 1.2 specifies and Chrome writes, read from
/// every date format servers send (RFC 6265 §5.1.1); it was the raw HTTP date, which typed HAR
/// readers fail on. A date no browser reads is left out, kept in the cookie's comment.
@Suite struct HARCookieExpiresTests {
    @Test(arguments: [("Wed, 21 Oct 2026 07:28:00 GMT", "2026-10-21T07:28:00.000Z"),
                      ("Wednesday, 21-Oct-26 07:28:00 GMT", "2026-10-21T07:28:00.000Z"),
                      ("Wed Oct 21 07:28:00 2026", "2026-10-21T07:28:00.000Z"),
                      ("Thu, 01-Jan-1970 00:00:01 GMT", "1970-01-01T00:00:01.000Z"),
                      ("Wed, 21 Oct 99 7:8:9 GMT", "1999-10-21T07:08:09.000Z")])
    func expiresIsISO8601(_ header: String, _ iso: String) {
        #expect(CookieDate.iso8601(header) == iso)
        let cookie = HARWriter.responseCookie("id=7; Expires=\(header); Path=/")
        #expect(cookie?.expires == iso && cookie?.comment == nil)
    }

    @Test func aDateNoBrowserReadsIsLeftOutAndSaid() {
        for header in ["tomorrow", "Wed, 31 Feb 2026 07:28:00 GMT", "Wed, 21 Oct 2026 25:00:00 GMT"] {
            #expect(CookieDate.iso8601(header) == nil, "\(header)")
        }
        let cookie = HARWriter.responseCookie("id=7; Expires=tomorrow")
        #expect(cookie?.expires == nil && cookie?.comment == "Expires=tomorrow (not a date a browser reads)")
    }
}
