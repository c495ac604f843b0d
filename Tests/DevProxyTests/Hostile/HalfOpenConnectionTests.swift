@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Clients that open a tunnel and never get as far as a request cannot hold every slot: at the
/// connection limit the one that has waited longest gives its place to a newcomer, as one
/// trickling its request head does (`ClientFaultTests`), and its flow says why. Before, three such
/// clients at `maxConnections = 3` (1,024 by default) had every other client refused with 503 for
/// as long as they stayed: a CONNECT and then silence was tunnelled for good, half a ClientHello
/// held the slot for the header timeout, a stalled handshake for as long as the client wished.
@Suite(.serialized) struct HalfOpenConnectionTests {
    /// What each holder sends after its CONNECT, how long they hold before the newcomer comes, and
    /// what the flow of the one that made room says it had waited for.
    struct Case: CustomStringConvertible, Sendable {
        let name: String
        let afterConnect: Phase
        /// The proxy's header timeout: a short one turns a silent CONNECT into a quiet tunnel.
        let headerTimeout: TimeInterval
        let hold: TimeInterval
        let waitedFor: String
        var description: String { name }
    }

    enum Phase: Sendable {
        case nothing, halfAClientHello, aClientHello
    }

    static let cases: [Case] = [
        Case(name: "CONNECT, then silence past the header timeout (a quiet tunnel)", afterConnect: .nothing,
             headerTimeout: 1, hold: 2.5, waitedFor: "either side of its tunnel to speak"),
        Case(name: "CONNECT, then half a ClientHello", afterConnect: .halfAClientHello,
             headerTimeout: 30, hold: 0.5, waitedFor: "the client's ClientHello and TLS handshake"),
        Case(name: "CONNECT, a ClientHello, then no more of the handshake", afterConnect: .aClientHello,
             headerTimeout: 30, hold: 1, waitedFor: "the client's ClientHello and TLS handshake"),
    ]

    @Test(.backstop, arguments: cases)
    func aNewcomerIsServedWhenEverySlotIsHeldBeforeARequest(_ test: Case) throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let quiet = try ScriptedOrigin("", then: .hold(20), waitForHead: true)
        let proxy = try ProxyHarness(configure: {
            $0.maxConnections = 3
            $0.headerTimeout = test.headerTimeout
            // The handshake is the client's alone: the origin is dialled at the first request.
            $0.eagerUpstream = false
        })
        let hello = try Self.clientHello(for: "localhost")
        let holders = try (0..<3).map { _ in try RawClient.plain(port: proxy.port) }
        for holder in holders {
            holder.send("CONNECT localhost:\(quiet.port) HTTP/1.1\r\nHost: localhost:\(quiet.port)\r\n\r\n")
            switch test.afterConnect {
            case .nothing: break
            case .halfAClientHello: holder.send(Array(hello.prefix(hello.count / 2)))
            case .aClientHello: holder.send(hello)
            }
            usleep(50_000)
        }
        usleep(UInt32(test.hold * 1_000_000))
        let result = try proxy.curl(["-w", " %{http_code}", "http://127.0.0.1:\(origin.port)/"])
        #expect(result.stdout == "ok 200", "\(result.output)")
        let flow = try #require(proxy.flows(count: 2).first { $0.error?.kind == "overloaded" },
                                "\(proxy.sink.flows.map(\.error))")
        #expect(flow.error?.message == "DevProxy closed the connection to make room at its 3 connections: it had waited "
                + "longest for \(test.waitedFor)", "\(String(describing: flow.error))")
        // The oldest holder made room; the others are still served.
        #expect(holders[0].readToEnd(timeout: 2).closed)
        withExtendedLifetime(holders) {}
    }

    /// SOCKS5 clients that sent half a greeting (or nothing) hold no slot either: they locked the
    /// HTTP listener out with 503 too, the limit being the proxy's, for the header timeout.
    @Test(.backstop) func socks5ClientsMidHandshakeMakeRoom() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let socksPort = try HTTP2Origin.freePort()
        let proxy = try ProxyHarness(configure: {
            $0.maxConnections = 3
            $0.modes = [ListenerMode(kind: .regular), ListenerMode(kind: .socks5, host: "127.0.0.1", port: socksPort)]
        })
        // One after the other: each waits from when its connection was accepted.
        let holders = try (0..<3).map { _ in
            let holder = try RawClient.plain(port: socksPort)
            holder.send([0x05, 0x02])
            usleep(50_000)
            return holder
        }
        usleep(300_000)
        let result = try proxy.curl(["-w", " %{http_code}", "http://127.0.0.1:\(origin.port)/"])
        #expect(result.stdout == "ok 200", "\(result.output)")
        let flow = try #require(proxy.flows(count: 2).first { $0.error?.kind == "overloaded" },
                                "\(proxy.sink.flows.map(\.error))")
        #expect(flow.error?.message == "DevProxy closed the connection to make room at its 3 connections: it had waited "
                + "longest for its SOCKS5 handshake", "\(String(describing: flow.error))")
        #expect(holders.map { $0.readToEnd(timeout: 1).closed } == [true, false, false])
    }

    /// A client that sends half its ClientHello after the tunnel opened, then hangs up, is recorded
    /// at once. The proxy peeked at the socket every 2 ms until the rest came: the peek saw the
    /// same bytes whether or not the client was still there, so it noticed the hang-up only at the
    /// header timeout, and 1,000 such clients kept two cores busy until then.
    @Test(.backstop) func aClientThatHangsUpMidClientHelloIsRecordedAtOnce() throws {
        let quiet = try ScriptedOrigin("", then: .hold(5), waitForHead: true)
        let proxy = try ProxyHarness()
        let hello = try Self.clientHello(for: "localhost")
        let client = try RawClient.plain(port: proxy.port)
        client.send("CONNECT localhost:\(quiet.port) HTTP/1.1\r\nHost: localhost:\(quiet.port)\r\n\r\n")
        usleep(200_000)
        client.send(Array(hello.prefix(hello.count / 2)))
        usleep(200_000)
        let closed = Date()
        client.stream.close()
        let flow = try #require(proxy.flows(count: 1, timeout: 5).first, "no flow 5 s after the client hung up")
        #expect(Date().timeIntervalSince(closed) < 5)
        #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
        #expect(flow.error?.message.contains("before its ClientHello was complete") == true, "\(String(describing: flow.error))")
    }

    /// The ClientHello a Python TLS client sends for `host`, as bytes.
    static func clientHello(for host: String) throws -> [UInt8] {
        let script = """
        import ssl
        o, i = ssl.MemoryBIO(), ssl.MemoryBIO()
        t = ssl.create_default_context().wrap_bio(i, o, server_hostname="\(host)")
        try: t.do_handshake()
        except ssl.SSLWantReadError: pass
        print(o.read().hex())
        """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 20)
        let hex = Array(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard result.status == 0, hex.count > 100 else { throw TestFailureMessage("no ClientHello: \(result.output)") }
        return stride(from: 0, to: hex.count - 1, by: 2).map { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }
}
