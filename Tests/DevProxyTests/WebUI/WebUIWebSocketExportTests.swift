import CertAuthority
@testable import DevProxy
import Foundation
import TestSupport
import Testing
@testable import WebUI

/// Copy as curl of a WebSocket: the HTTP/1.1 Upgrade handshake curl can send, whichever way the
/// socket was opened, run against the real origin (hypercorn, which takes both); the other
/// formats say why they cannot write one.
@Suite struct WebUIWebSocketExportTests {
    /// The exported command, run against the origin with its CA: what curl printed (headers
    /// first, `-i`). It waits for frames after the 101, so it is cut after 3 s.
    private static func run(_ command: String, origin: HTTP2Origin) throws -> Subprocess.Result {
        try Subprocess.run("sh", ["-c", command.trimmingCharacters(in: .newlines)
                                  + " --cacert '\(origin.caPath)' --max-time 3 -sS"], timeout: 20)
    }

    /// A WebSocket over HTTP/2 (RFC 8441) was copied as `curl -X 'CONNECT' … --http2`, which
    /// opens no WebSocket (curl sends no `:protocol`; hypercorn dropped the stream).
    @Test func aWebSocketOverHTTP2IsCopiedAsTheHTTP1Handshake() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let ui = try WebUIHarness(withProxy: true) { $0.upstreamCAs = [try! Certificate.all(
            from: try! SecureFile.read(origin.caPath, what: "ca"))[0]] }
        let proxy = try #require(ui.proxy)
        let client = try Subprocess.run("python3", [HTTP2Origin.resource("h2websocket.py"), "\(proxy.port)",
                                                    proxy.pki.rootPath, "localhost", "\(origin.port)", "/ws",
                                                    "--message", "hello"], timeout: 30)
        #expect(client.stdout.contains("\"status\": 200"), "\(client.output)")
        let flow = try #require(try WebUIProxyTests.flow(ui, url: origin.url("/ws")))
        #expect(flow["http_version"] as? String == "HTTP/2" && flow["method"] as? String == "CONNECT", "\(flow)")
        let id = try #require(flow["id"] as? String)

        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.hasPrefix("curl --http1.1 -i -N '\(origin.url("/ws"))'"), "\(command)")
        #expect(!command.contains("CONNECT") && !command.contains("--http2"), "\(command)")
        #expect(command.contains("-H 'Upgrade: websocket'") && command.contains("-H 'Connection: Upgrade'"), "\(command)")
        #expect(command.contains("-H 'Sec-WebSocket-Key: "), "\(command)")
        let answer = try Self.run(command, origin: origin)
        #expect(answer.stdout.hasPrefix("HTTP/1.1 101"), "\(answer.output)")
        #expect(answer.stdout.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "\(answer.output)")

        let fetch = try ui.request("/api/flows/\(id)/export?format=fetch")
        #expect(fetch.status == 422 && fetch.text.contains("opened a WebSocket"), "\(fetch.status) \(fetch.text)")
    }

    /// An HTTP/1.1 handshake's copy lost `Upgrade` and `Connection` (hop-by-hop, left out of every
    /// copy): curl sent a plain GET, which hypercorn does not upgrade.
    @Test func anHTTP1WebSocketIsCopiedWithItsUpgrade() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let ui = try WebUIHarness(withProxy: true) { $0.upstreamCAs = [try! Certificate.all(
            from: try! SecureFile.read(origin.caPath, what: "ca"))[0]] }
        let proxy = try #require(ui.proxy)
        let opened = try proxy.curl(["--http1.1", "-i", "-N", "--max-time", "2", origin.url("/ws?h1"),
                                     "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
                                     "-H", "Sec-WebSocket-Version: 13", "-H", "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA=="])
        // (-i shows the proxy's answer to the CONNECT first.)
        #expect(opened.stdout.contains("HTTP/1.1 101"), "\(opened.output)")
        let flow = try #require(try WebUIProxyTests.flow(ui, url: origin.url("/ws?h1")))
        let id = try #require(flow["id"] as? String)

        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.contains("-H 'Upgrade: websocket'") && command.contains("-H 'Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA=='"),
                "\(command)")
        let answer = try Self.run(command, origin: origin)
        #expect(answer.stdout.hasPrefix("HTTP/1.1 101"), "\(answer.output)")
    }
}
