import Foundation
import TestSupport

/// Certificates made with the openssl CLI for the mTLS tests: an origin certificate for
/// `localhost`, two client CAs (`A`, `B`) with one client certificate each, as PEM bundles
/// (certificate, CA, key) and PKCS#12 files (`openssl pkcs12 -export`, passphrase `secret`).
final class MTLSMaterial {
    let directory = TemporaryDirectory()
    var originCert: String { directory.file("origin.pem") }
    var originKey: String { directory.file("origin.key") }

    init() throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                     "-keyout", originKey, "-out", originCert, "-subj", "/CN=localhost",
                     "-addext", "subjectAltName=DNS:localhost"])
        for name in ["A", "B"] {
            try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                         "-keyout", directory.file("ca\(name).key"), "-out", caPath(name),
                         "-subj", "/CN=mTLS Test Client CA \(name)"])
            try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                         "-keyout", directory.file("client\(name).key"), "-out", directory.file("client\(name).csr"),
                         "-subj", "/CN=devproxy-client-\(name)"])
            try openssl(["x509", "-req", "-in", directory.file("client\(name).csr"), "-CA", caPath(name),
                         "-CAkey", directory.file("ca\(name).key"), "-CAcreateserial", "-days", "2",
                         "-out", directory.file("client\(name).pem")])
            let bundle = directory.read("client\(name).pem") + directory.read("ca\(name).pem")
                + directory.read("client\(name).key")
            directory.write("bundle\(name).pem", bundle)
            try openssl(["pkcs12", "-export", "-in", directory.file("client\(name).pem"),
                         "-inkey", directory.file("client\(name).key"), "-certfile", caPath(name),
                         "-out", p12Path(name), "-passout", "pass:secret"])
        }
    }

    func caPath(_ name: String) -> String { directory.file("ca\(name).pem") }
    func bundlePath(_ name: String) -> String { directory.file("bundle\(name).pem") }
    func p12Path(_ name: String) -> String { directory.file("client\(name).p12") }
    func clientCertPath(_ name: String) -> String { directory.file("client\(name).pem") }

    /// The `sha256/…` SPKI pin of client certificate `name`, computed by openssl.
    func clientPin(_ name: String) throws -> String {
        let script = "openssl x509 -in '\(clientCertPath(name))' -pubkey -noout | openssl pkey -pubin -outform der"
            + " | openssl dgst -sha256 -binary | base64"
        let result = try Subprocess.run("sh", ["-c", script])
        return "sha256/" + result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @discardableResult
    func openssl(_ arguments: [String]) throws -> Subprocess.Result {
        let result = try Subprocess.run("openssl", arguments)
        guard result.status == 0 else {
            throw TestFailure("openssl \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        return result
    }
}

/// `openssl s_server -www` demanding a client certificate (`-Verify 1`) issued by `clientCA`,
/// on a free loopback port. Killed (SIGKILL) when released.
final class OpenSSLMTLSServer {
    let port: Int
    private let process: Process

    init(material: MTLSMaterial, clientCA: String, tls12: Bool = false) throws {
        (process, port) = try HTTP2Origin.launchOnFreePort { port in
            Process.quietServer("/usr/bin/openssl", ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", material.originCert,
                                                     "-key", material.originKey, "-Verify", "1", "-CAfile", clientCA,
                                                     "-www", "-quiet"] + (tls12 ? ["-tls1_2"] : []))
        }
    }

    deinit {
        // SIGKILL: children of Foundation's Process inherit a blocked SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// nginx with `ssl_verify_client on` (`NginxServer`): answers every request with the client
/// certificate's subject.
final class NginxMTLSServer {
    private let server: NginxServer
    var port: Int { server.port }

    init(material: MTLSMaterial, clientCA: String) throws {
        server = try NginxServer(certificate: material.originCert, key: material.originKey, directives: """
            ssl_client_certificate \(clientCA);
            ssl_verify_client on;
            location / {
                default_type text/plain;
                return 200 "client $ssl_client_s_dn verify $ssl_client_verify\\n";
            }
            """)
    }
}
