import Foundation
import Testing
import TestSupport

/// How the web UI shows bodies, in a real headless Chromium (`Resources/webui_bodies.py`): `devproxy
/// run` with its UI on a free loopback port, flows made with curl through it to an origin the
/// script runs, each body opened in the detail pane.
@Suite(.serialized) struct WebUIBodyFormatTests {
    /// The worker's formatting gives the same text for a body that arrives whole or a few bytes at
    /// a time. XML (SOAP, RSS) and HTML bodies show indented by element, as text (the page's script
    /// never runs, no element is made of it), with the body as sent one click away and back; XML that is
    /// not well-formed shows as sent with a line saying why; white space inside `<pre>` and
    /// `<textarea>` stays as sent (the pretty view trimmed it); a 3 MB one-line XML is formatted in
    /// the worker (no main-thread task over 250 ms). JSON's `\u00e9`, `\u4e2d`, surrogate pairs and
    /// `\/` read as their characters (and are found by them) while NUL, controls, lone surrogates,
    /// `\"` and `\n` stay escapes, and the raw view is the body byte for byte. Find in the hex
    /// dump takes hex bytes (`de ad be ef`, `DEADBEEF`) and text, marks the bytes in both columns,
    /// and walks the matches. JSON and XML nested 60,000 deep open (indentation stops growing at
    /// depth 64; it made the output quadratic and ran the worker out of memory).
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright (scripts/test installs them)"))
    func bodiesShowPrettyRawAndFindable() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_bodies.py",
                                          timeout: 240)
        let expected: Set = ["formatter-chunked", "xml-pretty", "xml-pretty-raw", "xml-folds", "rss-pretty",
                             "rss-pretty-raw",
                             "html-pretty", "html-pretty-raw", "html-pretty-runs-nothing", "xml-broken-raw-with-reason",
                             "json-escapes-shown", "json-escapes-shown-raw", "json-escapes-findable", "hex-find-bytes",
                             "hex-find-text", "hex-find-capped", "deep-json-opens", "deep-xml-opens", "big-xml-pretty",
                             "big-xml-no-long-task", "no-page-errors", "html-pre-kept"]
        let passed = WebUIBrowser.passed(result)
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(passed).isEmpty, "missing: \(expected.subtracting(passed))\n\(result.output)")
        _ = proxy.stop()
    }
}
