import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// `--modify-body`, mitmproxy's modify_body on responses: curl through the proxy to real origins
/// (hypercorn over HTTP/1.1, Python h2 over HTTP/2), a JSON body, a gzip'd one, a chunked one, an
/// `@FILE` replacement, a body over the limit, an event stream; the flow's record of it.
@Suite(.serialized) struct ModifyBodyTests {
    /// As mitmproxy splits it: the part after the third `/` is the replacement whole (a trailing
    /// `/` would be put in too).
    static let premium = #"/~s & ~d localhost/"premium":false/"premium":true"#
    static let edited = #"{"user": "ana", "premium":true}"#

    /// The origins an HTTP/1.1 client's request reaches: hypercorn over HTTP/1.1, and Python h2
    /// (h2 only, so the proxy speaks h2 upstream).
    enum Origin: String, CaseIterable, CustomStringConvertible {
        case http1, http2
        var description: String { rawValue }
        var kind: HTTP2Origin.Kind { self == .http1 ? .hypercornHTTP1 : .misbehaving }
    }

    private func proxy(_ origin: HTTP2Origin, rules: [String], directory: String? = nil) throws -> ProxyHarness {
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let mapRules = try MapRules(remote: [], local: [], body: rules,
                                    directory: directory ?? FileManager.default.currentDirectoryPath)
        return try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = mapRules
        })
    }

    /// Header fields (lower-cased names) and the body of what `curl -i` printed.
    private func split(_ text: String) -> (fields: [String: String], body: String) {
        var parts = text.components(separatedBy: "\r\n\r\n")
        while parts.count > 1, parts[1].hasPrefix("HTTP/") { parts.removeFirst() }
        var fields: [String: String] = [:]
        for line in (parts.first ?? "").components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (fields, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test(arguments: Origin.allCases)
    func aJSONResponseIsEditedWithItsNewLength(_ which: Origin) throws {
        let origin = try HTTP2Origin(which.kind)
        let proxy = try proxy(origin, rules: [Self.premium])
        let result = try proxy.curl(["--http1.1", "-i", origin.url("/account")])
        let (fields, body) = split(result.stdout)
        #expect(body == Self.edited, "\(result.output)")
        #expect(fields["content-length"] == String(body.utf8.count) && fields["transfer-encoding"] == nil,
                "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        let url = origin.url("/account")
        #expect(flow.mapped == Flow.Mapping(rule: "modify-body", from: url, to: url, by: [],
                                            body: [Flow.BodyChange(on: "response", by: Self.premium, replacements: 1)]),
                "\(String(describing: flow.mapped))")
        // The flow's body is what the client got; the console line, the flow log and HAR say what was done.
        #expect(flow.response?.body?.text == Self.edited, "\(String(describing: flow.response?.body))")
        #expect(flow.response?.headers.first(named: "content-length") == String(body.utf8.count))
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (response body: 1 replacement)"),
                "\(ConsoleFlowPrinter.line(for: flow))")
        let json = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(json.contains(#""body":[{"by":"\#(Self.premium.replacingOccurrences(of: "\"", with: "\\\""))","#
                              + #""on":"response","replacements":1}]"#), "\(json)")
        let har = try JSONSerialization.jsonObject(with: JSONEncoder().encode(HARWriter.document(for: [flow])))
            as? [String: Any]
        let entry = ((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first
        let mapped = entry?["_mapped"] as? [String: Any]
        #expect((mapped?["body"] as? [[String: Any]])?.first?["replacements"] as? Int == 1,
                "\(String(describing: entry))")
    }

    /// A chunked answer (hypercorn sends one without a length in two parts) goes to the client
    /// with a Content-Length.
    @Test func aChunkedResponseGoesWithALength() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let proxy = try proxy(origin, rules: [Self.premium])
        let result = try proxy.curl(["--http1.1", "-i", origin.url("/account?chunked")])
        let (fields, body) = split(result.stdout)
        #expect(body == Self.edited, "\(result.output)")
        #expect(fields["content-length"] == String(body.utf8.count) && fields["transfer-encoding"] == nil,
                "\(result.output)")
    }

    /// Trailers are kept: an HTTP/1.1 client gets the edited body chunked with the origin's trailer
    /// (Python h2, content-length 5 and `trailer: x-checksum`), an HTTP/2 client the body with a
    /// fresh content-length, then the trailer (hypercorn).
    @Test func trailersAreKept() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let proxy = try proxy(origin, rules: ["|hello|HELLO!"])
        let result = try proxy.curl(["--http1.1", "-i", "--raw", origin.url("/trailers")])
        let text = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(text.contains("\nTransfer-Encoding: chunked\n") && !text.lowercased().contains("content-length"),
                "\(result.output)")
        #expect(text.hasSuffix("\n\n6\nHELLO!\n0\nx-checksum: 5d41402a\n\n"), "\(result.output)")

        let both = try HTTP2Origin(.hypercornBoth)
        let h2 = try self.proxy(both, rules: ["|body|BODY!"])
        let json = try H2Client.run(proxy: h2, port: both.port, alpn: "h2", path: "/trailers", extra: ["te=trailers"])
        let response = try #require(json.responses.first)
        #expect(response.body == "BODY!" && response.trailers == [["x-checksum", "abc123"]], "\(json)")
        #expect(response.headers.first { $0.first == "content-length" }?.last == "5", "\(json)")
        #expect(h2.flows(count: 1).first?.response?.trailers == [["x-checksum", "abc123"]])
    }

    /// A gzip'd body is matched decoded, and the client gets gzip again, whose text is edited.
    @Test(arguments: Origin.allCases)
    func aGzipResponseIsEditedAndStillGzip(_ which: Origin) throws {
        let origin = try HTTP2Origin(which.kind)
        let proxy = try proxy(origin, rules: [Self.premium])
        let dir = TemporaryDirectory()
        let result = try proxy.curl(["--http1.1", "-D", dir.file("head"), "-o", dir.file("body"),
                                     origin.url("/account?gzip")])
        #expect(result.status == 0, "\(result.output)")
        let head = try String(contentsOfFile: dir.file("head"), encoding: .utf8).lowercased()
        let size = try #require(FileManager.default.attributesOfItem(atPath: dir.file("body"))[.size] as? Int)
        #expect(head.contains("content-encoding: gzip") && head.contains("content-length: \(size)\r\n"), "\(head)")
        let text = try Subprocess.run("python3", ["-c", "import gzip,sys; sys.stdout.write(gzip.decompress("
                                                  + "open(sys.argv[1],'rb').read()).decode())", dir.file("body")])
        #expect(text.status == 0 && text.stdout == Self.edited, "\(text.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.body?.first?.replacements == 1 && flow.response?.body?.text == Self.edited,
                "\(flow)")
    }

    /// `@FILE` puts the file's bytes in as they are (no group references), read at each response.
    @Test func aReplacementFileIsReadEachTime() throws {
        let dir = TemporaryDirectory()
        dir.write("premium.txt", #""premium":"gold\1""#)
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let rule = #"|~u /account|"premium":false|@premium.txt"#
        let proxy = try proxy(origin, rules: [rule], directory: dir.path)
        let first = try proxy.curl(["--http1.1", origin.url("/account")])
        #expect(first.stdout == #"{"user": "ana", "premium":"gold\1"}"#, "\(first.output)")
        dir.write("premium.txt", #""premium":"silver""#)
        let second = try proxy.curl(["--http1.1", origin.url("/account")])
        #expect(second.stdout == #"{"user": "ana", "premium":"silver"}"#, "\(second.output)")
    }

    /// A body over 8 MiB goes on whole and unchanged, what was gathered first, and the flow says why.
    @Test func aBodyOverTheLimitIsRelayedUnchanged() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let proxy = try proxy(origin, rules: ["|~u /big|0123|XXXX"])
        let dir = TemporaryDirectory()
        let size = 9 << 20
        let result = try proxy.curl(["--http1.1", "-o", dir.file("big"), origin.url("/big?n=\(size)")])
        #expect(result.status == 0, "\(result.output)")
        let expected = try Subprocess.run("python3", ["-c", "import hashlib; p = b'0123456789abcdef' * 4096; "
            + "d = (p * (\(size) // len(p) + 1))[:\(size)]; print(hashlib.sha256(d).hexdigest())"]).stdout
        let got = try Subprocess.run("sha256sum", [dir.file("big")]).stdout.split(separator: " ").first
        #expect(got.map(String.init) == expected.trimmingCharacters(in: .whitespacesAndNewlines), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.note?.contains("went over the 8 MiB --modify-body holds") == true,
                "\(String(describing: flow.mapped))")
        #expect(flow.mapped?.body == nil)
    }

    /// An event stream is not held: its first event reaches the client before the second is sent.
    @Test func anEventStreamIsStreamedUntouched() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let proxy = try proxy(origin, rules: [#"|"premium":false|"premium":true"#])
        let result = try proxy.curl(["--http1.1", "-N", "-w", "\n%{time_starttransfer}", origin.url("/events")])
        let lines = result.stdout.components(separatedBy: "\n")
        #expect(result.stdout.hasPrefix("data: \"premium\":false\n\ndata: second\n\n"), "\(result.output)")
        #expect((Double(lines.last ?? "") ?? 99) < 2.5, "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.note == "body not modified: an event stream is relayed as it comes",
                "\(String(describing: flow.mapped))")
    }

    /// A response without a rule that matches it keeps its body, and the flow no mapping.
    @Test func aResponseNoRuleMatchesIsLeftAlone() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let proxy = try proxy(origin, rules: [#"|~c 404|"premium":false|"premium":true"#])
        let result = try proxy.curl(["--http1.1", origin.url("/account")])
        #expect(result.stdout == #"{"user": "ana", "premium":false}"#, "\(result.output)")
        #expect(try #require(proxy.flows(count: 1).first).mapped == nil)
    }

    @Test func badRulesStopTheStartWithOneLine() throws {
        let dir = TemporaryDirectory()
        let cases = [
            (["--modify-body", "|(|x"], "error: --modify-body |(|x: ( is not a valid regular expression\n"),
            (["--modify-body", "||x"], "error: --modify-body ||x: the regex is empty; give --modify-body "
                + "|FLOW-FILTER|REGEX|REPLACEMENT or |REGEX|REPLACEMENT (the first character is the separator; @FILE "
                + "as the replacement reads it from a file)\n"),
            (["--modify-body", "|a|@\(dir.file("none"))"],
             "error: --modify-body |a|@\(dir.file("none")): \(dir.file("none")) is not a file to read the "
                + "replacement from\n"),
            (["--modify-body", "|~bs x|a|b"], "error: --modify-body |~bs x|a|b: the filter's ~bs is not known when the "
                + "rule runs (on the request's head, then on the response's, before the bodies); use ~d, ~u, ~m, ~h, "
                + "~hq, ~hs, ~t, ~tq, ~ts, ~src, ~dst, ~proc, ~q, ~s, ~c, ~http, ~grpc, ~all, !, & and |\n"),
        ]
        for (arguments, expected) in cases {
            let start = ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0", "--no-web", "--session", "off"]
            let result = try Subprocess.run(Subprocess.devproxy, start + arguments, timeout: 20)
            #expect(result.status == 2, "\(result.output)")
            #expect(result.stderr == expected, "\(result.stderr)")
        }
        // Request terms, response terms and mixed filters are taken (a `~q` rule edits request bodies).
        for filter in ["~s", "~c 200 & ~d api", "~q | ~s", "!~q", "~t json", "~q", "~q & ~d api", "!~s"] {
            #expect(throws: Never.self) { try ModifyBodyRule(parsing: "/\(filter)/a/b") }
        }
    }

    /// A config file's `modify_body` reads its `@FILE` against the file's directory; the flow log
    /// carries what the rule did.
    @Test func aConfigFilesRuleReadsItsFileFromItsDirectory() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("team"), withIntermediateDirectories: true)
        dir.write("team/premium.txt", #""premium":true"#)
        let config = dir.write("team/devproxy.json", #"{"modify_body": ["|\"premium\":false|@premium.txt"]}"#)
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let arguments = ["--ca-dir", dir.file("ca"), "--config", config, "--no-web", "--session", "off", "--quiet",
                         "--upstream-ca", origin.caPath, "--log", dir.file("flows.jsonl")]
        let proxy = try DevProxyProcess(arguments, directory: NSTemporaryDirectory())
        let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                 "--cacert", dir.file("ca/root.pem"), origin.url("/account")])
        #expect(result.stdout == Self.edited, "\(result.output)")
        #expect(proxy.stop().status == 0)
        let flow = try #require(try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.first)
        #expect(flow.mapped?.body == [Flow.BodyChange(on: "response", by: #"|"premium":false|@"#
                                                          + dir.file("team/premium.txt"), replacements: 1)],
                "\(String(describing: flow.mapped))")
    }

    /// An HTTP/2 client's response is edited too, from an HTTP/2 origin (curl --http2 to hypercorn)
    /// and from an HTTP/1.1 one (Python h2 offering only h2; hypercorn answering chunked): a fresh
    /// content-length, a gzip body still gzip.
    @Test func anHTTP2ClientsResponseIsEdited() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try proxy(origin, rules: [Self.premium])
        let result = try proxy.curl(["--http2", "-i", origin.url("/account")])
        let (fields, body) = split(result.stdout)
        #expect(result.stdout.contains("\r\nHTTP/2 200") && body == Self.edited, "\(result.output)")
        #expect(fields["content-length"] == String(body.utf8.count), "\(result.output)")
        let dir = TemporaryDirectory()
        let gzipped = try proxy.curl(["--http2", "-D", dir.file("head"), "-o", dir.file("body"),
                                      origin.url("/account?gzip")])
        #expect(gzipped.status == 0, "\(gzipped.output)")
        let head = try String(contentsOfFile: dir.file("head"), encoding: .utf8).lowercased()
        let size = try #require(FileManager.default.attributesOfItem(atPath: dir.file("body"))[.size] as? Int)
        #expect(head.contains("content-encoding: gzip") && head.contains("content-length: \(size)\r\n"), "\(head)")
        let text = try Subprocess.run("python3", ["-c", "import gzip,sys; sys.stdout.write(gzip.decompress("
                                                  + "open(sys.argv[1],'rb').read()).decode())", dir.file("body")])
        #expect(text.stdout == Self.edited, "\(text.output)")
        let flows = proxy.flows(count: 2)
        #expect(flows.allSatisfy { $0.h2 != nil && $0.mapped?.body?.first?.replacements == 1 }, "\(flows)")
        #expect(flows.first { $0.request?.url == origin.url("/account") }?.response?.body?.text == Self.edited)

        let http1 = try HTTP2Origin(.hypercornHTTP1)
        let throughLeg = try self.proxy(http1, rules: [Self.premium])
        let json = try H2Client.run(proxy: throughLeg, port: http1.port, alpn: "h2", path: "/account",
                                    extra: ["--then", "/account?chunked"])
        #expect(json.alpn == "h2" && json.responses.count == 2, "\(json)")
        for response in json.responses {
            #expect(response.body == Self.edited, "\(json)")
            let length = response.headers.first { $0.first?.lowercased() == "content-length" }?.last
            #expect(length == String(Self.edited.utf8.count), "\(json)")
        }
        #expect(throughLeg.flows(count: 2).allSatisfy { $0.mapped?.body?.first?.replacements == 1 })
    }

    /// Over HTTP/2 a body is held up to what the origin may send unacknowledged (256 KiB); a longer
    /// one goes on whole and unchanged, and an event stream is not held.
    @Test func anHTTP2ClientsLongBodyAndEventStreamAreRelayedUnchanged() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try proxy(origin, rules: ["|0123|XXXX", #"|"premium":false|"premium":true"#])
        let dir = TemporaryDirectory()
        let size = 1 << 20
        let result = try proxy.curl(["--http2", "-o", dir.file("big"), origin.url("/big?n=\(size)")])
        #expect(result.status == 0, "\(result.output)")
        let expected = try Subprocess.run("python3", ["-c", "import hashlib; p = b'0123456789abcdef' * 4096; "
            + "d = (p * (\(size) // len(p) + 1))[:\(size)]; print(hashlib.sha256(d).hexdigest())"]).stdout
        let got = try Subprocess.run("sha256sum", [dir.file("big")]).stdout.split(separator: " ").first
        #expect(got.map(String.init) == expected.trimmingCharacters(in: .whitespacesAndNewlines), "\(result.output)")
        let events = try proxy.curl(["--http2", "-N", "-w", "\n%{time_starttransfer}", origin.url("/events")])
        #expect(events.stdout.hasPrefix("data: \"premium\":false\n\ndata: second\n\n"), "\(events.output)")
        #expect((Double(events.stdout.components(separatedBy: "\n").last ?? "") ?? 99) < 2.5, "\(events.output)")
        let flows = proxy.flows(count: 2)
        let big = flows.first { $0.request?.url.contains("/big") == true }
        #expect(big?.mapped?.note?.contains("held for an HTTP/2 client's stream") == true,
                "\(String(describing: big?.mapped))")
        let stream = flows.first { $0.request?.url.contains("/events") == true }
        #expect(stream?.mapped?.note == "body not modified: an event stream is relayed as it comes",
                "\(String(describing: stream?.mapped))")
    }
}

/// `--modify-body` on requests, as mitmproxy's modify_body runs in its request hook too: a rule
/// whose filter passes the request before it is sent (`~q`, or none) edits its body, over
/// HTTP/1.1 and HTTP/2; before, a `~q` rule was refused and a rule without a filter changed
/// responses only.
@Suite(.serialized) struct ModifyRequestBodyTests {
    static let role = #"|~q & ~m POST|"role":"user"|"role":"admin""#

    private func proxy(_ origin: HTTP2Origin, rules: [String], board: Intercepts? = nil) throws -> ProxyHarness {
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let mapRules = try MapRules(remote: [], local: [], body: rules)
        return try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = mapRules
            $0.intercepts = board
        })
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text.prefix(300))")
    }

    private func echoed(_ echo: [String: Any], _ name: String) -> [String] {
        ((echo["headers"] as? [[String]]) ?? []).filter { $0.first?.lowercased() == name }.compactMap(\.last)
    }

    /// The origin gets the edited body with its new length, over HTTP/1.1 (with `Expect:
    /// 100-continue`, answered by DevProxy, and chunked) and HTTP/2; the flow's request is the one
    /// that went, and says what was done.
    @Test(arguments: ["--http1.1", "--http2"])
    func aRequestBodyIsEditedWithItsNewLength(_ version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try proxy(origin, rules: [Self.role])
        let sent = #"{"name":"ana","role":"user"}"#
        let edited = #"{"name":"ana","role":"admin"}"#
        var extra = ["-H", "Content-Type: application/json"]
        if version == "--http1.1" { extra += ["-H", "Expect: 100-continue", "-H", "Transfer-Encoding: chunked"] }
        let result = try proxy.curl([version, "-d", sent] + extra + [origin.url("/echo")])
        let echo = try json(result.stdout)
        #expect(echo["body"] as? String == edited, "\(result.output)")
        #expect(echoed(echo, "content-length") == [String(edited.utf8.count)] && echoed(echo, "expect").isEmpty,
                "\(echo)")
        #expect(echoed(echo, "transfer-encoding").isEmpty)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.body == [Flow.BodyChange(on: "request", by: Self.role, replacements: 1)],
                "\(String(describing: flow.mapped))")
        #expect(flow.request?.body?.text == edited, "\(String(describing: flow.request?.body))")
        #expect(flow.request?.headers.first(named: "content-length") == String(edited.utf8.count))
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (request body: 1 replacement)"),
                "\(ConsoleFlowPrinter.line(for: flow))")
    }

    /// A rule without a filter edits both bodies, as in mitmproxy; `~s` only the response's.
    @Test func aRuleWithoutAFilterEditsBothBodies() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try proxy(origin, rules: ["|ana|bob", "/~s/bob/eve"])
        let result = try proxy.curl(["--http1.1", "-d", "name=ana", origin.url("/echo")])
        // The origin got "bob"; its echo of it came back as "eve".
        let echo = try json(result.stdout)
        #expect(echo["body"] as? String == "name=eve", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.body?.text == "name=bob")
        #expect(flow.mapped?.body == [Flow.BodyChange(on: "request", by: "|ana|bob", replacements: 1),
                                      Flow.BodyChange(on: "response", by: "|ana|bob", replacements: 0),
                                      Flow.BodyChange(on: "response", by: "/~s/bob/eve", replacements: 1)],
                "\(String(describing: flow.mapped))")
    }

    /// A request body over what is gathered goes on whole and unchanged, the flow saying why.
    @Test(arguments: ["--http1.1", "--http2"])
    func aRequestBodyOverTheLimitGoesOnUnchanged(_ version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try proxy(origin, rules: ["|~q|abc|XYZ"])
        let size = version == "--http2" ? Intercepts.maxBody + 300_000 : BodyEdit.limit + 300_000
        let body = (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let dir = TemporaryDirectory()
        let file = dir.write("big.bin", bytes: body)
        let result = try proxy.curl([version, "-H", "Content-Length:", "-H", "Transfer-Encoding: chunked",
                                     "--data-binary", "@\(file)", origin.url("/echo")])
        let echo = try json(result.stdout)
        #expect((echo["body"] as? String).map { Array($0.utf8) == body } == true, "\(result.stderr)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.note?.hasPrefix("request body not modified: ") == true
                && flow.mapped?.note?.contains("over the") == true, "\(String(describing: flow.mapped))")
    }

    /// `--modify-body` runs before a breakpoint, as mitmproxy's addons run: the held request shows
    /// the edited body (HTTP/1.1 and HTTP/2).
    @Test(arguments: ["--http1.1", "--http2"])
    func aBreakpointHoldsTheEditedBody(_ version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let board = try Intercepts(filter: "~u /echo & ~q")
        let proxy = try proxy(origin, rules: [Self.role], board: board)
        let sent = #"{"role":"user"}"#
        let client = DispatchQueue.global()
        let done = DispatchSemaphore(value: 0)
        let output = Mutex<String>("")
        let start = ["-sS", "--proxy", proxy.proxyURL, "--cacert", proxy.pki.rootPath, "--max-time", "30", version,
                     "-d", sent]
        let url = origin.url("/echo")
        client.async {
            let result = try? Subprocess.run("curl", start + [url], timeout: 40)
            output.withLock { $0 = result?.stdout ?? "" }
            done.signal()
        }
        let deadline = Date().addingTimeInterval(15)
        while board.held.isEmpty && Date() < deadline { usleep(10_000) }
        let held = try #require(board.held.first)
        #expect(held.body == Array(#"{"role":"admin"}"#.utf8), "\(String(decoding: held.body, as: UTF8.self))")
        #expect(board.resume(held.id))
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(try json(output.withLock { $0 })["body"] as? String == #"{"role":"admin"}"#)
    }
}

/// How a `--modify-body` rule reads its regex and replacement: as Python's `re.sub` on bytes with
/// `re.DOTALL`, as mitmproxy's modify_body applies it.
@Suite struct ModifyBodyRuleTests {
    private func apply(_ option: String, _ body: [UInt8]) throws -> ([UInt8], Int) {
        try #require(try ModifyBodyRule(parsing: option).apply(to: body))
    }

    @Test func matchesAreReplacedAsPythonsReSubOnBytes() throws {
        // DOTALL: `.` takes a newline; groups and named groups go in.
        #expect(try apply("|a.b|X", Array("a\nb a-b".utf8)) == (Array("X X".utf8), 2))
        #expect(try apply(#"|(\w+)@(?P<host>\w+)|\g<host>:\1"#, Array("ana@example".utf8))
                == (Array("example:ana".utf8), 1))
        // Bytes that are not UTF-8 survive, and a UTF-8 pattern matches its bytes.
        #expect(try apply("|é|e", [0xFF, 0xC3, 0xA9, 0x00]) == ([0xFF, 0x65, 0x00], 1))
        #expect(try apply("|x|y", [0xFE, 0xFF]) == ([0xFE, 0xFF], 0))
        // `\\` is a backslash; a lone `\` at the end or an unknown escape is refused at start.
        #expect(try apply(#"|a|\\"#, Array("a".utf8)) == (Array(#"\"#.utf8), 1))
        #expect(throws: ConfigurationError.self) { try ModifyBodyRule(parsing: #"|a|\2"#) }
        #expect(throws: ConfigurationError.self) { try ModifyBodyRule(parsing: "|a|b\\") }
    }

    /// The body is matched decoded and written in its coding again; an unknown coding is left.
    @Test func codedBodiesAreDecodedAndEncodedAgain() throws {
        let rule = try ModifyBodyRule(parsing: "|false|true")
        for coding in ["gzip", "deflate", "zstd"] {
            let coded = try #require(ContentEncoder.encode(Array("premium: false".utf8), contentEncoding: coding))
            let edit = BodyEdit.apply([rule], to: coded, contentEncoding: coding)
            let sent = try #require(edit.bytes, "\(coding)")
            #expect(ContentDecoder.decode(sent, contentEncoding: coding)?.bytes == Array("premium: true".utf8))
            #expect(!edit.dropEncoding && edit.changes.first?.replacements == 1)
        }
        #expect(BodyEdit.skipReason(method: "GET", status: 200, fields: [("Content-Encoding", "compress")])?
            .contains("compress is not one DevProxy decodes") == true)
        #expect(BodyEdit.skipReason(method: "HEAD", status: 200, fields: []) == "")
        #expect(BodyEdit.skipReason(method: "GET", status: 304, fields: []) == "")
        #expect(BodyEdit.skipReason(method: "POST", status: 200, fields: [("Content-Type", "application/grpc+proto")])
                != nil)
        #expect(BodyEdit.skipReason(method: "GET", status: 200, fields: [("Content-Type", "application/json")]) == nil)
    }
}
