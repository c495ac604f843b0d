@testable import DevProxy
import Foundation
import GRPCWire
import Testing
import TestSupport

/// `devproxy run --grpc-reflection` with grpcio on both ends: a server that offers server
/// reflection (grpcio-reflection, v1alpha only, as Python's does) gets its calls typed without a
/// `.proto`; one that does not is named in a warning.
@Suite(.serialized) struct GRPCReflectionTests {
    /// The flows of the flow log at `path` once one matching `until` is there (at most `seconds`).
    private static func flows(_ path: String, until done: ([Flow]) -> Bool, seconds: TimeInterval = 20) throws -> [Flow] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let flows = (try? FlowLogReader.read(path: path).flows) ?? []
            if done(flows) || Date() >= deadline { return flows }
            usleep(50_000)
        }
    }

    private static func runClient(_ root: String, _ server: GRPCProxyTests.EchoServer, proxy: DevProxyProcess) throws {
        let result = try Subprocess.run("python3", [GRPCProxyTests.script, "client", root, "\(server.port)"],
                                        environment: ["https_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "",
                                                      "no_grpc_proxy": ""], timeout: 60)
        #expect(result.stdout.contains("\"unary\": {\"ok\": true"), "\(result.output)")
    }

    private static func isReflection(_ flow: Flow) -> Bool {
        flow.request?.url.hasSuffix("/ServerReflectionInfo") == true
    }

    @Test(.backstop) func aServerThatOffersReflectionHasItsCallsTyped() throws {
        let server = try GRPCProxyTests.EchoServer(reflect: true)
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--grpc-reflection", "--upstream-ca", server.caPath,
                                         "--log", log, "--quiet", "--session", dir.file("session.sqlite"),
                                         "--web", "127.0.0.1:0"], webUI: true)
        // The first calls ask the server (once, in the background), then the next ones are typed.
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        let asked = try Self.flows(log) { $0.contains { Self.isReflection($0) && $0.grpc?.status == 0 } }
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        let unaryCount = asked.filter { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true }.count
        let flows = try Self.flows(log) { $0.filter { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true }.count > unaryCount }
        // The first run's Unary started before the question: its record has no types, and the
        // web UI shows it typed by the answer that came after it.
        let first = try #require(asked.first { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true && $0.grpc?.encoding == nil })
        #expect(first.grpc?.messages.first?.typed == nil)
        let shown = try Self.shown(first.id, web: try #require(proxy.webUI))
        #expect(shown.typed == #"{"number":7,"text":"hello"}"#, "\(shown)")
        #expect(shown.notes.contains(Flow.typedLaterNote))
        let stopped = proxy.stop()

        // v1 first (grpc-go, grpc-java), then v1alpha, which grpcio has: one question each, both recorded.
        let questions = flows.filter(Self.isReflection)
        #expect(questions.map { $0.request?.url.contains("/grpc.reflection.v1.") == true } == [true, false],
                "\(questions.map { $0.request?.url ?? "" })")
        #expect(questions.first?.grpc?.status == 12, "v1: UNIMPLEMENTED")
        #expect(questions.last?.grpc?.status == 0)
        #expect(questions.allSatisfy { $0.id.contains("-reflection-") }, "\(questions.map(\.id))")
        #expect(questions.allSatisfy { $0.request?.headers.contains { $0.first?.lowercased() == "x-devproxy-replay" } == false })

        let unary = try #require(flows.last { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true && $0.grpc?.encoding == nil })
        let request = try #require(unary.grpc?.messages.first)
        #expect(request.messageType == "lab.Note")
        #expect(request.typed == .object([(key: "number", value: .int(7)), (key: "text", value: .string("hello"))]),
                "\(String(describing: request.typed))")
        let stream = try #require(flows.last { $0.request?.url.hasSuffix("/lab.Echo/ServerStream") == true })
        #expect(stream.grpc?.messages.first?.typed?["text"] == .string("n"))
        // Every method of the service came with the answer: ClientStream too (no --proto here defines it).
        let client = try #require(flows.last { $0.request?.url.hasSuffix("/lab.Echo/ClientStream") == true })
        #expect(client.grpc?.messages.first?.messageType == "lab.Note")
        #expect(!stopped.stderr.contains("grpc reflection"), "\(stopped.stderr)")
    }

    /// `echo.proto` in `dir`: lab.Echo with `methods` (Fail and the others left out: no schema defines them).
    private static func writeEchoProto(in dir: TemporaryDirectory, methods: String) {
        _ = dir.write("echo.proto", """
            syntax = "proto3";
            package lab;
            message Note { string text = 1; int32 number = 2; bytes payload = 3; }
            service Echo { \(methods) }
            """)
    }

    /// `GET /api/flows/ID` of the UI at `web` (`http://HOST:PORT/?token=…`, or a base and a token):
    /// its first gRPC message's `typed` (JSON, keys sorted) and the call's notes.
    private static func shown(_ id: String, web: String, token: String? = nil) throws -> (typed: String?, notes: [String]) {
        let base = web.components(separatedBy: "/?token=")[0]
        let token = token ?? web.components(separatedBy: "token=").last ?? ""
        let result = try Subprocess.run("curl", ["-s", "-H", "Authorization: Bearer \(token)", "\(base)/api/flows/\(id)"],
                                        timeout: 20)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let grpc = object?["grpc"] as? [String: Any]
        let message = (grpc?["messages"] as? [[String: Any]])?.first
        let typed = try message?["typed"].map {
            String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
        }
        return (typed, grpc?["notes"] as? [String] ?? [])
    }

    /// The echo client's calls through a run without `--proto` into `session.sqlite` in `dir`,
    /// with an `echo.proto` beside it that defines `methods`: the run's flows and its plain unary call.
    private static func recordedSession(in dir: TemporaryDirectory, methods: String) throws -> (flows: [Flow], unary: Flow) {
        let server = try GRPCProxyTests.EchoServer()
        writeEchoProto(in: dir, methods: methods)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--upstream-ca", server.caPath, "--log", dir.file("flows.jsonl"),
                                         "--quiet", "--session", dir.file("session.sqlite")])
        try runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        _ = proxy.stop()
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        return (flows, try #require(flows.first { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true && $0.grpc?.encoding == nil }))
    }

    @Test(.backstop) func aSessionRecordedWithoutAProtoIsShownTypedByOneGivenLater() throws {
        let dir = TemporaryDirectory()
        let session = dir.file("session.sqlite")
        let (flows, unary) = try Self.recordedSession(in: dir, methods: "rpc Unary(Note) returns (Note); rpc ServerStream(Note) returns (stream Note);")
        let fail = try #require(flows.first { $0.request?.url.hasSuffix("/lab.Echo/Fail") == true })
        #expect(unary.grpc?.messages.first?.typed == nil)

        // devproxy web SESSION --proto echo.proto: the stored calls of the methods it defines are shown typed.
        let typed = try DevProxyViewer(session, options: ["--proto", dir.file("echo.proto")])
        let shown = try Self.shown(unary.id, web: typed.base, token: typed.token)
        #expect(shown.typed == #"{"number":7,"text":"hello"}"#, "\(shown)")
        #expect(shown.notes.contains(Flow.typedLaterNote))
        // A method the file does not define (Fail) stays as recorded.
        #expect(try Self.shown(fail.id, web: typed.base, token: typed.token).notes.contains(Flow.typedLaterNote) == false)
        // Without --proto, as recorded.
        let plain = try DevProxyViewer(session)
        #expect(try Self.shown(unary.id, web: plain.base, token: plain.token).typed == nil)
        // A --proto that is not one stops the start with one line, before the session is read.
        let refused = try Subprocess.run(Subprocess.devproxy, ["web", session, "--proto", dir.file("flows.jsonl")])
        #expect(refused.status != 0 && refused.stderr.hasPrefix("error: --proto \(dir.file("flows.jsonl")): not a FileDescriptorSet"),
                "\(refused.output)")
    }

    /// The `_grpc` object of the HAR entry of flow `id` (`run --har`, or an export from the web UI).
    private static func harCall(_ id: String, in har: Data) throws -> [String: Any]? {
        let document = try JSONSerialization.jsonObject(with: har) as? [String: Any]
        let entries = (document?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        return entries.first { $0["_flowId"] as? String == id }?["_grpc"] as? [String: Any]
    }

    /// A gRPC message's `typed` as JSON with sorted keys.
    private static func typedText(_ grpc: [String: Any]?) throws -> String? {
        let message = (grpc?["messages"] as? [[String: Any]])?.first
        return try message?["typed"].map {
            String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    /// What a run learnt by reflection outlives it: the session keeps the answer, so `devproxy web
    /// FILE` (no `--proto`) shows the calls recorded before it typed, and so does a HAR exported
    /// there; the HAR `--har` writes at exit has them typed too. Only the flow log keeps them as recorded.
    @Test(.backstop) func aRunsReflectionAnswersTypeItsSavedSessionAndItsHAR() throws {
        let server = try GRPCProxyTests.EchoServer(reflect: true)
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl"), har = dir.file("run.har"), session = dir.file("session.sqlite")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--grpc-reflection", "--upstream-ca", server.caPath,
                                         "--log", log, "--har", har, "--quiet", "--session", session])
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        let flows = try Self.flows(log) { $0.contains { Self.isReflection($0) && $0.grpc?.status == 0 } }
        // The answer is read on the question's thread while its flow is logged: a moment for it.
        usleep(300_000)
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        // The first Unary started before the question: the flow log has it untyped, for good.
        let first = try #require(flows.first { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true && $0.grpc?.encoding == nil })
        #expect(first.grpc?.messages.first?.typed == nil)

        // The HAR written at exit: typed by the answer that came after the call.
        let written = try Self.harCall(first.id, in: Data(contentsOf: URL(fileURLWithPath: har)))
        #expect(try Self.typedText(written) == #"{"number":7,"text":"hello"}"#, "\(String(describing: written))")
        let writtenNotes = written?["notes"] as? [String] ?? []
        #expect(writtenNotes.contains(Flow.typedInHARNote), "\(writtenNotes)")

        // devproxy web SESSION, no --proto: the session's own answer types it, as the run's UI did.
        let viewer = try DevProxyViewer(session)
        let shown = try Self.shown(first.id, web: viewer.base, token: viewer.token)
        #expect(shown.typed == #"{"number":7,"text":"hello"}"#, "\(shown)")
        #expect(shown.notes.contains(Flow.typedLaterNote))
        // A HAR exported there has it typed as shown.
        let export = try Subprocess.run("curl", ["-s", "-H", "Authorization: Bearer \(viewer.token)",
                                                 "\(viewer.base)/api/export/har?ids=\(first.id)"], timeout: 20)
        let exported = try Self.harCall(first.id, in: Data(export.stdout.utf8))
        #expect(try Self.typedText(exported) == #"{"number":7,"text":"hello"}"#, "\(export.stdout.prefix(600))")
        let exportedNotes = exported?["notes"] as? [String] ?? []
        #expect(exportedNotes.contains(Flow.typedInHARNote), "\(exportedNotes)")

        // With --proto too, the file wins where both name a message (as `run --proto` does).
        _ = dir.write("renamed.proto", """
            syntax = "proto3";
            package lab;
            message Note { string title = 1; int32 count = 2; }
            service Echo { rpc Unary(Note) returns (Note); }
            """)
        let both = try DevProxyViewer(session, options: ["--proto", dir.file("renamed.proto")])
        #expect(try Self.shown(first.id, web: both.base, token: both.token).typed == #"{"count":7,"title":"hello"}"#)
    }

    /// A run into a session file an earlier run with `--grpc-reflection` wrote: its web UI shows
    /// the earlier run's calls typed by the answers the file kept, though this run asks nothing.
    @Test(.backstop) func aLaterRunIntoTheSameSessionShowsItsCallsTyped() throws {
        let server = try GRPCProxyTests.EchoServer(reflect: true)
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl"), session = dir.file("session.sqlite")
        let first = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--grpc-reflection", "--upstream-ca", server.caPath,
                                         "--log", log, "--quiet", "--session", session])
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: first)
        let flows = try Self.flows(log) { $0.contains { Self.isReflection($0) && $0.grpc?.status == 0 } }
        // The answer is read on the question's thread while its flow is logged: a moment for it.
        usleep(300_000)
        _ = first.stop()
        let early = try #require(flows.first { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true && $0.grpc?.encoding == nil })
        #expect(early.grpc?.messages.first?.typed == nil)
        let second = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--quiet", "--session", session, "--web", "127.0.0.1:0"],
                                         webUI: true)
        let shown = try Self.shown(early.id, web: try #require(second.webUI))
        #expect(shown.typed == #"{"number":7,"text":"hello"}"#, "\(shown)")
        #expect(shown.notes.contains(Flow.typedLaterNote))
        _ = second.stop()
    }

    /// A session written before the answers were kept (schema 8) opens, is brought forward (to this
    /// build's version), and shows its calls as recorded, or typed by `--proto`; an answer the
    /// session kept that does not read as a descriptor set is named once, and the calls stay as
    /// recorded.
    @Test(.backstop) func aSessionFromBeforeAnswersWereKeptOpens() throws {
        let dir = TemporaryDirectory()
        let session = dir.file("session.sqlite")
        let unary = try Self.recordedSession(in: dir, methods: "rpc Unary(Note) returns (Note);").unary
        func sql(_ script: String) throws -> String {
            let python = """
                import sqlite3, sys
                c = sqlite3.connect(sys.argv[1])
                if sys.argv[2].startswith('SELECT'):
                    for row in c.execute(sys.argv[2]): print(*row)
                else:
                    c.executescript(sys.argv[2])
                    c.commit()
                """
            let result = try Subprocess.run("python3", ["-c", python, session, script], timeout: 20)
            #expect(result.status == 0, "\(result.output)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // As devproxy 8 left it: no grpc_schemas, nor what later versions added (flow_notes, 10; graphql, 11;
        // mapped, 12; client, 13; replay_of, 14).
        let current = try sql("SELECT * FROM pragma_user_version")
        _ = try sql("DROP TABLE IF EXISTS grpc_schemas; DROP TABLE IF EXISTS flow_notes; "
                    + "ALTER TABLE flows DROP COLUMN graphql; ALTER TABLE flows DROP COLUMN graphql_errors; "
                    + "ALTER TABLE flows DROP COLUMN mapped; ALTER TABLE flows DROP COLUMN client; "
                    + "ALTER TABLE flows DROP COLUMN replay_of; ALTER TABLE flows DROP COLUMN client_process; "
                    + "ALTER TABLE flows DROP COLUMN client_exe; ALTER TABLE flows DROP COLUMN client_pid; "
                    + "PRAGMA user_version = 8;")
        #expect(try sql("SELECT count(*) FROM sqlite_master WHERE name = 'grpc_schemas'") == "0")
        do {
            let viewer = try DevProxyViewer(session)
            #expect(try Self.shown(unary.id, web: viewer.base, token: viewer.token).typed == nil)
            let typed = try DevProxyViewer(session, options: ["--proto", dir.file("echo.proto")])
            #expect(try Self.shown(unary.id, web: typed.base, token: typed.token).typed == #"{"number":7,"text":"hello"}"#)
        }
        #expect(try sql("SELECT * FROM pragma_user_version") == current)
        #expect(try sql("SELECT count(*) FROM grpc_schemas") == "0")

        // A kept answer that is not a descriptor set (a damaged or hand-made file).
        _ = try sql("INSERT INTO grpc_schemas (host, port, service, learned, descriptor_set) "
                    + "VALUES ('localhost', \(unary.server.port), 'lab.Echo', '2026-12-06T00:00:00Z', X'0A0501')")
        let stderr = dir.file("viewer.err")
        let viewer = try DevProxyViewer(session, stderr: stderr)
        #expect(try Self.shown(unary.id, web: viewer.base, token: viewer.token).typed == nil)
        #expect(try Self.shown(unary.id, web: viewer.base, token: viewer.token).typed == nil)
        let warnings = try String(contentsOfFile: stderr, encoding: .utf8).split(separator: "\n")
        #expect(warnings.count == 1 && warnings.first?.hasPrefix("warning: the session's gRPC schema of localhost:\(unary.server.port) "
                                                                  + "(lab.Echo) cannot be read: ") == true, "\(warnings)")
    }

    /// A gRPC-Web server (a browser's calls to an Envoy-style front; sonora here, with
    /// grpcio-reflection behind it) is asked over gRPC-Web, as its calls came: the answer's
    /// trailers come in the body, and the later calls, binary or text, HTTP/1.1 or h2, are typed.
    /// One without TLS is asked over `http://`. One without reflection is named once, saying it
    /// was asked over gRPC-Web.
    @Test(.backstop) func aGRPCWebServerIsAskedOverGRPCWeb() throws {
        let origin = try HTTP2Origin(.grpcWebReflecting)
        let plain = try HTTP2Origin(.grpcWeb)
        let cleartext = try HTTP2Origin(.grpcWebReflectingCleartext)
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--grpc-reflection", "--upstream-ca", origin.caPath,
                                         "--upstream-ca", plain.caPath, "--log", log, "--quiet", "--session", "off"])
        let message: [UInt8] = [0x0A, 0x05] + Array("hello".utf8) + [0x10, 7]
        let input = dir.write("request", bytes: [0, 0, 0, 0, UInt8(message.count)] + message)
        let text = dir.write("request.txt", Data([0, 0, 0, 0, UInt8(message.count)] + message).base64EncodedString())
        func call(http2: Bool, textMode: Bool, to server: HTTP2Origin? = nil) throws {
            let type = textMode ? "application/grpc-web-text" : "application/grpc-web+proto"
            let result = try Subprocess.run("curl", ["-s", "-S", "-o", "/dev/null", "-w", "%{http_code}",
                                                     "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca") + "/root.pem",
                                                     http2 ? "--http2" : "--http1.1", "-H", "content-type: \(type)",
                                                     "-H", "x-grpc-web: 1", "--data-binary", "@" + (textMode ? text : input),
                                                     server?.kind == .grpcWebReflectingCleartext
                                                        ? "http://127.0.0.1:\(cleartext.port)/lab.Echo/Unary"
                                                        : (server ?? origin).url("/lab.Echo/Unary")], timeout: 30)
            #expect(result.stdout == "200", "\(result.output)")
        }
        try call(http2: false, textMode: false)
        try call(http2: false, textMode: false, to: cleartext)
        _ = try Self.flows(log) { $0.filter { Self.isReflection($0) && $0.grpc?.status == 0 }.count == 2 }
        // The answer is read on the question's thread while its flow is logged: a moment for it.
        usleep(300_000)
        try call(http2: false, textMode: false)
        try call(http2: true, textMode: true)
        try call(http2: false, textMode: false, to: cleartext)
        try call(http2: false, textMode: false, to: plain)
        try call(http2: false, textMode: false, to: plain)
        let flows = try Self.flows(log) { flows in
            flows.filter { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true }.count == 7
                && flows.filter { Self.isReflection($0) && $0.request?.url.contains(":\(plain.port)/") == true }.count == 2
        }
        let stopped = proxy.stop()
        let warnings = stopped.stderr.split(separator: "\n").filter { $0.contains("grpc reflection") }
        #expect(warnings == ["warning: grpc reflection: localhost:\(plain.port) (asked over gRPC-Web) did not describe lab.Echo "
                             + "(it does not offer server reflection: v1 and v1alpha are UNIMPLEMENTED); its calls are recorded "
                             + "without field names: give --proto FILE"], "\(stopped.stderr)")
        // v1 (sonora answers 404: no such method), then v1alpha, both over gRPC-Web.
        let questions = flows.filter { Self.isReflection($0) && $0.request?.url.contains(":\(origin.port)/") == true }
        #expect(questions.map { $0.request?.url.contains("/grpc.reflection.v1.") == true } == [true, false],
                "\(questions.map { $0.request?.url ?? "" })")
        #expect(questions.allSatisfy { $0.request?.headers.contains { $0 == ["Content-Type", "application/grpc-web+proto"] } == true },
                "\(questions.map { $0.request?.headers ?? [] })")
        #expect(questions.first?.response?.status == 404)
        #expect(questions.last?.grpc?.status == 0 && questions.last?.grpc?.wireProtocol == "grpc-web")
        let unary = flows.filter { $0.request?.url.hasSuffix(":\(origin.port)/lab.Echo/Unary") == true }
        #expect(unary.count == 3)
        #expect(unary.first?.grpc?.messages.first?.typed == nil, "the first call came before the answer")
        let typed = JSONValue.object([(key: "number", value: .int(7)), (key: "text", value: .string("hello"))])
        for later in unary.dropFirst() {
            #expect(later.grpc?.messages.map(\.typed) == [typed, typed], "\(later.request?.httpVersion ?? "") \(String(describing: later.grpc))")
        }
        #expect(unary.last?.grpc?.wireProtocol == "grpc-web-text")
        // Without TLS: asked at http://, the later call typed.
        let plainText = flows.filter { $0.request?.url.hasPrefix("http://127.0.0.1:\(cleartext.port)/") == true }
        #expect(plainText.filter(Self.isReflection).last?.grpc?.status == 0, "\(plainText.map { $0.request?.url ?? "" })")
        #expect(plainText.last?.grpc?.messages.first?.typed == typed, "\(String(describing: plainText.last?.grpc))")
    }

    /// A cleartext (h2c) server, as local services run: asked through a CONNECT tunnel with h2 by
    /// prior knowledge, as grpcio's insecure channel goes.
    @Test(.backstop) func aCleartextServerIsAskedThroughATunnel() throws {
        let server = try GRPCProxyTests.EchoServer(insecure: true, reflect: true)
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--grpc-reflection", "--log", log, "--quiet",
                                         "--session", "off"])
        func run() throws {
            let result = try Subprocess.run("python3", [GRPCProxyTests.script, "client-insecure", "\(server.port)"],
                                            environment: ["https_proxy": "http://127.0.0.1:\(proxy.port)",
                                                          "http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "",
                                                          "no_grpc_proxy": ""], timeout: 60)
            #expect(result.stdout.contains("\"unary\": {\"ok\": true"), "\(result.output)")
        }
        try run()
        _ = try Self.flows(log) { $0.contains { Self.isReflection($0) && $0.grpc?.status == 0 } }
        try run()
        let flows = try Self.flows(log) { $0.filter { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true }.count == 2 }
        let stopped = proxy.stop()
        let questions = flows.filter(Self.isReflection)
        #expect(questions.map { $0.request?.url ?? "" } == ["http://localhost:\(server.port)/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                                                          "http://localhost:\(server.port)/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"])
        #expect(questions.allSatisfy { $0.request?.httpVersion == "HTTP/2" })
        let unary = try #require(flows.last { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true })
        #expect(unary.grpc?.messages.first?.typed == .object([(key: "number", value: .int(9)), (key: "text", value: .string("plain"))]),
                "\(String(describing: unary.grpc?.messages.first))")
        #expect(!stopped.stderr.contains("grpc reflection"), "\(stopped.stderr)")
    }

    /// Edit and resend of a gRPC call with its request message edited as JSON: the UI writes it
    /// as protobuf by the run's schema, and the new call's flow shows the edit typed.
    @Test(.backstop) func aCallIsResentWithItsMessageEditedAsJSON() throws {
        let server = try GRPCProxyTests.EchoServer()
        let dir = TemporaryDirectory()
        Self.writeEchoProto(in: dir, methods: "rpc Unary(Note) returns (Note);")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--upstream-ca", server.caPath, "--proto", dir.file("echo.proto"),
                                         "--log", dir.file("flows.jsonl"), "--quiet", "--session", dir.file("session.sqlite"),
                                         "--web", "127.0.0.1:0"], webUI: true)
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        let flows = try Self.flows(dir.file("flows.jsonl")) { $0.contains { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true } }
        let unary = try #require(flows.first { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true && $0.grpc?.encoding == nil })
        let web = try #require(proxy.webUI)
        let base = web.components(separatedBy: "/?token=")[0]
        let token = web.components(separatedBy: "token=").last ?? ""
        func resend(_ messages: String, path: String = "/lab.Echo/Unary") throws -> (status: Int, body: String) {
            let request = """
                {"method": "POST", "url": "https://localhost:\(server.port)\(path)", "replay_of": "\(unary.id)",
                 "headers": [["content-type", "application/grpc"], ["te", "trailers"]], "grpc_messages": \(messages)}
                """
            let result = try Subprocess.run("curl", ["-s", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)",
                                                     "-H", "Content-Type: application/json", "--data-binary", request,
                                                     "\(base)/api/replay"], timeout: 30)
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }
        // In the page: the dialog of the newest Unary call (the gzip one: sent back uncompressed,
        // each message's flag saying so) shows its message as JSON, and sends the edit.
        if WebUIBrowser.missing == nil {
            let script = URL(fileURLWithPath: GRPCProxyTests.script).deletingLastPathComponent()
                .appendingPathComponent("webui_grpc_resend.py").path
            let zipped = String(repeating: "zipped ", count: 50)
            let page = try Subprocess.run("python3", [script, "--ui", web, "--path", "/lab.Echo/Unary",
                                                      "--expect", #"{"text": "\#(zipped)", "number": 3}"#,
                                                      "--send", #"{"text": "from the dialog", "number": 5}"#], timeout: 120)
            #expect(page.status == 0, "\(page.output)")
            let again = try Self.flows(dir.file("flows.jsonl")) { flows in
                flows.contains { $0.grpc?.messages.first?.typed?["text"] == .string("from the dialog") }
            }
            let resent = again.first { $0.grpc?.messages.first?.typed?["text"] == .string("from the dialog") }
            #expect(resent?.grpc?.messages.last?.typed == .object([(key: "number", value: .int(5)),
                                                                   (key: "text", value: .string("from the dialog"))]),
                    "the echo of the edited message: \(String(describing: resent?.grpc))")
            #expect(resent?.replayOf != nil)
        }
        let sent = try resend(#"[{"text": "edited", "number": 42}]"#)
        #expect(sent.status == 200, "\(sent)")
        let id = try #require((try JSONSerialization.jsonObject(with: Data(sent.body.utf8)) as? [String: Any])?["id"] as? String)
        let edited = try Self.shown(id, web: base, token: token)
        #expect(edited.typed == #"{"number":42,"text":"edited"}"#, "\(edited)")
        // What the type cannot take, and a method no schema defines, are refused saying why.
        let wrong = try resend(#"[{"text": 7}]"#)
        #expect(wrong.status == 400 && wrong.body.contains("grpc_messages[0] is not a lab.Note: lab.Note.text is a string, not a number"),
                "\(wrong)")
        let unknown = try resend(#"[{}]"#, path: "/lab.Echo/Fail")
        #expect(unknown.status == 409 && unknown.body.contains("no schema defines /lab.Echo/Fail"), "\(unknown)")
        _ = proxy.stop()
    }

    @Test(.backstop) func aServerWithoutReflectionIsNamedOnce() throws {
        let server = try GRPCProxyTests.EchoServer()
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--grpc-reflection", "--upstream-ca", server.caPath,
                                         "--log", log, "--quiet", "--session", "off"])
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        _ = try Self.flows(log) { $0.filter(Self.isReflection).count == 2 }
        try Self.runClient(dir.file("ca") + "/root.pem", server, proxy: proxy)
        let flows = try FlowLogReader.read(path: log).flows
        let stopped = proxy.stop()
        // Asked once (v1, then v1alpha), not again on the second run.
        #expect(flows.filter(Self.isReflection).count == 2)
        let warnings = stopped.stderr.split(separator: "\n").filter { $0.contains("grpc reflection") }
        #expect(warnings == ["warning: grpc reflection: localhost:\(server.port) did not describe lab.Echo (it does not offer "
                             + "server reflection: v1 and v1alpha are UNIMPLEMENTED); its calls are recorded without field names: give --proto FILE"],
                "\(stopped.stderr)")
        let unary = try #require(flows.last { $0.request?.url.hasSuffix("/lab.Echo/Unary") == true })
        #expect(unary.grpc?.messages.first?.typed == nil && unary.grpc?.messages.first?.decoded != nil)
    }

    @Test func reflectionMessagesAreReadAsGrpcurlSendsThem() throws {
        // The request: `host` (1) and `file_containing_symbol` (4), framed, as protoc --decode_raw reads it.
        let body = ServerReflection.requestBody(host: "", queries: [.fileContainingSymbol("lab.Echo"),
                                                                    .fileByFilename("a/b.proto")])
        #expect(body == [0, 0, 0, 0, 12, 0x0A, 0, 0x22, 8] + Array("lab.Echo".utf8)
                + [0, 0, 0, 0, 13, 0x0A, 0, 0x1A, 9] + Array("a/b.proto".utf8))
        // An answer with a file twice (left out the second time) and an error.
        let file: [UInt8] = [0x0A, 3] + Array("x.p".utf8) + [0x1A, 3] + Array("y.p".utf8)
        let files: [UInt8] = [0x22, UInt8(2 + file.count), 0x0A, UInt8(file.count)] + file
        let error: [UInt8] = [0x3A, 8, 0x08, 5, 0x12, 4] + Array("gone".utf8)
        let framed: [UInt8] = [files, files, error].flatMap { message -> [UInt8] in [0, 0, 0, 0, UInt8(message.count)] + message }
        let answer = try ServerReflection.answer(framed)
        #expect(answer.files == [file])
        #expect(answer.errors == ["NOT_FOUND (5): gone"])
        let named = try ServerReflection.nameAndDependencies(of: file)
        #expect(named.name == "x.p" && named.dependencies == ["y.p"])
        #expect(throws: ProtoWireError.self) { try ServerReflection.answer([1, 0, 0, 0, 1, 0]) }
        #expect(throws: ProtoWireError.self) { try ServerReflection.answer([0, 0, 0, 0, 9, 0]) }
    }
}
