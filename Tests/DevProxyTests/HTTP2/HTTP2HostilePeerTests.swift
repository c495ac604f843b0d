import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// The hostile inputs of RFC 9113 §10 and the attacks of recent years, sent through DevProxy by
/// a scripted peer (`Resources/h2attack.py`: hyperframe and hpack, frame by frame). Each attack
/// gets the answer the protocol asks for, and the proxy goes on serving others. (Rapid reset is
/// `HTTP2ProxyTests.rapidResetIsCutOffAndOthersAreServed`; the codec's side of each is in
/// `HTTP2HostileInputTests`.)
@Suite(.serialized) struct HTTP2HostilePeerTests {
    /// An attack and the GOAWAY error code it must end in.
    struct Case: CustomStringConvertible, Sendable {
        var name: String
        var arguments: [String]
        var goAway: Int
        var description: String { name }
    }

    static let connectionErrors = [
        // A header block that never ends: cut off after 8 CONTINUATIONs (CVE-2024-28182).
        Case(name: "continuation-flood", arguments: ["continuation-flood", "20"], goAway: 0x1),
        // Connection window past 2^31-1 (RFC 9113 §6.9.1).
        Case(name: "window-overflow", arguments: ["window-overflow"], goAway: 0x3),
        // HEADERS again on a stream the client already ended (§5.1: STREAM_CLOSED).
        Case(name: "stream-reuse", arguments: ["stream-reuse", "/index.html"], goAway: 0x5),
        // 3,000 SETTINGS or PINGs whose ACKs are not read: ENHANCE_YOUR_CALM.
        Case(name: "settings-flood", arguments: ["settings-flood", "3000"], goAway: 0xB),
        Case(name: "ping-flood", arguments: ["ping-flood", "3000"], goAway: 0xB),
    ]

    @Test(arguments: connectionErrors)
    func connectionErrorEndsOnlyThatConnection(_ attack: Case) throws {
        let origin = try HTTP2Origin(.nghttpd)
        let proxy = try Self.proxy(for: origin)
        let result = try H2Attack.run(proxy: proxy, port: origin.port, attack.arguments)
        if attack.goAway == 0xB {
            // A flood is cut with ENHANCE_YOUR_CALM once more than 1,000 ACKs wait in nghttp2's
            // queue; when the ACKs leave as fast as the frames are read (how many frames one read
            // brings depends on TLS record and scheduling), the queue stays short and the
            // connection lives on. Either way the ACKs held are bounded; no other code may come.
            #expect(result.goaway == nil || result.goaway == attack.goAway, "\(attack): \(result)")
        } else {
            #expect(result.goaway == attack.goAway, "\(attack): \(result)")
        }
        if attack.name != "stream-reuse" {  // there the first block is a valid request
            #expect(result.statuses.isEmpty, "no request of the attack is answered: \(result)")
        }
        if attack.goAway != 0xB {
            // One flow for the connection's error (the thrown error and the GOAWAY event each wrote one).
            let errors = proxy.flows(count: 2, timeout: 1.5).filter { $0.h2?.streamID == 0 }
            #expect(errors.count <= 1, "\(attack): \(errors.map { $0.error?.message ?? "-" })")
        }
        try Self.expectServing(proxy, origin)
    }

    /// An HPACK bomb (a 4 KB field inserted once and named 2,000 times: 4.5 KB on the wire, 8 MB
    /// decoded) is answered 431 on its stream; the connection's HPACK state stays in step, so the
    /// next request on the same connection gets its 200.
    /// Requests that would smuggle a second request past a careless HTTP/2 → HTTP/1.1 translation
    /// (a body longer than its content-length, a transfer-encoding field, CR LF in a value or in
    /// `:path`, a space in `:path`, a colon in a name) are each refused on their own stream and
    /// recorded; the HTTP/1.1 origin only ever sees the one well-formed request, which is answered.
    @Test func downgradeSmugglingNeverReachesTheOrigin() throws {
        let origin = try OriginServer(names: ["localhost"])   // HTTP/1.1 only: every stream is translated
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        })
        let output = try H2Attack.run(proxy: proxy, port: origin.port, ["smuggle"])
        #expect(output.statuses["13"] == 200, "\(output)")
        for stream in [1, 3, 5, 7, 9, 11] {
            let refused = output.resets["\(stream)"] != nil || (400..<500).contains(output.statuses["\(stream)"] ?? 0)
            #expect(refused, "stream \(stream): \(output)")
        }
        // What the origin parsed: the good request and this question, and perhaps the head of the
        // first POST (its content-length 0 is a whole request: streamed before its DATA arrived and
        // was refused), never what its body tried to smuggle.
        let received = try proxy.curl([origin.url("/requests")]).stdout.split(separator: "\n").map(String.init)
        #expect(received.filter { $0 != "POST /s1 HTTP/1.1" } == ["GET /cl?n=2 HTTP/1.1", "GET /requests HTTP/1.1"],
                "\(received)")
        // Each refused stream is a flow that says why, the ones refused at their head included.
        let refused = proxy.flows(count: 8).filter { $0.error?.kind == FlowErrorKind.http2ProtocolError.rawValue }
        #expect(refused.compactMap { $0.h2?.streamID }.sorted() == [1, 3, 5, 7, 9, 11], "\(refused.map(\.error))")
        // (Stream 1's head may have been answered by the origin before its body was refused.)
        #expect(refused.allSatisfy { $0.error?.by == "client" && $0.error?.code == "PROTOCOL_ERROR"
                    && ($0.response == nil || $0.h2?.streamID == 1) })
        #expect(refused.first { $0.h2?.streamID == 5 }?.error?.message.contains("invalid header field 'x-a'") == true)
        #expect(refused.first { $0.h2?.streamID == 1 }?.error?.message.contains("content-length") == true)
    }

    @Test func hpackBombIsAnswered431AndTheConnectionGoesOn() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let proxy = try Self.proxy(for: origin)
        let result = try H2Attack.run(proxy: proxy, port: origin.port, ["hpack-bomb", "2000", "/index.html"])
        #expect((result.bomb_block_bytes ?? 0) < 8192)
        #expect(result.statuses["1"] == 431, "\(result)")
        #expect(result.statuses["3"] == 200)
        #expect(result.bytes["3"] == "hello from nghttpd\n".utf8.count)
        #expect(result.goaway == nil)
        try Self.expectServing(proxy, origin)
    }

    /// A request cancelled in the write that sent it (HEADERS and RST_STREAM together, as a
    /// browser drops one) is withdrawn upstream once: its second RST_STREAM went to the origin for
    /// a stream whose HEADERS were never sent, nghttpd answered GOAWAY PROTOCOL_ERROR ("RST_STREAM:
    /// stream in idle"), and a 4 MiB download on the same origin connection died with it.
    @Test(.backstop) func aRequestCancelledAtOnceLeavesTheOthersAlone() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let size = 4 << 20
        try origin.serve("big.bin", [UInt8](repeating: 0x5A, count: size))
        let proxy = try Self.proxy(for: origin)
        let result = try H2Attack.run(proxy: proxy, port: origin.port, ["cancel-at-once", "/big.bin", "\(size)"])
        #expect(result.bytes["1"] == size && result.resets["1"] == nil && result.goaway == nil, "\(result)")
        let flows = proxy.flows(count: 2)
        let download = flows.first { $0.h2?.streamID == 1 }
        #expect(download?.error == nil && download?.response?.status == 200, "\(String(describing: download))")
        #expect(flows.first { $0.h2?.streamID == 3 }?.error?.kind == "client_reset")
        try Self.expectServing(proxy, origin)
    }

    /// A client whose DATA runs past the stream window DevProxy granted has its stream reset with
    /// FLOW_CONTROL_ERROR, and the flow says why: it had a request and neither a response nor an
    /// error.
    @Test func aWindowOverrunIsRecordedWithItsReason() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let proxy = try Self.proxy(for: origin)
        let result = try H2Attack.run(proxy: proxy, port: origin.port, ["window-overrun", "/index.html"])
        #expect(result.resets["1"] == 0x3, "\(result)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "http2_protocol_error" && flow.error?.code == "FLOW_CONTROL_ERROR", "\(String(describing: flow.error))")
        #expect(flow.error?.message.hasPrefix("the client sent more DATA than the stream's flow-control window allowed") == true)
        try Self.expectServing(proxy, origin)
    }

    /// A client that ends its connection with GOAWAY and an error says why in the flows of the
    /// streams it cut: its code and debug text appeared nowhere.
    @Test func aClientsGoAwayReasonIsInTheFlowsItEnds() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("big.bin", [UInt8](repeating: 0x5A, count: 1 << 20))
        let proxy = try Self.proxy(for: origin)
        _ = try H2Attack.run(proxy: proxy, port: origin.port, ["goaway-error", "/big.bin"])
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
        #expect(flow.error?.message.hasSuffix("(the client's GOAWAY: PROTOCOL_ERROR \"bad frame from proxy\")") == true,
                "\(flow.error?.message ?? "")")
        try Self.expectServing(proxy, origin)
    }

    /// `:authority` with user information (`user@host`), which RFC 9113 §8.3.1 forbids, is
    /// answered 400 with the reason; it was forwarded to the origin as it came.
    @Test func anAuthorityWithUserInfoIsRefused() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let proxy = try Self.proxy(for: origin)
        let result = try H2Attack.run(proxy: proxy, port: origin.port, ["userinfo", "/index.html"])
        #expect(result.statuses["1"] == 400, "\(result)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "bad_request" && flow.error?.message.contains("RFC 9113 §8.3.1") == true,
                "\(String(describing: flow.error))")
        try Self.expectServing(proxy, origin)
    }

    /// The largest stream id a client may use (2^31-1) is served; a stream id going back after it
    /// is ignored (libnghttp2 cannot tell it from a stale frame), never served as a new request.
    @Test func largestStreamIDIsServedAndGoingBackIsNot() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let proxy = try Self.proxy(for: origin)
        let result = try H2Attack.run(proxy: proxy, port: origin.port, ["stream-ids", "/index.html"])
        #expect(result.statuses == ["2147483647": 200], "\(result)")
        let flows = proxy.flows(count: 1)
        #expect(flows.count == 1)
        #expect(flows.first?.h2?.streamID == 2_147_483_647)
        try Self.expectServing(proxy, origin)
    }

    /// A client that never reads: 60 streams of a 10 MiB body on one connection, a zero stream
    /// window advertised and none granted, held for two seconds. DevProxy (a child process, so its
    /// own RSS is measured) holds at most a stream window per stream; a new stream on the same
    /// connection that grants its own window is answered at once (the stalled streams do not eat
    /// the connection's window upstream), and so is another client.
    @Test(.backstop) func clientThatNeverReadsKeepsMemoryBoundedAndOthersServed() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("big.bin", [UInt8](repeating: 0x5A, count: 10 << 20))
        let directory = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", directory.file("ca"), "--upstream-ca", origin.caPath, "--quiet"])
        let root = directory.file("ca/root.pem")
        let before = proxy.peakResidentBytes
        let stalled = Mutex<H2Attack.Output?>(nil)
        let failure = Mutex<String?>(nil)
        let (proxyPort, originPort) = (proxy.port, origin.port)
        let attacker = Thread {
            do {
                let output = try H2Attack.run(proxyPort: proxyPort, root: root, port: originPort,
                                              ["stall", "60", "/big.bin", "/index.html", "2"])
                stalled.withLock { $0 = output }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        attacker.start()
        // While the streams are stalled: another client on its own connection.
        usleep(1_500_000)
        let other = try Subprocess.run("curl", ["-sS", "--http2", "--proxy", "http://127.0.0.1:\(proxyPort)", "--cacert", root,
                                                "--max-time", "5", "-w", " %{time_total}", origin.url("/index.html")],
                                       timeout: 10)
        #expect(other.status == 0, "\(other.output)")
        #expect(other.stdout.hasPrefix("hello from nghttpd"))
        let deadline = Date().addingTimeInterval(40)
        while stalled.withLock({ $0 }) == nil && failure.withLock({ $0 }) == nil && Date() < deadline { usleep(20_000) }
        let result = try #require(stalled.withLock { $0 }, "\(failure.withLock { $0 } ?? "timed out")")
        #expect(result.statuses.count == 61, "every stalled stream got its head, and the small one: \(result)")
        #expect(result.bytes.keys.sorted() == ["121"], "no body byte of a stalled stream arrived: \(result.bytes)")
        #expect(result.bytes["121"] == "hello from nghttpd\n".utf8.count)
        #expect((result.small_seconds ?? 99) < 1.5, "\(result)")
        #expect(result.goaway == nil)
        let grown = proxy.peakResidentBytes - before
        // Per stalled stream DevProxy holds what one 256 KiB stream window let through, twice: queued
        // for the client and kept for the flow record (up to --body-limit): 60 × 512 KiB is 30 MiB,
        // plus the session store and web UI that run by default. 600 MiB were on their way.
        #expect(grown < 64 << 20, "peak RSS grew by \(grown >> 20) MiB")
        _ = proxy.stop()
    }

    private static func proxy(for origin: HTTP2Origin) throws -> ProxyHarness {
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        return try ProxyHarness(configure: { $0.upstreamCAs = cas })
    }

    /// A fresh client on a fresh connection still gets its page.
    private static func expectServing(_ proxy: ProxyHarness, _ origin: HTTP2Origin,
                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let after = try proxy.curl(["--http2", "-w", " %{http_version}", origin.url("/index.html")])
        #expect(after.stdout == "hello from nghttpd\n 2", "\(after.output)", sourceLocation: sourceLocation)
    }
}

/// The scripted hostile client (`Resources/h2attack.py`) through a proxy.
enum H2Attack {
    struct Output: Decodable, CustomStringConvertible {
        var goaway: Int?
        var last_stream_id: Int?
        var statuses: [String: Int]
        var resets: [String: Int]
        var bytes: [String: Int]
        var closed: Bool
        var bomb_block_bytes: Int?
        var small_seconds: Double?
        var description: String {
            "goaway \(goaway.map(String.init) ?? "none"), statuses \(statuses), resets \(resets), closed \(closed)"
        }
    }

    static func run(proxy: ProxyHarness, port: Int, _ arguments: [String]) throws -> Output {
        try run(proxyPort: proxy.port, root: proxy.pki.rootPath, port: port, arguments)
    }

    static func run(proxyPort: Int, root: String, port: Int, _ arguments: [String]) throws -> Output {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestSupport/Resources/h2attack.py").path
        let result = try Subprocess.run("python3", [script, "\(proxyPort)", root, "localhost", "\(port)"] + arguments,
                                        timeout: 40)
        guard let output = try? JSONDecoder().decode(Output.self, from: Data(result.stdout.utf8)) else {
            throw TestFailure("h2attack.py \(arguments.joined(separator: " ")) failed: \(result.output)")
        }
        return output
    }
}
