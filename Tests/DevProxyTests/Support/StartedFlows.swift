@testable import DevProxy
import Synchronization
import Testing

/// Flows whose request head reached the proxy (`FlowSink.started`): a test's signal that its
/// requests are in flight; and those reported `responded` (a response head whose body was still
/// on its way).
final class StartedFlows: FlowSink {
    private let urls = Mutex<[String]>([])
    private let respondedURLs = Mutex<[String]>([])
    var observesLifecycle: Bool { true }
    func started(_ flow: Flow) {
        let url = flow.request?.url ?? ""
        urls.withLock { $0.append(url) }
    }
    func responded(_ flow: Flow) {
        let url = flow.request?.url ?? ""
        respondedURLs.withLock { $0.append(url) }
    }
    func record(_ flow: Flow) {}
    func close() {}

    /// How many started flows have a URL ending in `suffix`.
    func count(pathSuffix suffix: String) -> Int {
        urls.withLock { $0.filter { $0.hasSuffix(suffix) }.count }
    }

    /// How many `responded` reports name a URL ending in `suffix`.
    func respondedCount(pathSuffix suffix: String) -> Int {
        respondedURLs.withLock { $0.filter { $0.hasSuffix(suffix) }.count }
    }

    /// Fetches `/whole` (head and body in one write) and `/late-body` (the body a second after
    /// the head) from an origin through `proxy`, which has this sink: each flow started once,
    /// only `/late-body` reported `responded`.
    func expectRespondedOnlyWhileTheBodyIsOnItsWay(through proxy: ProxyHarness, curlFlags: [String],
                                                   url: (String) -> String) throws {
        for path in ["/whole", "/late-body"] {
            let result = try proxy.curl(curlFlags + [url(path)])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.stdout == (path == "/whole" ? "whole" : "late"))
        }
        let flows = proxy.flows(count: 2)
        #expect(flows.allSatisfy { $0.response?.status == 200 && $0.error == nil })
        #expect(count(pathSuffix: "/whole") == 1 && count(pathSuffix: "/late-body") == 1)
        #expect(respondedCount(pathSuffix: "/whole") == 0)
        #expect(respondedCount(pathSuffix: "/late-body") == 1)
    }
}
