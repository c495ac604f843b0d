import Foundation
import Testing
import TestSupport

/// `~replay`, `~replayq` and `~replays`, mitmproxy's filters for replayed flows, over a real proxy
/// and origin: a flow the web UI's Replay sent again is `~replay` and `~replayq` (a client replay,
/// in mitmproxy's words), its original is not, and `~replays` (a server replay, which DevProxy
/// never makes) selects nothing.
@Suite struct ReplayFilterTests {
    @Test func theReplayFiltersSelectTheFlowsSentAgain() throws {
        let (ui, proxy, origin) = try WebUIProxyTests.setUp()
        let url = origin.url("/report")
        let sent = try proxy.curl(["-d", "once", url])
        #expect(sent.stdout == "echo:once", "\(sent.output)")
        let originalID = try #require(try WebUIProxyTests.flow(ui, url: url)?["id"] as? String)
        let replay = try ui.request("/api/flows/\(originalID)/replay", method: "POST")
        #expect(replay.status == 200, "\(replay.text)")
        let replayID = try #require(replay.json["id"] as? String)

        func ids(_ filter: String) throws -> Set<String> {
            ui.store.flush()
            let query = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let answer = try ui.request("/api/flows?filter=" + query)
            #expect(answer.status == 200, "\(filter): \(answer.text)")
            return Set((answer.json["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        }
        let deadline = Date().addingTimeInterval(10)
        while try ids("~replay").isEmpty && Date() < deadline { usleep(50_000) }
        #expect(try ids("~replay") == [replayID])
        #expect(try ids("~replayq") == [replayID])
        #expect(try ids("~replays").isEmpty)
        #expect(try ids("~u report & !~replay") == [originalID])
        #expect(try ids("~replay | ~replays") == [replayID])
    }
}
