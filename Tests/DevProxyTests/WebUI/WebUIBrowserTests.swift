import Foundation
import Testing
import TestSupport

/// The web UI in a real headless Chromium (Debian's, through Playwright): `devproxy run` with
/// its UI on a free loopback port, the page opened from the printed `web ui:` line, and flows
/// made with curl through the proxy to an origin the script runs.
@Suite(.serialized) struct WebUIBrowserTests {
    /// One browser session checks, in order: a curl flow appears live; a filter narrows the list
    /// to exactly the matching flows and an invalid one names its column and keeps the list; a
    /// flow still waiting for its response shows its request headers, then its record once it
    /// ends; a body that keeps coming (server-sent events) shows what came so far; a gzip JSON response shows pretty-printed and folds; `r` replays (the origin is hit again,
    /// a new row marked as a replay appears); j/k/Esc; hostile URL, header, JSON key and HTML
    /// body show their characters while no script, image, dialog or CSP violation happens; under
    /// `~c 404` a slow 404, pending when it started, enters the list once it answers (below a
    /// newer one), and under `~q` a pending flow leaves once answered; 4,000 quick flows (800 of
    /// them 404s) made while a filtered list follows them, the filter set and more pages loaded
    /// mid-burst, leave the list's count equal to the API's total and to the 404s made; a 12 MiB JSON response
    /// opens and shows whole with no main-thread task over 200 ms, and scrolls to its last line.
    /// Last (`live_list_checks`): a running flow's pane updates in place (a selection, the focus and
    /// the scroll position survive); sorted by a column, new flows below the loaded rows are counted;
    /// the Host column says host:port for a port not the scheme's; Clear keeps out a flow pending then.
    /// (The README's screenshots are WebUIScreenshotTests'.)
    /// `--quiet`: nothing reads the proxy's stdout after its banner, and a console line per flow
    /// fills the pipe within a thousand flows, which then stalls the proxy.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs /usr/bin/chromium and playwright (scripts/test installs them)"))
    func pageShowsFiltersAndReplaysLiveFlows() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"),
                                         "--web", "127.0.0.1:0", "--body-limit", "67108864", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        #expect(ui.hasPrefix("http://127.0.0.1:") && ui.contains("/?token="), "web ui line: \(ui)")
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", timeout: 360)
        let passed = WebUIBrowser.passed(result)
        let expected: Set = ["token-stripped", "live-update", "grpc-status-in-list", "unused-connection-row", "grpc-status-details", "alt-svc-removed-shown", "ipv6-server-bracketed", "websocket-end-and-not-kept", "ndjson-records-apart",
                             "pending-detail-shows-request", "pending-body-so-far", "slash-focuses-filter", "filter-narrows",
                             "filter-invalid-keeps-list", "gzip-json-pretty", "json-folds", "coding-not-undone-said", "replay", "resend-binary-unchanged", "long-url-keeps-tabs", "keyboard", "deep-links", "pinning-latest-answer-wins", "charset-read", "sort-by-column", "filter-typing-and-pane-arrows", "text-json-pretty", "bom-json-pretty", "hidden-tabs-let-go",
                             "hostile-shown-as-text", "hostile-runs-nothing", "filtered-list-picks-up-late-match",
                             "filtered-list-drops-unmatched", "filtered-count-under-load", "big-json-scrolls-to-end",
                             "big-json-no-long-task", "form-fields", "query-parameters", "protobuf-decoded", "cookies-tables",
                             "websocket-long-message", "websocket-opens-on-messages", "websocket-message-filter", "server-sent-events", "pending-server-sent-events", "grpc-messages-readable",
                             "pending-detail-updates-in-place", "sorted-list-counts-new-below", "host-column-port",
                             "clear-keeps-pending-out"]
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(expected.subtracting(passed).isEmpty, "missing: \(expected.subtracting(passed))\n\(result.output)")
        _ = proxy.stop()
    }

    /// A session store on a disk that fills up (a 1 MiB tmpfs, so root) is said in the open page
    /// within seconds, as an alert that names the reason: the list would otherwise just stop
    /// growing while the proxy goes on serving.
    /// A body the session stored only part of (`--store-body-limit` below its size, under the flow
    /// log's 1 MiB) is said to be cut, not called broken JSON ("the JSON ends early").
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aBodyTheStoreCutIsSaidToBeCut() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--store-body-limit", "100000", "--web", "127.0.0.1:0",
                                         "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", only: "store-cut", timeout: 120)
        #expect(WebUIBrowser.passed(result).contains("store-cut-said"), "\(result.output)")
        _ = proxy.stop()
    }

    /// Edit and resend in the page: the proxy replaced an edited Host with the URL's, so the edit
    /// did nothing; now it goes as typed (to the URL's address). A Host line left as filled in
    /// follows an edited URL, so a request moved to another host does not carry the old one's Host.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theResendDialogSendsTheHostItShows() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", only: "resend-host", timeout: 120)
        let passed = WebUIBrowser.passed(result)
        #expect(passed.isSuperset(of: ["resend-url-takes-its-host", "resend-host-as-typed"]), "\(result.output)")
        _ = proxy.stop()
    }

    @Test(.enabled(if: WebUIBrowser.missing == nil && geteuid() == 0, "needs chromium, playwright and root (tmpfs)"))
    func pageSaysWhenTheSessionStoreCannotWrite() throws {
        let dir = TemporaryDirectory()
        let small = try SmallDisk()
        defer { withExtendedLifetime(small) {} }
        let disk = small.path
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", disk + "/session.sqlite",
                                         "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", only: "store-error", timeout: 120)
        #expect(WebUIBrowser.passed(result).contains("store-error-shown"), "\(result.output)")
        _ = proxy.stop()
    }

    /// Through the proxy from a raw origin: the Response tab lists a 102 and a 103 Early Hints
    /// above the final response, in order, each with its status line, its Link fields (markup in
    /// one shown as text, run never) and when it came after the request began, while the flow runs
    /// too (the list stays the same node as the pane updates in place); past the 20 a flow keeps it
    /// says "3 more not kept". A 4 MB upload the origin answers with 413 after its head:
    /// the Request tab says "Request body cut after N bytes: the origin answered 413 …". The
    /// pane showed neither before. A flow opened while it waits for its answer shows its own tab
    /// once it ends (the Response), not the one the flow shown before it was left on.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func earlyHintsAndACutRequestBodyAreShown() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", only: "informational", timeout: 120)
        let expected: Set = ["early-hints-listed", "early-hints-as-text", "early-hints-while-running", "early-hints-not-kept-counted",
                             "request-body-cut-said", "client-host-said", "a-flow-opened-pending-gets-its-own-tab"]
        #expect(expected.isSubset(of: WebUIBrowser.passed(result)), "\(result.output)")
        _ = proxy.stop()
    }

    /// Where a request went and who signed its leaf (`Resources/webui_where_and_who.py`): a request
    /// sent with `Host: tenant-b.test` to localhost shows `Request named tenant-b.test (its Host; sent on
    /// the connection to localhost:PORT …)` under Server in the Connection tab (the pane said nothing
    /// of `server.request_host`); the facts say `signed by ana@acme.dev (serial …)` and the Signer
    /// column `ana@acme.dev · 1a2b3c4d`, so flows signed before and after her renewed intermediate
    /// was taken mid-run (`SignerWatch`) read apart (both read `ana@acme.dev`), and `~signer SERIAL`
    /// keeps the second's (it took an email only); Edit and resend of the tenant-b flow fills the URL
    /// of localhost, where it went, beside its recorded Host, which the origin gets (it filled
    /// `https://tenant-b.test:PORT`, which does not resolve).
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theDetailSaysWhereARequestWentAndWhoSignedIt() throws {
        let dir = TemporaryDirectory()
        let ca = dir.file("ca")
        #expect(try Subprocess.run(Subprocess.devproxy, ["ca", "init", "--ca-dir", ca]).status == 0)
        let bundle = dir.file("ana.pem")
        func issue(days: Int) throws {
            let issued = try Subprocess.run(Subprocess.devproxy, ["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev",
                                                                  "--days", String(days), "--out", bundle])
            #expect(issued.status == 0, "\(issued.output)")
        }
        try issue(days: 1)
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--intermediate", bundle, "--ca-dir", ca, "--upstream-ca", origin.caPath,
                                         "--resolve", "origin.test:\(origin.port):127.0.0.1", "--web", "127.0.0.1:0",
                                         "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        func curl(_ arguments: [String]) throws {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "--cacert", dir.file("ca/root.pem")] + arguments, timeout: 30)
            #expect(result.status == 0 && result.stdout.contains("Host: "), "\(result.output)")
        }
        try curl([origin.url("/headers?first")])
        // Her next intermediate, copied over the bundle: the running proxy signs with it from now on.
        try issue(days: 7)
        try curl(["https://origin.test:\(origin.port)/headers?second"])
        try curl(["-H", "Host: tenant-b.test", origin.url("/headers?named")])
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_where_and_who.py",
                                          timeout: 120)
        let expected: Set = ["request-host-shown", "signer-serial-in-detail", "signers-told-apart-in-list",
                             "signer-filter-by-serial", "resend-goes-where-original-went", "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        _ = proxy.stop()
    }

    /// A full server (`Resources/webui_full_server.py`): with 64 live-stream readers holding every
    /// connection the UI serves, a 65th gets 503; a tab shown again then says `server full: retrying
    /// in N s`, with a notice naming the limit, tries again after 1 s, 2 s, 4 s… and goes live once
    /// readers leave. An EventSource that gets a 503 closes for good: the page said `disconnected`,
    /// "lost DevProxy", and never came back.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aFullServerIsSaidAndRetried() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_full_server.py",
                                          timeout: 150)
        let expected: Set = ["server-full-refuses", "full-said", "full-retried-with-backoff", "live-again-once-room",
                             "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        _ = proxy.stop()
    }

    /// The page as a daily driver uses it (`Resources/webui_daily.py`), coming from mitmweb and
    /// DevTools: PageDown / PageUp move the selection by a page of rows, Home to the newest flow and
    /// End to the oldest, loading the pages past the first (260 flows); Copy URL, a header row's copy
    /// button, the body's copy (decoded from gzip) and Copy as curl put that text on the clipboard, and
    /// "Copy as ▾" reached by keyboard copies the request as Python (the menu closes, Escape gives the
    /// focus back);
    /// ArrowRight / ArrowLeft step through the open flow's tabs (they did nothing); beside the open pane the Host column shows `127.0.0.1:PORT` whole; in a 480 px window the
    /// list keeps rows above the open pane; a tunnel (passed through) reads `localhost:PORT` in the Host
    /// column and a flow that had 102 and 103 before its 200 is marked `103`. Before: those keys did
    /// nothing, only curl could be copied, the host read `127.0.0.1:…`, the narrow pane took the whole
    /// height, a tunnel's port and the Early Hints were not in the list. A handshake curl refused: the
    /// pane's facts begin with the persona (they began with " · ") and Copy as curl is disabled (it
    /// answered "no HTTP request to repeat"); its row names the port and says what happened in the Path
    /// cell (it read `127.0.0.1` and nothing). Edit and resend opens the flow it sent (the pane stayed
    /// on the original), and the notice floats over the page without moving the list (it pushed the
    /// rows down a line for 6 s); a WebSocket's time and length stay on one line beside a long message;
    /// a row with three markers (marked, failed, the comparison's base) shows all three (`● …`); a
    /// row pressed while a new flow arrives on top, released after the rows moved, opens the flow it
    /// showed when pressed (it opened the one pushed under the pointer, above it), and a script's
    /// click() after a press dragged off the list selects what the row shows; a plain body offers
    /// one download, a gzip one "download" and "download decoded" (a plain one had both, the same file);
    /// a WebSocket's disabled Edit and resend says why (it said nothing).
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theListAnswersTheKeysAndCopiesWhatIsShown() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--passthrough", "localhost",
                                         "--quiet"], webUI: true)
        let ui = try #require(proxy.webUI)
        let result = try WebUIBrowser.run(ui: ui, proxy: "http://127.0.0.1:\(proxy.port)", script: "webui_daily.py",
                                          timeout: 120)
        let expected: Set = ["keyboard-page-down-up", "keyboard-home-end", "copy-url", "copy-header-value", "copy-body",
                             "copy-curl", "copy-as-menu", "host-port-whole-beside-pane", "narrow-window-keeps-list", "tunnel-host-port",
                             "early-hints-marked", "refused-handshake-pane", "tabs-follow-arrows",
                             "refused-handshake-row", "resend-opens-what-it-sent", "notice-keeps-list-still",
                             "websocket-columns-one-line", "three-markers-whole", "pressed-row-selected",
                             "scripted-click-selects-shown-row",
                             "download-decoded-when-coded", "websocket-resend-says-why",
                             "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
        _ = proxy.stop()
    }
}
