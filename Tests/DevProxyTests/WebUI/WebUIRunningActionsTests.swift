import Foundation
import Testing
import TestSupport

/// The flow pane's request actions on a flow still running (`Resources/webui_running_actions.py`,
/// headless Chromium against `devproxy run` and an origin that holds its first request to each path
/// open): a POST long poll's Copy as curl copies its request (the copied command, run with curl,
/// sends the same method and body), Copy as ▾ copies Python code, Replay and the `r` key send it
/// again (the new flow opens as a replay of it), Edit and resend sends its body edited; an upload still in progress has those actions
/// disabled with the reason in their tooltip. The API, with curl: `export?format=curl` and
/// `POST …/replay` answer 200 for the long poll and 409 with one line for the upload; HAR waits for
/// the end. Before, every one of them waited for the flow to end (409 "has not finished yet").
@Suite(.serialized) struct WebUIRunningActionsTests {
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aRunningFlowsRequestIsCopiedAndReplayed() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_running_actions.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        let expected: Set = ["running-copy-curl", "running-copy-as-python", "running-replay", "running-replay-key",
                             "running-edit-and-resend",
                             "api-running-complete", "api-running-expect-continue", "api-running-repeat",
                             "running-upload-disabled", "api-running-upload-refused",
                             "no-page-errors"]
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
    }

    /// A running HTTP/2 flow open in the pane, as it ends (`Resources/webui_running_finish.py`, curl
    /// `--http2` through the proxy, the origin let go just after one of the pane's half-second
    /// refreshes): the live stream's message that it finished makes the pane fetch it at once and
    /// show the finished view (HAR, Raw, Compare), three flows in a row. It waited for the next
    /// refresh: 330–350 ms after the message here. An HTTP/2 upload open while its body comes:
    /// the message that follows its request's being whole makes the pane fetch it at once and
    /// enable Replay (five uploads; a refresh 350 ms after the message did it).
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aRunningFlowsPaneShowsItFinishedWhenTheStreamSaysSo() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet", "--lazy-upstream",
                                         "--insecure-upstream"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_running_finish.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        let expected: Set = ["pane-fetches-on-finish-0", "pane-fetches-on-finish-1", "pane-fetches-on-finish-2",
                             "upload-replay-on-message-0", "upload-replay-on-message-1", "upload-replay-on-message-2",
                             "upload-replay-on-message-3", "upload-replay-on-message-4", "no-page-errors"]
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
    }
}
