import DevProxy
import Foundation
import Testing
import TestSupport

/// Where a link-local IPv6 address can be had on this machine.
enum LinkLocal {
    /// The name of an interface other than `lo` with a link-local IPv6 address not still
    /// tentative (duplicate address detection), from /proc/net/if_inet6; nil when there is none.
    static let interface: String? = {
        guard let table = try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n") {
            // address, ifindex, prefix length, scope, flags (0x40: tentative), name
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 6, fields[0].hasPrefix("fe80"), fields[5] != "lo",
                  let flags = UInt8(fields[4], radix: 16), flags & 0x40 == 0 else { continue }
            return String(fields[5])
        }
        return nil
    }()
}

/// The web UI's replay of a flow that went to a link-local IPv6 peer, which getnameinfo names
/// with its zone (`fe80::1%eth0`).
@Suite(.enabled(if: LinkLocal.interface != nil,
                "no interface but lo has a link-local IPv6 address (/proc/net/if_inet6)"))
struct ReplayZoneTests {
    /// HTTP on the link-local address of the interface named by argv[1], answering each GET with
    /// the Host it got; writes `ADDRESS%INTERFACE` to the file named by argv[2].
    static let linkLocalEcho = """
    import http.server, socket, sys
    name = sys.argv[1]
    for line in open('/proc/net/if_inet6'):
        hexa, _, _, _, _, iface = line.split()
        if iface == name and hexa.startswith('fe80'): break
    address = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(hexa))
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = ('Host: %s\\n' % self.headers.get('Host')).encode()
            self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a): pass
    class S(http.server.HTTPServer):
        address_family = socket.AF_INET6
        def server_bind(self):
            self.socket.bind((address, 0, 0, socket.if_nametoindex(name)))
            self.server_address = self.socket.getsockname()
    s = S((address, 0), H)
    with open(sys.argv[2], 'w') as f: f.write('%s%%%s' % (address, name))
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    /// A plain request tunnelled to `fe80::…%eth0` is replayed to `http://[fe80::…%25eth0]:PORT/`
    /// (RFC 6874), with the Host it recorded. The proxy refused that URL (400 "request target has
    /// an invalid IPv6 literal", so the UI answered 422); now it reads the zone and dials the peer
    /// on that interface.
    @Test func aFlowToALinkLocalPeerIsReplayedThroughItsZone() throws {
        let ui = try WebUIHarness(withProxy: true)
        let interface = try #require(LinkLocal.interface)
        let addressFile = ui.directory.file("address")
        let origin = try BackgroundServer(script: Self.linkLocalEcho, arguments: [interface, addressFile])
        defer { origin.stop() }
        let zoned = try String(contentsOfFile: addressFile, encoding: .utf8)
        #expect(zoned.hasPrefix("fe80:") && zoned.hasSuffix("%" + interface), "\(zoned)")

        ui.add(#"{"id":"zoned-1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","#
               + #""client":"127.0.0.1:1","mode":"http","#
               + #""server":{"host":"a.example","port":80,"address":"[\#(zoned)]:\#(origin.port)"},"#
               + #""request":{"method":"GET","url":"http://a.example/x","http_version":"HTTP/1.1","#
               + #""headers":[["Host","a.example"]]},"#
               + #""response":{"status":200,"reason":"OK","http_version":"HTTP/1.1","headers":[]},"#
               + #""timings":{"connect":1,"tls":-1,"send":1,"wait":1,"receive":1}}"#)
        let answer = try ui.request("/api/flows/zoned-1/replay", method: "POST")
        let id = try #require(answer.json["id"] as? String, "\(answer.status) \(answer.text)")
        let flow = try ui.request("/api/flows/\(id)").json
        let request = flow["request"] as? [String: Any]
        let encoded = zoned.replacingOccurrences(of: "%", with: "%25")
        #expect(request?["url"] as? String == "http://[\(encoded)]:\(origin.port)/x", "\(flow)")
        #expect((flow["response"] as? [String: Any])?["status"] as? Int == 200, "\(flow)")
        #expect((flow["server"] as? [String: Any])?["address"] as? String == "[\(zoned)]:\(origin.port)", "\(flow)")
        #expect(try ui.request("/api/flows/\(id)/response/body").text == "Host: a.example\n")
    }
}

/// `Resolver` reads a zone id as a URI writes it (RFC 6874's `%25`) as well as getaddrinfo's `%`.
@Suite struct ResolverZoneTests {
    @Test("fe80::1%25lo, bracketed or not, is fe80::1 on lo, as fe80::1%lo is")
    func aURIZoneIDIsTheInterface() throws {
        let plain = try Resolver.resolve(host: "fe80::1%lo", port: 8080).map(\.description)
        #expect(plain == ["[fe80::1%lo]:8080"])
        #expect(try Resolver.resolve(host: "fe80::1%25lo", port: 8080).map(\.description) == plain)
        #expect(try Resolver.resolve(host: "[fe80::1%25lo]", port: 8080).map(\.description) == plain)
        #expect(throws: NetworkError.self) { try Resolver.resolve(host: "fe80::1%25no-such-interface", port: 8080) }
    }
}
