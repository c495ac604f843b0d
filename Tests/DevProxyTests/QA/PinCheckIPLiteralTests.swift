import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy pin-check https://[::1]:PORT/`: the probe's ClientHello carries no server name for
/// an IP literal (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not permitted in HostName"),
/// as curl sends none, and the chain is checked against the certificate's IP address entry. The
/// bracketed `[::1]` of the URL went out as SNI, to the server and, relayed, through the proxy.
/// Servers are `ReportPosterTests.tlsRecorder` (Python ssl), which write each ClientHello's name.
@Suite struct PinCheckIPLiteralTests {
    /// An OkHttp pin list pinning `pattern` to `root` (OkHttp pins IP literals, TrustKit does not).
    static func pins(_ pattern: String, _ root: Certificate, in fixture: PKIFixture) -> String {
        fixture.directory.write("pins.txt", "\(pattern) sha256/\(SPKIPin.base64SHA256(root.spkiDER))\n")
    }

    /// `devproxy pin-check URL --policy PINS --ca-file ROOT --json EXTRA…`, and its JSON.
    static func pinCheck(_ url: String, pins: String, caFile: String, _ extra: [String] = [])
        throws -> (Subprocess.Result, [String: Any]) {
        let result = try Subprocess.run(Subprocess.devproxy, ["pin-check", url, "--policy", pins, "--ca-file", caFile,
                                                              "--json"] + extra, timeout: 30)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, object)
    }

    /// The server names the recorder saw, one a line (`None` for a ClientHello without one).
    static func names(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// `names(path)` once it has a line, waiting up to 10 s: the proxy's upstream handshake runs
    /// beside the probe's and may end after pin-check has.
    static func namesOnceSeen(_ path: String) -> String {
        let deadline = Date().addingTimeInterval(10)
        while names(path).isEmpty, Date() < deadline { usleep(50_000) }
        return names(path)
    }

    @Test("pin-check of an IP literal sends no server name and checks the certificate's IP address",
          arguments: [("::1", "[::1]"), ("127.0.0.1", "127.0.0.1")])
    func ipLiteralIsProbedWithoutServerName(address: String, authority: String) throws {
        let fixture = try PKIFixture()
        let names = fixture.directory.file("names")
        let server = try ReportPosterTests.tlsServer(on: address, certifiedFor: address, fixture: fixture, names: names)
        defer { server.stop() }
        let pins = Self.pins(authority, fixture.root, in: fixture)
        let url = "https://\(authority):\(server.port)/"
        let (result, json) = try Self.pinCheck(url, pins: pins, caFile: fixture.rootPath)
        #expect(result.status == 0, "\(result.output)")
        #expect(json["decision"] as? String == "allow")
        #expect(json["verified"] as? Bool == true, "\(json["verify_error"] ?? "")")
        #expect(json["host"] as? String == authority, "the host is shown as the URL writes it")
        #expect(Self.names(names) == "None\n", "the ClientHello named \(Self.names(names))")
    }

    @Test("pin-check of an IP literal whose certificate is for another address says the address does not match",
          arguments: [("::1", "::2", "[::1]"), ("127.0.0.1", "127.0.0.2", "127.0.0.1")])
    func anotherAddressesCertificateIsNotTrusted(address: String, certified: String, authority: String) throws {
        let fixture = try PKIFixture()
        let names = fixture.directory.file("names")
        let server = try ReportPosterTests.tlsServer(on: address, certifiedFor: certified, fixture: fixture,
                                                     names: names)
        defer { server.stop() }
        let url = "https://\(authority):\(server.port)/"
        let pins = Self.pins(authority, fixture.root, in: fixture)
        let (result, json) = try Self.pinCheck(url, pins: pins, caFile: fixture.rootPath)
        #expect(result.status == 1, "\(result.output)")
        #expect(json["decision"] as? String == "block")
        #expect(json["verified"] as? Bool == false)
        #expect(json["verify_error"] as? String == "IP address mismatch")
        let text = try Subprocess.run(Subprocess.devproxy,
                                      ["pin-check", url, "--policy", pins, "--ca-file", fixture.rootPath], timeout: 30)
        #expect(text.stdout.contains("chain      NOT trusted: IP address mismatch"), "\(text.output)")
        #expect(Self.names(names) == "None\nNone\n", "the ClientHellos named \(Self.names(names))")
    }

    /// Through DevProxy the chain judged is the proxy's leaf for the address; the proxy relays
    /// the probe's ClientHello name upstream, so the origin saw `[::1]` too.
    @Test("pin-check of an IPv6 literal through the proxy gets a leaf for the address, and no server name goes on")
    func ipv6LiteralThroughTheProxy() throws {
        let origin = try PKIFixture()
        let names = origin.directory.file("names")
        let server = try ReportPosterTests.tlsServer(on: "::1", certifiedFor: "::1", fixture: origin, names: names)
        defer { server.stop() }
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = [origin.root] })
        let pins = Self.pins("[::1]", proxy.pki.root, in: origin)
        let (result, json) = try Self.pinCheck("https://[::1]:\(server.port)/", pins: pins, caFile: proxy.pki.rootPath,
                                               ["--proxy", "127.0.0.1:\(proxy.port)"])
        #expect(result.status == 0, "\(result.output)")
        #expect(json["decision"] as? String == "allow")
        #expect(json["verified"] as? Bool == true, "\(json["verify_error"] ?? "")")
        let leaf = try #require((json["chain"] as? [[String: Any]])?.first)
        #expect((leaf["subject"] as? String)?.hasSuffix("CN = ::1") == true, "\(leaf)")
        // Every handshake the proxy made with the origin named no server: its first, and the one
        // asking for h2 that follows an answer without ALPN (this origin negotiates none), which
        // comes once the first is closed (an origin serving one connection at a time is answered).
        let seen = Self.namesOnceSeen(names)
        let lines = seen.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0 == "None" }, "the origin's ClientHellos named \(seen)")
    }
}
