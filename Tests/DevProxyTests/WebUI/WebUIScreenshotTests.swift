import Foundation
import Testing
import TestSupport

/// The README's web UI screenshots (`Resources/webui_screenshots.py`): an app's day of flows on
/// api.acme.dev and cdn.acme.dev (`--resolve` sends both names to the script's origin), then the
/// list with a marked and commented 500 and a request still waiting, a gzip JSON response in the
/// pane (light and dark), a chat's WebSocket messages both ways, and the Rules view with a mock
/// made from a flow. Each view must render, with no page error or CSP violation; beside the pane
/// the Host column shows `api.acme.dev:PORT` whole and the Method column its title (they were cut);
/// an image says its size in pixels, and a body that does not decode as its image type says so
/// (it drew an empty box).
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
        var arguments = ["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"), "--web", "127.0.0.1:0",
                         "--quiet"]
        for name in ["api.acme.dev", "cdn.acme.dev"] {
            arguments += ["--resolve", "\(name):\(origin.port):127.0.0.1"]
        }
        let proxy = try DevProxyProcess(arguments, environment: ["DEVPROXY_EMAIL": "ana@acme.dev"], webUI: true)
        let ui = try #require(proxy.webUI)
        let shots = ProcessInfo.processInfo.environment["DEVPROXY_SCREENSHOTS"] ?? dir.file("shots")
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let result = try Subprocess.run("python3", [Self.script, "shoot", "--ui", ui, "--proxy",
                                                    "http://127.0.0.1:\(proxy.port)", "--origin-port", "\(origin.port)",
                                                    "--shots", shots], timeout: 120)
        let expected: Set = ["list", "detail", "host-and-method-whole-beside-pane", "image-facts", "websocket", "rules", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        for name in ["list", "detail", "detail-dark", "websocket", "rules"] {
            #expect(FileManager.default.fileExists(atPath: "\(shots)/\(name).png"), "no \(name).png")
        }
        _ = proxy.stop()
    }
}
