import Foundation
import TestSupport
import Testing

/// The web UI's "Compare": its line diff and JSON canonical form (`Assets/compare-diff.js`) run under
/// Node, and the comparison in a real headless Chromium over flows made through the proxy.
@Suite struct CompareDiffTests {
    static let nodeMissing: Bool = (try? Subprocess.run("sh", ["-c", "command -v node"]).status != 0) ?? true

    /// `Resources/compare_diff_test.js`: every edit script turns a into b and keeps a longest common
    /// subsequence (against a dynamic-programming LCS on 4,000 random small pairs), one changed line
    /// of 40,000 is one removal and one addition, past its budget the diff says it is approximate and
    /// is still an edit script, lines split at LF, CR LF and CR, and JSON's canonical form sorts keys at
    /// every depth and keeps numbers by value, or as written past a double's precision.
    @Test(.enabled(if: !nodeMissing, "needs node")) func theLineDiffIsShortestAndJSONIsCanonical() throws {
        let here = URL(fileURLWithPath: #filePath)
        let script = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TestSupport/Resources/compare_diff_test.js").path
        let source = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/WebUI/Assets/compare-diff.js").path
        // Node 20 reads JSON.parse's source text behind this flag; Chromium has it by default.
        let result = try Subprocess.run("node", ["--harmony-json-parse-with-source", script, source], timeout: 120)
        let expected: Set = ["shortest-edit-scripts", "one-line-changed", "budget-approximates", "line-ends",
                             "json-keys-sorted-numbers-kept", "json-order-is-no-difference", "not-json-is-null"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }
}

/// Compare in the page (`Resources/webui_compare.py`): `devproxy run --web`, curl requests through it
/// to the script's origin. Two GETs that differ in one header, one query parameter and one JSON field
/// (their keys in another order) compare as exactly those three differences; the base is marked in
/// the list; the address round-trips (`#compare=BASE,OTHER`, a reload, swap, Esc, a typed address);
/// `c` sets and unsets the base and compares; markup in a header value and a body stays text; 1.5 MB
/// bodies compare their first MiB (JSON cut there is said to be compared as text), and a worst-case
/// diff runs in the worker while the page's timers stay on time; two URL-encoded forms compare by
/// field; a request still waiting compares what it has, and again when it ends; Clear closes a
/// comparison and unsets the base.
@Suite(.serialized) struct WebUICompareBrowserTests {
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func twoFlowsAreComparedSideBySide() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_compare.py",
                                          timeout: 240)
        let expected: Set = ["base-marked-in-list", "compare-with-base-offered", "header-difference-exact",
                             "query-difference-exact", "json-field-difference-exact", "nothing-else-differs",
                             "sides-base-left", "only-differences-toggle", "address-says-compare",
                             "reload-opens-comparison", "swap-reverses", "escape-closes", "typed-address-opens",
                             "c-key-sets-and-unsets-base", "c-key-compares", "markup-shown-as-text",
                             "form-fields-compared", "big-bodies-first-mib", "cut-json-said",
                             "big-bodies-page-answers", "running-flow-compares-what-it-has",
                             "running-flow-compared-again-when-ended", "clear-closes-and-unsets", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        _ = proxy.stop()
    }
}
