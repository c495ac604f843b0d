import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The `tls12` and `no-forward-secrecy` personas against a real TLS client (`openssl s_client`
/// through the proxy's CONNECT), and `qa verdict` telling refused from accepted.
@Suite struct TLSPersonaTests {
    let fixture: PKIFixture

    init() throws {
        fixture = try PKIFixture()
    }

    /// `openssl s_client` to `host` through the proxy; returns its combined output.
    func sClient(_ port: Int, _ host: String, _ extra: [String]) throws -> String {
        let command = "echo | openssl s_client -proxy 127.0.0.1:\(port) -connect \(host):443 -servername \(host) "
            + "-CAfile \(fixture.rootPath) \(extra.joined(separator: " ")) 2>&1"
        return try Subprocess.run("bash", ["-c", command], timeout: 20).stdout
    }

    @Test func tls12RefusesTLS13OnlyClientsAndNoForwardSecrecyOffersRSAKeyExchangeOnly() throws {
        let log = fixture.directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath, "--quiet",
                                         "--log", log, "--persona", "v12.acme.dev=tls12",
                                         "--persona", "rsa.acme.dev=no-forward-secrecy"])
        let tls13 = try sClient(proxy.port, "v12.acme.dev", ["-tls1_3"])
        #expect(tls13.contains("alert protocol version"), "\(tls13)")
        let tls12 = try sClient(proxy.port, "v12.acme.dev", [])
        #expect(tls12.contains("New, TLSv1.2") && tls12.contains("Verify return code: 0 (ok)"), "\(tls12)")
        let ecdhe = try sClient(proxy.port, "rsa.acme.dev", ["-tls1_2", "-cipher", "ECDHE"])
        #expect(ecdhe.contains("alert handshake failure"), "\(ecdhe)")
        let rsa = try sClient(proxy.port, "rsa.acme.dev", [])
        #expect(rsa.contains("Cipher is AES128-GCM-SHA256") && rsa.contains("Server public key is 2048 bit"), "\(rsa)")
        #expect(rsa.contains("Verify return code: 0 (ok)"), "\(rsa)")
        let team = try sClient(proxy.port, "api.acme.dev", [])
        #expect(team.contains("New, TLSv1.3"), "\(team)")
        _ = proxy.stop()

        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--json"])
        let object = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        let verdicts = (object["verdicts"] as? [[String: Any]]) ?? []
        let byHost = Dictionary(verdicts.map { ("\($0["host"] ?? "")/\($0["persona"] ?? "")", $0["verdict"] as? String ?? "") }) { $1 }
        // Each persona host saw one refused handshake; the accepted handshakes sent no request.
        #expect(byHost["v12.acme.dev/tls12"] == "refused", "\(result.output)")
        #expect(byHost["rsa.acme.dev/no-forward-secrecy"] == "refused", "\(result.output)")
    }

    /// Flows keep the persona that chose what the client saw: a `passthrough` persona's tunnel had
    /// none, and a bad request after an intercepted handshake had no host, port or persona, so
    /// `qa verdict` showed both as spurious `team inconclusive` rows. The persona column fits
    /// `no-forward-secrecy` (it read `no-forward-s`).
    @Test func passthroughTunnelsAndBadRequestsKeepTheirPersona() throws {
        let log = fixture.directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath, "--quiet",
                                         "--log", log, "--persona", "rsa.acme.dev=no-forward-secrecy",
                                         "--persona", "pt.acme.dev=passthrough", "--resolve", "pt.acme.dev:443:127.0.0.1"])
        // `echo |` sends a bare LF after the handshake: a bad request.
        let rsa = try sClient(proxy.port, "rsa.acme.dev", [])
        #expect(rsa.contains("Cipher is AES128-GCM-SHA256"), "\(rsa)")
        _ = try sClient(proxy.port, "pt.acme.dev", [])
        _ = proxy.stop()
        let flows = try FlowLogReader.read(path: log).flows
        let bad = try #require(flows.first { $0.error?.kind == "bad_request" })
        #expect(bad.server.host == "rsa.acme.dev" && bad.server.port == 443 && bad.persona == "no-forward-secrecy")
        #expect(bad.signer?.email == "ana@acme.dev")
        let tunnel = try #require(flows.first { $0.mode == .tunnel })
        #expect(tunnel.server.host == "pt.acme.dev" && tunnel.persona == "passthrough", "\(tunnel)")
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log])
        let rows = result.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }
        #expect(rows.count == 2, "\(result.output)")
        #expect(rows.contains { $0.hasPrefix("pt.acme.dev   passthrough         inconclusive  passed through undecrypted") },
                "\(result.output)")
        #expect(rows.contains { $0.hasPrefix("rsa.acme.dev  no-forward-secrecy  inconclusive") }, "\(result.output)")
    }

    @Test func acceptedWhenARequestGoesThroughUnderTLS12() throws {
        let origin = try OriginServer()
        let log = fixture.directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", fixture.store.directory, "--intermediate", fixture.bundlePath, "--quiet",
                                         "--log", log, "--upstream-ca", origin.caPath, "--persona", "localhost=tls12"])
        let curl = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", fixture.rootPath,
                                               origin.url("/cl?n=5")])
        #expect(curl.stdout == "hello", "\(curl.output)")
        let refused = try Subprocess.run("curl", ["-sS", "--tlsv1.3", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                  "--cacert", fixture.rootPath, origin.url("/cl?n=5")])
        #expect(refused.status != 0)
        _ = proxy.stop()
        let result = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--host", "localhost"])
        #expect(result.stdout.contains("accepted"), "\(result.output)")
        #expect(result.stdout.contains("went through while DevProxy offered at most TLS 1.2"), "\(result.output)")
    }
}
