@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import WebUI

/// A held request answered at its breakpoint (`POST /api/intercept/ID/respond`, HTTP Toolkit's
/// "respond directly"): curl through the proxy over HTTP/1.1 and HTTP/2, the answer typed through
/// the web UI's API, and a listener in the origin's place that counts the connections it gets (none).
@Suite(.serialized) struct InterceptRespondTests {
    private typealias Running = InterceptTests.Running

    /// A TCP listener on 127.0.0.1 that counts the connections it accepts (and closes them): where
    /// the origin would be.
    final class ConnectionCounter: @unchecked Sendable {  // the lets are read only
        let port: Int
        private let process: Process
        private let input = Pipe()
        private let countFile: String
        private let directory = TemporaryDirectory()

        init() throws {
            countFile = directory.file("count")
            try Data("0".utf8).write(to: URL(fileURLWithPath: countFile))
            let script = """
                import socket, sys, threading
                s = socket.socket()
                s.bind(("127.0.0.1", 0))
                s.listen(16)
                print(s.getsockname()[1], flush=True)
                count = 0
                def serve():
                    global count
                    while True:
                        c, _ = s.accept()
                        count += 1
                        open(sys.argv[1], "w").write(str(count))
                        c.close()
                threading.Thread(target=serve, daemon=True).start()
                sys.stdin.read()
                """
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", script, countFile]
            process.standardInput = input
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line: [UInt8] = []
            while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A {
                line.append(byte)
            }
            guard let port = Int(String(decoding: line, as: UTF8.self)) else {
                process.terminate()
                throw TestFailure("the counting listener did not start")
            }
            self.port = port
        }

        /// The connections accepted so far.
        var count: Int { Int((try? String(contentsOfFile: countFile, encoding: .utf8)) ?? "") ?? -1 }

        deinit {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    /// A web UI beside a proxy holding what `filter` passes.
    private func harness(_ filter: String, lazy: Bool = false) throws -> (WebUIHarness, ProxyHarness, Intercepts) {
        let board = try Intercepts(filter: filter)
        let ui = try WebUIHarness(withProxy: true, intercepts: board, configure: {
            $0.intercepts = board
            if lazy { $0.eagerUpstream = false }
        })
        return (ui, try #require(ui.proxy), board)
    }

    private func curl(_ proxy: ProxyHarness, _ arguments: [String]) -> Running<Subprocess.Result> {
        let start = ["-sS", "--proxy", proxy.proxyURL, "--cacert", proxy.pki.rootPath, "--max-time", "30"]
        return Running { try Subprocess.run("curl", start + arguments, timeout: 40) }
    }

    private static let csrf = ["X-DevProxy-CSRF: 1", "Content-Type: application/json"]

    /// Over HTTP/1.1 (plain http, absolute-form): two POSTs held in turn on one connection, each
    /// answered with what was typed (201 with fields and a body, then a 204); curl gets exactly
    /// that, its connection carrying both; the origin's place gets no connection; the flow says
    /// `answered` with the status, its response the typed one.
    @Test func aHeldRequestIsAnsweredDirectlyOverHTTP1() throws {
        let origin = try ConnectionCounter()
        let (ui, proxy, board) = try harness("~u /direct")
        let base = "http://127.0.0.1:\(origin.port)/direct"
        let client = curl(proxy, ["--http1.1", "-D", "-", "-w", "|%{num_connects}\\n", "-d", "x=1", base + "?one",
                                  base + "?two"])
        let first = try board.firstHeld(.request, timeout: 15)
        let typed = #"{"status": 201, "headers": [["Content-Type", "text/plain"], ["X-Answered", "here"]], "#
            + #""body": "typed at the breakpoint"}"#
        let answer = try ui.request("/api/intercept/\(first.id)/respond", method: "POST", headers: Self.csrf,
                                    body: typed)
        #expect(answer.status == 200 && answer.json["answered"] as? String == first.id, "\(answer.text)")
        #expect(answer.json["status"] as? Int == 201)
        let second = try board.firstHeld(.request, timeout: 15)
        #expect(second.id != first.id)
        let empty = try ui.request("/api/intercept/\(second.id)/respond", method: "POST", headers: Self.csrf,
                                   body: #"{"status": 204, "headers": [["X-Empty", "yes"]]}"#)
        #expect(empty.status == 200, "\(empty.text)")
        let result = try client.result()
        #expect(result.status == 0, "\(result.output)")
        let expected = "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nX-Answered: here\r\n"
            + "Content-Length: 23\r\n\r\ntyped at the breakpoint|1\nHTTP/1.1 204 No Content\r\nX-Empty: yes\r\n\r\n|0\n"
        #expect(result.stdout == expected, "\(result.stdout)")
        #expect(origin.count == 0, "the origin got no connection")
        let flows = proxy.flows(count: 2)
        let flow = try #require(flows.first { $0.id == first.id })
        #expect(flow.intercept?.outcome == "answered" && flow.intercept?.answeredStatus == 201)
        #expect(flow.response?.status == 201 && flow.response?.body?.text == "typed at the breakpoint")
        #expect(flow.request?.body?.text == "x=1" && flow.error == nil)
        #expect(ConsoleFlowPrinter.line(for: flow).contains(" at a breakpoint, answered there: 201)"),
                "\(ConsoleFlowPrinter.line(for: flow))")
        let json = String(decoding: JSONLinesFlowLog.line(for: flow), as: UTF8.self)
        #expect(json.contains(#""intercept":{"answered_status":201,"edited":[],"filter":"~u /direct","#), "\(json)")
        let other = try #require(flows.first { $0.id == second.id })
        #expect(other.response?.status == 204 && other.intercept?.answeredStatus == 204)
    }

    /// Over HTTP/2 (curl --http2 through CONNECT, `--lazy-upstream` so nothing is dialled before a
    /// request): the stream is answered with the typed status, fields (lower case) and body, and
    /// the origin's place gets no connection.
    @Test func aHeldStreamIsAnsweredDirectlyOverHTTP2() throws {
        let origin = try ConnectionCounter()
        let (ui, proxy, board) = try harness("~u /direct", lazy: true)
        let client = curl(proxy, ["--http2", "-D", "-", "-w", "|%{http_version}", "--data-binary", "x=2",
                                  "https://localhost:\(origin.port)/direct"])
        let held = try board.firstHeld(.request, timeout: 15)
        #expect(held.httpVersion == "HTTP/2")
        let typed = #"{"status": 418, "headers": [["Content-Type", "text/plain"], ["X-Answered", "h2"], "#
            + #"["Connection", "close"]], "body": "over h2"}"#
        let answer = try ui.request("/api/intercept/\(held.id)/respond", method: "POST", headers: Self.csrf,
                                    body: typed)
        #expect(answer.status == 200, "\(answer.text)")
        let result = try client.result()
        #expect(result.status == 0, "\(result.output)")
        let lines = result.stdout.components(separatedBy: "\r\n")
        let head = lines.drop { !$0.hasPrefix("HTTP/2 ") }
        #expect(Array(head.prefix(4)) == ["HTTP/2 418 ", "content-type: text/plain", "x-answered: h2",
                                          "content-length: 7"], "\(result.stdout)")
        #expect(result.stdout.hasSuffix("\r\n\r\nover h2|2"), "\(result.stdout)")
        #expect(origin.count == 0, "the origin got no connection")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "answered" && flow.intercept?.answeredStatus == 418)
        #expect(flow.response?.status == 418 && flow.response?.httpVersion == "HTTP/2")
        #expect(flow.response?.body?.text == "over h2" && flow.request?.body?.text == "x=2")
    }

    /// What cannot be answered so is a 400 naming the part, and the request stays held: a status
    /// outside 200 to 599, a body for a 204, a 304 or a HEAD, a name or value the wire cannot carry,
    /// a method or URL, a held response (its request was sent). Answered, it is decided once.
    @Test func aDirectAnswerTheWireCannotCarryIsRefused() throws {
        let board = try Intercepts(filter: "~d api")
        let ui = try WebUIHarness(intercepts: board)
        let request = WebUIInterceptTests.hold(WebUIInterceptTests.held("run-1"), on: board)
        let head = WebUIInterceptTests.hold(WebUIInterceptTests.held("run-2", method: "HEAD", body: []), on: board)
        let response = WebUIInterceptTests.hold(WebUIInterceptTests.heldResponse("run-3"), on: board)
        let cases: [(String, String, String)] = [
            ("run-1", #"{"status": 99}"#, "status: \"99\" is not a final response's status (200 to 599)"),
            ("run-1", #"{"status": 600}"#, "status: \"600\" is not a final response's status"),
            ("run-1", #"{"status": "200"}"#, "is not a final response's status"),
            ("run-1", #"{"status": 204, "body": "x"}"#, "body: a 204 response carries no body"),
            ("run-1", #"{"status": 304, "body_base64": "eA=="}"#, "body: a 304 response carries no body"),
            ("run-1", #"{"headers": [["Bad Name", "x"]]}"#, "headers[0]: the name \"Bad Name\" is not a token"),
            ("run-1", #"{"headers": [["X-A", "a\r\nb"]]}"#, "headers[0]: the value of X-A holds CR"),
            ("run-1", #"{"url": "https://api.test/"}"#, "url: a direct answer has a status, headers and a body"),
            ("run-1", "[1]", "the body must be a JSON object"),
            ("run-2", #"{"body": "x"}"#, "body: a response to HEAD carries no body"),
            ("run-3", #"{"status": 200}"#, "run-3 is a held response, whose request was sent already"),
        ]
        for (id, body, reason) in cases {
            let answer = try ui.request("/api/intercept/\(id)/respond", method: "POST", headers: Self.csrf, body: body)
            #expect(answer.status == 400, "\(id) \(body): \(answer.status) \(answer.text)")
            #expect((answer.json["error"] as? String ?? "").contains(reason), "\(id) \(body): \(answer.text)")
        }
        #expect(request.all.isEmpty && head.all.isEmpty && response.all.isEmpty)
        let plain = try ui.request("/api/intercept/run-1/respond", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(plain.status == 200 && request.all == [.respond(Intercepts.Answer(status: 200))], "\(plain.text)")
        let bodiless = try ui.request("/api/intercept/run-2/respond", method: "POST", headers: Self.csrf,
                                      body: #"{"status": 404, "headers": [["Content-Length", "12"]]}"#)
        #expect(bodiless.status == 200)
        #expect(head.all == [.respond(Intercepts.Answer(status: 404, headers: [.init(name: "Content-Length",
                                                                                     value: "12")]))])
        let again = try ui.request("/api/intercept/run-1/respond", method: "POST", headers: ["X-DevProxy-CSRF: 1"])
        #expect(again.status == 404 && request.all.count == 1)
        #expect(board.held.map(\.id) == ["run-3"])
    }
}
