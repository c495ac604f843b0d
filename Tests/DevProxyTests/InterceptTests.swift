import CertAuthority
@testable import DevProxy
import Foundation
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

    /// A proxy holding what `filter` passes, trusting `origins`' CAs.
    private func proxy(_ filter: String, _ origins: [HTTP2Origin]) throws -> (ProxyHarness, Intercepts) {
        let board = try Intercepts(filter: filter)
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
        #expect(held.body == Array("a=1&b=2".utf8) && held.filter == "~u /echo & ~m POST")
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
        let client = curl(proxy, ["--http1.1", "-H", "Transfer-Encoding: chunked", "-d", "original", origin.url("/echo?x=1")])
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
        #expect(flow.error?.kind == "client_closed" && flow.intercept?.outcome == "client_gone", "\(String(describing: flow.error))")
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

    /// A filter that passes nothing holds nothing, and the flow has no `intercept`.
    @Test func aFilterThatDoesNotMatchHoldsNothing() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~m DELETE", [origin])
        let result = try proxy.curl(["--http1.1", "-d", "x", origin.url("/echo")])
        #expect(try json(result.stdout)["body"] as? String == "x")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept == nil && board.held.isEmpty)
    }

    /// DevProxy stopping answers what it holds: 502, `stopped`.
    @Test func stoppingAnswersHeldRequests() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", [origin])
        let client = curl(proxy, ["--http1.1", "-w", "%{http_code}", origin.url("/echo")])
        _ = try held(board)
        proxy.server.stop()
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.stoppedReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "stopped" && flow.error?.kind == "intercept_aborted", "\(String(describing: flow.error))")
    }

    // MARK: The command line

    /// `--intercept` with a filter about the response, or without the web UI's session, stops the
    /// start with one line.
    @Test func badInterceptOptionsStopTheStartWithOneLine() throws {
        let dir = TemporaryDirectory()
        let start = ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0"]
        let response = try Subprocess.run(Subprocess.devproxy, start + ["--web", "127.0.0.1:0", "--session",
                                                                        dir.file("session"), "--intercept", "~s"],
                                          timeout: 20)
        #expect(response.status == 2 && response.stderr.hasPrefix("error: --intercept: "), "\(response.output)")
        #expect(response.stderr.contains("~s is not known before the request is sent"), "\(response.stderr)")
        let off = try Subprocess.run(Subprocess.devproxy, start + ["--session", "off", "--intercept", "~m POST"],
                                     timeout: 20)
        #expect(off.status == 2, "\(off.output)")
        #expect(off.stderr.hasPrefix("error: --intercept holds requests until the web UI resumes them: it cannot go "
                                     + "with --session off"), "\(off.stderr)")
    }
}
