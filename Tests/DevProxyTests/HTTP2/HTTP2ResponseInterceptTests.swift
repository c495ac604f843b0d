import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Breakpoints (`--intercept`) on the responses of HTTP/2 clients' streams, through the proxy with
/// real peers: curl --http2, Python httpx (h2 only, for an HTTP/1.1 origin) and grpcio, to
/// hypercorn and a gRPC server; the test drives the board as the web UI does. A held response
/// waits with its whole body (past the 256 KiB a stream window or an HTTP/1.1 leg's queue holds
/// otherwise), goes to the client as it came or edited, or becomes a 502 (a gRPC client's
/// UNAVAILABLE); the connection's other streams flow meanwhile; a body that has not ended 2 s after
/// its head goes on unheld.
@Suite(.serialized) struct HTTP2ResponseInterceptTests {
    typealias Running = InterceptTests.Running

    /// A proxy with a board holding what `filter` passes, trusting `origins`' CAs.
    private func proxy(_ filter: String, caPaths: [String]) throws -> (ProxyHarness, Intercepts) {
        let board = try Intercepts(filter: filter)
        let cas = try caPaths.flatMap { try Certificate.all(from: SecureFile.read($0, what: "ca")) }
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
        })
        return (proxy, board)
    }

    /// curl through `proxy` on a thread of its own.
    private func curl(_ proxy: ProxyHarness, _ arguments: [String]) -> Running<Subprocess.Result> {
        let start = ["-sS", "--proxy", proxy.proxyURL, "--cacert", proxy.pki.rootPath, "--max-time", "20"]
        return Running { try Subprocess.run("curl", start + arguments, timeout: 30) }
    }

    /// Python httpx through `proxy` offering `h2` alone (so an HTTP/1.1 origin is reached through
    /// an HTTP/1.1 leg), running `body` (lines using `c`, the client, and `out`, a dict printed as
    /// JSON at the end).
    private func httpx(_ proxy: ProxyHarness, _ body: String) -> Running<Subprocess.Result> {
        let script = """
            import httpx, json, sys, threading, time
            out = {}
            with httpx.Client(http1=False, http2=True, proxy="\(proxy.proxyURL)", verify="\(proxy.pki.rootPath)",
                              timeout=20) as c:
            \(body.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
            sys.stdout.write(json.dumps(out))
            """
        return Running { try Subprocess.run("python3", ["-c", script], timeout: 30) }
    }

    /// Waits until something of `phase` is held, and returns it (`Intercepts.firstHeld`).
    private func held(_ board: Intercepts, _ phase: Intercepts.Phase = .response,
                      timeout: TimeInterval = 8) throws -> Intercepts.Held {
        try board.firstHeld(phase, timeout: timeout)
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text.prefix(300))")
    }

    private func field(_ held: Intercepts.Held, _ name: String) -> String? {
        held.headers.first { $0.name == name }?.value
    }

    /// The response of an h2 origin is held with its head and whole body, nothing reaching the
    /// client meanwhile, and resumed as it came: the client gets it, the flow says `resumed`.
    @Test func aHeldResponseResumedAsItCameReachesTheClient() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        let client = curl(proxy, ["--http2", "-d", "x=1", origin.url("/echo")])
        let held = try held(board)
        #expect(held.status == 200 && held.method == "POST" && held.url == origin.url("/echo"))
        #expect(held.httpVersion == "HTTP/2" && field(held, "content-type") == "application/json")
        let echo = try json(String(decoding: held.body, as: UTF8.self))
        #expect(echo["body"] as? String == "x=1" && echo["http_version"] as? String == "2")
        #expect(proxy.sink.flows.isEmpty, "the flow ends once the response went to the client")
        #expect(board.resume(held.id))
        let result = try client.result()
        #expect(result.stdout == String(decoding: held.body, as: UTF8.self), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.id == held.id && flow.intercept == nil && flow.error == nil)
        #expect(flow.interceptResponse?.outcome == "resumed" && flow.interceptResponse?.edited == [])
        #expect(flow.response?.status == 200 && flow.response?.body?.size == held.body.count)
        #expect(board.bufferedBytes == 0)
    }

    /// A response edited at the breakpoint (status, a field, the body) reaches the client as
    /// edited, with the edited body's content-length; the flow records what the client got, and
    /// the origin's status.
    @Test func anEditedResponseReachesTheClientAsEdited() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        let client = curl(proxy, ["--http2", "-i", origin.url("/echo")])
        let held = try held(board)
        let headers = held.headers.filter { $0.name != "content-type" }
            + [Intercepts.HeaderField(name: "Content-Type", value: "text/plain"),
               Intercepts.HeaderField(name: "x-edited", value: "yes")]
        #expect(board.resume(held.id, edit: Intercepts.Edit(headers: headers, body: Array("edited!".utf8),
                                                             status: 418)))
        let result = try client.result()
        let text = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        // After the proxy's own `HTTP/1.1 200 Connection established`.
        #expect(text.contains("\nHTTP/2 418 \n") && text.hasSuffix("\n\nedited!"), "\(result.output)")
        #expect(text.contains("\ncontent-length: 7\n") && text.contains("\nx-edited: yes\n"), "\(text)")
        #expect(text.contains("\ncontent-type: text/plain\n"), "\(text)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 418 && flow.response?.body?.text == "edited!")
        #expect(flow.response?.headers.flat.contains("x-edited") == true)
        #expect(flow.interceptResponse?.edited == ["status", "headers", "body"])
        #expect(flow.interceptResponse?.originalStatus == 200 && flow.interceptResponse?.outcome == "resumed")
    }

    /// An aborted response: the client gets a 502 saying why; the flow says `intercept_aborted`
    /// and keeps the response the origin sent, as over HTTP/1.1.
    @Test func anAbortedResponseIsA502SayingWhy() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        let client = curl(proxy, ["--http2", "-w", "%{http_code}", origin.url("/echo")])
        let held = try held(board)
        #expect(board.abort(held.id))
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.abortedResponseReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "intercept_aborted" && flow.error?.by == "proxy")
        #expect(flow.response?.status == 200 && flow.response?.body?.size == held.body.count)
        #expect(flow.interceptResponse?.outcome == "aborted" && flow.h2 != nil)
        #expect(board.bufferedBytes == 0)
    }

    /// A held response does not stop its connection: another stream on it is answered meanwhile.
    @Test func aHeldResponseLetsTheConnectionsOtherStreamsFlow() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u held & ~s", caPaths: [origin.caPath])
        let client = httpx(proxy, """
            c.get("\(origin.url("/warm"))")
            def first():
                r = c.get("\(origin.url("/echo?held"))")
                out["held"] = [r.http_version, r.status_code, r.text]
            t = threading.Thread(target=first); t.start()
            time.sleep(0.3)
            r = c.get("\(origin.url("/echo?free"))")
            out["free"] = [r.http_version, r.status_code]
            t.join()
            """)
        let held = try held(board)
        let deadline = Date().addingTimeInterval(8)
        while !proxy.sink.flows.contains(where: { $0.request?.url == origin.url("/echo?free") }) && Date() < deadline {
            usleep(20_000)
        }
        // The other stream's flow ended (its response went to the client) while this one waits.
        #expect(board.held.count == 1 && board.held.first?.id == held.id)
        let free = try #require(proxy.sink.flows.first { $0.request?.url == origin.url("/echo?free") })
        #expect(free.response?.status == 200 && free.interceptResponse == nil)
        #expect(board.resume(held.id, edit: Intercepts.Edit(body: Array("later".utf8))))
        let result = try client.result()
        let out = try json(result.stdout)
        #expect(out["free"] as? [AnyHashable] == ["HTTP/2", 200], "\(result.output)")
        #expect(out["held"] as? [AnyHashable] == ["HTTP/2", 200, "later"], "\(result.output)")
        let flows = proxy.flows(count: 3)
        #expect(Set(flows.compactMap { $0.h2?.connectionID }).count == 1)
    }

    /// A filter that asks nothing of the phase (`~u /echo`) holds the request, then, once it was
    /// resumed, its response: one at a time, under the flow's one id.
    @Test func aFilterWithoutAPhaseHoldsTheRequestThenItsResponse() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo", caPaths: [origin.caPath])
        let client = curl(proxy, ["--http2", "-d", "x=1", origin.url("/echo")])
        let request = try held(board, .request)
        #expect(board.held.count == 1)
        #expect(board.resume(request.id, edit: Intercepts.Edit(body: Array("x=22".utf8))))
        let response = try held(board)
        #expect(response.id == request.id && board.held.count == 1)
        #expect(try json(String(decoding: response.body, as: UTF8.self))["body"] as? String == "x=22")
        #expect(board.resume(response.id))
        #expect(try json(try client.result().stdout)["body"] as? String == "x=22")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.outcome == "resumed" && flow.intercept?.edited == ["body"])
        #expect(flow.interceptResponse?.outcome == "resumed" && flow.interceptResponse?.edited == [])
    }

    /// A client that gives up while its response is held (it resets the stream, or closes its
    /// connection) withdraws it: the board lets it go, its bytes leave the budget, and the flow
    /// says `client_gone`.
    @Test func aClientThatResetsWhileItsResponseIsHeldWithdrawsIt() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        // Python h2: RST_STREAM (CANCEL) on the held stream a second in, then another stream on
        // the same connection.
        let resources = URL(fileURLWithPath: HTTP2Origin.resource("proxytunnel.py")).deletingLastPathComponent().path
        let script = """
            import json, sys, time
            sys.path.insert(0, "\(resources)")
            import h2.config, h2.connection, h2.events, proxytunnel
            tls = proxytunnel.connect(\(proxy.port), "\(proxy.pki.rootPath)", "localhost", \(origin.port), ["h2"])
            conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True,
                                                                               header_encoding="utf-8"))
            conn.initiate_connection()
            def get(stream, path):
                head = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost:\(origin.port)"),
                        (":path", path)]
                conn.send_headers(stream, head, end_stream=True)
                tls.sendall(conn.data_to_send())
            get(1, "/echo?gone")
            time.sleep(1)
            conn.reset_stream(1, error_code=8)
            get(3, "/warm")
            out = {"first": None}
            while "after" not in out:
                data = tls.recv(65536)
                if not data:
                    break
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived):
                        out["first" if event.stream_id == 1 else "after"] = int(dict(event.headers)[":status"])
                    if isinstance(event, h2.events.DataReceived):
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                tls.sendall(conn.data_to_send())
            print(json.dumps(out))
            """
        let client = Running { try Subprocess.run("python3", ["-c", script], timeout: 20) }
        let held = try held(board)
        #expect(board.bufferedBytes == held.body.count && !held.body.isEmpty)
        let result = try client.result()
        let out = try json(result.stdout)
        #expect(out["after"] as? Int == 200 && out["first"] is NSNull, "\(result.output)")
        let deadline = Date().addingTimeInterval(5)
        while !board.held.isEmpty && Date() < deadline { usleep(20_000) }
        #expect(board.held.isEmpty && board.bufferedBytes == 0)
        #expect(!board.resume(held.id), "nothing is left to resume")
        let flow = try #require(proxy.flows(count: 2).first { $0.id == held.id })
        #expect(flow.interceptResponse?.outcome == "client_gone", "\(String(describing: flow.interceptResponse))")
        #expect(flow.error?.kind == "client_reset" && flow.error?.by == "client",
                "\(String(describing: flow.error))")
        // A client that closes its connection instead (curl giving up) withdraws it too.
        let closing = curl(proxy, ["--http2", "--max-time", "1", origin.url("/echo?closed")])
        let again = try self.held(board)
        #expect(try closing.result().status == 28)
        let until = Date().addingTimeInterval(5)
        while !board.held.isEmpty && Date() < until { usleep(20_000) }
        #expect(board.held.isEmpty && board.bufferedBytes == 0)
        let closed = try #require(proxy.flows(count: 3).first { $0.id == again.id })
        #expect(closed.interceptResponse?.outcome == "client_gone" && closed.error?.kind == "client_closed",
                "\(String(describing: closed.error))")
    }

    /// A gRPC unary call's response is held with its message and resumed: the client gets the
    /// message and the trailers (status, trailing metadata); one aborted ends UNAVAILABLE with the
    /// reason, as an aborted request does.
    @Test func aGRPCResponseIsHeldWithItsTrailers() throws {
        let origin = try GRPCProxyTests.EchoServer()
        let (proxy, board) = try proxy("~grpc & ~s", caPaths: [origin.caPath])
        let script = """
            import grpc, sys
            creds = grpc.ssl_channel_credentials(open("\(proxy.pki.rootPath)", "rb").read())
            with grpc.secure_channel("localhost:\(origin.port)", creds) as channel:
                for _ in range(2):
                    try:
                        reply, call = channel.unary_unary("/lab.Echo/Unary").with_call(b"\\x0a\\x02hi", timeout=20)
                        trailers = dict(call.trailing_metadata())
                        print("OK", reply.hex(), call.code().name, trailers.get("x-trailer"), flush=True)
                    except grpc.RpcError as error:
                        print(error.code().name, error.details(), flush=True)
            """
        let environment = ["https_proxy": proxy.proxyURL, "no_proxy": "", "no_grpc_proxy": ""]
        let client = Running { try Subprocess.run("python3", ["-c", script], environment: environment, timeout: 30) }
        let first = try held(board)
        #expect(first.status == 200 && field(first, "content-type") == "application/grpc")
        #expect(first.body == [0, 0, 0, 0, 4, 0x0a, 0x02, 0x68, 0x69], "\(first.body)")
        #expect(board.resume(first.id))
        let deadline = Date().addingTimeInterval(8)
        while (board.held.isEmpty || board.held.first?.id == first.id) && Date() < deadline { usleep(20_000) }
        let second = try #require(board.held.first)
        #expect(board.abort(second.id))
        let result = try client.result()
        #expect(result.stdout == "OK 0a026869 OK t1\nUNAVAILABLE \(Intercepts.abortedResponseReason)\n",
                "\(result.output)")
        let flows = proxy.flows(count: 2)
        let resumed = try #require(flows.first { $0.id == first.id })
        #expect(resumed.grpc?.status == 0 && resumed.response?.trailers?.flat.contains("t1") == true, "\(resumed)")
        #expect(resumed.interceptResponse?.outcome == "resumed")
        let aborted = try #require(flows.first { $0.id == second.id })
        #expect(aborted.error?.kind == "intercept_aborted" && aborted.response?.trailers?.flat.contains("t1") == true)
        #expect(aborted.interceptResponse?.outcome == "aborted")
    }

    /// A 1 MiB body from an h2 origin, four times the stream window DevProxy grants otherwise, is
    /// gathered and held whole (the window is widened for it), and reaches the client whole.
    @Test func aLargeBodyFromAnH2OriginIsHeldWhole() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /big & ~s", caPaths: [origin.caPath])
        let size = 1 << 20
        let client = curl(proxy, ["--http2", "-o", "/dev/null", "-w", "%{http_version} %{size_download}",
                                  origin.url("/big?n=\(size)")])
        let held = try held(board)
        #expect(held.body.count == size && board.bufferedBytes == size)
        #expect(held.body.prefix(16) == Array("0123456789abcdef".utf8)[...])
        #expect(board.resume(held.id))
        let result = try client.result()
        #expect(result.stdout == "2 \(size)", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "resumed" && flow.response?.body?.size == size)
        #expect(board.bufferedBytes == 0)
    }

    /// The same from an HTTP/1.1 origin to a client that offers only h2 (Python h2): an HTTP/1.1
    /// leg, whose response queue holds 256 KiB otherwise.
    @Test func aLargeBodyFromAnHTTP1OriginIsHeldWhole() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /big & ~s", caPaths: [origin.caPath])
        let size = 1 << 20
        let (proxyPort, root, port) = (proxy.port, proxy.pki.rootPath, origin.port)
        let client = Running {
            try H2Client.run(proxyPort: proxyPort, root: root, port: port, alpn: "h2", path: "/big?n=\(size)")
        }
        let held = try held(board)
        #expect(held.body.count == size && board.bufferedBytes == size)
        #expect(board.resume(held.id))
        let output = try client.result()
        let response = try #require(output.responses.first, "\(output)")
        #expect(output.alpn == "h2" && response.status == 200 && response.reset == nil)
        #expect(response.body.utf8.count == size && response.body.hasPrefix("0123456789abcdef"))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.httpVersion == "HTTP/1.1" && flow.interceptResponse?.outcome == "resumed")
        #expect(board.bufferedBytes == 0)
    }

    /// A response without content (to HEAD) from an HTTP/1.1 origin is held by its head, and stays
    /// held after the origin's response ended; resumed, the client gets it ending with its HEADERS.
    @Test func aResponseToHEADFromAnHTTP1OriginStaysHeldByItsHead() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        let (proxyPort, root, port) = (proxy.port, proxy.pki.rootPath, origin.port)
        let client = Running {
            try H2Client.run(proxyPort: proxyPort, root: root, port: port, alpn: "h2", path: "/echo",
                             extra: ["--method", "HEAD"])
        }
        let held = try held(board)
        #expect(held.status == 200 && held.body.isEmpty && held.method == "HEAD")
        usleep(500_000)
        #expect(board.held.count == 1 && proxy.sink.flows.isEmpty, "the origin's end did not send it on")
        #expect(board.resume(held.id))
        let output = try client.result()
        let response = try #require(output.responses.first, "\(output)")
        #expect(response.status == 200 && response.body.isEmpty && response.reset == nil, "\(output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "resumed" && flow.error == nil, "\(String(describing: flow.error))")
    }

    /// A response status edited to 204 goes without its body or content-length (RFC 9110 §8.6), and
    /// the flow says the edited body was not sent.
    @Test func aStatusEditedTo204SendsNoBody() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        let client = curl(proxy, ["--http2", "-D", "-", origin.url("/echo")])
        let held = try held(board)
        #expect(board.resume(held.id, edit: Intercepts.Edit(body: Array("ignored".utf8), status: 204)))
        let result = try client.result()
        let text = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(text.contains("\nHTTP/2 204 \n") && text.hasSuffix("\n\n"), "\(result.output)")
        #expect(!text.contains("content-length") && !text.contains("ignored"), "\(text)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 204 && flow.error == nil)
        #expect(flow.interceptResponse?.note == "the edited body was not sent: a response with status 204 has none")
    }

    /// `--modify-body` edits a response before the breakpoint holds it: the held body is what the
    /// client would get, with its content-length, and goes so.
    @Test func aHeldResponseShowsWhatModifyBodyMadeOfIt() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let board = try Intercepts(filter: "~u /account & ~s")
        let rules = try MapRules(remote: [], local: [], body: [#"/~u account/"premium":false/"premium":true"#])
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
            $0.mapRules = rules
        })
        let client = curl(proxy, ["--http2", origin.url("/account?chunked")])
        let held = try held(board)
        let edited = #"{"user": "ana", "premium":true}"#
        #expect(String(decoding: held.body, as: UTF8.self) == edited)
        #expect(field(held, "content-length") == String(edited.utf8.count))
        #expect(board.resume(held.id))
        #expect(try client.result().stdout == edited)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped?.body?.first?.replacements == 1 && flow.interceptResponse?.outcome == "resumed")
        #expect(flow.response?.body?.text == edited)
    }

    /// DevProxy stopping answers a held response 502 saying so (`stopped`).
    @Test func stoppingAnswersAHeldResponse() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /echo & ~s", caPaths: [origin.caPath])
        let client = curl(proxy, ["--http2", "-w", "%{http_code}", origin.url("/echo")])
        _ = try held(board)
        proxy.server.stop()
        let result = try client.result()
        #expect(result.stdout == "502 Bad Gateway: \(Intercepts.stoppedResponseReason)\n502", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "stopped" && flow.error?.kind == "intercept_aborted")
    }

    /// What a breakpoint cannot hold goes on whole, its flow saying why: a body that grows past
    /// 4 MiB (no content-length to refuse it by), and one past the bytes the board keeps at once.
    @Test(arguments: [false, true])
    func aBodyPastTheLimitOrTheBudgetGoesOnWhole(_ smallBudget: Bool) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let board = try Intercepts(filter: "~u /big & ~s", budget: smallBudget ? 512 << 10 : Intercepts.maxBuffered)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
        })
        let size = smallBudget ? 600 << 10 : Intercepts.maxBody + 100_000
        let result = try proxy.curl(["--http2", "-o", "/dev/null", "-w", "%{size_download}",
                                     origin.url("/big?n=\(size)")])
        #expect(result.stdout == "\(size)", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "not_held" && flow.response?.body?.size == size)
        #expect(flow.interceptResponse?.note == (smallBudget ? board.fullNote
                    : "not held: its body is over 4 MiB, more than a breakpoint holds"))
        #expect(board.held.isEmpty && board.bufferedBytes == 0)
    }

    /// A streaming response (a gRPC server stream of 7 messages half a second apart) whose body
    /// has not ended 2 s after its head is not held: what came goes on then, the rest as it
    /// comes, and the flow says why.
    @Test func aStreamingResponseThatDoesNotEndIsNotHeld() throws {
        let origin = try GRPCProxyTests.EchoServer()
        let (proxy, board) = try proxy("~grpc & ~s", caPaths: [origin.caPath])
        let script = """
            import grpc, sys, time
            creds = grpc.ssl_channel_credentials(open("\(proxy.pki.rootPath)", "rb").read())
            with grpc.secure_channel("localhost:\(origin.port)", creds) as channel:
                start = time.time()
                ticks = channel.unary_stream("/lab.Echo/Ticks")(b"\\x10\\x07", timeout=20)
                times = [time.time() - start for _ in ticks]
                print(len(times), round(times[0], 2), round(times[-1], 2))
            """
        let environment = ["https_proxy": proxy.proxyURL, "no_proxy": "", "no_grpc_proxy": ""]
        let result = try Subprocess.run("python3", ["-c", script], environment: environment, timeout: 30)
        let parts = result.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .newlines)) }
        #expect(parts.count == 3 && parts.first == 7, "\(result.output)")
        // The first message reached the client at the 2 s mark, before the last was sent (3 s).
        #expect(parts.count == 3 && parts[1] >= 1.9 && parts[1] < 2.9 && parts[2] >= 2.9, "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.outcome == "not_held", "\(String(describing: flow.interceptResponse))")
        #expect(flow.interceptResponse?.note?.contains("had not ended 2 s after its head") == true)
        #expect(flow.grpc?.status == 0 && board.held.isEmpty && board.bufferedBytes == 0)
    }

    /// An event stream (server-sent events) is not held at all: its first event reaches the client
    /// at once, as over HTTP/1.1, and the flow says why.
    @Test func anEventStreamIsNotHeld() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, board) = try proxy("~u /events & ~s", caPaths: [origin.caPath])
        let result = try proxy.curl(["--http2", "-N", "-w", "\n%{time_starttransfer}", origin.url("/events")])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.prefix(2) == ["data: \"premium\":false", "data: second"], "\(result.output)")
        let firstByte = try #require(Double(lines.last ?? ""), "\(result.output)")
        #expect(firstByte < 1, "\(firstByte)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.note == "not held: an event stream (text/event-stream) goes on as it comes")
        #expect(flow.interceptResponse?.outcome == "not_held" && board.held.isEmpty)
    }
}
