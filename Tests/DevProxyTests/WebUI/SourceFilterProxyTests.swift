import Foundation
import Testing
import TestSupport

/// `~src` and `~dst` on a real `devproxy run`: two clients on different loopback addresses
/// (curl `--interface`), two origins; the API's summaries name each flow's client, and the
/// filters pick one device's flows and one server's, as mitmproxy's do.
@Suite struct SourceFilterProxyTests {
    @Test func srcPicksOneClientsFlowsAndDstOneServers() throws {
        let dir = TemporaryDirectory()
        let a = try BackgroundServer(script: MapRulesProxyTests.namedOrigin, arguments: ["a"])
        let b = try BackgroundServer(script: MapRulesProxyTests.namedOrigin, arguments: ["b"])
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        defer { _ = proxy.stop() }
        let (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        // 127.0.0.1 asks a twice and b once; 127.0.0.2 (another device, as far as the proxy can tell) asks b.
        for (source, origin, path) in [("127.0.0.1", a, "/one"), ("127.0.0.1", a, "/two"), ("127.0.0.1", b, "/three"),
                                       ("127.0.0.2", b, "/four")] {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--interface", source,
                                                     "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "http://127.0.0.1:\(origin.port)\(path)"])
            #expect(result.status == 0, "\(result.output)")
        }
        /// The finished flows `filter` selects, by path, once `count` of them are listed.
        func flows(_ filter: String, count: Int) throws -> [String: [String: Any]] {
            var query = URLComponents(string: base + "/api/flows")!
            query.queryItems = [URLQueryItem(name: "limit", value: "50")] + (filter.isEmpty ? [] : [URLQueryItem(name: "filter", value: filter)])
            var byPath: [String: [String: Any]] = [:]
            let deadline = Date().addingTimeInterval(15)
            repeat {
                let result = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(token)",
                                                         query.url!.absoluteString])
                let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                let list = object?["flows"] as? [[String: Any]] ?? []
                byPath = Dictionary(list.map { (URL(string: $0["url"] as? String ?? "")?.path ?? "", $0) }) { first, _ in first }
                if list.count >= count, list.allSatisfy({ $0["phase"] as? String == "finished" }) { break }
                usleep(100_000)
            } while Date() < deadline
            return byPath
        }
        let all = try flows("", count: 4)
        #expect(all.count == 4, "\(all.keys)")
        for (path, flow) in all {
            let client = flow["client"] as? String ?? ""
            #expect(client.hasPrefix(path == "/four" ? "127.0.0.2:" : "127.0.0.1:"), "\(path): \(client)")
        }
        #expect(Set(try flows(#"~src ^127\.0\.0\.2:"#, count: 1).keys) == ["/four"])
        #expect(Set(try flows(#"!~src 127\.0\.0\.2"#, count: 3).keys) == ["/one", "/two", "/three"])
        #expect(Set(try flows("~dst :\(b.port)$", count: 2).keys) == ["/three", "/four"])
        #expect(Set(try flows("~dst 127.0.0.1:\(a.port)$ & ~src 127.0.0.1", count: 2).keys) == ["/one", "/two"])
        // A filter that does not parse is refused with its reason, as every filter is.
        var bad = URLComponents(string: base + "/api/flows")!
        bad.queryItems = [URLQueryItem(name: "filter", value: "~src")]
        let refused = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(token)",
                                                  "-w", "\n%{http_code}", bad.url!.absoluteString])
        #expect(refused.stdout.hasSuffix("\n400") && refused.stdout.contains("expected a pattern after '~src'"),
                "\(refused.stdout)")
    }

    /// A rule for one device: `--map-local` with `~src` answers the client on 127.0.0.2 from a file,
    /// and the one on 127.0.0.1 still reaches the origin; `~dst` picks the server by its port.
    @Test func aRuleTakesSrcAndDst() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("user.json", #"{"from":"file"}"#)
        let origin = try BackgroundServer(script: MapRulesProxyTests.namedOrigin, arguments: ["origin"])
        let other = try BackgroundServer(script: MapRulesProxyTests.namedOrigin, arguments: ["other"])
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--quiet",
                                         "--map-local", #"|~src ^127\.0\.0\.2:|/user|"# + file,
                                         "--map-local", "|~dst :\(other.port)$|/dst|" + file])
        defer { _ = proxy.stop() }
        func get(_ source: String, _ server: BackgroundServer, _ path: String) throws -> String {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--interface", source,
                                                     "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "http://127.0.0.1:\(server.port)\(path)"])
            #expect(result.status == 0, "\(result.output)")
            return result.stdout
        }
        #expect(try get("127.0.0.2", origin, "/user") == #"{"from":"file"}"#)
        #expect(try get("127.0.0.1", origin, "/user").contains(#""origin": "origin""#))
        #expect(try get("127.0.0.1", other, "/dst") == #"{"from":"file"}"#)
        #expect(try get("127.0.0.1", origin, "/dst").contains(#""origin": "origin""#))
    }
}
