import Foundation
import Testing
import TestSupport

/// The README's web UI screenshots (`Resources/webui_screenshots.py`): an app's day of flows on
/// api.acme.dev and cdn.acme.dev (`--resolve` sends both names to the script's origin), then the
/// list with a marked and commented 500 and a request still waiting, a gzip JSON response in the
/// pane (light and dark), a chat's WebSocket messages both ways, and the Rules view with a mock
/// made from a flow; then the Pinning panel: curl through the proxy over TLS (a second origin) to
/// hosts under the personas team, unpinned, untrusted and tls12 (trusting the team root and the
/// QA alternate root; pay.acme.dev's client pins the team root's key and hangs up), and TrustKit,
/// TrustKit-Android and RFC 7469 pin-failure reports posted through it (`--sink-reports` answers
/// 204); the panel must show each host's verdict and the three reports. Each view must render,
/// with no page error or CSP violation; beside the pane the Host column shows `api.acme.dev:PORT`
/// whole and the Method column its title (they were cut); an image says its size in pixels, and a
/// body that does not decode as its image type says so (it drew an empty box).
///
/// The pictures go to a temporary directory, or with `DEVPROXY_SCREENSHOTS=DIR` to DIR
/// (`scripts/webui-screenshots` writes `docs/screenshots/` so).
@Suite(.serialized) struct WebUIScreenshotTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../TestSupport/Resources/webui_screenshots.py").standardized.path

    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theREADMEViewsRender() throws {
        let dir = TemporaryDirectory()
        let origin = try ScriptServer([Self.script, "serve"])
        let tls = try ScriptServer([Self.script, "serve-tls", dir.path])
        // The pinning panel's hosts: a QA alternate root for `unpinned`, a persona each (team by default).
        let qa = try Subprocess.run(Subprocess.devproxy, ["qa", "init", "--ca-dir", dir.file("ca")])
        try #require(qa.status == 0, "\(qa.output)")
        var arguments = ["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"), "--web", "127.0.0.1:0",
                         "--quiet", "--upstream-ca", dir.file("origin.pem"), "--sink-reports",
                         // Not ./reports.jsonl (the run has no --log): that is the checkout's root.
                         "--reports", dir.file("reports.jsonl")]
        for rule in ["pay.acme.dev=unpinned", "cdn.acme.dev=unpinned", "auth.acme.dev=untrusted",
                     "login.acme.dev=tls12"] {
            arguments += ["--persona", rule]
        }
        for name in ["api.acme.dev", "cdn.acme.dev"] {
            arguments += ["--resolve", "\(name):\(origin.port):127.0.0.1"]
        }
        for name in ["api", "pay", "cdn", "auth", "login", "reports"] {
            arguments += ["--resolve", "\(name).acme.dev:\(tls.port):127.0.0.1"]
        }
        let proxy = try DevProxyProcess(arguments, environment: ["DEVPROXY_EMAIL": "ana@acme.dev"], webUI: true)
        let ui = try #require(proxy.webUI)
        let shots = ProcessInfo.processInfo.environment["DEVPROXY_SCREENSHOTS"] ?? dir.file("shots")
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let result = try Subprocess.run("python3", [Self.script, "shoot", "--ui", ui, "--proxy",
                                                    "http://127.0.0.1:\(proxy.port)", "--origin-port", "\(origin.port)",
                                                    "--tls-port", "\(tls.port)", "--ca", dir.file("ca"),
                                                    "--shots", shots], timeout: 180)
        let expected: Set = ["list", "detail", "host-and-method-whole-beside-pane", "image-facts", "websocket", "rules",
                             "pinning", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        for name in ["list", "detail", "detail-dark", "websocket", "rules", "pinning"] {
            #expect(FileManager.default.fileExists(atPath: "\(shots)/\(name).png"), "no \(name).png")
        }
        _ = proxy.stop()
    }
}
