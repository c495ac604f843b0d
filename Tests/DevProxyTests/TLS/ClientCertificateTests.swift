import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `--client-cert`: DevProxy presents a client certificate to origins that ask for one, chosen
/// by host and by the CA names the origin sends, against real mTLS origins (`openssl s_server
/// -Verify 1`, nginx `ssl_verify_client on`, hypercorn requiring a certificate); an origin that
/// asks when none is configured ends in a 502 naming the flag.
@Suite(.serialized) struct ClientCertificateTests {
    let material: MTLSMaterial

    init() throws {
        material = try MTLSMaterial()
    }

    private func originCAs() throws -> [Certificate] {
        try Certificate.all(from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: material.originCert))))
    }

    private func proxy(_ rules: [String]) throws -> ProxyHarness {
        let cas = try originCAs()
        let parsed = try rules.map { try ClientCertificateRule.parse($0, passphrase: "secret") }
        return try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.clientCertificates = parsed
        })
    }

    /// A PKCS#12 identity goes to `openssl s_server -Verify 1` (TLS 1.3 and 1.2), which accepts
    /// it; the flow names the certificate with openssl's own pin, and the CA the origin asked for.
    @Test(arguments: [false, true])
    func pkcs12ToOpenSSLServer(tls12: Bool) throws {
        let server = try OpenSSLMTLSServer(material: material, clientCA: material.caPath("A"), tls12: tls12)
        let proxy = try proxy(["localhost=\(material.p12Path("A"))"])
        let result = try proxy.curl(["https://localhost:\(server.port)/"])
        // s_server -www prints the certificate the client presented.
        #expect(result.stdout.contains("Client certificate") && result.stdout.contains("devproxy-client-A"),
                "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error == nil)
        let record = try #require(flow.tls?.upstream?.clientCertificate)
        #expect(record.presented)
        #expect(record.subject?.contains("devproxy-client-A") == true)
        #expect(record.issuer?.contains("mTLS Test Client CA A") == true)
        #expect(record.pin == (try material.clientPin("A")))
        #expect(record.acceptableCAs?.contains { $0.contains("mTLS Test Client CA A") } == true)
        // s_server closes after each answer: the next request opens a new connection that resumes
        // the TLS session (no CertificateRequest then); the flow still names the certificate.
        let again = try proxy.curl(["https://localhost:\(server.port)/"])
        #expect(again.stdout.contains("Reused, "), "\(again.output)")
        let second = try #require(proxy.flows(count: 2).dropFirst().first)
        #expect(second.tls?.upstream?.clientCertificate?.pin == record.pin)
    }

    /// With no certificate configured, the origin's refusal (an alert in the TLS 1.2 handshake;
    /// `certificate_required` after a TLS 1.3 handshake) is a 502 naming `--client-cert`, and a
    /// flow of kind `upstream_client_certificate_required`.
    @Test(arguments: [false, true])
    func noneConfiguredIs502(tls12: Bool) throws {
        let server = try OpenSSLMTLSServer(material: material, clientCA: material.caPath("A"), tls12: tls12)
        let proxy = try proxy([])
        let result = try proxy.curl(["-i", "https://localhost:\(server.port)/"])
        #expect(result.stdout.contains("HTTP/1.1 502") || result.stdout.contains("HTTP/2 502"), "\(result.output)")
        #expect(result.stdout.contains("--client-cert localhost=FILE"))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_client_certificate_required", "\(String(describing: flow.error))")
        // The console line names the host and the flag to give, as the 502 does.
        #expect(ConsoleFlowPrinter.line(for: flow).contains("give one with --client-cert localhost=FILE"),
                "\(ConsoleFlowPrinter.line(for: flow))")
    }

    /// A certificate the origin does not accept (another CA's): the origin alerts and closes after
    /// the TLS 1.3 handshake, which DevProxy often met as a failed write, the alert unread, so the
    /// flow read "closed the connection while we were writing". The failure names the certificate
    /// presented and its file, however it was met, three times over.
    @Test func aCertificateTheOriginRefusesIsNamed() throws {
        let origin = try HTTP2Origin(.hypercornBoth, clientCA: material.caPath("A"))
        let cas = try Certificate.all(from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: origin.caPath))))
        let rule = try ClientCertificateRule.parse("localhost=\(material.p12Path("B"))", passphrase: "secret")
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.clientCertificates = [rule]
        })
        for version in ["--http1.1", "--http2", "--http1.1"] {
            let result = try proxy.curl([version, "-i", origin.url("/echo")])
            #expect(result.stdout.contains(" 502"), "\(version): \(result.output)")
        }
        let flows = proxy.flows(count: 3)
        for flow in flows {
            #expect(flow.error?.kind == "upstream_client_certificate_required", "\(String(describing: flow.error))")
            #expect(flow.error?.message.contains("after DevProxy presented the client certificate from \(material.p12Path("B"))")
                    == true, "\(String(describing: flow.error))")
            // The console line too: it said "give one with --client-cert", one having been given.
            let line = ConsoleFlowPrinter.line(for: flow)
            #expect(line.contains("after DevProxy presented the client certificate from") && !line.contains("give one"), "\(line)")
        }
    }

    /// With `--lazy-upstream` the origin connection is opened for the request rather than ahead
    /// of it; the TLS 1.3 `certificate_required` alert on its first read ends the same way.
    @Test func lazyUpstreamWithoutCertificate() throws {
        let server = try OpenSSLMTLSServer(material: material, clientCA: material.caPath("A"))
        let cas = try originCAs()
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.eagerUpstream = false
        })
        let result = try proxy.curl(["--http2", "-i", "https://localhost:\(server.port)/"])
        #expect(result.stdout.contains("HTTP/1.1 502") || result.stdout.contains("HTTP/2 502"), "\(result.output)")
        #expect(result.stdout.contains("--client-cert localhost=FILE"))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "upstream_client_certificate_required", "\(String(describing: flow.error))")
        #expect(flow.tls?.upstream?.clientCertificate?.presented == false)
    }

    /// Two identities for the same host: the one issued by the CA the origin names is chosen,
    /// whichever comes first on the command line.
    @Test func choosesByAcceptableCA() throws {
        let server = try OpenSSLMTLSServer(material: material, clientCA: material.caPath("B"))
        let proxy = try proxy(["localhost=\(material.p12Path("A"))", "localhost=\(material.bundlePath("B"))"])
        let result = try proxy.curl(["https://localhost:\(server.port)/"])
        #expect(result.stdout.contains("devproxy-client-B") && !result.stdout.contains("devproxy-client-A"),
                "\(result.output)")
        let record = try #require(proxy.flows(count: 1).first?.tls?.upstream?.clientCertificate)
        #expect(record.subject?.contains("devproxy-client-B") == true)
    }

    /// nginx with `ssl_verify_client on` over HTTP/1.1 and HTTP/2 upstream: a PEM bundle
    /// (certificate, CA, key) for `*host` is presented and nginx verifies it (`SUCCESS`). A rule
    /// for another host is not used: nginx answers its own 400, and the flow says none was presented.
    @Test(arguments: [false, true])
    func nginxVerifiesPEMBundle(http2: Bool) throws {
        let server = try NginxMTLSServer(material: material, clientCA: material.caPath("A"))
        let proxy = try proxy(["*host=\(material.bundlePath("A"))"])
        let result = try proxy.curl([http2 ? "--http2" : "--http1.1", "-i", "https://localhost:\(server.port)/"])
        #expect(result.stdout.contains("verify SUCCESS"), "\(result.output)")
        #expect(result.stdout.contains("CN=devproxy-client-A"))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.tls?.upstream?.alpn == (http2 ? "h2" : "http/1.1"))
        #expect(flow.tls?.upstream?.clientCertificate?.presented == true)

        let other = try self.proxy(["api.example.com=\(material.bundlePath("A"))"])
        let refused = try other.curl(["-i", "https://localhost:\(server.port)/"])
        #expect(refused.stdout.contains(" 400"), "\(refused.output)")
        let record = try #require(other.flows(count: 1).first?.tls?.upstream?.clientCertificate)
        #expect(!record.presented)
    }

    /// An HTTP/2 origin (hypercorn) that requires a certificate and gets none: both an HTTP/2 and
    /// an HTTP/1.1 client get the 502, and the flow the kind; with the certificate, the echo.
    @Test func http2OriginRequiringCertificate() throws {
        let origin = try HTTP2Origin(.hypercornBoth, clientCA: material.caPath("A"))
        let cas = try Certificate.all(from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: origin.caPath))))
        let bare = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        for version in ["--http2", "--http1.1"] {
            let result = try bare.curl([version, "-i", origin.url("/echo")])
            #expect(result.stdout.contains(" 502"), "\(version): \(result.output)")
            #expect(result.stdout.contains("--client-cert"))
        }
        let flows = bare.flows(count: 2)
        #expect(flows.count == 2 && flows.allSatisfy { $0.error?.kind == "upstream_client_certificate_required" },
                "\(flows.map { $0.error })")

        let rule = try ClientCertificateRule.parse(material.p12Path("A"), passphrase: "secret")
        let configured = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.clientCertificates = [rule]
        })
        let result = try configured.curl(["--http2", origin.url("/echo")])
        #expect(result.stdout.contains("\"path\": \"/echo\""), "\(result.output)")
        #expect(configured.flows(count: 1).first?.tls?.upstream?.clientCertificate?.presented == true)
    }

    /// Start-up refusals, each one `error:` line and a non-zero exit: a wrong passphrase, an
    /// unreadable .p12, a key that is not the certificate's, a passphrase given as an argument.
    @Test func startUpRefusals() throws {
        let directory = TemporaryDirectory()
        let wrongPass = directory.write("wrong.pass", "not-the-passphrase\n")
        let garbage = directory.write("garbage.p12",
                                      bytes: [0x30, 0x82, 0x01, 0x00] + Array(repeating: 0x41, count: 64))
        let mismatched = directory.write("mismatch.pem",
                                         (try String(contentsOfFile: material.clientCertPath("A"), encoding: .utf8))
            + (try String(contentsOfFile: material.directory.file("clientB.key"), encoding: .utf8)))
        let cases: [([String], [String: String], String)] = [
            (["--client-cert", material.p12Path("A"), "--client-cert-passphrase-file", wrongPass], [:],
             "wrong passphrase"),
            (["--client-cert", material.p12Path("A")], ["DEVPROXY_CLIENT_CERT_PASSPHRASE": "nope"], "wrong passphrase"),
            (["--client-cert", material.p12Path("A")], [:], "DEVPROXY_CLIENT_CERT_PASSPHRASE"),
            (["--client-cert", "localhost=" + garbage], [:], "PKCS#12"),
            (["--client-cert", mismatched], [:], "does not match"),
            (["--client-cert", material.p12Path("A"), "--client-cert-passphrase", "secret"], [:],
             "never taken as arguments"),
        ]
        for (arguments, environment, expected) in cases {
            let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", directory.file("ca"),
                                                                  "--listen", "127.0.0.1:0"] + arguments,
                                            environment: environment, timeout: 30)
            #expect(result.status != 0, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("error: ") && lines[0].contains(expected),
                    "\(arguments): \(result.stderr)")
        }
    }
}
