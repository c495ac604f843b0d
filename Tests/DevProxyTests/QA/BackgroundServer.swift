import CertAuthority
@testable import DevProxy
import Foundation
import TestSupport

/// A Python server started for one test on 127.0.0.1:0; it prints its port on the first line of
/// stdout. Stopped by `stop()` or when released.
final class BackgroundServer {
    let process = Process()
    let port: Int

    /// Starts `python3 -c script arguments…` and waits (at most 15 s) for the port line.
    init(script: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", script] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        var line = Data()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("the Python server did not print its port (got \"\(String(decoding: line, as: UTF8.self))\")")
        }
        self.port = port
    }

    /// `script` serving TLS as `localhost` with a certificate and key from a CA of its own (their
    /// paths its two arguments), and a proxy that trusts that CA; `directory` holds the CA and the
    /// files, kept while the two run.
    static func tlsOriginAndProxy(script: String, caName: String) throws
        -> (origin: BackgroundServer, proxy: ProxyHarness, directory: TemporaryDirectory) {
        let dir = TemporaryDirectory()
        let store = CAStore(directory: dir.file("origin-ca"))
        try store.initialize(name: caName, keyType: .p256, days: 2, passphrase: nil)
        let leaf = try LeafIssuer(signer: try store.rootSigner(passphrase: nil)).issue(for: [try LeafName("localhost")])
        let origin = try BackgroundServer(script: script, arguments: [dir.write("origin.pem", leaf.certificate.pem),
                                                                      dir.write("origin.key", bytes: try leaf.key.pem())])
        let cas = try Certificate.all(from: SecureFile.read(store.rootCertificatePath, what: "ca"))
        return (origin, try ProxyHarness(configure: { $0.upstreamCAs = cas }), dir)
    }

    /// `tlsScript` serving `host` with a leaf (and its chain) from `fixture`'s signer.
    static func tlsServer(for host: String, signedBy fixture: PKIFixture) throws -> BackgroundServer {
        let leaf = try LeafIssuer(signer: fixture.signer).issue(for: [try LeafName(host)])
        let certificatePath = fixture.directory.write("server.pem", leaf.certificate.pem + leaf.chain.map(\.pem).joined())
        let keyPath = fixture.directory.write("server.key", bytes: try leaf.key.pem())
        return try BackgroundServer(script: tlsScript, arguments: [certificatePath, keyPath])
    }

    /// SIGKILL, not terminate(): a child spawned from a dispatch worker thread inherits its
    /// blocked signal mask, so SIGTERM may never arrive (seen here: Python ignored it).
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// HTTPS on 127.0.0.1:0 answering every GET with 200 "ok"; args: CERTFILE KEYFILE.
    static let tlsScript = """
    import http.server, ssl, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.send_header('Content-Length', '2'); self.end_headers(); self.wfile.write(b'ok')
        def log_message(self, *a): pass
    s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(sys.argv[1], sys.argv[2])
    s.socket = c.wrap_socket(s.socket, server_side=True)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    /// HTTP on 127.0.0.1:0 recording each POST body to DIR/post-N.json and answering 204; args: DIR.
    static let reportScript = """
    import http.server, sys, itertools
    n = itertools.count()
    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
            with open('%s/post-%d.json' % (sys.argv[1], next(n)), 'wb') as f: f.write(body)
            with open('%s/path.txt' % sys.argv[1], 'w') as f: f.write(self.path + ' ' + self.headers.get('Content-Type', ''))
            self.send_response(204); self.end_headers()
        def log_message(self, *a): pass
    s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """
}
