import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The defaults that keep decrypted traffic and keys to their owner: loopback unless told
/// otherwise, proxy credentials enforced, secrets masked in the log, private files 0600.
@Suite struct SecurityDefaultsTests {
    /// Listening on every interface without `allowRemote` is refused before any client can connect.
    @Test func nonLoopbackListenNeedsAllowRemote() throws {
        let pki = try PKIFixture()
        var configuration = ProxyConfiguration()
        configuration.listenHost = "0.0.0.0"
        configuration.listenPort = 0
        let server = try ProxyServer(configuration: configuration, leaves: LeafCache(issuer: LeafIssuer(signer: pki.signer)), sinks: [])
        #expect { try server.start() } throws: { error in
            "\(error)".contains("refusing to listen on 0.0.0.0") && error is ConfigurationError
        }
        #expect(server.address == nil, "a refused server must not keep its listener")
        configuration.allowRemote = true
        let allowed = try ProxyServer(configuration: configuration, leaves: LeafCache(issuer: LeafIssuer(signer: pki.signer)), sinks: [])
        try allowed.start()
        #expect(allowed.address?.isLoopback == false)
        allowed.stop()
    }

    /// With `proxyCredentials`, a client without them gets 407 and a challenge; with them, 200.
    @Test func proxyCredentialsAreEnforced() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let proxy = try ProxyHarness(configure: { $0.proxyCredentials = [ProxyCredential(user: "qa", password: "s3cret")] })
        let url = "http://127.0.0.1:\(origin.port)/"
        let without = try proxy.curl(["-D", "-", "-w", "\n%{http_code}", url])
        #expect(without.stdout.hasSuffix("\n407"), "\(without.output)")
        #expect(without.stdout.contains("Proxy-Authenticate: Basic realm=\"DevProxy\""))
        let wrong = try proxy.curl(["-w", "\n%{http_code}", "--proxy-user", "qa:guess", url])
        #expect(wrong.stdout.hasSuffix("\n407") && wrong.stdout.contains("wrong proxy credentials"), "\(wrong.output)")
        let with = try proxy.curl(["-w", "\n%{http_code}", "--proxy-user", "qa:s3cret", url])
        #expect(with.stdout == "ok\n200", "\(with.output)")
        let flows = proxy.flows(count: 3)
        #expect(flows.map(\.error?.kind) == ["proxy_auth_required", "proxy_auth_required", nil])
        // A refusal names the host the request named (it had host "" and port 0).
        #expect(flows.prefix(2).allSatisfy { $0.server.host == "127.0.0.1" && $0.server.port == origin.port },
                "\(flows.map(\.server))")
        #expect(flows.last?.request?.headers.contains(["Proxy-Authorization", "<redacted>"]) == true,
                "\(String(describing: flows.last?.request?.headers))")
        let logged = try String(decoding: JSONEncoder().encode(flows), as: UTF8.self)
        #expect(!logged.contains("czNjcmV0") && !logged.contains("Z3Vlc3"), "proxy passwords must not reach the log in clear base64")
    }

    /// `--redact Authorization` masks the header's value in the flow and in the JSON Lines file,
    /// in both directions (Set-Cookie from upstream too).
    @Test func redactedHeadersNeverReachTheLog() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nSet-Cookie: session=topsecret\r\nContent-Length: 2\r\n\r\nok")
        let directory = TemporaryDirectory()
        let pki = try PKIFixture()
        let log = try JSONLinesFlowLog(path: directory.file("flows.jsonl"))
        let sink = CollectingSink()
        var configuration = ProxyConfiguration()
        configuration.listenPort = 0
        configuration.redactHeaders = ["authorization", "Set-Cookie"]
        let server = try ProxyServer(configuration: configuration, leaves: LeafCache(issuer: LeafIssuer(signer: pki.signer)),
                                     sinks: [sink, log])
        try server.start()
        defer { server.stop() }
        let port = try #require(server.address?.port)
        let result = try Subprocess.run("curl", ["-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(port)",
                                                 "-H", "Authorization: Bearer hunter2", "-H", "X-Visible: yes",
                                                 "http://127.0.0.1:\(origin.port)/"])
        #expect(result.stdout == "ok", "\(result.output)")
        let deadline = Date().addingTimeInterval(5)
        while sink.flows.isEmpty && Date() < deadline { usleep(10_000) }
        let flow = try #require(sink.flows.first)
        #expect(flow.request?.headers.contains(["Authorization", "<redacted>"]) == true, "\(String(describing: flow.request?.headers))")
        #expect(flow.request?.headers.contains(["X-Visible", "yes"]) == true)
        #expect(flow.response?.headers.contains(["Set-Cookie", "<redacted>"]) == true)
        #expect(origin.receivedHeads.first?.contains("Authorization: Bearer hunter2") == true, "redaction is for the log only")
        server.stop()
        let text = directory.read("flows.jsonl")
        #expect(text.contains("<redacted>"))
        #expect(!text.contains("hunter2") && !text.contains("topsecret"))
        #expect(directory.mode("flows.jsonl") == 0o600)
    }

    /// The ledger and the intermediates directory are private too (root key, bundle and flow
    /// log modes are pinned in CertAuthorityTests and JSONLinesFlowLogTests).
    @Test func ledgerAndIntermediatesArePrivate() throws {
        let pki = try PKIFixture()
        #expect(pki.directory.mode(pki.store.ledgerPath) == 0o600)
        #expect(pki.directory.mode(pki.store.intermediatesDirectory) == 0o700)
        #expect(pki.directory.mode(pki.store.directory) == 0o700)
    }
}
