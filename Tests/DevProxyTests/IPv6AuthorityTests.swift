@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// A request to a zoned IPv6 literal (`http://[fe80::1%25eth0]:8080/`, RFC 6874) goes to the
/// origin with a `Host` without the zone: it names an interface of the sending host only (§4).
@Suite struct ZoneHostTests {
    @Test("Host from http://[fe80::1%25eth0]:8080/ is [fe80::1]:8080; the URL keeps the zone")
    func theHostLeavesOutTheZone() {
        let destination = Destination(tls: false, host: "fe80::1%25eth0", port: 8080, pathAndQuery: "/x")
        #expect(destination.hostHeader == "[fe80::1]:8080")
        #expect(destination.url == "http://[fe80::1%25eth0]:8080/x")
        let https = Destination(tls: true, host: "fe80::1%eth0", port: 443, pathAndQuery: "/")
        #expect(https.hostHeader == "[fe80::1]")
        #expect(Destination(tls: false, host: "::1", port: 80, pathAndQuery: "/").hostHeader == "[::1]")
        // A Host the client sent, or one edited in the web UI, goes on as it came.
        let sent = Destination(tls: false, host: "fe80::1%25eth0", port: 80, pathAndQuery: "/", authority: "a.example")
        #expect(sent.hostHeader == "a.example")
    }

    /// A GET in absolute-form (argv[2]) to the proxy at port argv[1], with the Host a client
    /// sends for it, zone left out (argv[3]); prints the response body. (curl leaves the zone out
    /// of the absolute-form it sends a proxy as well, so the proxy could not dial the peer.)
    static let absoluteFormGet = """
    import socket, sys
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    head = "GET %s HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n" % (sys.argv[2], sys.argv[3])
    s.sendall(head.encode())
    answer = b""
    while chunk := s.recv(65536): answer += chunk
    print(answer.split(b"\\r\\n\\r\\n", 1)[-1].decode(), end="")
    """

    /// A request through the proxy to a server on this machine's link-local address, its URL
    /// naming the zone: the server got `Host: [fe80::…]:PORT`; the flow's URL names the zone it
    /// went through.
    @Test(.enabled(if: LinkLocal.interface != nil,
                   "no interface but lo has a link-local IPv6 address (/proc/net/if_inet6)"))
    func aRequestThroughTheProxySendsNoZoneInItsHost() throws {
        let interface = try #require(LinkLocal.interface)
        let directory = TemporaryDirectory()
        let addressFile = directory.file("address")
        let origin = try BackgroundServer(script: ReplayZoneTests.linkLocalEcho, arguments: [interface, addressFile])
        defer { origin.stop() }
        let zoned = try String(contentsOfFile: addressFile, encoding: .utf8)
        let address = try #require(zoned.split(separator: "%").first.map(String.init))
        let url = "http://[\(zoned.replacingOccurrences(of: "%", with: "%25"))]:\(origin.port)/z"
        let proxy = try ProxyHarness()
        let host = "[\(address)]:\(origin.port)"
        let result = try Subprocess.run("python3", ["-c", Self.absoluteFormGet, String(proxy.port), url, host],
                                        timeout: 20)
        #expect(result.stdout == "Host: \(host)\n", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == url, "\(flow)")
        #expect(flow.request?.headers.first(named: "Host") == host, "\(flow)")
        #expect(flow.response?.status == 200, "\(flow)")
    }
}

/// The console line of a CONNECT, a tunnel or an unused connection to an IPv6 literal names it
/// in brackets (`[::1]:8443`): `::1:8443` reads as either host `::1` port 8443 or host `::1:8443`.
@Suite struct IPv6ConsoleLineTests {
    let utc = TimeZone(identifier: "UTC")!

    @Test func aConnectTunnelAndUnusedConnectionBracketTheLiteral() {
        var rejected = FlowSamples.rejected
        rejected.server.host = "::1"
        rejected.server.port = 8443
        #expect(ConsoleFlowPrinter.line(for: rejected, timeZone: utc)
            .hasPrefix("12:01:02 ✗ CONNECT [::1]:8443 client_rejected_certificate"))
        var unused = rejected
        unused.error = Flow.FlowError(kind: "client_closed_unused", message: "")
        #expect(ConsoleFlowPrinter.line(for: unused, timeZone: utc).hasPrefix("12:01:02 UNUSED [::1]:8443 ("))
        var tunnel = FlowSamples.tunnel
        tunnel.server.host = "2001:db8::5"
        #expect(ConsoleFlowPrinter.line(for: tunnel, timeZone: utc).hasPrefix("12:01:02 TUNNEL [2001:db8::5]:443 ↑"))
        #expect(ConsoleFlowPrinter.line(for: FlowSamples.tunnel, timeZone: utc)
            .hasPrefix("12:01:02 TUNNEL api.apple.com:443 ↑"))
    }

    /// curl through `devproxy run` to https://[::1]:PORT/, trusting only the system roots, so it
    /// refuses DevProxy's leaf: the console says `✗ CONNECT [::1]:PORT client_rejected_certificate`.
    @Test func aRefusedConnectToLoopbackV6IsPrintedInBrackets() throws {
        let directory = TemporaryDirectory()
        let origin = try OriginServer(bind: "::1")
        let proxy = try DevProxyProcess(["--ca-dir", directory.file("ca")])
        let curl = try Subprocess.run("curl", ["-sS", "-g", "--max-time", "10", "--proxy",
                                               "http://127.0.0.1:\(proxy.port)", "https://[::1]:\(origin.port)/"],
                                      timeout: 20)
        #expect(curl.status != 0, "\(curl.output)")
        let stop = proxy.stop()
        let lines = stop.stdout.split(separator: "\n").filter { $0.contains(" CONNECT ") }
        #expect(lines.count == 1 && lines[0].contains("✗ CONNECT [::1]:\(origin.port) "), "\(stop.stdout)")
    }
}
