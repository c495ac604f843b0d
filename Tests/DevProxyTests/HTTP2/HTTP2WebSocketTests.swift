import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// WebSockets over HTTP/2 (RFC 8441) through the proxy. The client is Python's h2 library
/// (`Resources/h2websocket.py`: CONNECT through the proxy, TLS offering h2, an extended CONNECT
/// once SETTINGS_ENABLE_CONNECT_PROTOCOL arrives); the origin is hypercorn, which enables extended
/// CONNECT in its own SETTINGS and echoes each text message as "echo:" + it. The proxy offers the
/// setting only when the origin did, so an app opens its sockets the way it would without us.
@Suite(.serialized) struct HTTP2WebSocketTests {
    struct Output: Decodable {
        struct Message: Decodable {
            var opcode: Int
            var text: String
        }
        var alpn: String?
        /// The server's SETTINGS frames as received, each as id → value (ids as strings in JSON).
        var settings: [[String: Int]]
        var extendedConnect: Bool
        var status: Int?
        var headers: [[String]]?
        var received: [Message]?
        var closeCode: Int?
        var streamEnded: Bool?
        var reset: Int?
        var firstGetStatus: Int?
        var body: String?
    }

    private func harness(for origin: HTTP2Origin, configure: @escaping (inout ProxyConfiguration) -> Void = { _ in })
        throws -> ProxyHarness {
        try ProxyHarness(configure: {
            $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
            configure(&$0)
        })
    }

    private func client(_ proxy: ProxyHarness, _ origin: HTTP2Origin, _ extra: [String]) throws -> Output {
        let result = try Subprocess.run("python3", [HTTP2Origin.resource("h2websocket.py"), "\(proxy.port)", proxy.pki.rootPath,
                                                    "localhost", "\(origin.port)", "/ws"] + extra, timeout: 30)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard let data = result.stdout.data(using: .utf8), let output = try? decoder.decode(Output.self, from: data) else {
            throw TestFailure("h2websocket.py failed: \(result.output)")
        }
        return output
    }

    /// Whether any SETTINGS frame the client got enabled extended CONNECT.
    private func offered(_ output: Output) -> Bool {
        output.settings.contains { $0["8"] == 1 }
    }

    @Test func messagesPassAndAreRecordedWithTheirCompression() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try harness(for: origin)
        let output = try client(proxy, origin, ["--deflate", "--message", "hello hello hello hello", "--message", "second"])
        #expect(output.alpn == "h2")
        #expect(output.extendedConnect && offered(output), "SETTINGS seen: \(output.settings)")
        #expect(output.status == 200)
        #expect(output.headers?.contains(["sec-websocket-extensions", "permessage-deflate"]) == true,
                "\(String(describing: output.headers))")
        #expect(output.received?.map(\.text) == ["echo:hello hello hello hello", "echo:second"])
        #expect(output.closeCode == 1000 && output.streamEnded == true, "\(output)")

        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mode == .websocket)
        #expect(flow.error == nil, "a close handshake both ways is a clean end: \(String(describing: flow.error))")
        #expect(flow.request?.method == "CONNECT" && flow.request?.httpVersion == "HTTP/2")
        #expect(flow.request?.url == "https://localhost:\(origin.port)/ws")
        #expect(flow.request?.pseudoHeaders?.contains([":protocol", "websocket"]) == true,
                "\(String(describing: flow.request?.pseudoHeaders))")
        #expect(flow.response?.status == 200)
        // The stream's DATA was the socket's frames, recorded as messages, not as bodies.
        #expect(flow.request?.body == nil && flow.response?.body == nil)
        let messages = try #require(flow.websocket)
        let texts = messages.filter { $0.opcode == "text" }
        #expect(texts.map(\.direction) == ["client_to_server", "client_to_server", "server_to_client", "server_to_client"])
        #expect(texts.map { $0.text ?? "" } == ["hello hello hello hello", "second", "echo:hello hello hello hello",
                                                 "echo:second"])
        // hypercorn compresses what it sends once permessage-deflate is accepted; the flow shows it inflated.
        #expect(texts[2].compressedLength != nil && texts[2].compressedLength != texts[2].length, "\(texts[2])")
        #expect(messages.filter { $0.opcode == "close" }.map(\.direction) == ["client_to_server", "server_to_client"])

        let har = try #require(HARWriter.webSocketMessages(for: flow))
        #expect(har.map(\.type) == ["send", "send", "receive", "receive"])
        #expect(har.last?.data == "echo:second")
    }

    /// A message longer than a DATA frame and than a stream window crosses in many frames both
    /// ways, flow-controlled end to end; the flow keeps its first 64 KiB and says it is cut.
    @Test func aLongMessageCrossesManyFrames() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try harness(for: origin)
        let long = String(repeating: "0123456789", count: 30_000)
        let output = try client(proxy, origin, ["--message", "after", "--message-size", "\(long.count)"])
        #expect(output.received?.map(\.text.count) == [10, long.count + 5], "\(String(describing: output.received?.count))")
        #expect(output.received?.last?.text == "echo:" + long)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error == nil)
        // Each direction in its order (the short echo may come back before the long message is through).
        for (direction, lengths) in [("client_to_server", [5, long.count]), ("server_to_client", [10, long.count + 5])] {
            let texts = (flow.websocket ?? []).filter { $0.opcode == "text" && $0.direction == direction }
            #expect(texts.map(\.length) == lengths, "\(direction)")
            #expect(texts.map { $0.truncated == true } == [false, true], "\(direction)")
            #expect(texts.last?.text?.count == MessageLog.messageDataLimit, "\(direction)")
        }
    }

    /// A socket left open is shown while it runs, as over HTTP/1.1: sinks that show running flows
    /// get its messages so far about once a second, each record holding more than the last.
    @Test func aSocketLeftOpenIsShownWhileItRuns() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let progress = ProgressSink()
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas }, extraSinks: [progress])
        let output = try client(proxy, origin, ["--pause", "0.5"] + (0..<5).flatMap { ["--message", "message \($0)"] })
        #expect(output.received?.count == 5, "\(output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.websocket?.filter { $0.opcode == "text" }.count == 10)
        let shown = progress.flows.filter { $0.id == flow.id }.map { $0.websocket?.count ?? 0 }
        #expect(!shown.isEmpty && shown.allSatisfy { $0 > 0 && $0 < (flow.websocket?.count ?? 0) }, "\(shown)")
        #expect(shown == shown.sorted() && Set(shown).count == shown.count, "each shows more than the last: \(shown)")
        #expect(progress.flows.allSatisfy { $0.mode == .websocket && $0.response?.status == 200 && $0.request?.body == nil })
    }

    /// Without the origin's SETTINGS_ENABLE_CONNECT_PROTOCOL the client is never offered it, and
    /// opens its WebSockets over HTTP/1.1 as it would talking to that origin directly: an
    /// HTTP/1.1-only origin (the h2-only client's requests are translated) and nghttpd (h2
    /// without RFC 8441).
    @Test(arguments: [HTTP2Origin.Kind.hypercornHTTP1, .nghttpd])
    func notOfferedUnlessTheOriginOffersIt(_ kind: HTTP2Origin.Kind) throws {
        let origin = try HTTP2Origin(kind)
        let proxy = try harness(for: origin)
        let output = try client(proxy, origin, ["--wait-settings", "1.5"])
        #expect(output.alpn == "h2")
        #expect(!output.extendedConnect && !offered(output), "\(kind): \(output.settings)")
        #expect(!output.settings.isEmpty, "the proxy's own SETTINGS arrived")
    }

    /// The setting was offered because the origin's first connection enabled it; that connection
    /// retired (the origin's GOAWAY), and the next one does not enable it, or speaks only
    /// HTTP/1.1: a WebSocket asked for then gets a 502 that says why, recorded as
    /// `protocol_mismatch`, after the first request's answer came whole on the same connection.
    @Test(arguments: [(HTTP2Origin.Kind.misbehavingConnectOnce, "did not enable extended CONNECT"),
                      (.misbehavingThenHTTP1, "speaks only HTTP/1.1")])
    func aWebSocketTheOriginsNextConnectionCannotTakeGetsA502(_ kind: HTTP2Origin.Kind, _ reason: String) throws {
        let origin = try HTTP2Origin(kind)
        let proxy = try harness(for: origin)
        let output = try client(proxy, origin, ["--first-get", "/goaway", "--message", "never sent"])
        #expect(output.extendedConnect && offered(output), "SETTINGS seen: \(output.settings)")
        #expect(output.firstGetStatus == 200)
        #expect(output.status == 502)
        #expect(output.body?.contains(reason) == true, "\(output.body ?? "no body")")
        #expect(output.received?.isEmpty != false)
        let flows = proxy.flows(count: 2)
        let refused = try #require(flows.first { $0.request?.method == "CONNECT" })
        #expect(refused.error?.kind == "protocol_mismatch")
        #expect(refused.error?.message.contains(reason) == true, "\(String(describing: refused.error))")
        #expect(refused.response?.status == 502)
        #expect(flows.contains { $0.request?.url.hasSuffix("/goaway") == true && $0.response?.status == 200 })
    }
}
