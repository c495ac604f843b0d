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

    @Test("HostPort writes an IPv6 host once in brackets, given bare or bracketed")
    func hostPortBracketsOnce() {
        #expect(HostPort(host: "::1", port: 8080).description == "[::1]:8080")
        #expect(HostPort(host: "[::1]", port: 8080).description == "[::1]:8080")
        #expect(HostPort(host: "reports.acme.dev", port: 443).description == "reports.acme.dev:443")
    }
}
