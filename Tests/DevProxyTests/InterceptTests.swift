import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// Breakpoints (`--intercept`) through the proxy with real clients: curl over HTTP/1.1 and
/// HTTP/2 to TLS origins (hypercorn), the test driving the board as the web UI does. A held
/// request waits with its whole body, goes on as it came or edited, or is answered 502; a client
/// that hangs up frees its connection; what is not held says why in the flow.
@Suite(.serialized) struct InterceptTests {
    /// A client run on a thread of its own while the test drives the board.
    final class Running<T: Sendable>: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var value: Result<T, any Error>?

        init(_ body: @escaping @Sendable () throws -> T) {
            Thread.detachNewThread { [self] in
                let result = Result { try body() }
                lock.withLock { value = result }
                done.signal()
            }
        }

        func result(timeout: TimeInterval = 40) throws -> T {
            guard done.wait(timeout: .now() + timeout) == .success else { throw TestFailure("the client did not end") }
            return try lock.withLock { value }!.get()
        }
    }

    /// A proxy holding the requests `filter` passes (`& ~q`: these tests are about requests; a
    /// response's breakpoint has tests of its own), trusting `origins`' CAs.
    private func proxy(_ filter: String, _ origins: [HTTP2Origin]) throws -> (ProxyHarness, Intercepts) {
        let board = try Intercepts(filter: "(\(filter)) & ~q")
        let cas = try origins.flatMap { try Certificate.all(from: SecureFile.read($0.caPath, what: "ca")) }
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
        })
        return (proxy, board)
    }

    /// curl through `proxy` on a thread of its own.
    private func curl(_ proxy: ProxyHarness, _ arguments: [String]) -> Running<Subprocess.Result> {
        let start = ["-sS", "--proxy", proxy.proxyURL, "--cacert", proxy.pki.rootPath, "--max-time", "30"]
        return Running { try Subprocess.run("curl", start + arguments, timeout: 40) }
    }

    /// Waits until `count` requests are held (the request reached the breakpoint).
    private func held(_ board: Intercepts, count: Int = 1, timeout: TimeInterval = 15) throws -> [Intercepts.Held] {
        let deadline = Date().addingTimeInterval(timeout)
        while board.held.count < count && Date() < deadline { usleep(10_000) }
        guard board.held.count >= count else { throw TestFailure("\(board.held.count) held, not \(count)") }
        return board.held
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text.prefix(300))")
    }

    /// The values of header `name` (any case) in an h2origin.py `/echo` answer.
    private func echoed(_ echo: [String: Any], _ name: String) -> [String] {
        ((echo["headers"] as? [[String]]) ?? []).filter { $0.first?.lowercased() == name }.compactMap(\.last)
    }

    // MARK: HTTP/1.1

    /// A POST with `Expect: 100-continue` is held with its body (DevProxy tells the client to go
    /// on), then resumed as it came: the origin gets it whole, without the `Expect`.
    @Test func aHeldRequestResumedAsItCameReachesTheOrigin() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~m POST", [origin])
        let client = curl(proxy, ["--http1.1", "-H", "Expect: 100-continue", "-d", "a=1&b=2", origin.url("/echo")])
        let held = try #require(try held(board).first)
        #expect(held.method == "POST" && held.url == origin.url("/echo") && held.httpVersion == "HTTP/1.1")
        #expect(held.body == Array("a=1&b=2".utf8) && held.filter == "(~u /echo & ~m POST) & ~q")
        #expect(held.headers.contains(Intercepts.HeaderField(name: "Content-Length", value: "7")))
        #expect(!held.headers.contains { $0.name.lowercased() == "expect" })
        usleep(300_000)
        #expect(board.resume(held.id))
        let result = try client.result()
        let echo = try json(result.stdout)
        #expect(echo["method"] as? String == "POST" && echo["body"] as? String == "a=1&b=2", "\(result.output)")
        #expect(echoed(echo, "expect").isEmpty && echoed(echo, "content-length") == ["7"])
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.id == held.id && flow.response?.status == 200 && flow.error == nil)
        let intercept = try #require(flow.intercept)
        #expect(intercept.outcome == "resumed" && intercept.edited.isEmpty && intercept.pausedMs >= 250)
        #expect(intercept.originalURL == nil && intercept.originalMethod == nil)
        #expect(flow.request?.body?.text == "a=1&b=2")
    }

    /// Method, path, a header and the body edited: the origin sees exactly the edit, its
    /// Content-Length the new body's; the flow's request is the edited one and keeps what the
    /// client sent.
    @Test func anEditedRequestGoesOnAsEdited() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, ["--http1.1", "-H", "Transfer-Encoding: chunked", "-d", "original",
                                  origin.url("/echo?x=1")])
        let held = try #require(try held(board).first)
        #expect(held.body == Array("original".utf8))
        #expect(!held.headers.contains { $0.name.lowercased() == "transfer-encoding" })
        let edited = held.headers + [Intercepts.HeaderField(name: "X-Edited", value: "yes")]
        #expect(board.resume(held.id, edit: Intercepts.Edit(method: "PUT", url: origin.url("/echo?edited=1"),
                                                            headers: edited, body: Array("a longer body".utf8))))
        let result = try client.result()
        let echo = try json(result.stdout)
        #expect(echo["method"] as? String == "PUT" && echo["query"] as? String == "edited=1", "\(result.output)")
        #expect(echo["body"] as? String == "a longer body" && echoed(echo, "content-length") == ["13"])
        #expect(echoed(echo, "x-edited") == ["yes"] && echoed(echo, "transfer-encoding").isEmpty)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.method == "PUT" && flow.request?.url == origin.url("/echo?edited=1"))
        #expect(flow.request?.body?.text == "a longer body")
        let intercept = try #require(flow.intercept)
        #expect(intercept.edited == ["method", "url", "headers", "body"])
        #expect(intercept.originalMethod == "POST" && intercept.originalURL == origin.url("/echo?x=1"))
        #expect(ConsoleFlowPrinter.line(for: flow).contains("edited method, url, headers, body)"))
    }

    /// The URL edited to another origin: the request goes there, with that origin's Host.
    @Test func anEditedURLMaySendTheRequestToAnotherOrigin() throws {
        let a = try HTTP2Origin(.hypercornBoth)
        let b = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /echo", [a, b])
        let client = curl(proxy, ["--http1.1", a.url("/echo")])
        let held = try #require(try held(board).first)
        #expect(board.resume(held.id, edit: Intercepts.Edit(url: b.url("/echo?moved"))))
        let echo = try json(try client.result().stdout)
        #expect(echoed(echo, "host") == ["localhost:\(b.port)"] && echo["query"] as? String == "moved")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.server.port == b.port && flow.request?.url == b.url("/echo?moved"))
        #expect(flow.intercept?.edited == ["url"] && flow.intercept?.originalURL == a.url("/echo"))
    }

    /// Aborted: the client gets a 502 saying so, nothing reaches the origin, and the flow's error
    /// is `intercept_aborted`.
    @Test func anAbortedRequestIsA502SayingWhy() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, ["--http1.1", "-w", "%{http_code}", "-d", "x", origin.url("/echo")])
        let held = try #require(try held(board).first)
        #expect(board.abort(held.id))
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.abortedReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "intercept_aborted" && flow.intercept?.outcome == "aborted")
        #expect(flow.server.address == nil && flow.request?.body?.text == "x")
        #expect(ConsoleFlowPrinter.line(for: flow).contains("(aborted at a breakpoint)"))
        #expect(board.held.isEmpty && !board.abort(held.id))
    }

    /// A client that gives up while its request is held: the request is withdrawn from the board,
    /// its flow ends `client_gone`, and the next request (on a new connection) goes on.
    @Test func aClientThatHangsUpWhileHeldIsWithdrawn() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, ["--http1.1", "--max-time", "1", origin.url("/echo")])
        _ = try held(board)
        #expect(try client.result().status == 28)
        let deadline = Date().addingTimeInterval(3)
        while !board.held.isEmpty && Date() < deadline { usleep(20_000) }
        #expect(board.held.isEmpty)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_closed" && flow.intercept?.outcome == "client_gone",
                "\(String(describing: flow.error))")
        let next = try proxy.curl(["--http1.1", origin.url("/next")])
        #expect(try json(next.stdout)["path"] as? String == "/next", "\(next.output)")
    }

    /// A body over `Intercepts.maxBody` (by its Content-Length, or chunked and passing it as it is
    /// read) is not held: it arrives whole, and the flow says why.
    @Test(arguments: [false, true])
    func aBodyOverTheLimitIsNotHeldAndArrivesWhole(_ chunked: Bool) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let dir = TemporaryDirectory()
        let body = (0..<(Intercepts.maxBody + 100_000)).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let file = dir.write("big.bin", bytes: body)
        let result = try proxy.curl(["--http1.1", "--data-binary", "@\(file)", origin.url("/echo")]
                                    + (chunked ? ["-H", "Transfer-Encoding: chunked"] : []))
        let echo = try json(result.stdout)
        #expect((echo["body"] as? String).map { Array($0.utf8) == body } == true, "\(result.stderr)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "not_held" && flow.intercept?.note?.contains("over 4 MiB") == true)
        #expect(board.held.isEmpty && flow.response?.status == 200)
    }

    /// A body with a transfer coding besides chunked (`gzip, chunked`) is not held (it is decoded
    /// as it is read, so a part read ahead could not be handed back): it arrives decoded.
    @Test func aTransferCodedBodyIsNotHeld() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let script = proxy.pythonTunnel(to: origin.port) + """

            import gzip
            coded = gzip.compress(b"decoded here")
            t.sendall(b"POST /echo HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\nConnection: close\\r\\n"
                      b"Transfer-Encoding: gzip, chunked\\r\\n\\r\\n"
                      + b"%x\\r\\n" % len(coded) + coded + b"\\r\\n0\\r\\n\\r\\n")
            """ + ProxyHarness.pythonPrintUntilClose
        let result = try Subprocess.run("python3", ["-c", script], timeout: 30)
        let body = try #require(result.stdout.range(of: "\r\n\r\n").map { String(result.stdout[$0.upperBound...]) })
        #expect(try json(body)["body"] as? String == "decoded here", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "not_held" && flow.intercept?.note?.contains("transfer coding") == true)
        #expect(board.held.isEmpty)
    }

    /// A WebSocket's upgrade request is never held, whatever the filter says.
    @Test func aWebSocketUpgradeIsNotHeld() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /ws", [origin])
        let script = proxy.pythonTunnel(to: origin.port) + """

            t.settimeout(10)
            t.sendall(b"GET /ws HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\nUpgrade: websocket\\r\\n"
                      b"Connection: Upgrade\\r\\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\n"
                      b"Sec-WebSocket-Version: 13\\r\\n\\r\\n")
            sys.stdout.write(t.recv(4096).decode().split("\\r\\n")[0])
            """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 30)
        #expect(result.stdout == "HTTP/1.1 101 ", "\(result.output)")
        #expect(board.held.isEmpty)
    }

    /// A filter that passes nothing holds nothing, and the flow has no `intercept`.
    @Test func aFilterThatDoesNotMatchHoldsNothing() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~m DELETE", [origin])
        let result = try proxy.curl(["--http1.1", "-d", "x", origin.url("/echo")])
        #expect(try json(result.stdout)["body"] as? String == "x")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept == nil && board.held.isEmpty)
    }

    /// DevProxy stopping answers what it holds, HTTP/1.1 and HTTP/2: 502, `stopped`.
    @Test(arguments: ["--http1.1", "--http2"])
    func stoppingAnswersHeldRequests(_ version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, [version, "-w", "%{http_code}", origin.url("/echo")])
        _ = try held(board)
        proxy.server.stop()
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.stoppedReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "stopped" && flow.error?.kind == "intercept_aborted",
                "\(String(describing: flow.error))")
    }

    // MARK: HTTP/2

    /// Python httpx over one HTTP/2 connection through `proxy`, running `body` (lines using `c`,
    /// the client, and `out`, a dict printed as JSON at the end).
    private func httpx(_ proxy: ProxyHarness, _ body: String) -> Running<Subprocess.Result> {
        let script = """
            import httpx, json, sys, threading, time
            out = {}
            with httpx.Client(http2=True, proxy="\(proxy.proxyURL)", verify="\(proxy.pki.rootPath)", timeout=30) as c:
            \(body.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
            sys.stdout.write(json.dumps(out))
            """
        return Running { try Subprocess.run("python3", ["-c", script], timeout: 60) }
    }

    /// A held stream does not stop the connection: a second stream on it is answered meanwhile,
    /// and the held one, resumed with an edited body, completes.
    @Test func aHeldStreamLetsTheConnectionsOtherStreamsFlow() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u held", [origin])
        let client = httpx(proxy, """
            c.get("\(origin.url("/warm"))")
            def first(): out["held"] = c.post("\(origin.url("/echo?held"))", content=b"as sent").json()
            t = threading.Thread(target=first); t.start()
            time.sleep(0.3)
            r = c.get("\(origin.url("/echo?free"))")
            out["free"] = [r.http_version, r.status_code]
            t.join()
            """)
        let held = try #require(try held(board).first)
        #expect(held.httpVersion == "HTTP/2" && held.body == Array("as sent".utf8) && held.method == "POST")
        #expect(held.headers.contains(Intercepts.HeaderField(name: "content-length", value: "7")))
        // The other stream's flow ends while this one waits.
        let deadline = Date().addingTimeInterval(10)
        while !proxy.sink.flows.contains(where: { $0.request?.url == origin.url("/echo?free") }) && Date() < deadline {
            usleep(20_000)
        }
        #expect(board.held.count == 1)
        let free = try #require(proxy.sink.flows.first { $0.request?.url == origin.url("/echo?free") })
        #expect(free.response?.status == 200)
        #expect(board.resume(held.id, edit: Intercepts.Edit(body: Array("edited!!".utf8))))
        let result = try client.result()
        let out = try json(result.stdout)
        #expect((out["free"] as? [Any])?.first as? String == "HTTP/2", "\(result.output)")
        let echo = try #require(out["held"] as? [String: Any], "\(result.output)")
        #expect(echo["body"] as? String == "edited!!" && echoed(echo, "content-length") == ["8"], "\(echo)")
        #expect(echo["http_version"] as? String == "2")
        let flows = proxy.flows(count: 3)
        let flow = try #require(flows.first { $0.id == held.id })
        #expect(flow.intercept?.outcome == "resumed" && flow.intercept?.edited == ["body"])
        #expect(flow.request?.body?.text == "edited!!" && flow.response?.status == 200)
        #expect(Set(flows.compactMap { $0.h2?.connectionID }).count == 1)
    }

    /// Over HTTP/2, the method and URL edited to another origin (one that speaks only HTTP/1.1)
    /// and a field added: the stream goes there as edited.
    @Test func anEditedStreamGoesToAnotherOrigin() throws {
        let a = try HTTP2Origin(.hypercornBoth)
        let b = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /echo", [a, b])
        let client = curl(proxy, ["--http2", "-d", "x=1", a.url("/echo")])
        let held = try #require(try held(board).first)
        let headers = held.headers + [Intercepts.HeaderField(name: "x-edited", value: "yes")]
        let edit = Intercepts.Edit(method: "PATCH", url: b.url("/echo?moved"), headers: headers,
                                   body: Array("y=22".utf8))
        #expect(board.resume(held.id, edit: edit))
        let result = try client.result()
        let echo = try json(result.stdout)
        #expect(echo["method"] as? String == "PATCH" && echo["query"] as? String == "moved", "\(result.output)")
        #expect(echo["body"] as? String == "y=22" && echoed(echo, "content-length") == ["4"])
        #expect(echoed(echo, "x-edited") == ["yes"] && echoed(echo, "host") == ["localhost:\(b.port)"])
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == b.url("/echo?moved") && flow.server.port == b.port && flow.h2 != nil)
        #expect(flow.intercept?.edited == ["method", "url", "headers", "body"])
        #expect(flow.intercept?.originalURL == a.url("/echo") && flow.intercept?.originalMethod == "POST")
    }

    /// Aborted over HTTP/2: a 502 saying why; a client that closes while held withdraws it.
    @Test func anHTTP2StreamIsAbortedOrWithdrawn() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, ["--http2", "-w", "%{http_code}", origin.url("/echo")])
        let held = try #require(try held(board).first)
        #expect(board.abort(held.id))
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.abortedReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "intercept_aborted" && flow.intercept?.outcome == "aborted" && flow.h2 != nil)
        let gone = curl(proxy, ["--http2", "--max-time", "1", origin.url("/echo")])
        _ = try self.held(board)
        #expect(try gone.result().status == 28)
        let deadline = Date().addingTimeInterval(3)
        while !board.held.isEmpty && Date() < deadline { usleep(20_000) }
        #expect(board.held.isEmpty)
        let left = try #require(proxy.flows(count: 2).last)
        #expect(left.intercept?.outcome == "client_gone" && left.error?.kind == "client_closed",
                "\(String(describing: left.error))")
    }

    /// A stream whose body has not ended 2 s after its head (a streaming upload) is not held: it
    /// goes on as it comes, and the flow says why.
    @Test func aStreamThatDoesNotEndIsNotHeld() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = httpx(proxy, """
            def chunks():
                yield b"first,"
                time.sleep(3)
                yield b"second"
            out["echo"] = c.post("\(origin.url("/echo"))", content=chunks()).json()
            """)
        let result = try client.result()
        let echo = try #require(try json(result.stdout)["echo"] as? [String: Any], "\(result.output)")
        #expect(echo["body"] as? String == "first,second" && echo["http_version"] as? String == "2")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "not_held" && flow.intercept?.note?.contains("had not ended 2 s") == true)
        #expect(board.held.isEmpty)
    }

    /// Over HTTP/2 too, a body over the limit goes on unheld and arrives whole (the window widened
    /// for it narrows again).
    @Test func anHTTP2BodyOverTheLimitArrivesWhole() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, _) = try proxy("~u /echo", [origin])
        let dir = TemporaryDirectory()
        let body = (0..<(Intercepts.maxBody + 300_000)).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let file = dir.write("big.bin", bytes: body)
        let result = try proxy.curl(["--http2", "-H", "Content-Length:", "--data-binary", "@\(file)",
                                     origin.url("/echo")])
        let echo = try json(result.stdout)
        #expect((echo["body"] as? String).map { Array($0.utf8) == body } == true, "\(result.stderr)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "not_held" && flow.intercept?.note?.contains("over 4 MiB") == true)
    }

    /// A gRPC call aborted at a breakpoint ends `UNAVAILABLE` with the reason, as gRPC clients
    /// read DevProxy's other answers; one resumed completes.
    @Test func aGRPCCallIsAbortedWithItsStatus() throws {
        let origin = try GRPCProxyTests.EchoServer()
        let board = try Intercepts(filter: "~grpc & ~q")
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
        })
        let script = """
            import grpc, sys
            creds = grpc.ssl_channel_credentials(open("\(proxy.pki.rootPath)", "rb").read())
            with grpc.secure_channel("localhost:\(origin.port)", creds) as channel:
                for _ in range(2):
                    try:
                        channel.unary_unary("/lab.Echo/Unary")(b"\\x0a\\x02hi", timeout=30)
                        print("OK", flush=True)
                    except grpc.RpcError as error:
                        print(error.code().name, error.details(), flush=True)
            """
        let environment = ["https_proxy": proxy.proxyURL, "no_proxy": "", "no_grpc_proxy": ""]
        let client = Running { try Subprocess.run("python3", ["-c", script], environment: environment, timeout: 60) }
        let first = try #require(try held(board).first)
        #expect(board.abort(first.id))
        let deadline = Date().addingTimeInterval(15)
        while (board.held.isEmpty || board.held.first?.id == first.id) && Date() < deadline { usleep(20_000) }
        let second = try #require(board.held.first)
        #expect(board.resume(second.id))
        let result = try client.result()
        #expect(result.stdout == "UNAVAILABLE \(Intercepts.abortedReason)\nOK\n", "\(result.output)")
        let flow = try #require(proxy.flows(count: 2).first { $0.id == first.id })
        #expect(flow.grpc?.status == 14 && flow.error?.kind == "intercept_aborted")
    }

    // MARK: What breakpoints keep

    /// Breakpoints keep at most `budget` bytes of request bodies at once, across connections and
    /// HTTP versions: past it a request goes on unheld and whole, its flow saying why; the bytes
    /// come back when a held request is decided or its client leaves. Without the budget, a
    /// filter that matched many large uploads kept 4 MiB for each (a hundred HTTP/2 streams of
    /// one connection: 400 MiB).
    @Test func breakpointsKeepABoundedAmountOfBodies() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let board = try Intercepts(filter: "~u /echo & ~q", budget: 1 << 20)
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
        })
        let dir = TemporaryDirectory()
        let body = (0..<700_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let file = dir.write("part.bin", bytes: body)
        let post = ["--data-binary", "@\(file)", "-H", "Content-Type: application/octet-stream"]
        // HTTP/1.1 takes 700 kB of the 1 MiB; an HTTP/2 stream of 700 kB more does not fit.
        let first = curl(proxy, ["--http1.1"] + post + [origin.url("/echo?first")])
        let held = try #require(try self.held(board).first)
        #expect(board.bufferedBytes == body.count)
        let second = try proxy.curl(["--http2"] + post + [origin.url("/echo?second")])
        let echo = try json(second.stdout)
        #expect((echo["body"] as? String).map { Array($0.utf8) == body } == true, "\(second.stderr)")
        let unheld = try #require(proxy.flows(count: 1).first)
        #expect(unheld.request?.url == origin.url("/echo?second") && unheld.intercept?.outcome == "not_held")
        #expect(unheld.intercept?.note == "not held: breakpoints keep 1 MiB of bodies already, the most they keep at "
                + "once", "\(String(describing: unheld.intercept))")
        #expect(board.bufferedBytes == body.count, "the unheld stream gave back what it gathered")
        #expect(board.resume(held.id))
        #expect(try json(try first.result().stdout)["body"] as? String == String(decoding: body, as: UTF8.self))
        #expect(board.bufferedBytes == 0)
        // Room again: an HTTP/2 stream is held, and gives its bytes back when its client leaves.
        let third = curl(proxy, ["--http2", "--max-time", "3"] + post + [origin.url("/echo?third")])
        let again = try #require(try self.held(board).first)
        #expect(again.url == origin.url("/echo?third") && board.bufferedBytes == body.count)
        _ = try? third.result()
        let deadline = Date().addingTimeInterval(10)
        while board.bufferedBytes > 0 && Date() < deadline { usleep(20_000) }
        #expect(board.bufferedBytes == 0 && board.held.isEmpty)
        let gone = try #require(proxy.flows(count: 3).first { $0.id == again.id })
        #expect(gone.intercept?.outcome == "client_gone")
    }

    /// The fields a held HTTP/1.1 request shows are the ones that would go upstream: the
    /// client's hop-by-hop fields (`Connection` and what it names, `Proxy-Connection`) are its
    /// connection's to DevProxy, so the editor does not offer them; the client's connection still
    /// does what they said.
    @Test func aHeldRequestShowsTheFieldsThatGoUpstream() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, ["--http1.1", "-H", "Connection: close, X-Hop", "-H", "X-Hop: 1",
                                  "-H", "Proxy-Connection: Keep-Alive", "-H", "X-Kept: 2", origin.url("/echo")])
        let held = try #require(try held(board).first)
        let names = held.headers.map { $0.name.lowercased() }
        #expect(!names.contains("connection") && !names.contains("x-hop") && !names.contains("proxy-connection"),
                "\(held.headers)")
        #expect(held.headers.contains(Intercepts.HeaderField(name: "X-Kept", value: "2")))
        #expect(board.resume(held.id, edit: Intercepts.Edit(headers: held.headers
                                                                + [Intercepts.HeaderField(name: "X-Added", value: "3")])))
        let result = try client.result()
        let echo = try json(result.stdout)
        #expect(echoed(echo, "x-added") == ["3"] && echoed(echo, "x-kept") == ["2"] && echoed(echo, "x-hop").isEmpty)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    // MARK: The command line

    /// A run with `--intercept` says so beside its other status lines, even with `--quiet`, where
    /// it said nothing and a POST through it just hung until someone opened the web UI.
    @Test func theBannerSaysRequestsWillBeHeld() throws {
        let dir = TemporaryDirectory()
        for quiet in [false, true] {
            let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("s\(quiet).sqlite"),
                                             "--web", "127.0.0.1:0", "--intercept", "~m POST & ~d api"]
                                            + (quiet ? ["--quiet"] : []), webUI: true)
            #expect(proxy.banner.contains("intercept: ~m POST & ~d api (matching requests and responses wait in the "
                                          + "web UI until they are resumed or aborted there)"), "\(proxy.banner)")
        }
        let none = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("none.sqlite"),
                                        "--web", "127.0.0.1:0"], webUI: true)
        #expect(!none.banner.contains("intercept:"), "\(none.banner)")
    }

    /// Once DevProxy is stopping, what the filter passes goes on with a note that says so (it said
    /// the board was full).
    @Test func aStoppedBoardSaysWhyNothingIsHeld() throws {
        let board = try Intercepts(filter: "~d x")
        #expect(Intercepts.refusal(bodyBytes: 0, board: board) == nil)
        board.stop()
        #expect(Intercepts.refusal(bodyBytes: 0, board: board) == "not held: DevProxy is stopping")
    }

    /// A resume checked against a held request does not reach the response the same flow is held
    /// at since (its request resumed from another page): the edit was for the other phase.
    @Test func aResumeForTheRequestLeavesTheResponseHeld() throws {
        let board = try Intercepts(filter: "~d x")
        let decided = Mutex<[Intercepts.Decision]>([])
        board.hold(Intercepts.Held(id: "f1", method: "GET", url: "https://x/", httpVersion: "HTTP/1.1", status: 200,
                                   headers: [], body: [], filter: "~d x")) { decision in decided.withLock { $0.append(decision) } }
        #expect(!board.resume("f1", edit: Intercepts.Edit(method: "POST"), phase: .request))
        #expect(board.held("f1")?.phase == .response && decided.withLock { $0.isEmpty })
        #expect(board.abort("f1", phase: .response))
        #expect(decided.withLock { $0 } == [.abort(reason: Intercepts.abortedResponseReason, outcome: "aborted")])
    }

    /// `--intercept` with a filter about a body, or without the web UI's session, stops the
    /// start with one line.
    @Test func badInterceptOptionsStopTheStartWithOneLine() throws {
        let dir = TemporaryDirectory()
        let start = ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0"]
        let response = try Subprocess.run(Subprocess.devproxy, start + ["--web", "127.0.0.1:0", "--session",
                                                                        dir.file("session"), "--intercept", "~b x"],
                                          timeout: 20)
        #expect(response.status == 2 && response.stderr.hasPrefix("error: --intercept: "), "\(response.output)")
        #expect(response.stderr.contains("~b is not known when a breakpoint decides (on the request's head, then on "
                                         + "the response's, before the bodies)"), "\(response.stderr)")
        let off = try Subprocess.run(Subprocess.devproxy, start + ["--session", "off", "--intercept", "~m POST"],
                                     timeout: 20)
        #expect(off.status == 2, "\(off.output)")
        #expect(off.stderr.hasPrefix("error: --intercept holds requests until the web UI resumes them: it cannot go "
                                     + "with --session off"), "\(off.stderr)")
    }
}
