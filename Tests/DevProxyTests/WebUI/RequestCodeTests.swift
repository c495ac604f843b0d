import Foundation
import Testing
import TestSupport
@testable import WebUI

/// `GET /api/flows/ID/export?format=fetch|node|python|httpie|powershell|wget|swift|okhttp|kotlin`: a request
/// recorded through the proxy, with quotes, `$(…)`, backticks, a backslash, non-ASCII and control bytes in
/// its path, headers and body, is copied as code, the code is run where its runtime is on this
/// machine, and the origin gets the same method, path, headers and body as from the proxy.
@Suite(.serialized) struct RequestCodeTests {
    /// The bodies sent: text with CR and an escape (goes through printf for the shell formats,
    /// refused by wget), text with a newline only (inline everywhere), and binary with NUL and 0xFF.
    enum Body: String, CaseIterable {
        case controlText, plainText, binary

        var bytes: [UInt8] {
            switch self {
            case .controlText: Array("it's \"q\" \\ $(touch /tmp/x) `id` $HOME café ☕\r\nline2\ttab\u{1b}[1m%s".utf8)
            case .plainText: Array("{\"a\": \"it's \\\"q\\\" $(id) `id` $HOME café ☕ \u{2028}\"}\nline2".utf8)
            case .binary: [0, 0xff, 0x22, 0x27, 0x5c, 0x0a, 0x0d, 0x24, 0x28, 0x60, 0x80, 0xc3, 0x00, 0x41]
            }
        }
    }

    /// Characters a URL may hold as they are (RFC 3986), that a shell or a string literal reads;
    /// a backtick is one a client percent-encodes, as it is not in a URL's grammar.
    static let path = "/echo/it's$HOME(1)?q=%22x%22&b=$(id)"
    /// Hostile header values; `X-Empty` has none.
    static let headers = ["X-Quote: it's \"q\" \\ $(touch /tmp/x) `id` $HOME ; a=b:c@d", "X-Uni: café ☕",
                          "Cookie: a=1; b=\"2\"", "Content-Type: text/plain; charset=utf-8", "User-Agent: lab/1.0",
                          "X-Empty;", "X-Eq: =@x"]
    /// Fields not compared: the connection's own, and what a client sets itself.
    static let unrepeated: Set<String> = ["connection", "content-length", "transfer-encoding", "keep-alive",
                                          "proxy-connection", "expect"]

    static func has(_ tool: String) -> Bool {
        (try? Subprocess.run("sh", ["-c", "command -v \(tool)"]).status == 0) ?? false
    }

    static let haveHTTPie = has("http")
    static let haveWget = has("wget")
    static let havePwsh = has("pwsh")
    /// Debian's OkHttp 3.13 and Okio (libokhttp-java, which scripts/test installs) for `java -cp`.
    static let okHttpClassPath = ["/usr/share/java/okhttp.jar", "/usr/share/java/okio.jar"]
    static let haveOkHttp = has("java") && okHttpClassPath.allSatisfy { FileManager.default.fileExists(atPath: $0) }
    /// Debian's kotlinc (1.3) and its standard library (the kotlin package), for the `kotlin` copy.
    static let haveKotlin = haveOkHttp && has("kotlinc")

    @Test(arguments: Body.allCases) func pythonRequestsRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "python", extension: "py") { ["python3", $0] }
    }

    @Test(arguments: Body.allCases) func nodeFetchRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "node", extension: "js") { ["node", $0] }
    }

    /// The browser's fetch, run in Node: the headers a browser would not send are left out.
    @Test(arguments: Body.allCases) func browserFetchRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "fetch", extension: "js", skipped: ["cookie"]) { ["node", $0] }
    }

    @Test(.enabled(if: haveHTTPie, "needs HTTPie's http (scripts/test installs it)"), arguments: Body.allCases)
    func httpieRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "httpie", extension: "sh") { ["sh", $0] }
    }

    @Test(.enabled(if: haveWget, "needs wget"), arguments: Body.allCases)
    func wgetRepeatsTheRequestOrSaysWhyNot(_ body: Body) throws {
        try repeatRequest(body, format: "wget", extension: "sh", refused: body != .plainText) { ["sh", $0] }
    }

    @Test(.enabled(if: havePwsh, "needs PowerShell 7 (pwsh), which this machine lacks"), arguments: Body.allCases)
    func powerShellRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "powershell", extension: "ps1") { ["pwsh", "-NoProfile", "-File", $0] }
    }

    /// Swift's URLSession (FoundationNetworking on Linux), the script run by `swift`.
    @Test(arguments: Body.allCases) func swiftURLSessionRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "swift", extension: "swift") { ["swift", $0] }
    }

    /// OkHttp from Java, run as a single-file program (`java -cp okhttp.jar:okio.jar File.java`).
    @Test(.enabled(if: haveOkHttp, "needs java and libokhttp-java (scripts/test installs them)"),
          arguments: Body.allCases)
    func okHttpRepeatsTheRequest(_ body: Body) throws {
        try repeatRequest(body, format: "okhttp", extension: "java") {
            ["java", "-cp", Self.okHttpClassPath.joined(separator: ":"), $0]
        }
    }

    /// OkHttp 4's Kotlin API, compiled by kotlinc and run by java. Debian has OkHttp 3.13 only, so
    /// `OkHttp4Names.kt` gives it the OkHttp 4 names the copy calls (`toMediaType`,
    /// `toRequestBody`, `response.code`, `response.body`) in place of the copy's two `Companion`
    /// imports; every other line, its literals' `\$` and `\u` escapes first, compiles as copied.
    @Test(.enabled(if: haveKotlin, "needs kotlinc, java and libokhttp-java (scripts/test installs them)"),
          arguments: Body.allCases)
    func kotlinOkHttpRepeatsTheRequest(_ body: Body) throws {
        let classPath = Self.okHttpClassPath.joined(separator: ":")
        let names = HTTP2Origin.resource("OkHttp4Names.kt")
        try repeatRequest(body, format: "kotlin", extension: "kt", timeout: 90) { copy in
            ["sh", "-c", #"""
                set -e
                out="$(dirname "$1")/kotlin"; mkdir -p "$out"
                { echo 'import okhttp4names.*'; grep -v '^import okhttp3\..*\.Companion\.' "$1"; } >"$out/CopiedRequest.kt"
                kotlinc -nowarn -cp "$2" "$out/CopiedRequest.kt" "$3" -d "$out/copied.jar"
                java -cp "$out/copied.jar:$2:/usr/share/java/kotlin-stdlib.jar" CopiedRequestKt
                """#, "sh", copy, classPath, names]
        }
    }

    /// The Kotlin copy as written: OkHttp 4's calls, `$` escaped (a template otherwise), the recorded
    /// `Content-Type` as the body's media type (OkHttp sends it so) and left out of the headers; a
    /// `Content-Type` that `toMediaType()` might refuse stays a header, with a null media type.
    @Test func kotlinCopyIsOkHttp4Code() {
        let post = RepeatedRequest(method: "POST", url: "http://127.0.0.1:8080/a?b=$x",
                                   headers: [("Content-Type", "application/json; charset=utf-8"),
                                             ("X-Price", "$5 \"é\"\u{1}")],
                                   body: Array("{\"a\": \"$HOME\"}".utf8))
        #expect(RequestCode.kotlin.write(post) == #"""
            import okhttp3.Headers
            import okhttp3.MediaType.Companion.toMediaType
            import okhttp3.OkHttpClient
            import okhttp3.Request
            import okhttp3.RequestBody.Companion.toRequestBody

            fun main() {
                val client = OkHttpClient.Builder().followRedirects(false).followSslRedirects(false).build()
                val headers = Headers.Builder()
                    .addUnsafeNonAscii("X-Price", "\$5 \"\u00e9\"\u0001")
                    .build()
                val mediaType = "application/json; charset=utf-8".toMediaType()
                val body = "{\"a\": \"\$HOME\"}".toByteArray().toRequestBody(mediaType)
                val request = Request.Builder()
                    .url("http://127.0.0.1:8080/a?b=\$x")
                    .headers(headers)
                    .method("POST", body)
                    .build()
                client.newCall(request).execute().use { response ->
                    println(response.code)
                    println(response.body?.string())
                }
            }

            """#)
        let odd = RepeatedRequest(method: "PUT", url: "http://h/", headers: [("Content-Type", "text/plain;;x")],
                                  body: [0, 1])
        let code = RequestCode.kotlin.write(odd)
        #expect(code.contains("        .add(\"Content-Type\", \"text/plain;;x\")\n")
                && code.contains("    val body = Base64.getDecoder().decode(\"AAE=\").toRequestBody(null)\n")
                && code.hasPrefix("import java.util.Base64\n") && !code.contains("toMediaType"), "\(code)")
        #expect(RequestCode.kotlinMediaType("text/plain; charset=\"utf-8\"")
                && !RequestCode.kotlinMediaType("text/plain; charset=utf-8; charset=latin1")
                && !RequestCode.kotlinMediaType("text/plain ;x=1") && !RequestCode.kotlinMediaType("text"))
        let empty = RepeatedRequest(method: "DELETE", url: "http://h/", headers: [], body: [])
        #expect(RequestCode.kotlin.write(empty).contains("    val body = null\n"))
        let get = RepeatedRequest(method: "GET", url: "http://h/", headers: [], body: Array("b".utf8))
        #expect(RequestCode.kotlin.refusal(of: get)?.hasPrefix("OkHttp refuses a body on GET") == true)
        #expect(RequestCode.kotlinText(String(repeating: "$", count: RequestCode.javaLiteralLimit + 1))
                .hasPrefix("listOf(\n        \"\\$\\$"))
    }

    /// URLSession and OkHttp refuse a body on GET, so their copies do too, saying so; a GET
    /// without one is copied.
    @Test func aGETWithABodyIsRefusedForURLSessionAndOkHttp() {
        let get = RepeatedRequest(method: "GET", url: "http://127.0.0.1/x", headers: [], body: Array("b".utf8))
        #expect(RequestCode.swift.refusal(of: get) == "URLSession refuses a body on GET, and this request has 1 "
                + "bytes: copy it as curl")
        #expect(RequestCode.okhttp.refusal(of: get)?.hasPrefix("OkHttp refuses a body on GET") == true)
        let plain = RepeatedRequest(method: "GET", url: "http://127.0.0.1/x", headers: [], body: [])
        #expect(RequestCode.swift.refusal(of: plain) == nil && RequestCode.okhttp.refusal(of: plain) == nil)
    }

    /// Java reads `\u` escapes before literals, so a control character is an octal escape of three
    /// digits (`\1` then `2` would be a line feed); past ASCII each UTF-16 unit is `\uXXXX`; a long
    /// text is joined from literals a class file can hold. Swift's literals escape `\(`.
    @Test func javaAndSwiftStringsHoldWhatTheirCompilersWouldReadOtherwise() {
        #expect(RequestCode.javaString("a\u{1}2\n\"\\u000a é☕😀\u{7f}")
                == "\"a\\0012\\n\\\"\\\\u000a \\u00e9\\u2615\\ud83d\\ude00\\177\"")
        let long = String(repeating: "x", count: RequestCode.javaLiteralLimit + 1)
        #expect(RequestCode.javaText(long).hasPrefix("String.join(\"\",\n"))
        #expect(RequestCode.swiftString("\\(x)\u{0}\u{1b}\u{2028}\"é") == "\"\\\\(x)\\0\\u{1B}\\u{2028}\\\"é\"")
    }

    /// PowerShell's double-quoted strings: a backtick, `$`, every double quote it knows and
    /// control characters are escaped, so `$(…)` is never a subexpression (checked without pwsh).
    @Test func powerShellStringsEscapeWhatPowerShellExpands() {
        #expect(RequestCode.powerShellString("a\"b`c$(id)$HOME“x”„\n\r\t\u{0}\u{1b}é")
                == "\"a`\"b``c`$(id)`$HOME`“x`”`„`n`r`t`0$([char]27)é\"")
        #expect(RequestCode.javaScriptString("a\"\\\n\u{0}\u{2028}é") == "\"a\\\"\\\\\\n\\u0000\\u2028é\"")
        #expect(RequestCode.httpieCannotSend("a\\:b") && !RequestCode.httpieCannotSend("a\\ :b"))
        #expect(RequestCode.pythonBytes([0, 0x22, 0x5c, 0x41, 0xff]) == "b\"\\x00\\\"\\\\A\\xff\"")
    }

    /// A request that named another host than its connection's (`server.request_host`) is copied
    /// to the server it went to with its Host as recorded, as the curl export is: the Python code
    /// reaches the origin on `localhost` (TLS) and sends `Host: tenant-b.test`; the Node.js code
    /// says in a comment that its fetch sends the URL's host instead.
    @Test func codeForARequestToAnotherHostGoesWhereItWent() throws {
        let (ui, proxy, origin) = try WebUIProxyTests.setUp()
        let sent = try proxy.curl(["-H", "Host: tenant-b.test", origin.url("/headers?copied")])
        #expect(sent.stdout.contains("Host: tenant-b.test\n"), "\(sent.output)")
        let id = try #require(try Self.flowID(ui, urlPrefix: "https://tenant-b.test:\(origin.port)/headers"))
        let python = try ui.request("/api/flows/\(id)/export?format=python").text
        #expect(python.contains("    \"\(origin.url("/headers?copied"))\",\n"), "\(python)")
        let script = ui.directory.write("host.py", python)
        let run = try Subprocess.run("python3", [script], environment: ["REQUESTS_CA_BUNDLE": origin.caPath,
                                                                        "https_proxy": "", "HTTPS_PROXY": ""])
        #expect(run.status == 0 && run.stdout.hasPrefix("200\n") && run.stdout.contains("Host: tenant-b.test\n"),
                "\(run.output)")
        let node = try ui.request("/api/flows/\(id)/export?format=node").text
        #expect(node.hasPrefix("// fetch sends the URL's host as Host; the request sent Host: tenant-b.test\n"
                               + "fetch(\"\(origin.url("/headers?copied"))\""), "\(node)")
    }

    /// A body the store kept only part of (`--store-body-limit`) is not copied as code that would
    /// send another body: 422 saying how much was kept; curl's export is as it was.
    @Test func aCutBodyIsRefusedWithItsSizes() throws {
        let origin = try EchoOrigin()
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("session.sqlite"),
                                         "--store-body-limit", "1024", "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        defer { _ = proxy.stop() }
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        let url = origin.url("/echo/cut")
        let sent = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--max-time", "20",
                                               "--data-binary", String(repeating: "x", count: 4096), url])
        #expect(sent.stdout == "ok", "\(sent.output)")
        let id = try BodySpoolEndToEndTests.flowID(base: base, token: token, url: url)
        func export(_ format: String) throws -> Subprocess.Result {
            try Subprocess.run("curl", ["-sS", "-w", " %{http_code}", "-H", "Authorization: Bearer \(token)",
                                        "\(base)/api/flows/\(id)/export?format=\(format)"])
        }
        for format in ["python", "node", "fetch", "httpie", "powershell", "wget", "swift", "okhttp", "kotlin"] {
            let answer = try export(format).stdout
            #expect(answer.contains("cannot copy as \(format): the store kept 1024 of the request body's 4096 bytes")
                    && answer.hasSuffix(" 422"), "\(answer)")
        }
        #expect(try export("curl").stdout.hasSuffix(" 200"))
    }

    /// An unknown format names the ones there are; curl's answer is as it was.
    @Test func anUnknownFormatListsTheFormats() throws {
        let ui = try WebUIHarness(withProxy: true)
        let origin = try EchoOrigin()
        _ = try #require(ui.proxy).curl([origin.url("/x")])
        let id = try #require(try Self.flowID(ui, urlPrefix: origin.url("/x")))
        let answer = try ui.request("/api/flows/\(id)/export?format=ruby")
        #expect(answer.status == 400)
        #expect(answer.text.contains("curl, har, raw or fetch, node, python, httpie, powershell, wget, swift, okhttp, "
                                     + "kotlin"), 
                "\(answer.text)")
        let curl = try ui.request("/api/flows/\(id)/export?format=curl").text
        let agent = try curlUserAgent()
        #expect(curl == "curl '\(origin.url("/x"))' -H 'User-Agent: \(agent)' -H 'Accept: */*'\n", "\(curl)")
    }

    /// The id of the finished flow whose URL starts with `urlPrefix` (a `~u` filter would read the
    /// quotes in the path), waiting up to 10 s.
    static func flowID(_ ui: WebUIHarness, urlPrefix: String) throws -> String? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            ui.store.flush()
            let flows = try ui.request("/api/flows").json["flows"] as? [[String: Any]] ?? []
            if let flow = flows.first(where: {
                ($0["url"] as? String)?.hasPrefix(urlPrefix) == true && $0["phase"] as? String == "finished"
            }) {
                return flow["id"] as? String
            }
            usleep(50_000)
        }
        return nil
    }

    private func curlUserAgent() throws -> String {
        let version = try Subprocess.run("curl", ["--version"]).stdout
        return "curl/" + (version.split(separator: " ").dropFirst().first.map(String.init) ?? "")
    }

    /// Sends `body` through the proxy, copies the flow as `format`, runs the code with `command`
    /// and compares what the origin got the second time with the first.
    private func repeatRequest(_ body: Body, format: String, extension: String, skipped: Set<String> = [],
                               refused: Bool = false, timeout: TimeInterval = 30,
                               command: (String) -> [String]) throws {
        let ui = try WebUIHarness(withProxy: true)
        let proxy = try #require(ui.proxy)
        let origin = try EchoOrigin()
        let file = ui.directory.write("body-\(body)", bytes: body.bytes)
        let url = origin.url(Self.path)
        let sent = try proxy.curl(["-X", "PUT", "-g"] + Self.headers.flatMap { ["-H", $0] }
                                  + ["--data-binary", "@\(file)", url])
        #expect(sent.status == 0, "\(sent.output)")
        let id = try #require(try Self.flowID(ui, urlPrefix: origin.url("/echo/")), "no flow for \(url)")
        let answer = try ui.request("/api/flows/\(id)/export?format=\(format)")
        if refused {
            #expect(answer.status == 422 && answer.text.contains("copy it as curl"), "\(answer.text)")
            return
        }
        #expect(answer.status == 200, "\(answer.text)")
        let script = ui.directory.write("copied-\(format)-\(body).\(`extension`)", answer.text)
        let arguments = command(script)
        let run = try Subprocess.run(arguments[0], Array(arguments.dropFirst()),
                                     environment: ["http_proxy": "", "HTTP_PROXY": "", "no_proxy": "*"], timeout: timeout)
        #expect(run.status == 0, "\(run.output)\n\(answer.text)")
        let received = origin.requests()
        try #require(received.count == 2, "the origin got \(received.count) requests:\n\(answer.text)\n\(run.output)")
        let (first, second) = (received[0], received[1])
        #expect(second.method == "PUT" && second.path == first.path, "\(second.path) ≠ \(first.path)")
        #expect(second.body == body.bytes, "the body, byte for byte:\n\(answer.text)")
        for field in first.headers where !Self.unrepeated.union(skipped).contains(field[0].lowercased()) {
            #expect(second.headers.contains { $0[0].lowercased() == field[0].lowercased() && $0[1] == field[1] },
                    "\(field) did not arrive as sent: \(second.headers)\n\(answer.text)")
        }
    }
}

/// A plain HTTP origin on 127.0.0.1 that answers every request `ok` and keeps each one's method,
/// target, header fields (as bytes, read as Latin-1) and body. Stopped when released.
final class EchoOrigin {
    struct Received {
        let method: String
        let path: String
        let headers: [[String]]
        let body: [UInt8]
    }

    private let server: ScriptServer
    var port: Int { server.port }
    private let directory = TemporaryDirectory()
    private let log: String

    init() throws {
        log = directory.file("requests.jsonl")
        let script = directory.write("echo.py", """
            import base64, http.server, json, sys, threading
            class Echo(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def handle_one_request(self):
                    self.raw_requestline = self.rfile.readline(65537)
                    if not self.raw_requestline or not self.parse_request():
                        self.close_connection = True
                        return
                    if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                        body = b""
                        while True:
                            size = int(self.rfile.readline().split(b";")[0], 16)
                            body += self.rfile.read(size)
                            self.rfile.readline()
                            if size == 0:
                                break
                    else:
                        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    with open(sys.argv[1], "a") as out:
                        out.write(json.dumps({"method": self.command, "path": self.path,
                                              "headers": [[k, v] for k, v in self.headers.items()],
                                              "body": base64.b64encode(body).decode()}) + "\\n")
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                    self.wfile.flush()
                def log_message(self, *args):
                    pass
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
            server.daemon_threads = True
            print(server.server_address[1], flush=True)
            # Ends when the test closes standard input (SIGTERM may be ignored under the test runner).
            threading.Thread(target=server.serve_forever, daemon=True).start()
            sys.stdin.read()
            """)
        server = try ScriptServer([script, log])
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests received so far, oldest first.
    func requests() -> [Received] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { return nil }
            return Received(method: object["method"] as? String ?? "", path: object["path"] as? String ?? "",
                            headers: object["headers"] as? [[String]] ?? [],
                            body: [UInt8](Data(base64Encoded: object["body"] as? String ?? "") ?? Data()))
        }
    }
}
