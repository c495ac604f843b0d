import CertAuthority
import DevProxy
import Foundation
import Testing
import TestSupport

/// `ReportPoster`: what a report's POST says of the host it goes to.
@Suite struct ReportPosterTests {
    /// HTTP on [::1]:0 answering every POST with 204; writes each request's Host to the file named by its argument.
    static let hostRecorder = """
    import http.server, socket, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get('Content-Length', '0')))
            with open(sys.argv[1], 'a') as f: f.write(self.headers.get('Host', '') + '\\n')
            self.send_response(204); self.end_headers()
        def log_message(self, *a): pass
    class S(http.server.HTTPServer): address_family = socket.AF_INET6
    s = S(('::1', 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    @Test("A report to an IPv6 literal names it once in brackets in its Host, as the URI does")
    func ipv6ReportURIHasItsHostBracketedOnce() throws {
        let directory = TemporaryDirectory()
        let hosts = directory.file("hosts")
        let server = try BackgroundServer(script: Self.hostRecorder, arguments: [hosts])
        defer { server.stop() }
        let status = try ReportPoster(timeout: 5).post(Array("{}".utf8), to: "http://[::1]:\(server.port)/report")
        #expect(status == 204)
        #expect(try String(contentsOfFile: hosts, encoding: .utf8) == "[::1]:\(server.port)\n")
    }

    /// HTTPS on argv[3]:0 (`::1` or `127.0.0.1`) with the certificate chain and key in argv[1] and
    /// argv[2], answering every POST with 204; writes the server name each ClientHello carried
    /// (`None` for none) to the file named by argv[4].
    static let tlsRecorder = """
    import http.server, socket, ssl, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get('Content-Length', '0')))
            self.send_response(204); self.end_headers()
        def log_message(self, *a): pass
    class S(http.server.HTTPServer): address_family = socket.AF_INET6 if ':' in sys.argv[3] else socket.AF_INET
    def named(sock, name, context):
        with open(sys.argv[4], 'a') as f: f.write(repr(name) + '\\n')
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(sys.argv[1], sys.argv[2]); c.sni_callback = named
    s = S((sys.argv[3], 0), H)
    s.socket = c.wrap_socket(s.socket, server_side=True)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    /// `tlsRecorder` on `address` with a leaf for `certifiedFor` (an IP address SAN) from `fixture`.
    static func tlsServer(on address: String, certifiedFor name: String, fixture: PKIFixture,
                          names: String) throws -> BackgroundServer {
        let leaf = try LeafIssuer(signer: fixture.signer).issue(for: [try LeafName(name)])
        let chain = fixture.directory.write("server-\(name).pem", leaf.certificate.pem + leaf.chain.map(\.pem).joined())
        let key = fixture.directory.write("server-\(name).key", bytes: try leaf.key.pem())
        return try BackgroundServer(script: tlsRecorder, arguments: [chain, key, address, names])
    }

    /// RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not permitted in HostName". The URI's
    /// `[::1]` went out as the server name, brackets and all, and was checked as a DNS name, so
    /// a certificate for IP:::1 failed "hostname mismatch"; now neither literal is sent and the
    /// certificate's IP address SAN is checked, as curl does.
    @Test("An https report to an IP literal sends no server name and checks the certificate's IP address",
          arguments: [("::1", "https://[::1]:PORT/report"), ("127.0.0.1", "https://127.0.0.1:PORT/report")])
    func httpsReportToAnIPLiteral(address: String, uri: String) throws {
        let fixture = try PKIFixture()
        let names = fixture.directory.file("names")
        let server = try Self.tlsServer(on: address, certifiedFor: address, fixture: fixture, names: names)
        defer { server.stop() }
        let to = uri.replacingOccurrences(of: "PORT", with: String(server.port))
        let poster = ReportPoster(extraCAs: [fixture.root], timeout: 5)
        let delivery = try #require(poster.post(Array("{}".utf8), to: [to]).first)
        #expect(delivery.status == 204 && delivery.error == nil, "\(String(describing: delivery.error))")
        #expect(try String(contentsOfFile: names, encoding: .utf8) == "None\n")
    }

    @Test("A certificate for another IP address is refused, saying so",
          arguments: [("::1", "::2", "https://[::1]:PORT/report"),
                      ("127.0.0.1", "127.0.0.2", "https://127.0.0.1:PORT/report")])
    func httpsReportToAnotherIPsCertificateIsRefused(address: String, certified: String, uri: String) throws {
        let fixture = try PKIFixture()
        let server = try Self.tlsServer(on: address, certifiedFor: certified, fixture: fixture,
                                        names: fixture.directory.file("names"))
        defer { server.stop() }
        let to = uri.replacingOccurrences(of: "PORT", with: String(server.port))
        let poster = ReportPoster(extraCAs: [fixture.root], timeout: 5)
        let delivery = try #require(poster.post(Array("{}".utf8), to: [to]).first)
        #expect(delivery.status == nil)
        #expect(delivery.error?.contains("IP address mismatch") == true, "\(String(describing: delivery.error))")
    }

    @Test("HostPort writes an IPv6 host once in brackets, given bare or bracketed")
    func hostPortBracketsOnce() {
        #expect(HostPort(host: "::1", port: 8080).description == "[::1]:8080")
        #expect(HostPort(host: "[::1]", port: 8080).description == "[::1]:8080")
        #expect(HostPort(host: "reports.acme.dev", port: 443).description == "reports.acme.dev:443")
    }
}
