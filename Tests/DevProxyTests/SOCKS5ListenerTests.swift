import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// A `socks5` listener beside the regular one, with curl as the SOCKS5 client: the tunnel gets
/// what a CONNECT gets (interception with the team leaf), and flows name the listener.
@Suite struct SOCKS5ListenerTests {
    /// A proxy with a regular listener on port 0 and a SOCKS5 one on another free port.
    private func proxy(origin: OriginServer, credentials: [ProxyCredential] = []) throws -> (ProxyHarness, Int) {
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let socksPort = try HTTP2Origin.freePort()
        let harness = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.proxyCredentials = credentials
            $0.modes = [ListenerMode(kind: .regular), ListenerMode(kind: .socks5, host: "127.0.0.1", port: socksPort)]
        })
        return (harness, socksPort)
    }

    private func curl(_ harness: ProxyHarness, _ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run("curl", ["-sS", "--cacert", harness.pki.rootPath, "--max-time", "20"] + arguments, timeout: 30)
    }

    /// `--socks5-hostname` (the name travels in the request) and `--socks5` (curl resolves the
    /// name and sends 127.0.0.1) both reach the origin through interception. With an address,
    /// the origin is dialled there and verified as the host the ClientHello names (its
    /// certificate names only `localhost`), and each flow records the SOCKS5 listener.
    @Test(arguments: ["--socks5-hostname", "--socks5"])
    func curlThroughSOCKS5IsIntercepted(_ flag: String) throws {
        let origin = try OriginServer()
        let (harness, socksPort) = try proxy(origin: origin)
        let result = try curl(harness, [flag, "127.0.0.1:\(socksPort)", origin.url("/cl?n=5")])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout == "hello")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.listener?.mode == "socks5")
        #expect(flow.listener?.address == "127.0.0.1:\(socksPort)")
        #expect(flow.mode == .https)
        #expect(flow.server.host == "localhost")
        #expect(flow.tls?.upstream?.verified == true)
        #expect(flow.signer?.email == "ana@acme.dev")
        #expect(harness.server.boundListeners.map(\.kind) == [.regular, .socks5])
    }

    /// A client that sends its ClientHello with its CONNECT or SOCKS5 request, before the reply
    /// (optimistic data), whole or split: the bytes read with the request never reached TLS
    /// (the whole case hung), and a split one was closed at once as "no complete ClientHello".
    @Test(.backstop) func aClientHelloSentWithTheRequestIsIntercepted() throws {
        let origin = try OriginServer()
        let (harness, socksPort) = try proxy(origin: origin)
        let script = #"""
            import socket, ssl, struct, sys, time
            port, root, target, kind, split = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
            context = ssl.create_default_context(cafile=root)
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            hello = outgoing.read()
            if kind == "connect":
                request = b"CONNECT localhost:%d HTTP/1.1\r\nHost: localhost:%d\r\n\r\n" % (target, target)
            else:
                request = b"\x05\x01\x00" + b"\x05\x01\x00\x03" + bytes([9]) + b"localhost" + struct.pack(">H", target)
            sock = socket.create_connection(("127.0.0.1", port))
            sock.settimeout(8)
            cut = len(hello) if split == "whole" else 50
            sock.sendall(request + hello[:cut])
            time.sleep(0.3)
            sock.sendall(hello[cut:])
            reply = b""
            wanted = (lambda r: b"\r\n\r\n" in r) if kind == "connect" else (lambda r: len(r) >= 12)
            while not wanted(reply):
                reply += sock.recv(1)
            while True:
                try:
                    tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    data = sock.recv(65536)
                    if not data:
                        print("EOF during the handshake")
                        sys.exit(1)
                    incoming.write(data)
                sock.sendall(outgoing.read())
            tls.write(b"GET /cl?n=5 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            sock.sendall(outgoing.read())
            answer = b""
            while b"hello" not in answer:
                try:
                    answer += tls.read(65536)
                except ssl.SSLWantReadError:
                    data = sock.recv(65536)
                    if not data:
                        break
                    incoming.write(data)
            print("ok" if b"hello" in answer else "no answer: %r" % answer)
            """#
        for (kind, port) in [("connect", harness.port), ("socks5", socksPort)] {
            for split in ["whole", "split"] {
                let result = try Subprocess.run("python3", ["-c", script, "\(port)", harness.pki.rootPath, "\(origin.port)",
                                                            kind, split], timeout: 20)
                #expect(result.stdout == "ok\n", "\(kind) \(split): \(result.output)")
            }
        }
    }

    /// A protocol where the server speaks first (SSH's banner) through CONNECT or SOCKS5: the
    /// client waits for the banner and sends nothing, which DevProxy, waiting for a ClientHello,
    /// waited out for the header timeout before closing with nothing delivered. Now it dials the
    /// origin after half a second of silence and tunnels when the origin speaks first.
    @Test(.backstop) func aServerThatSpeaksFirstIsTunnelled() throws {
        let banner = try BackgroundServer(script: #"""
            import socket, threading
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(8)
            print(server.getsockname()[1], flush=True)
            def serve(conn):
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
                while True:
                    data = conn.recv(4096)
                    if not data:
                        break
                    conn.sendall(data.upper())
                conn.close()
            while True:
                conn, _ = server.accept()
                threading.Thread(target=serve, args=(conn,), daemon=True).start()
            """#, arguments: [])
        defer { banner.stop() }
        let (harness, socksPort) = try proxy(origin: try OriginServer())
        let client = #"""
            import socket, struct, sys, time
            port, target, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            sock = socket.create_connection(("127.0.0.1", port))
            sock.settimeout(5)
            if kind == "connect":
                sock.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (target, target))
                reply = b""
                while b"\r\n\r\n" not in reply:
                    reply += sock.recv(1)
            else:
                sock.sendall(b"\x05\x01\x00")
                sock.recv(2)
                sock.sendall(b"\x05\x01\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack(">H", target))
                sock.recv(10)
            started = time.time()
            line = b""
            while not line.endswith(b"\n"):
                line += sock.recv(1)
            waited = time.time() - started
            sock.sendall(b"hello\n")
            echo = sock.recv(64)
            print("%s %s %.1f" % (line.strip().decode(), echo.strip().decode(), waited))
            """#
        for (kind, port) in [("connect", harness.port), ("socks5", socksPort)] {
            let result = try Subprocess.run("python3", ["-c", client, "\(port)", "\(banner.port)", kind], timeout: 20)
            let words = result.stdout.split(separator: " ")
            #expect(words.prefix(2) == ["SSH-2.0-OpenSSH_9.2", "HELLO"], "\(kind): \(result.output)")
            #expect((Double(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99) < 3, "\(kind): \(result.output)")
        }
        let flows = harness.flows(count: 2)
        #expect(flows.allSatisfy { $0.mode == .tunnel && $0.tunnel?.reason.hasPrefix("the server spoke first") == true
                                   && $0.error == nil }, "\(flows.map { $0.tunnel?.reason ?? $0.error?.message ?? "-" })")
    }

    /// A silent client of a tunnel to a port nobody listens on is told at once (the flow says
    /// `upstream_refused`), not after the header timeout as "no complete ClientHello".
    @Test(.backstop) func aSilentClientOfAnUnreachableOriginIsToldSoon() throws {
        let (harness, _) = try proxy(origin: try OriginServer())
        let closed = try HTTP2Origin.freePort()
        let client = #"""
            import socket, sys, time
            sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            sock.settimeout(20)
            sock.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (sys.argv[2].encode(), sys.argv[2].encode()))
            started = time.time()
            while sock.recv(4096):
                pass
            print("%.1f" % (time.time() - started))
            """#
        let result = try Subprocess.run("python3", ["-c", client, "\(harness.port)", "\(closed)"], timeout: 30)
        #expect((Double(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99) < 5, "\(result.output)")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_refused", "\(String(describing: flow.error))")
    }

    /// A client that hangs up right after its CONNECT is answered is recorded as having closed,
    /// not as "no complete ClientHello within 30 s" (it was never waited for that long).
    @Test func aClientThatClosesAfterConnectIsRecordedAsClosed() throws {
        let origin = try OriginServer()
        let (harness, _) = try proxy(origin: origin)
        let client = #"""
            import socket, sys
            sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            sock.sendall(b"CONNECT localhost:%s HTTP/1.1\r\nHost: localhost\r\n\r\n" % sys.argv[2].encode())
            reply = b""
            while b"\r\n\r\n" not in reply:
                reply += sock.recv(1)
            sock.close()
            """#
        let result = try Subprocess.run("python3", ["-c", client, "\(harness.port)", "\(origin.port)"], timeout: 20)
        #expect(result.status == 0, "\(result.output)")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
        #expect(flow.error?.message == "the client closed the connection after the tunnel opened, having sent nothing")
    }

    /// Plain HTTP in a tunnel keeps the `Host` the client sent (a virtual host behind the address
    /// the tunnel names): DevProxy replaced it with the tunnel's `localhost:PORT`, or appended the
    /// tunnel's port to it, and name-based hosting broke only through the proxy.
    @Test func plainHTTPInATunnelKeepsItsHost() throws {
        let origin = try OriginServer(tls: false)
        let (harness, socksPort) = try proxy(origin: try OriginServer())
        let url = "http://localhost:\(origin.port)/headers"
        for (flags, name) in [(["--socks5-hostname", "127.0.0.1:\(socksPort)"], "site.example"),
                              (["--socks5", "127.0.0.1:\(socksPort)"], "other.example"),
                              (["--proxy", "http://127.0.0.1:\(harness.port)", "--proxytunnel"], "third.example")] {
            let result = try curl(harness, flags + ["-H", "Host: \(name)", url])
            #expect(result.stdout.lowercased().split(separator: "\n").contains("host: \(name)"), "\(flags): \(result.output)")
            #expect(!result.stdout.contains(":\(origin.port)"), "\(flags): \(result.output)")
        }
        let flows = harness.flows(count: 3)
        // The URL names the virtual host at the port the request went to (as mitmproxy's pretty URL
        // does): replay and curl export went to port 80.
        let port = origin.port
        #expect(Set(flows.compactMap(\.request?.url)) == ["http://site.example:\(port)/headers", "http://other.example:\(port)/headers",
                                                          "http://third.example:\(port)/headers"], "\(flows.map { $0.request?.url ?? "-" })")
        #expect(flows.allSatisfy { $0.server.port == origin.port && $0.response?.status == 200 })
    }

    /// An HTTP client pointed at the SOCKS5 port gets an HTTP 400 that says where to go, and the
    /// flow says so: it got an empty reply, and the flow "the greeting is version 71".
    @Test func anHTTPClientOnTheSOCKS5PortIsToldWhereToGo() throws {
        let origin = try OriginServer()
        let (harness, socksPort) = try proxy(origin: origin)
        let result = try curl(harness, ["--proxy", "http://127.0.0.1:\(socksPort)", "-w", "\n%{http_code}", "http://127.0.0.1:1/x"])
        let message = "an HTTP client on the SOCKS5 port: set it to use socks5h://127.0.0.1:\(socksPort) as a SOCKS proxy, "
            + "or the proxy's HTTP port as an HTTP proxy"
        #expect(result.stdout == "400 Bad Request: \(message)\n\n400", "\(result.output)")
        let flow = try #require(harness.flows(count: 1).first)
        #expect(flow.error?.kind == "bad_request" && flow.error?.message == message, "\(String(describing: flow.error))")
        #expect(flow.listener?.mode == "socks5")
        // For an https URL curl sends CONNECT, and reports the 400.
        let tunnel = try curl(harness, ["--proxy", "http://127.0.0.1:\(socksPort)", origin.url("/cl?n=5")])
        #expect(tunnel.status != 0 && tunnel.stderr.contains("400"), "\(tunnel.output)")
    }

    /// With `--proxy-auth`, SOCKS5 asks for RFC 1929 username/password: the right pair passes,
    /// a wrong one is refused and recorded.
    @Test func credentialsAreRequiredWhenProxyAuthIsSet() throws {
        let origin = try OriginServer()
        let (harness, socksPort) = try proxy(origin: origin, credentials: [ProxyCredential(user: "qa", password: "s3cret")])
        let good = try curl(harness, ["--socks5-hostname", "qa:s3cret@127.0.0.1:\(socksPort)", origin.url("/cl?n=5")])
        #expect(good.stdout == "hello", "\(good.output)")
        let bad = try curl(harness, ["--socks5-hostname", "qa:wrong@127.0.0.1:\(socksPort)", origin.url("/cl?n=5")])
        #expect(bad.status != 0)
        // No credentials at all (only "no authentication" offered) is a missing credential too,
        // not a malformed request.
        let none = try curl(harness, ["--socks5-hostname", "127.0.0.1:\(socksPort)", origin.url("/cl?n=5")])
        #expect(none.status != 0)
        let flows = harness.flows(count: 3)
        #expect(flows.filter { $0.error?.kind == FlowErrorKind.proxyAuthRequired.rawValue && $0.listener?.mode == "socks5" }
                    .count == 2, "\(flows.map(\.error))")
    }

    /// `Proxy-Authorization: Basic` followed by several spaces is credentials (RFC 9110 §11.4:
    /// one or more), not "must be Basic credentials"; a CONNECT that declares a body is a 400 (its
    /// bytes would be body to one reader and tunnel to another).
    @Test func authorizationSpacingAndAConnectWithABody() throws {
        let origin = try OriginServer()
        let (harness, _) = try proxy(origin: origin, credentials: [ProxyCredential(user: "qa", password: "s3cret")])
        let token = Data("qa:s3cret".utf8).base64EncodedString()
        let spaced = try curl(harness, ["--proxy", "http://127.0.0.1:\(harness.port)", "--proxy-header",
                                        "Proxy-Authorization: Basic   \(token)", origin.url("/cl?n=5")])
        #expect(spaced.stdout == "hello", "\(spaced.output)")
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(harness.port)))
            s.sendall(b"CONNECT localhost:\(origin.port) HTTP/1.1\\r\\nHost: localhost\\r\\nProxy-Authorization: Basic \(token)\\r\\nContent-Length: 5\\r\\n\\r\\nhello")
            sys.stdout.write(s.recv(64).decode().split("\\r\\n")[0])
            """
        let smuggled = try Subprocess.run("python3", ["-c", script], timeout: 20)
        #expect(smuggled.stdout == "HTTP/1.1 400 Bad Request", "\(smuggled.output)")
    }

    /// A greeting that offers no method the server accepts gets X'FF' (RFC 1928 §3) and a flow;
    /// BIND is refused with reply X'07' (command not supported).
    @Test func malformedGreetingsAndBindGetTheirReplyCodes() throws {
        let origin = try OriginServer()
        let (harness, socksPort) = try proxy(origin: origin)
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(socksPort)))
            s.sendall(bytes([5, 1, 0x80]))          # only a private method
            sys.stdout.write(s.recv(16).hex() + " ")
            s = socket.create_connection(("127.0.0.1", \(socksPort)))
            s.sendall(bytes([5, 1, 0]))
            s.recv(2)
            s.sendall(bytes([5, 2, 0, 1, 127, 0, 0, 1, 0, 80]))   # BIND
            sys.stdout.write(s.recv(16).hex()[:4])
            """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 20)
        #expect(result.stdout == "05ff 0507", "\(result.output)")
        let flows = harness.flows(count: 2)
        #expect(flows.count == 2)
        #expect(flows.allSatisfy { $0.error?.kind == FlowErrorKind.badRequest.rawValue && $0.error?.message.hasPrefix("SOCKS5:") == true })
    }

    /// A SOCKS4 client on the SOCKS5 listener gets SOCKS4's refusal (`00 5B`), not a close with
    /// no reply; a CONNECT to port 0 is refused, not answered 200; a name with its final dot
    /// (`localhost.`) is verified as the name (it failed "hostname mismatch").
    @Test func socks4PortZeroAndATrailingDotAreAnswered() throws {
        let origin = try OriginServer()
        let (harness, socksPort) = try proxy(origin: origin)
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(socksPort)))
            s.sendall(bytes([4, 1, 0, 80, 127, 0, 0, 1]) + b"me\\0")
            sys.stdout.write(s.recv(16).hex())
            """
        let socks4 = try Subprocess.run("python3", ["-c", script], timeout: 20)
        #expect(socks4.stdout == "005b000000000000", "\(socks4.output)")
        let zero = try curl(harness, ["-p", "--proxy", "http://127.0.0.1:\(harness.port)", "-w", "%{http_connect}",
                                      "https://127.0.0.1:0/"])
        #expect(zero.stdout.hasSuffix("400"), "\(zero.output)")
        let dotted = try curl(harness, ["--proxy", "http://127.0.0.1:\(harness.port)", "https://localhost.:\(origin.port)/cl?n=5"])
        #expect(dotted.stdout == "hello", "\(dotted.output)")
        let flows = harness.flows(count: 3)
        #expect(flows.contains { $0.error?.message.contains("SOCKS4 client") == true })
        #expect(flows.contains { $0.error?.message == "CONNECT to port 0: a port is 1 to 65535" })
        #expect(flows.contains { $0.response?.status == 200 && $0.tls?.upstream?.verified == true }, "\(flows.map(\.error))")
    }
}
