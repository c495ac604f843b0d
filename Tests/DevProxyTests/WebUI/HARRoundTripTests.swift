import Foundation
import TestSupport
import Testing

/// `devproxy web capture.har`, then the web UI's HAR export: what a browser's HAR said comes back
/// as it said it. Checked with Python's json, as a HAR consumer reads the files.
@Suite struct HARRoundTripTests {
    /// A 4,096-byte JSON body, as the HARs below give it decoded (escaped for a JSON string).
    static let text = "[" + String(repeating: #"\"a\","#, count: 1022) + #"\"zzzz\"]"#

    /// An entry as a browser writes one: `request` and `response` JSON objects around the body.
    static func entry(started: String, url: String, version: String, requestHeaders: String, requestSizes: String,
                      responseSizes: String, content: String, extra: String = "") -> String {
        #"{"startedDateTime":"\#(started)","time":35.5,"cache":{},"#
            + #""timings":{"blocked":1,"dns":-1,"ssl":-1,"connect":-1,"send":0.5,"wait":30,"receive":4},"#
            + #""request":{"method":"GET","url":"\#(url)","httpVersion":"\#(version)","cookies":[],"queryString":[],"#
            + #""headers":[\#(requestHeaders)],\#(requestSizes)},"#
            + #""response":{"status":200,"statusText":"OK","httpVersion":"\#(version)","cookies":[],"redirectURL":"","#
            + #""headers":[{"name":"content-type","value":"application/json"},{"name":"content-encoding","value":"gzip"}],"#
            + #""content":{"mimeType":"application/json","text":"\#(text)",\#(content)},\#(responseSizes)}\#(extra)}"#
    }

    /// Chrome's gzip response over HTTP/1.1 (wire, decoded and saved sizes, `_transferSize`) and
    /// over HTTP/2 (`-1` where it has no header text); Firefox's (`bodySize` its transferred size,
    /// no `compression`). Imported and exported again, each keeps the sizes its HAR gave: the
    /// export gave `content.size` as the compressed size, no `compression` and no `_transferSize`.
    @Test func aBrowsersGzipResponseKeepsItsSizesThroughImportAndExport() throws {
        let dir = TemporaryDirectory()
        let entries = [
            Self.entry(started: "2026-03-01T12:01:02.100Z", url: "https://chrome.example/h1.json", version: "HTTP/1.1",
                       requestHeaders: #"{"name":"Host","value":"chrome.example"}"#,
                       requestSizes: #""headersSize":118,"bodySize":0"#,
                       responseSizes: #""headersSize":187,"bodySize":923,"_transferSize":1110,"_error":null"#,
                       content: #""size":4096,"compression":3173"#, extra: #","_resourceType":"fetch""#),
            Self.entry(started: "2026-03-01T12:01:03.100Z", url: "https://chrome.example/h2.json", version: "http/2.0",
                       requestHeaders: #"{"name":":method","value":"GET"},{"name":":authority","value":"chrome.example"},"#
                           + #"{"name":":scheme","value":"https"},{"name":":path","value":"/h2.json"}"#,
                       requestSizes: #""headersSize":-1,"bodySize":0"#,
                       responseSizes: #""headersSize":-1,"bodySize":-1,"_transferSize":957,"_error":null"#,
                       content: #""size":4096"#),
            Self.entry(started: "2026-03-01T12:01:04.100Z", url: "https://firefox.example/ff.json", version: "HTTP/2",
                       requestHeaders: #"{"name":"Host","value":"firefox.example"}"#,
                       requestSizes: #""headersSize":356,"bodySize":0"#,
                       responseSizes: #""headersSize":257,"bodySize":1180"#,
                       content: #""size":4096"#),
        ]
        let har = dir.write("browser.har", #"{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"#
                            + #""entries":["# + entries.joined(separator: ",") + "]}}")
        let viewer = try DevProxyViewer(har)
        let exported = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-o", dir.file("exported.har"),
                                                   "-H", "Authorization: Bearer \(viewer.token)",
                                                   viewer.base + "/api/export/har"])
        #expect(exported.status == 0, "\(exported.output)")
        let compared = try Subprocess.run("python3", ["-c", """
            import json, sys
            def sizes(path):
                out = {}
                for e in json.load(open(path))["log"]["entries"]:
                    q, r = e["request"], e["response"]
                    out[q["url"]] = {"request": (q["headersSize"], q["bodySize"]),
                                     "response": (r["headersSize"], r["bodySize"], r["content"]["size"],
                                                  r["content"].get("compression"), r.get("_transferSize"))}
                return out
            given, back = sizes(sys.argv[1]), sizes(sys.argv[2])
            print(len(given), len(back))
            for url in given:
                if given[url] != back.get(url): print(url, "gave", given[url], "exported", back.get(url))
            """, har, dir.file("exported.har")])
        #expect(compared.output.trimmingCharacters(in: .whitespacesAndNewlines) == "3 3", "\(compared.output)")
        if HARWriterTests.validatorAvailable {
            #expect(try HARWriterTests().schemaComplaint(Array(dir.read("exported.har").utf8)) == nil)
        }
        // One flow's export gives them back too.
        let one = try Subprocess.run("curl", ["-sS", "--max-time", "10", "-H", "Authorization: Bearer \(viewer.token)",
                                              viewer.base + "/api/flows/har-1/export?format=har"])
        let entry = try #require(((try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])?["log"]
            as? [String: Any])?["entries"] as? [[String: Any]]).first
        let response = entry?["response"] as? [String: Any]
        #expect(response?["bodySize"] as? Int == 923 && response?["_transferSize"] as? Int == 1110, "\(one.stdout.prefix(600))")
        #expect((response?["content"] as? [String: Any])?["size"] as? Int == 4096)
    }
}
