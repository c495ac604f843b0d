import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy pin-check` against a real local TLS server: allow, block, not pinned, and a
/// report-only policy whose report reaches a local collector with TrustKit's 16 keys.
@Suite(.serialized) struct PinCheckCommandTests {
    let fixture: PKIFixture
    let server: BackgroundServer
    let host = "api.acme.dev"

    init() throws {
        fixture = try PKIFixture()
        server = try BackgroundServer.tlsServer(for: host, signedBy: fixture)
    }

    var rootPin: String { SPKIPin.base64SHA256(fixture.root.spkiDER) }
    static let otherPins = ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="]

    func policy(_ name: String, domain: String, pins: [String], enforce: Bool = true, reportURI: String? = nil) throws -> String {
        var entry: [String: Any] = ["TSKPublicKeyHashes": pins, "TSKEnforcePinning": enforce, "TSKDisableDefaultReportUri": true]
        if let reportURI { entry["TSKReportUris"] = [reportURI] }
        let data = try JSONSerialization.data(withJSONObject: ["TSKPinnedDomains": [domain: entry]])
        return fixture.directory.write(name, String(decoding: data, as: UTF8.self))
    }

    func pinCheck(_ policy: String, _ extra: [String] = []) throws -> (Subprocess.Result, [String: Any]) {
        let result = try Subprocess.run(Subprocess.devproxy, ["pin-check", "https://\(host):\(server.port)/", "--policy", policy,
                                                              "--resolve", "\(host):\(server.port):127.0.0.1",
                                                              "--ca-file", fixture.rootPath, "--json"] + extra, timeout: 30)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, object)
    }

    @Test func teamRootPinAllowsAndNamesTheMatchingCertificate() throws {
        let (result, json) = try pinCheck(try policy("allow.json", domain: host, pins: [rootPin, Self.otherPins[0]]))
        #expect(result.status == 0, "\(result.output)")
        #expect(json["decision"] as? String == "allow")
        #expect(json["result"] as? Int == 0)
        #expect(json["policy_domain"] as? String == host)
        #expect(json["matched_pin"] as? String == "sha256/" + rootPin)
        #expect((json["matched_certificate"] as? [String: Any])?["subject"] as? String == fixture.root.subject)
        #expect(json["report"] is NSNull)
        server.stop()
    }

    @Test func foreignPinsBlockWithResultOneAndAReport() throws {
        let (result, json) = try pinCheck(try policy("block.json", domain: host, pins: Self.otherPins, reportURI: "http://127.0.0.1:9/r"))
        #expect(result.status == 1, "\(result.output)")
        #expect(json["decision"] as? String == "block")
        #expect(json["result"] as? Int == 1)
        let report = try #require(json["report"] as? [String: Any])
        #expect(report["validation-result"] as? Int == 1)
        #expect((json["reports_sent"] as? [Any])?.isEmpty == true, "nothing is sent without --send-reports")
        server.stop()
    }

    @Test func unpinnedHostIsNotPinned() throws {
        let (result, json) = try pinCheck(try policy("other.json", domain: "other.acme.dev", pins: [rootPin, Self.otherPins[0]]))
        #expect(result.status == 2, "\(result.output)")
        #expect(json["decision"] as? String == "not_pinned")
        #expect(json["policy_domain"] is NSNull)
        server.stop()
    }

    @Test func reportOnlyPolicySendsTheSixteenKeyReport() throws {
        let inbox = TemporaryDirectory()
        let collector = try BackgroundServer(script: BackgroundServer.reportScript, arguments: [inbox.path])
        defer { collector.stop() }
        let uri = "http://127.0.0.1:\(collector.port)/trustkit/report"
        let (result, json) = try pinCheck(try policy("report-only.json", domain: host, pins: [Self.otherPins[0]], enforce: false,
                                                    reportURI: uri), ["--send-reports"])
        #expect(result.status == 0, "\(result.output)")
        #expect(json["decision"] as? String == "allow")
        #expect(json["result"] as? Int == 1)
        let sent = try #require((json["reports_sent"] as? [[String: Any]])?.first)
        #expect(sent["status"] as? Int == 204, "\(sent)")
        let body = try #require(FileManager.default.contents(atPath: inbox.file("post-0.json")))
        let report = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let keys: Set<String> = ["app-bundle-id", "app-version", "app-platform", "app-platform-version", "app-vendor-id",
                                 "trustkit-version", "date-time", "hostname", "port", "noted-hostname", "include-subdomains",
                                 "enforce-pinning", "validated-certificate-chain", "known-pins", "validation-result",
                                 "known-pins-expiration-date"]
        #expect(Set(report.keys) == keys)
        #expect(report["port"] as? Int == 0)
        #expect(report["enforce-pinning"] as? Bool == false)
        let chain = try #require(report["validated-certificate-chain"] as? [String])
        #expect(chain.count == 3, "leaf, intermediate, root")
        #expect(chain[0].contains("\r\n"), "TrustKit wraps PEM base64 with CRLF")
        #expect(String(decoding: body, as: UTF8.self).contains("\\/"), "slashes escaped as NSJSONSerialization does")
        #expect(inbox.read("path.txt") == "/trustkit/report application/json")
        server.stop()
    }
}
