import Foundation
import Testing
import TestSupport

// Linux only: DevProxy finds a client's process through netlink and /proc (macOS leaves it unknown).
#if os(Linux)

/// The process that made each flow, on a real `devproxy run`: curl and python3, two programs on
/// this machine, each send requests through the proxy; the flow log names each one's process
/// (its pid the one the client had), `/api/flows` its name, `~proc` picks one program's flows,
/// and a map rule with `~proc` answers one program and not the other.
@Suite struct ClientProcessProxyTests {
    /// The client scripts print their own pid first: `exec` keeps the shell's pid for curl.
    static func curl(proxy: Int, urls: [String]) throws -> (pid: Int, output: String) {
        let command = "echo $$; exec curl -sS --max-time 20 --proxy http://127.0.0.1:\(proxy) "
            + urls.map { "'\($0)' -w '\\n'" }.joined(separator: " ")
        let result = try Subprocess.run("sh", ["-c", command], timeout: 30)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.stdout.split(separator: "\n", maxSplits: 1)
        return (Int(lines.first ?? "") ?? -1, lines.count > 1 ? String(lines[1]) : "")
    }

    static func python(proxy: Int, urls: [String]) throws -> (pid: Int, output: String) {
        let script = """
            import os, sys, urllib.request
            print(os.getpid(), flush=True)
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": "http://127.0.0.1:\(proxy)"}))
            for url in sys.argv[1:]:
                print(opener.open(url, timeout=20).read().decode(), flush=True)
            """
        let result = try Subprocess.run("python3", ["-c", script] + urls, timeout: 30)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.stdout.split(separator: "\n", maxSplits: 1)
        return (Int(lines.first ?? "") ?? -1, lines.count > 1 ? String(lines[1]) : "")
    }

    @Test func eachFlowNamesTheProcessThatMadeIt() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("mapped.json", #"{"from":"file"}"#)
        let origin = try BackgroundServer(script: MapRulesProxyTests.namedOrigin, arguments: ["origin"])
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet", "--log", log,
                                         "--map-local", "|~proc ^curl$|/mapped|" + file], webUI: true)
        defer { _ = proxy.stop() }
        let base = "http://127.0.0.1:\(origin.port)"
        let curl = try Self.curl(proxy: proxy.port, urls: [base + "/curl", base + "/mapped-c"])
        let python = try Self.python(proxy: proxy.port, urls: [base + "/python", base + "/mapped-p"])
        // The map rule answered curl from the file and let python3 through to the origin.
        #expect(curl.output.contains(#"{"from":"file"}"#), "\(curl.output)")
        #expect(python.output.contains(#""path": "/mapped-p""#) && !python.output.contains("file"), "\(python.output)")

        // The flow log: each flow's `client_process`, its pid the client's own.
        var records: [String: [String: Any]] = [:]
        let deadline = Date().addingTimeInterval(15)
        repeat {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let url = (object["request"] as? [String: Any])?["url"] as? String else { continue }
                records[URL(string: url)?.path ?? ""] = object
            }
            if records.count >= 4 { break }
            usleep(100_000)
        } while Date() < deadline
        #expect(Set(records.keys) == ["/curl", "/mapped-c", "/python", "/mapped-p"])
        for (path, record) in records {
            let process = record["client_process"] as? [String: Any]
            let isCurl = path == "/curl" || path == "/mapped-c"
            #expect(process?["name"] as? String == (isCurl ? "curl" : "python3"), "\(path): \(record)")
            #expect(process?["pid"] as? Int == (isCurl ? curl.pid : python.pid), "\(path): \(record)")
            let exe = process?["exe"] as? String ?? ""
            #expect(exe.hasPrefix("/") && exe.contains(isCurl ? "curl" : "python"), "\(path): \(exe)")
        }

        // The API: summaries name the process, `~proc` picks one program's flows.
        let (api, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        func flows(_ filter: String) throws -> [String: [String: Any]] {
            var query = URLComponents(string: api + "/api/flows")!
            query.queryItems = [URLQueryItem(name: "limit", value: "50")]
                + (filter.isEmpty ? [] : [URLQueryItem(name: "filter", value: filter)])
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(token)",
                                                     query.url!.absoluteString])
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let list = object?["flows"] as? [[String: Any]] ?? []
            return Dictionary(list.map { (URL(string: $0["url"] as? String ?? "")?.path ?? "", $0) }) { first, _ in first }
        }
        let all = try flows("")
        #expect(all["/curl"]?["client_process"] as? String == "curl")
        #expect(all["/python"]?["client_process"] as? String == "python3")
        #expect((all["/curl"]?["client_exe"] as? String ?? "").hasSuffix("curl"), "\(all["/curl"] ?? [:])")
        #expect(all["/curl"]?["client_pid"] as? Int == curl.pid)
        #expect(all["/python"]?["client_pid"] as? Int == python.pid)
        #expect(Set(try flows("~proc curl").keys) == ["/curl", "/mapped-c"])
        #expect(Set(try flows("~proc python").keys) == ["/python", "/mapped-p"])
        #expect(Set(try flows("!~proc curl & ~u /mapped").keys) == ["/mapped-p"])
        // The executable's path is searched too.
        #expect(Set(try flows("~proc /curl$").keys) == ["/curl", "/mapped-c"])
    }

    /// The web UI (`Resources/webui_client_process.py`): the list's Client column names each
    /// row's process, its tooltip the executable and address, and its title sorts by it (A to Z,
    /// then Z to A); the Connection tab says the pid.
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func theWebUIShowsTheClientProcess() throws {
        let dir = TemporaryDirectory()
        let origin = try BackgroundServer(script: MapRulesProxyTests.namedOrigin, arguments: ["origin"])
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        defer { _ = proxy.stop() }
        let base = "http://127.0.0.1:\(origin.port)"
        _ = try Self.curl(proxy: proxy.port, urls: [base + "/curl"])
        _ = try Self.python(proxy: proxy.port, urls: [base + "/python"])
        let result = try proxy.runPage(script: "webui_client_process.py", timeout: 120)
        let expected: Set = ["client-column", "curl-row", "python-row", "client-sorts", "curl-process-shown",
                             "no-page-errors"]
        #expect(result.status == 0, "\(result.output)")
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty,
                "missing: \(expected.subtracting(WebUIBrowser.passed(result)))\n\(result.output)")
    }
}
#endif
