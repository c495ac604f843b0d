import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Slow and broken clients: a trickling client loses its thread and slot at the header
/// timeout, the connection limit answers 503, and clients that vanish mid-handshake,
/// mid-body or mid-response end with a recorded flow while the proxy goes on.
@Suite(.serialized) struct ClientFaultTests {
    /// A client sending its head one byte at a time gets 408 at the header timeout.
    @Test func tricklingClientGets408AtTheHeaderTimeout() throws {
        let proxy = try ProxyHarness(configure: { $0.headerTimeout = 1; $0.idleTimeout = 1 })
        let client = try RawClient.plain(port: proxy.port)
        let start = Date()
        let request = Array("GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n".utf8)
        for byte in request.prefix(12) {
            client.send([byte])
            usleep(200_000)
        }
        let answer = RawAnswer(client.readToEnd(timeout: 5))
        #expect(answer.status == 408, "\(answer.text)")
        #expect(answer.body.contains("request head not received within 1 s"))
        #expect(answer.closed)
        #expect(Date().timeIntervalSince(start) < 4)
        expectOwnAnswer(proxy.flows(count: 1).first, status: 408, kind: "client_timeout",
                        detail: "request head not received within 1 s")
    }

    /// A connection that never sends a byte is closed at the header timeout, and an idle
    /// keep-alive connection at the idle timeout; neither leaves a flow.
    @Test func silentAndIdleConnectionsAreClosed() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", then: .hold(5))
        let proxy = try ProxyHarness(configure: { $0.headerTimeout = 1; $0.idleTimeout = 1 })
        let silent = try RawClient.plain(port: proxy.port)
        let start = Date()
        let nothing = silent.readToEnd(timeout: 5)
        #expect(nothing.closed && nothing.bytes.isEmpty)
        #expect(Date().timeIntervalSince(start) < 3)
        let idle = try RawClient.plain(port: proxy.port)
        idle.send("GET http://127.0.0.1:\(origin.port)/ HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = RawAnswer(idle.readToEnd(timeout: 5))
        #expect(answer.status == 200 && answer.closed, "\(answer.text)")
        #expect(proxy.flows(count: 1).count == 1)
        usleep(300_000)
        #expect(proxy.sink.flows.count == 1, "\(proxy.sink.flows.map(\.error))")
    }

    /// Beyond `maxConnections`, with every connection busy (tunnels here, each with bytes relayed),
    /// a client gets 503 at once; when a slot frees, clients are served again. (A connection still
    /// waiting for its request head gives its place instead: `FramingAttackTests.partialHeadsCannotHoldEverySlot`;
    /// so does one waiting for its ClientHello, or a tunnel where neither side has spoken:
    /// `HalfOpenConnectionTests`.)
    @Test func connectionsBeyondTheLimitGet503() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let quiet = try ScriptedOrigin("", then: .hold(20), waitForHead: true)
        let proxy = try ProxyHarness(configure: { $0.maxConnections = 3; $0.headerTimeout = 1; $0.idleTimeout = 1 })
        var holders = try (0..<3).map { _ in try RawClient.plain(port: proxy.port) }
        for holder in holders {
            holder.send("CONNECT 127.0.0.1:\(quiet.port) HTTP/1.1\r\nHost: 127.0.0.1:\(quiet.port)\r\n\r\n")
            holder.send([0x00, 0x01, 0x02])
        }
        usleep(300_000)
        let extra = try RawClient.plain(port: proxy.port)
        let refused = RawAnswer(extra.readToEnd(timeout: 3))
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.body.contains("maximum of 3 connections"))
        expectOwnAnswer(proxy.flows(count: 1).first, status: 503, kind: "overloaded", detail: "maximum of 3 connections")
        // The tunnels end and free their slots.
        holders.removeAll()
        usleep(500_000)
        let result = try proxy.curl(["http://127.0.0.1:\(origin.port)/"])
        #expect(result.stdout == "ok", "\(result.output)")
    }

    /// 60 clients trickling bytes do not stop a normal client from being served promptly, and
    /// all of them are gone (no proxy-side socket, so no serving thread) once the header timeout has passed.
    @Test func manySlowClientsDoNotStarveANormalOne() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let proxy = try ProxyHarness(configure: { $0.headerTimeout = 1.5; $0.idleTimeout = 1.5 })
        let slow = try (0..<60).map { _ in try RawClient.plain(port: proxy.port) }
        let trickle = Thread {
            for byte in Array("GET http://127.0.0.1:9/ HTTP/1.1\r\n".utf8).prefix(6) {
                slow.forEach { $0.send([byte]) }
                usleep(250_000)
            }
        }
        trickle.start()
        usleep(300_000)
        let start = Date()
        let result = try proxy.curl(["http://127.0.0.1:\(origin.port)/"])
        #expect(result.stdout == "ok", "\(result.output)")
        #expect(Date().timeIntervalSince(start) < 1.5, "a normal client waited \(Date().timeIntervalSince(start)) s")
        for client in slow { #expect(RawAnswer(client.readToEnd(timeout: 6)).status == 408) }
        #expect(proxy.flows(count: 61).filter { $0.error?.kind == "client_timeout" }.count == 60)
        #expect(ProcessProbe.current.settle(connectionsTo: proxy.port, atMost: 0), "the slow clients' sockets (and threads) are still there")
    }

    /// Garbage in a TLS record header instead of a ClientHello, then a close: no hello is ever
    /// complete, the flow says so, and the proxy goes on.
    @Test func garbageInsteadOfAClientHelloIsRecorded() throws {
        let proxy = try ProxyHarness(configure: { $0.headerTimeout = 1 })
        let client = try RawClient.plain(port: proxy.port)
        client.send("CONNECT localhost:1 HTTP/1.1\r\nHost: localhost:1\r\n\r\n")
        client.send([0x16, 0x03, 0x01, 0x40, 0x00, 0xde, 0xad, 0xbe, 0xef])
        let answer = RawAnswer(client.readToEnd(timeout: 5))
        #expect(answer.status == 200 && answer.closed, "\(answer.text)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_handshake_failed", "\(String(describing: flow.error))")
        try expectStillServing(proxy)
    }

    /// A client set to use the proxy as `https://` (curl `--proxy https://…`, an HTTPS_PROXY
    /// written with https) starts TLS on the plain-HTTP port: the flow and the console say so and
    /// what to use instead (the flow said "request line ends in a bare LF without CR", the console
    /// "CONNECT :0"), and the proxy goes on.
    @Test func tlsToThePlainProxyPortSaysWhatToUse() throws {
        let proxy = try ProxyHarness()
        let result = try Subprocess.run("curl", ["-sS", "--proxy", "https://127.0.0.1:\(proxy.port)", "--proxy-insecure",
                                                 "--max-time", "10", "https://localhost:1/"], timeout: 20)
        #expect(result.status != 0, "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        let address = "127.0.0.1:\(proxy.port)"
        #expect(flow.error?.kind == "bad_request")
        #expect(flow.error?.message == "the client began a TLS handshake on the proxy's plain-HTTP port: it is set to use "
                + "https://\(address) as its proxy; use http://\(address) (HTTPS goes through the proxy with CONNECT, "
                + "and is still intercepted)", "\(String(describing: flow.error))")
        let line = ConsoleFlowPrinter.line(for: flow)
        #expect(line.contains("✗ from \(flow.client) bad_request") && line.contains("use http://\(address)"), "\(line)")
        try expectStillServing(proxy)
    }

    /// A SOCKS client on the HTTP port (curl `--socks5`, `--socks4`) is refused in SOCKS's own
    /// terms at once, and the flow says what to use: it waited the header timeout (30 s) for a
    /// request line, then got an HTTP 408 curl read as "invalid version in initial SOCKS5
    /// response".
    @Test(arguments: [("--socks5", 5), ("--socks4", 4)])
    func aSOCKSClientOnTheHTTPPortIsRefusedAtOnce(_ flag: String, _ version: Int) throws {
        let proxy = try ProxyHarness()
        let start = Date()
        let result = try Subprocess.run("curl", ["-sS", flag, "127.0.0.1:\(proxy.port)", "--max-time", "10",
                                                 "http://127.0.0.1:1/"], timeout: 20)
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.status != 0 && elapsed < 5, "\(elapsed) s: \(result.output)")
        #expect(!result.stderr.contains("timed out") && !result.stderr.contains("invalid version"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "bad_request")
        #expect(flow.error?.message == "the client spoke SOCKS\(version) to the proxy's HTTP port: set it to use "
                + "http://127.0.0.1:\(proxy.port) as an HTTP proxy, or run a SOCKS5 listener (--mode socks5@HOST:PORT) "
                + "and point it there", "\(String(describing: flow.error))")
        #expect(flow.response == nil)
        try expectStillServing(proxy)
    }

    /// A client that sends its ClientHello and closes in the middle of the handshake.
    @Test func closeInTheMiddleOfTheHandshakeIsRecorded() throws {
        let proxy = try ProxyHarness()
        let script = """
        import socket, ssl
        s = socket.create_connection(("127.0.0.1", \(proxy.port)))
        s.sendall(b"CONNECT localhost:1 HTTP/1.1\\r\\n\\r\\n")
        s.recv(1024)
        c = ssl.create_default_context()
        o, i = ssl.MemoryBIO(), ssl.MemoryBIO()
        t = c.wrap_bio(i, o, server_hostname="localhost")
        try: t.do_handshake()
        except ssl.SSLWantReadError: pass
        s.sendall(o.read())
        s.close()
        """
        #expect(try Subprocess.run("python3", ["-c", script], timeout: 20).status == 0)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_handshake_failed" || flow.error?.kind == "client_closed",
                "\(String(describing: flow.error))")
        #expect(flow.tls?.client?.sni == "localhost")
        try expectStillServing(proxy)
    }

    /// The client promises 100 bytes, sends 10 and closes: `client_closed`, no 400.
    @Test func closeInTheMiddleOfTheRequestBodyIsRecorded() throws {
        let origin = try ScriptedOrigin("", then: .hold(5))
        let proxy = try ProxyHarness()
        let client = try RawClient.plain(port: proxy.port)
        client.send("POST http://127.0.0.1:\(origin.port)/up HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        usleep(200_000)
        client.stream.socket.shutdownWrite()
        _ = client.readToEnd(timeout: 5)
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
        #expect(flow.error?.message.contains("in the middle of the request body") == true, "\(String(describing: flow.error))")
        try expectStillServing(proxy)
    }

    /// The client reads a little of a large response and hangs up.
    @Test func closeWhileTheResponseStreamsIsRecorded() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        let client = try RawClient.plain(port: proxy.port)
        client.send("GET http://127.0.0.1:\(origin.port)/big?mb=32 HTTP/1.1\r\nHost: x\r\n\r\n")
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = try buffer.withUnsafeMutableBytes { try client.stream.read(into: $0) }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client.stream.socket.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        client.stream.close()
        let flow = try #require(proxy.flows(count: 1, timeout: 15).first)
        #expect(flow.response?.status == 200)
        #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
        #expect(flow.error?.message.contains("while the response streamed") == true)
        try expectStillServing(proxy)
    }
}
