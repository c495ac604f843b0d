import Foundation
import TestSupport
import Testing

/// The web UI's "New request" reads a pasted curl command (`Assets/curl-import.js`, under Node).
/// Each command is also run by the real curl against an origin that answers with what it got, and
/// the two must agree: the method, the path and query, the body byte for byte, and every header
/// field the import reads with its value. Commands it cannot send as curl would are refused with
/// the reason.
@Suite struct CurlImportTests {
    static let nodeMissing: Bool = (try? Subprocess.run("sh", ["-c", "command -v node"]).status != 0) ?? true

    /// An origin that records each request and answers `GET /__last` with the last one as JSON.
    static let recordingOrigin = """
    import base64, http.server, json
    last = {}
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def handle_one(self):
            global last
            if self.path == "/__last":
                body = json.dumps(last).encode()
            else:
                n = int(self.headers.get("Content-Length") or 0)
                last = {"method": self.command, "path": self.path, "headers": [[k, v] for k, v in self.headers.items()],
                        "body": base64.b64encode(self.rfile.read(n)).decode()}
                body = b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD": self.wfile.write(body)
        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = handle_one
        def log_message(self, *a): pass
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """

    /// What `parseCurl` makes of each command (`{"request": …}` or `{"error": …}`).
    private func parsed(_ commands: [String]) throws -> [[String: Any]] {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = TemporaryDirectory()
        // Node reads `export` only from a module file: the same source, named .mjs.
        let module = dir.file("curl-import.mjs")
        try FileManager.default.copyItem(atPath: root.appendingPathComponent("Sources/WebUI/Assets/curl-import.js").path,
                                         toPath: module)
        let input = dir.write("commands.json", String(decoding: try JSONSerialization.data(withJSONObject: commands), as: UTF8.self))
        let script = root.appendingPathComponent("Tests/TestSupport/Resources/curl_import_test.mjs").path
        let result = try Subprocess.run("sh", ["-c", "node \"$0\" \"$1\" < \"$2\"", script, module, input], timeout: 60)
        #expect(result.status == 0, "\(result.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]],
                            "\(result.output)")
    }

    @Test(.enabled(if: !nodeMissing, "needs node")) func aPastedCommandSendsWhatCurlSends() throws {
        let origin = try BackgroundServer(script: Self.recordingOrigin, arguments: [])
        defer { origin.stop() }
        let base = "http://127.0.0.1:\(origin.port)"
        let commands = [
            // Chrome's "Copy as cURL (bash)": $'…' with an escaped quote and UTF-8 bytes.
            "curl '\(base)/v1/items?x=1' \\\n  -H 'accept: application/json' \\\n  -H 'content-type: application/json' "
                + "\\\n  --data-raw $'{\"name\":\"caf\\xc3\\xa9\",\"note\":\"it\\'s\"}'",
            "curl -sS -XPOST \(base)/form -d a=1 -d 'b=two words'",
            "curl -G -d q=1 --data-urlencode 'name=a b&c' \(base)/search",
            "curl --json '{\"a\":[1,2]}' \(base)/json",
            "curl -u ana:s3cret -A 'Agent/1.0' -e https://ref.example/ -b 'a=1; b=2' \(base)/auth",
            "curl -X PUT \"\(base)/put\" -H \"X-Quoted: \\\"yes\\\" \\$HOME\" --data-binary 'line1\nline2'",
            "curl -I \(base)/head",
            // DevProxy's own "Copy as curl": quoted arguments, a ' inside one.
            "curl -X 'POST' '\(base)/own' -H 'Content-Type: text/plain' --data-binary 'it'\\''s'",
            "curl --compressed -L -k --max-time 5 \(base)/gz",
            "curl -X DELETE '\(base)/items/7?force=true' -H 'X-Empty;'",
        ]
        let results = try parsed(commands)
        #expect(results.count == commands.count)
        for (command, result) in zip(commands, results) {
            let request = try #require(result["request"] as? [String: Any], "\(command): \(result)")
            // bash: Chrome's commands use its $'…' quoting.
            let run = try Subprocess.run("bash", ["-c", command.replacingOccurrences(of: "curl ", with: "curl -s -o /dev/null ",
                                                                                    options: .anchored)], timeout: 30)
            #expect(run.status == 0, "\(command): \(run.output)")
            let fetched = try Subprocess.run("curl", ["-s", base + "/__last"])
            let got = try #require(try JSONSerialization.jsonObject(with: Data(fetched.stdout.utf8)) as? [String: Any])
            #expect(request["method"] as? String == got["method"] as? String, "\(command): \(request) vs \(got)")
            let url = try #require(request["url"] as? String)
            #expect(url == base + (got["path"] as? String ?? ""), "\(command): \(url) vs \(got["path"] ?? "")")
            let body = Data(base64Encoded: got["body"] as? String ?? "") ?? Data()
            #expect((request["body"] as? String).map { Data($0.utf8) } ?? Data() == body,
                    "\(command): \(request["body"] ?? "nil") vs \(String(decoding: body, as: UTF8.self))")
            let received = (got["headers"] as? [[String]] ?? []).map { ($0[0].lowercased(), $0[1]) }
            for pair in request["headers"] as? [[String]] ?? [] {
                let name = pair[0].lowercased()
                // curl's own Accept-Encoding list depends on how it was built: present is enough.
                let matches = received.contains { $0.0 == name && (name == "accept-encoding" || $0.1 == pair[1]) }
                #expect(matches, "\(command): \(pair) not in what curl sent: \(received)")
            }
        }
        // A few facts the comparison above does not spell out.
        let chrome = results[0]["request"] as? [String: Any]
        #expect(chrome?["body"] as? String == "{\"name\":\"café\",\"note\":\"it's\"}")
        #expect((results[8]["request"] as? [String: Any])?["ignored"] as? [String] == ["-L", "-k", "--max-time"])
    }

    @Test(.enabled(if: !nodeMissing, "needs node")) func whatItCannotSendIsRefusedWithTheReason() throws {
        let refused: [(String, String)] = [
            ("curl -F 'file=@a.png' https://x.example/upload", "multipart forms (-F)"),
            ("curl -d @body.json https://x.example/", "reads a file"),
            ("curl --frobnicate https://x.example/", "curl option --frobnicate is not read here"),
            ("curl 'https://x.example/", "is never closed"),
            ("curl -H 'Accept: x'", "names no URL"),
            ("curl https://a.example/ https://b.example/", "names 2 URLs"),
            ("curl --data=x https://x.example/", "takes an option's value as the next word"),
            ("curl ftp://x.example/file", "only http:// and https://"),
            ("", "paste a curl command"),
        ]
        let results = try parsed(refused.map(\.0))
        for ((command, reason), result) in zip(refused, results) {
            let error = result["error"] as? String ?? ""
            #expect(error.contains(reason), "\(command): \(result)")
        }
    }
}

/// "New request" in the page (`Resources/webui_compose.py`, Chromium): a pasted curl command
/// (a browser's, and DevProxy's own Copy as curl) fills the dialog and goes through the proxy as
/// that request; one it cannot send is refused with the reason.
@Suite struct NewRequestPageTests {
    @Test(.enabled(if: WebUIBrowser.missing == nil, "needs chromium and playwright"))
    func aPastedCurlCommandIsSentThroughTheProxy() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--quiet"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        defer { _ = proxy.stop() }
        let result = try proxy.runPage(script: "webui_compose.py", timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        let expected: Set = ["curl-fills-the-fields", "pasted-request-sent", "new-flow-listed",
                             "own-curl-export-round-trips", "multipart-refused-with-reason", "no-page-errors"]
        #expect(expected.subtracting(WebUIBrowser.passed(result)).isEmpty, "\(result.output)")
    }
}
