import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Breakpoints on responses (`--intercept`, `ResponseRelay+Intercept`) for HTTP/1.1 clients:
/// curl through the proxy to TLS origins (origin.py over HTTP/1.1, nghttpd over HTTP/2), the test
/// driving the board as the web UI does. The filter is asked of the response's head (`~s` the
/// response alone, `~q` the request alone); a held response comes whole, goes on as it came or
/// edited, or is answered 502; what is not held says why in the flow's `intercept_response`.
@Suite(.serialized) struct ResponseInterceptTests {
    private typealias Running = InterceptTests.Running

    /// A proxy holding what `filter` passes, trusting `caPaths`' CAs.
    private func proxy(_ filter: String, _ caPaths: [String], budget: Int = Intercepts.maxBuffered,
                       configure: (inout ProxyConfiguration) -> Void = { _ in }) throws -> (ProxyHarness, Intercepts) {
        let board = try Intercepts(filter: filter, budget: budget)
        let cas = try caPaths.flatMap { try Certificate.all(from: SecureFile.read($0, what: "ca")) }
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
            configure(&$0)
        })
        return (proxy, board)
    }

    /// curl through `proxy` on a thread of its own.
    private func curl(_ proxy: ProxyHarness, _ arguments: [String]) -> Running<Subprocess.Result> {
        let start = ["-sS", "--http1.1", "--proxy", proxy.proxyURL, "--cacert", proxy.pki.rootPath, "--max-time", "20"]
        return Running { try Subprocess.run("curl", start + arguments, timeout: 30) }
    }

    /// Waits until something of a flow in `phase` is held (`Intercepts.firstHeld`).
    private func held(_ board: Intercepts, _ phase: Intercepts.Phase = .response,
                      timeout: TimeInterval = 10) throws -> Intercepts.Held {
        try board.firstHeld(phase, timeout: timeout)
    }

    /// `-D -`'s head in curl's output: the status line and the fields, names lower-cased.
    private func head(_ output: String) -> (status: String, fields: [String: String]) {
        let lines = output.components(separatedBy: "\r\n\r\n").first?.components(separatedBy: "\r\n") ?? []
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (lines.first ?? "", fields)
    }

    /// The body after curl's `-D -` head.
    private func body(_ output: String) -> String {
        output.range(of: "\r\n\r\n").map { String(output[$0.upperBound...]) } ?? ""
    }

    // MARK: Resumed

    /// A response held and resumed as it came: the client gets the origin's bytes, identical
    /// (chunked by the origin, framed by its length now), and the flow says how long it waited.
    /// The request is not held: `~s` asks of the response alone.
    @Test func aResponseResumedAsItCameReachesTheClientIdentical() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /big & ~s", [origin.caPath])
        let dir = TemporaryDirectory()
        let client = curl(proxy, ["-o", dir.file("out.bin"), origin.url("/big?n=300000")])
        let held = try held(board)
        let expected = Array(Array(repeating: Array("0123456789abcdef".utf8), count: 300_000 / 16).joined())
        #expect(held.phase == .response && held.status == 200 && held.method == "GET")
        #expect(held.url == origin.url("/big?n=300000") && held.httpVersion == "HTTP/1.1")
        #expect(held.body == expected && held.filter == "~u /big & ~s")
        #expect(held.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: "300000")))
        #expect(!held.headers.contains { $0.name.lowercased() == "transfer-encoding" }, "\(held.headers)")
        usleep(300_000)
        #expect(board.resume(held.id))
        let result = try client.result()
        #expect(result.status == 0, "\(result.output)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: dir.file("out.bin")))) == expected)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.id == held.id && flow.intercept == nil && flow.error == nil && flow.response?.status == 200)
        let record = try #require(flow.interceptResponse)
        #expect(record.outcome == "resumed" && record.edited.isEmpty && record.pausedMs >= 250)
        #expect(record.originalStatus == nil && record.filter == "~u /big & ~s")
        #expect(flow.response?.body?.size == 300_000)
        let line = ConsoleFlowPrinter.line(for: flow)
        #expect(line.contains(" (response held ") && line.hasSuffix(" at a breakpoint)"), "\(line)")
        #expect(board.bufferedBytes == 0, "the held body's bytes were given back")
    }

    /// Status, a header and the body edited: the client gets exactly the edit (the standard
    /// reason phrase, the new body's length) and its connection stays open for the next request;
    /// the flow's response is the edited one and `intercept_response` names what changed.
    @Test func anEditedResponseReachesTheClientAsEdited() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /cl & ~s", [origin.caPath])
        let client = curl(proxy, ["-D", "-", "-w", "|%{num_connects}\\n", origin.url("/cl?n=11"),
                                  origin.url("/headers")])
        let held = try held(board)
        #expect(held.status == 200 && held.body == Array("hello world".utf8))
        #expect(held.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: "11")))
        let headers = held.headers.filter { $0.name != "Content-Type" }
            + [Intercepts.HeaderField(name: "Content-Type", value: "application/json"),
               Intercepts.HeaderField(name: "X-Edited", value: "yes")]
        #expect(board.resume(held.id, edit: Intercepts.Edit(headers: headers, body: Array("{\"edited\": true}".utf8),
                                                            status: 503)))
        let result = try client.result()
        // curl's -D shows the proxy's answer to its CONNECT too.
        let answers = result.stdout.components(separatedBy: "HTTP/1.1 ").dropFirst().map { "HTTP/1.1 " + $0 }
            .filter { !$0.hasPrefix("HTTP/1.1 200 Connection Established") }
        #expect(answers.count == 2, "\(result.output)")
        let first = head(answers.first ?? "")
        #expect(first.status == "HTTP/1.1 503 Service Unavailable" && first.fields["x-edited"] == "yes",
                "\(result.output)")
        #expect(first.fields["content-length"] == "16" && first.fields["content-type"] == "application/json")
        #expect(body(answers.first ?? "") == "{\"edited\": true}|1\n")
        #expect(answers.last?.hasSuffix("|0\n") == true, "the second request reused the connection: \(result.output)")
        let flow = try #require(proxy.flows(count: 2).first { $0.id == held.id })
        #expect(flow.response?.status == 503 && flow.response?.body?.text == "{\"edited\": true}")
        #expect(flow.response?.headers.first(named: "x-edited") == "yes")
        let record = try #require(flow.interceptResponse)
        #expect(record.outcome == "resumed" && record.edited == ["status", "headers", "body"])
        #expect(record.originalStatus == 200)
        #expect(ConsoleFlowPrinter.line(for: flow).contains("→ 503 16 B"))
        #expect(ConsoleFlowPrinter.line(for: flow).contains("at a breakpoint; edited status, headers, body)"),
                "\(ConsoleFlowPrinter.line(for: flow))")
    }

    /// An HTTP/2 origin (nghttpd) under an HTTP/1.1 client: its response is held the same way.
    @Test func aResponseFromAnHTTP2OriginIsHeld() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("file.txt", Array("from h2\n".utf8))
        let (proxy, board) = try proxy("~u /file & ~s", [origin.caPath])
        let client = curl(proxy, [origin.url("/file.txt")])
        let held = try held(board)
        #expect(held.body == Array("from h2\n".utf8) && held.httpVersion == "HTTP/1.1")
        #expect(board.resume(held.id, edit: Intercepts.Edit(body: Array("edited".utf8))))
        let result = try client.result()
        #expect(result.stdout == "edited", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.httpVersion == "HTTP/2" && flow.interceptResponse?.edited == ["body"])
    }

    // MARK: Aborted, withdrawn, stopped

    /// Aborted: the client gets a 502 saying so; the flow keeps what the origin sent and its
    /// error is `intercept_aborted`.
    @Test func anAbortedResponseIsA502SayingWhy() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /cl & ~s", [origin.caPath])
        let client = curl(proxy, ["-w", "%{http_code}", origin.url("/cl?n=11")])
        let held = try held(board)
        #expect(board.abort(held.id))
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.abortedResponseReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "intercept_aborted" && flow.interceptResponse?.outcome == "aborted")
        #expect(flow.response?.status == 200 && flow.response?.body?.text == "hello world")
        #expect(ConsoleFlowPrinter.line(for: flow).contains("(response aborted at a breakpoint)"))
        #expect(board.held.isEmpty && !board.abort(held.id))
    }

    /// A client that gives up while its response is held: withdrawn from the board, the flow
    /// ends `client_closed`, `intercept_response` `client_gone`.
    @Test func aClientThatHangsUpWhileItsResponseIsHeldIsWithdrawn() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /cl & ~s", [origin.caPath])
        let client = curl(proxy, ["--max-time", "1", origin.url("/cl")])
        _ = try held(board)
        #expect(try client.result().status == 28)
        let deadline = Date().addingTimeInterval(3)
        while !board.held.isEmpty && Date() < deadline { usleep(20_000) }
        #expect(board.held.isEmpty && board.bufferedBytes == 0)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_closed" && flow.interceptResponse?.outcome == "client_gone",
                "\(String(describing: flow.error))")
        #expect(flow.response?.body?.text == "hello world")
    }

    /// DevProxy stopping answers a held response: 502, `stopped`.
    @Test func stoppingAnswersAHeldResponse() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /cl & ~s", [origin.caPath])
        let client = curl(proxy, ["-w", "%{http_code}", origin.url("/cl")])
        _ = try held(board)
        proxy.server.stop()
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.stoppedResponseReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "stopped" && flow.error?.kind == "intercept_aborted")
    }

    // MARK: Which phase

    /// `~u /cl` alone holds the request, then (once it was resumed and answered) the response,
    /// one at a time, under the flow's one id.
    @Test func aFilterWithoutAPhaseHoldsTheRequestThenTheResponse() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /cl", [origin.caPath])
        let client = curl(proxy, [origin.url("/cl")])
        let request = try held(board, .request)
        #expect(board.held.count == 1 && request.status == nil)
        #expect(board.resume(request.id))
        let response = try held(board, .response)
        #expect(response.id == request.id && board.held.count == 1 && response.status == 200)
        #expect(board.resume(response.id))
        #expect(try client.result().stdout == "hello world")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "resumed" && flow.interceptResponse?.outcome == "resumed")
        let line = ConsoleFlowPrinter.line(for: flow)
        #expect(line.contains(" at a breakpoint) (response held "), "\(line)")
    }

    /// `& ~q` never holds a response, `& ~s` never a request.
    @Test func aRequestFilterHoldsNoResponseAndAResponseFilterNoRequest() throws {
        let origin = try OriginServer()
        let (requests, requestBoard) = try proxy("~u /cl & ~q", [origin.caPath])
        let client = curl(requests, [origin.url("/cl")])
        let request = try held(requestBoard, .request)
        #expect(requestBoard.resume(request.id))
        #expect(try client.result().stdout == "hello world")
        #expect(requestBoard.held.isEmpty)
        let flow = try #require(requests.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "resumed" && flow.interceptResponse == nil)

        let (responses, responseBoard) = try proxy("~u /cl & ~s", [origin.caPath])
        let second = curl(responses, [origin.url("/cl")])
        let response = try held(responseBoard, .response)
        #expect(responseBoard.held.count == 1)
        #expect(responseBoard.resume(response.id))
        #expect(try second.result().stdout == "hello world")
        let other = try #require(responses.flows(count: 1).first)
        #expect(other.intercept == nil && other.interceptResponse?.outcome == "resumed")
    }

    /// A filter on the response's head: `~s 404` holds the 404 and lets the 200 go.
    @Test func aFilterOnTheStatusHoldsOnlyThatStatus() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~c 404", [origin.caPath])
        #expect(try proxy.curl(["--http1.1", origin.url("/cl")]).stdout == "hello world")
        let client = curl(proxy, [origin.url("/missing")])
        let held = try held(board)
        #expect(held.status == 404 && held.body == Array("no such path".utf8))
        #expect(board.resume(held.id))
        #expect(try client.result().stdout == "no such path")
    }

    // MARK: Bodies

    /// A gzip-coded body is held as it came (coded), and goes on so.
    @Test func aGzipBodyIsHeldAndResumedAsItIs() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /gzip & ~s", [origin.caPath])
        let dir = TemporaryDirectory()
        let client = curl(proxy, ["-o", dir.file("raw.gz"), origin.url("/gzip")])
        let held = try held(board)
        #expect(held.body.starts(with: [0x1F, 0x8B]) && held.headers.contains {
            $0.name == "Content-Encoding" && $0.value == "gzip"
        })
        #expect(board.resume(held.id))
        #expect(try client.result().status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: dir.file("raw.gz")))) == held.body)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.body?.text == "{\"compressed\": true}", "\(String(describing: flow.response?.body))")
    }

    /// A chunked response with trailers is held whole; resumed, an HTTP/1.1 client gets it chunked
    /// with its trailer section, an HTTP/1.0 client by its length.
    @Test func aChunkedResponseWithTrailersKeepsThem() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /chunked & ~s", [origin.caPath])
        let script = proxy.pythonTunnel(to: origin.port) + """

            t.sendall(b"GET /chunked HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\nConnection: close\\r\\n\\r\\n")
            """ + ProxyHarness.pythonPrintUntilClose
        let client = Running { try Subprocess.run("python3", ["-c", script], timeout: 30) }
        let held = try held(board)
        #expect(held.body == Array("first,second,third".utf8))
        #expect(held.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: "18")), "\(held.headers)")
        #expect(board.resume(held.id, edit: Intercepts.Edit(body: Array("edited".utf8))))
        let raw = try client.result().stdout
        #expect(raw.contains("Transfer-Encoding: chunked\r\n") && !raw.contains("Content-Length"), "\(raw)")
        #expect(raw.hasSuffix("\r\n\r\n6\r\nedited\r\n0\r\nX-Checksum: abc123\r\n\r\n"), "\(raw)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.body?.text == "edited" && flow.interceptResponse?.edited == ["body"])

        let old = proxy.pythonTunnel(to: origin.port) + """

            t.sendall(b"GET /chunked HTTP/1.0\\r\\nHost: localhost:\(origin.port)\\r\\n\\r\\n")
            """ + ProxyHarness.pythonPrintUntilClose
        let oldClient = Running { try Subprocess.run("python3", ["-c", old], timeout: 30) }
        let second = try self.held(board)
        #expect(second.httpVersion == "HTTP/1.0")
        #expect(board.resume(second.id))
        let oldRaw = try oldClient.result().stdout
        #expect(oldRaw.contains("Content-Length: 18\r\n") && oldRaw.hasSuffix("\r\n\r\nfirst,second,third"),
                "\(oldRaw)")
    }

    /// A body that ends when the origin closes its connection (`Connection: close`) is held whole
    /// and sent with its length: the origin's connection closed, the client's carries its next
    /// request.
    @Test func aCloseDelimitedBodyIsHeldWholeAndFramedByItsLength() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /close & ~s", [origin.caPath])
        let client = curl(proxy, ["-w", "|%{num_connects}|", origin.url("/close"), origin.url("/cl")])
        let held = try held(board)
        #expect(held.body == Array("until the connection closes".utf8))
        #expect(held.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: "27")), "\(held.headers)")
        #expect(!held.headers.contains { $0.name.lowercased() == "connection" })
        #expect(board.resume(held.id))
        let result = try client.result()
        #expect(result.stdout == "until the connection closes|1|hello world|0|", "\(result.output)")
    }

    /// A response without a body (to HEAD, a 204) is held by its head; an edited body does not go
    /// with it, and the flow says so. A HEAD's Content-Length stays the GET's, and the connection
    /// goes on.
    @Test func aResponseWithoutABodyIsHeldByItsHead() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("(~u /cl | ~u /204) & ~s", [origin.caPath])
        let client = curl(proxy, ["-I", origin.url("/cl?n=11")])
        let head = try held(board)
        #expect(head.body.isEmpty && head.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: "11")))
        #expect(board.resume(head.id, edit: Intercepts.Edit(body: Array("never sent".utf8))))
        let headResult = try client.result()
        // After the proxy's answer to curl's CONNECT.
        #expect(headResult.stdout.hasSuffix("\r\n\r\n") && headResult.stdout.contains("HTTP/1.1 200 OK\r\n")
                && headResult.stdout.contains("Content-Length: 11\r\n"),
                "\(headResult.output)")
        let headFlow = try #require(proxy.flows(count: 1).first)
        #expect(headFlow.interceptResponse?.note == "the edited body was not sent: a response to HEAD has none")

        let noContent = curl(proxy, ["-w", "%{http_code}|%{size_download}", origin.url("/204"), origin.url("/cl")])
        let held = try self.held(board)
        #expect(held.status == 204 && held.body.isEmpty)
        #expect(board.resume(held.id, edit: Intercepts.Edit(body: Array("x".utf8))))
        let next = try self.held(board)
        #expect(board.resume(next.id))
        #expect(try noContent.result().stdout == "204|0hello world200|11")
        let flow = try #require(proxy.flows(count: 3).first { $0.id == held.id })
        #expect(flow.interceptResponse?.note == "the edited body was not sent: a response with status 204 has none")
    }

    /// A `--modify-body` rule runs before the breakpoint, so the held body is what the client
    /// would get: the gzip body decoded, edited and coded again; resumed, the client gets it so.
    @Test func aHeldResponseShowsWhatModifyBodyMadeOfIt() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let rules = try MapRules(remote: [], local: [], body: [#"/~u account/"premium":false/"premium":true"#])
        let (proxy, board) = try proxy("~u /account & ~s", [origin.caPath], configure: { $0.mapRules = rules })
        let client = curl(proxy, ["--compressed", origin.url("/account?gzip")])
        let held = try held(board)
        let decoded = ContentDecoder.decode(held.body, contentEncoding: "gzip", outputLimit: 1 << 20)
        #expect(decoded.map { String(decoding: $0.bytes, as: UTF8.self) } == #"{"user": "ana", "premium":true}"#)
        #expect(held.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: String(held.body.count))))
        #expect(board.resume(held.id))
        #expect(try client.result().stdout == #"{"user": "ana", "premium":true}"#)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.body?.first?.replacements == 1 && flow.interceptResponse?.outcome == "resumed")
        #expect(flow.response?.body?.text == #"{"user": "ana", "premium":true}"#)
    }

    /// A status edited to 204: the body and its framing fields do not go (RFC 9110 §8.6), and the
    /// client's connection carries its next request.
    @Test func aStatusEditedTo204SendsNoBody() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /cl & ~s", [origin.caPath])
        let client = curl(proxy, ["-D", "-", "-w", "|%{num_connects}\n", origin.url("/cl"), origin.url("/headers")])
        let first = try held(board)
        #expect(board.resume(first.id, edit: Intercepts.Edit(status: 204)))
        let result = try client.result()
        let answers = result.stdout.components(separatedBy: "HTTP/1.1 ").dropFirst().map { "HTTP/1.1 " + $0 }
            .filter { !$0.hasPrefix("HTTP/1.1 200 Connection Established") }
        #expect(answers.count == 2, "\(result.output)")
        let edited = head(answers.first ?? "")
        #expect(edited.status == "HTTP/1.1 204 No Content" && edited.fields["content-length"] == nil, "\(result.output)")
        #expect(body(answers.first ?? "") == "|1\n" && answers.last?.hasSuffix("|0\n") == true, "\(result.output)")
        let flow = try #require(proxy.flows(count: 2).first { $0.id == first.id })
        #expect(flow.response?.status == 204 && flow.interceptResponse?.edited == ["status"])
        #expect(flow.interceptResponse?.note == nil && flow.interceptResponse?.originalStatus == 200)
    }

    // MARK: Not held

    /// A body over 4 MiB (by its Content-Length, or chunked and passing it as it is gathered) is
    /// not held: it arrives whole, and the flow says why.
    @Test(arguments: [false, true])
    func aBodyOverTheLimitIsNotHeldAndArrivesWhole(_ chunked: Bool) throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /big & ~s", [origin.caPath])
        let dir = TemporaryDirectory()
        let result = try proxy.curl(["--http1.1", "-o", dir.file("big.bin"),
                                     origin.url("/big?mb=5" + (chunked ? "&chunked=1" : ""))])
        #expect(result.status == 0, "\(result.output)")
        let expected = Array(Array(repeating: Array(0...255 as ClosedRange<UInt8>), count: 5 * 4096).joined())
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: dir.file("big.bin")))) == expected)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "not_held")
        #expect(flow.interceptResponse?.note == "not held: its body is over 4 MiB, more than a breakpoint holds")
        #expect(board.held.isEmpty && board.bufferedBytes == 0)
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (response not held: its body is over 4 MiB, more than "
                                                             + "a breakpoint holds)"))
    }

    /// Past the board's budget the response goes on unheld, whole, and the flow says why.
    @Test func aBodyPastTheBudgetIsNotHeld() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /big & ~s", [origin.caPath], budget: 1 << 20)
        let dir = TemporaryDirectory()
        let result = try proxy.curl(["--http1.1", "-o", dir.file("big.bin"), origin.url("/big?mb=2")])
        #expect(result.status == 0, "\(result.output)")
        #expect((try? FileManager.default.attributesOfItem(atPath: dir.file("big.bin"))[.size] as? Int) == 2 << 20)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.note == board.fullNote && board.bufferedBytes == 0)
    }

    /// An event stream is not held: its events reach the client as they come.
    @Test func anEventStreamIsNotHeld() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /events & ~s", [origin.caPath])
        let result = try proxy.curl(["--http1.1", origin.url("/events?n=2")])
        #expect(result.stdout == "data: event 0\n\ndata: event 1\n\n", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.note == "not held: an event stream (text/event-stream) goes on as it comes")
        #expect(board.held.isEmpty)
    }

    /// A body that pauses (a long poll, a stream) goes on unheld: what was gathered reaches the
    /// client while the origin is quiet, then the rest.
    @Test func aBodyThatPausesGoesOnAsItComes() throws {
        let origin = try OriginServer()
        let (proxy, board) = try proxy("~u /drip & ~s", [origin.caPath])
        let dir = TemporaryDirectory()
        let gate = dir.file("gate")
        let client = curl(proxy, ["-o", dir.file("out.bin"), origin.url("/drip?kb=4&gate=\(gate)")])
        let deadline = Date().addingTimeInterval(8)
        func received() -> Int {
            (try? FileManager.default.attributesOfItem(atPath: dir.file("out.bin"))[.size] as? Int) ?? 0
        }
        while received() < 4096 && Date() < deadline { usleep(20_000) }
        #expect(received() == 4096, "the gathered part reached the client before the rest came")
        #expect(board.held.isEmpty)
        FileManager.default.createFile(atPath: gate, contents: Data())
        #expect(try client.result().status == 0)
        #expect(received() == 4096 + 5)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.note == "not held: the origin paused its body for 2 s (a long poll or a "
                + "stream), so it goes on as it comes", "\(String(describing: flow.interceptResponse))")
    }

    /// A request the web UI replays (`X-DevProxy-Replay`) has its response sent on unheld, as its
    /// request is.
    @Test func aReplayedResponseIsNotHeld() throws {
        let origin = try OriginServer(tls: false)
        let (proxy, board) = try proxy("~u /cl", [], configure: { $0.replaySecret = "s3cret" })
        let result = try proxy.curl(["--http1.1", "-H", "X-DevProxy-Replay: s3cret replay-1",
                                     origin.url("/cl", tls: false)])
        #expect(result.stdout == "hello world", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.id == "replay-1" && flow.intercept == nil && flow.interceptResponse == nil && board.held.isEmpty)
    }
}

extension Intercepts {
    /// The first held request or response in `phase`, waiting up to `timeout` for one (the
    /// response and HTTP/2 breakpoint tests).
    func firstHeld(_ phase: Phase, timeout: TimeInterval) throws -> Held {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let held = held.first(where: { $0.phase == phase }) { return held }
            usleep(10_000)
        }
        throw TestFailure("no \(phase) held; held: \(held.map { "\($0.phase) \($0.url)" })")
    }
}
