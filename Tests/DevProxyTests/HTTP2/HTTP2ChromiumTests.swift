import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Headless Chromium (Debian's /usr/bin/chromium, driven by Playwright from PyPI) loading a page
/// from an h2-only origin (nghttpd) through DevProxy: the browser offers h2 first, as it does in
/// production, and must get it end to end.
@Suite(.serialized) struct HTTP2ChromiumTests {
    /// Runs `page` (Python, run with `page` a new tab of headless Chromium, `url` and `extra` the
    /// arguments after the proxy's) through `proxy`, and returns what it printed. Chromium trusts no
    /// team root here; it accepts a chain holding a key of a pin list instead: the intermediate that
    /// signs DevProxy's leaves, and the root.
    private static func chromium(through proxy: ProxyHarness, url: String, extra: [String] = [],
                                 page: String) throws -> Subprocess.Result {
        let pins = [proxy.pki.intermediate, proxy.pki.root].map { SPKIPin.base64SHA256($0.spkiDER) }
        let body = page.split(separator: "\n", omittingEmptySubsequences: false).map { "        " + $0 }
            .joined(separator: "\n")
        let script = """
            import json, sys
            from playwright.sync_api import sync_playwright
            proxy, pins, url = sys.argv[1:4]
            extra = sys.argv[4:]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                    "--proxy-server=" + proxy, "--proxy-bypass-list=<-loopback>",
                    "--ignore-certificate-errors-spki-list=" + pins])
                try:
                    page = browser.new_page()
            \(body)
                finally:
                    browser.close()
            """
        return try Subprocess.run("python3", ["-c", script, "127.0.0.1:\(proxy.port)", pins.joined(separator: ","), url] + extra,
                                  timeout: 90)
    }

    /// The page loads, the browser says it spoke h2 (`nextHopProtocol`, what it negotiated with
    /// the leaf DevProxy minted), and the flow says `HTTP/2` on both sides with ALPN `h2`.
    @Test(.backstop) func chromiumLoadsAPageOverHTTP2() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("page.html", Array("<html><body><h1 id=t>served over h2</h1></body></html>\n".utf8))
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let result = try Self.chromium(through: proxy, url: origin.url("/page.html"), page: """
            response = page.goto(url, timeout=30000)
            print(json.dumps({
                "status": response.status,
                "text": page.inner_text("#t"),
                "protocol": page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol"),
            }))
            """)
        struct Seen: Decodable {
            var status: Int
            var text: String
            var `protocol`: String
        }
        let seen = try JSONDecoder().decode(Seen.self, from: Data(result.stdout.utf8))
        #expect(seen.status == 200, "\(result.output)")
        #expect(seen.text == "served over h2")
        #expect(seen.protocol == "h2")
        // The page's flow; Chromium may also ask for /favicon.ico on the same connection.
        let deadline = Date().addingTimeInterval(10)
        var page: Flow?
        while page == nil && Date() < deadline {
            page = proxy.sink.flows.first { $0.request?.url.hasSuffix("/page.html") == true }
            if page == nil { usleep(20_000) }
        }
        let flow = try #require(page)
        #expect(flow.request?.httpVersion == "HTTP/2")
        #expect(flow.response?.httpVersion == "HTTP/2")
        #expect(flow.response?.status == 200)
        #expect(flow.tls?.client?.alpn == "h2")
        #expect(flow.tls?.upstream?.alpn == "h2")
        #expect(flow.request?.pseudoHeaders?.contains([":path", "/page.html"]) == true)
        #expect(flow.request?.headers.contains { $0.first == "user-agent" && $0.last?.contains("Chrome") == true } == true)
        #expect(flow.error == nil)
    }

    /// A WebSocket opened by a page whose origin (hypercorn) enables extended CONNECT: Chromium
    /// sees the setting from DevProxy too, opens the socket as a stream of its h2 connection (RFC
    /// 8441), as it would without us, and the flow records it: `CONNECT` with `:protocol`
    /// websocket over HTTP/2, and the messages both ways.
    @Test(.backstop) func chromiumOpensAWebSocketOverHTTP2() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let result = try Self.chromium(through: proxy, url: origin.url("/echo"), extra: ["wss://localhost:\(origin.port)/ws"],
                                       page: """
            page.goto(url, timeout=30000)
            echoed = page.evaluate(\"\"\"socketURL => new Promise((resolve, reject) => {
                const socket = new WebSocket(socketURL);
                socket.onopen = () => socket.send("from chromium");
                socket.onmessage = event => { socket.close(1000); resolve(event.data); };
                socket.onerror = () => reject(new Error("the WebSocket failed"));
                setTimeout(() => reject(new Error("no echo within 10 s")), 10000);
            })\"\"\", extra[0])
            page.wait_for_timeout(300)
            print(json.dumps({"echoed": echoed}))
            """)
        #expect(result.stdout.contains(#""echoed": "echo:from chromium""#), "\(result.output)")
        let deadline = Date().addingTimeInterval(10)
        var socket: Flow?
        while socket == nil && Date() < deadline {
            socket = proxy.sink.flows.first { $0.mode == .websocket }
            if socket == nil { usleep(20_000) }
        }
        let flow = try #require(socket, "flows: \(proxy.sink.flows.map { $0.request?.url ?? "" })")
        #expect(flow.request?.method == "CONNECT" && flow.request?.httpVersion == "HTTP/2",
                "\(String(describing: flow.request))")
        #expect(flow.request?.pseudoHeaders?.contains([":protocol", "websocket"]) == true)
        #expect(flow.request?.url == "https://localhost:\(origin.port)/ws")
        let texts = (flow.websocket ?? []).filter { $0.opcode == "text" }
        #expect(texts.map { $0.text ?? "" } == ["from chromium", "echo:from chromium"], "\(String(describing: flow.websocket))")
        #expect(flow.error == nil, "\(String(describing: flow.error))")
    }
}
