import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The onboarding site served by a real proxy to real clients: curl through the proxy (plain and
/// CONNECT + TLS), curl straight to the proxy's port, openssl and zbarimg on what comes back.
@Suite struct OnboardingProxyTests {
    /// A proxy on 127.0.0.1:0 with the onboarding site of its team root, its address set as
    /// `devproxy run` sets it.
    static func proxy(_ configure: (inout ProxyConfiguration) -> Void = { _ in })
        throws -> (ProxyHarness, OnboardingSite) {
        let pki = try PKIFixture()
        let site = OnboardingSite(root: pki.root)
        let proxy = try ProxyHarness(pki: pki) {
            $0.onboarding = site
            configure(&$0)
        }
        site.setAddress("http://127.0.0.1:\(proxy.port)/")
        return (proxy, site)
    }

    /// `openssl x509 -noout -fingerprint -sha256` of a certificate file.
    static func fingerprint(_ path: String, der: Bool) throws -> String {
        let result = try Subprocess.run("openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", path]
                                        + (der ? ["-inform", "der"] : []))
        guard result.status == 0, let line = result.stdout.split(separator: "\n").first else {
            throw TestFailure("openssl could not read \(path): \(result.stderr)")
        }
        return String(line)
    }

    /// Whether the certificate in `path` has the fingerprint of the proxy's root, as openssl reads both.
    static func sameRoot(_ path: String, der: Bool, as proxy: ProxyHarness) throws -> Bool {
        try fingerprint(path, der: der) == fingerprint(proxy.pki.rootPath, der: false)
    }

    @Test func derDownloadedThroughTheProxyIsTheRoot() throws {
        let (proxy, _) = try Self.proxy()
        let directory = TemporaryDirectory()
        let result = try proxy.curl(["-o", directory.file("root.crt"), "-w", "%{http_code} %{content_type}",
                                     "http://devproxy.test/root.crt"])
        #expect(result.stdout == "200 application/x-x509-ca-cert", "\(result.output)")
        let downloaded = try Self.fingerprint(directory.file("root.crt"), der: true)
        #expect(downloaded == (try Self.fingerprint(proxy.pki.rootPath, der: false)))
        #expect(downloaded.hasSuffix(proxy.pki.root.sha256Fingerprint))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.request?.url == "http://devproxy.test/root.crt")
        #expect(flow.response?.status == 200)
        #expect(flow.response?.headers.contains(["X-DevProxy", "answered by DevProxy (onboarding)"]) == true)
        #expect(flow.error == nil && flow.server.address == nil)
    }

    /// `https://devproxy.test/` through CONNECT: a leaf for devproxy.test from the team chain,
    /// the same pages inside.
    @Test func pemThroughAnInterceptedConnectIsTheRoot() throws {
        let (proxy, _) = try Self.proxy()
        let directory = TemporaryDirectory()
        let result = try proxy.curl(["-o", directory.file("root.pem"), "-w", "%{http_code}",
                                     "https://devproxy.test/root.pem"])
        #expect(result.stdout == "200", "\(result.output)")
        #expect(try Self.sameRoot(directory.file("root.pem"), der: false, as: proxy))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mode == .https && flow.request?.url == "https://devproxy.test/root.pem")
        #expect(flow.signer?.email == "ana@acme.dev")
        #expect(flow.response?.headers.contains(["X-DevProxy", "answered by DevProxy (onboarding)"]) == true)
    }

    /// A phone without its proxy set: `GET /` straight to the proxy's port gets the page, with a
    /// strict CSP; the downloads and the QR code work the same way.
    @Test func pageAnswersStraightOnTheProxyPort() throws {
        let (proxy, site) = try Self.proxy()
        let directory = TemporaryDirectory()
        let url = try #require(site.address)
        let result = try Subprocess.run("curl", ["-sS", "-D", directory.file("headers"), "-o",
                                                 directory.file("page.html"), "--max-time", "20", url])
        #expect(result.status == 0, "\(result.stderr)")
        let headers = directory.read("headers").lowercased()
        #expect(headers.hasPrefix("http/1.1 200 ok"))
        #expect(headers.contains("content-type: text/html; charset=utf-8"))
        #expect(headers.contains("content-security-policy: default-src 'none'; img-src 'self'; style-src 'self'"))
        #expect(headers.contains("x-content-type-options: nosniff"))
        let page = directory.read("page.html")
        #expect(page.contains(proxy.pki.root.sha256Fingerprint) && page.contains(proxy.pki.root.pin))
        #expect(page.contains("<code>\(url)</code>"))
        let crt = try Subprocess.run("curl", ["-sS", "-o", directory.file("root.crt"), "--max-time", "20",
                                              url + "root.crt"])
        #expect(crt.status == 0)
        #expect(try Self.sameRoot(directory.file("root.crt"), der: true, as: proxy))
        let flows = proxy.flows(count: 2)
        #expect(flows.map { $0.request?.url ?? "" } == ["\(url)", "\(url)root.crt"])
    }

    /// The PNG QR code, fetched like a phone would, decodes with zbar to the page's address.
    @Test func qrCodeDecodesToThePageAddress() throws {
        let (proxy, site) = try Self.proxy()
        let url = try #require(site.address)
        #expect(url == "http://127.0.0.1:\(proxy.port)/")
        let directory = TemporaryDirectory()
        let fetched = try Subprocess.run("curl", ["-sS", "-o", directory.file("qr.png"), "-w", "%{content_type}",
                                                  "--max-time", "20", url + "qr.png"])
        #expect(fetched.stdout == "image/png", "\(fetched.output)")
        let decoded = try Subprocess.run("zbarimg", ["--raw", "-q", directory.file("qr.png")], timeout: 30)
        #expect(decoded.stdout.trimmingCharacters(in: .newlines) == url, "\(decoded.output)")
        #expect(proxy.flows(count: 1).first?.response?.status == 200)
    }

    /// The profile downloaded through the proxy parses with plistlib and carries the root's DER.
    @Test func mobileconfigThroughTheProxyCarriesTheRoot() throws {
        let (proxy, _) = try Self.proxy()
        let directory = TemporaryDirectory()
        let result = try proxy.curl(["-o", directory.file("root.mobileconfig"), "-w", "%{content_type}",
                                     "http://devproxy.test/root.mobileconfig"])
        #expect(result.stdout == "application/x-apple-aspen-config")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("root.mobileconfig"))))
        let payloads = try OnboardingSiteTests.plist(bytes)["PayloadContent"] as? [[String: Any]]
        #expect(payloads?.first?["PayloadType"] as? String == "com.apple.security.root")
        #expect(payloads?.first?["PayloadContent"] as? String == proxy.pki.root.der.base64)
    }

    /// Nothing for devproxy.test leaves the proxy: with every name and port of the requests mapped
    /// (`--resolve`) to a listener of the test's own, and a passthrough rule for every host, that
    /// listener is never dialled, whatever the path, method, scheme or port.
    @Test func nothingForDevproxyTestReachesAnUpstream() throws {
        let trap = try Listener(host: "127.0.0.1", port: 0)
        let port = trap.address.port
        let (proxy, _) = try Self.proxy {
            $0.resolve = [try! ResolveOverride(parsing: "devproxy.test:\(port):127.0.0.1"),
                          try! ResolveOverride(parsing: "devproxy.test:80:127.0.0.1"),
                          try! ResolveOverride(parsing: "devproxy.test:443:127.0.0.1")]
            $0.passthrough = [GlobPattern("*")]
        }
        let requests: [([String], String)] = [
            (["http://devproxy.test:\(port)/root.crt"], "200"),
            (["http://DEVPROXY.TEST/elsewhere?q=1"], "404"),
            (["-X", "POST", "--data", "x=1", "http://devproxy.test/"], "405"),
            (["https://devproxy.test:\(port)/"], "200"),
            (["https://devproxy.test/unknown"], "404"),
        ]
        for (arguments, status) in requests {
            let result = try proxy.curl(["-o", "/dev/null", "-w", "%{http_code}"] + arguments)
            #expect(result.stdout == status, "\(arguments) \(result.output)")
        }
        let flows = proxy.flows(count: requests.count)
        #expect(flows.count == requests.count)
        for flow in flows {
            #expect(flow.server.address == nil && flow.tunnel == nil && flow.error == nil, "\(flow.request?.url ?? "")")
            #expect(flow.response?.headers.contains(["X-DevProxy", "answered by DevProxy (onboarding)"]) == true)
        }
        #expect(try trap.accept(timeout: 0.3) == nil, "a request for devproxy.test reached an upstream")
    }

    /// A SOCKS5 client naming devproxy.test gets the same site over TLS, and proxy credentials
    /// are not asked for the public pages fetched straight from the port.
    @Test func socks5ClientsAndUnauthenticatedPhonesGetTheSite() throws {
        let socksPort = try HTTP2Origin.freePort()
        let (proxy, site) = try Self.proxy {
            $0.modes = [ListenerMode(kind: .regular), ListenerMode(kind: .socks5, host: "127.0.0.1", port: socksPort)]
            $0.proxyCredentials = [ProxyCredential(user: "qa", password: "s3cret")]
        }
        let directory = TemporaryDirectory()
        let socks = try Subprocess.run("curl", ["-sS", "--cacert", proxy.pki.rootPath, "--max-time", "20",
                                                "--socks5-hostname", "qa:s3cret@127.0.0.1:\(socksPort)",
                                                "-o", directory.file("root.crt"), "https://devproxy.test/root.crt"],
                                       timeout: 30)
        #expect(socks.status == 0, "\(socks.stderr)")
        #expect(try Self.sameRoot(directory.file("root.crt"), der: true, as: proxy))
        let straight = try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
                                                   try #require(site.address) + "root.pem"])
        #expect(straight.stdout == "200")
        // Proxying still needs the credentials.
        let proxied = try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
                                                  "--proxy", proxy.proxyURL, "http://127.0.0.1:1/"])
        #expect(proxied.stdout == "407")
        let flows = proxy.flows(count: 3)
        #expect(flows.contains { $0.listener?.mode == "socks5" && $0.response?.status == 200 && $0.mode == .https })
    }

    /// A plain-text tunnel to devproxy.test is closed with a flow, not relayed anywhere.
    @Test func plainTunnelToTheSiteIsRefusedNotRelayed() throws {
        let (proxy, _) = try Self.proxy()
        let script = """
        import socket
        s = socket.create_connection(("127.0.0.1", \(proxy.port)))
        s.sendall(b"CONNECT devproxy.test:80 HTTP/1.1\\r\\nHost: devproxy.test:80\\r\\n\\r\\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 200")
        s.sendall(b"GET / HTTP/1.1\\r\\nHost: devproxy.test\\r\\n\\r\\n")
        try:
            data = s.recv(1024)
        except ConnectionResetError:
            data = b""
        print(repr(data))
        """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 30)
        #expect(result.stdout.trimmingCharacters(in: .newlines) == "b''", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_not_tls")
        #expect(flow.tunnel == nil)
    }
}
