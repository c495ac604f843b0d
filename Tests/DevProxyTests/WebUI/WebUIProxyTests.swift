import CertAuthority
@testable import DevProxy
import Foundation
import TestSupport
import Testing
@testable import WebUI

/// The UI beside a real proxy: live events, replay through the proxy, curl export, and the
/// proxy's refusal to forward to the UI.
@Suite struct WebUIProxyTests {
    /// A running UI, proxy and plain origin whose `/report` POSTs are appended to a file (a hit counter).
    static func setUp() throws -> (WebUIHarness, ProxyHarness, OriginServer) {
        let origin = try OriginServer(tls: true)
        let ui = try WebUIHarness(withProxy: true) { $0.upstreamCAs = [try! Certificate.all(
            from: try! SecureFile.read(origin.caPath, what: "ca"))[0]] }
        return (ui, try #require(ui.proxy), origin)
    }

    static func hits(_ origin: OriginServer) -> [String] {
        let text = (try? String(contentsOfFile: origin.reportsPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Waits for the flow the store has for `url` (newest first), up to 10 s.
    static func flow(_ ui: WebUIHarness, url: String) throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            ui.store.flush()
            // The URL as a literal (`[` or `?` in it are not its pattern).
            let literal = "~u '" + NSRegularExpression.escapedPattern(for: url) + "'"
            let filter = literal.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let flows = try ui.request("/api/flows?filter=" + filter).json["flows"] as? [[String: Any]] ?? []
            if let first = flows.first(where: { $0["url"] as? String == url && $0["phase"] as? String == "finished" }) {
                return first
            }
            usleep(50_000)
        }
        return nil
    }

    /// A flow the client made over HTTP/2 replays over HTTP/2 to an origin that speaks both
    /// (hypercorn), as mitmproxy replays it: the replayer is an HTTP/1.1 client of the proxy, and
    /// the origin was offered only http/1.1, so the replay's flow said HTTP/1.1. An edited resend
    /// of it goes the same way; one of an HTTP/1.1 flow stays HTTP/1.1.
    @Test func anHTTP2FlowIsReplayedOverHTTP2() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let ui = try WebUIHarness(withProxy: true) { $0.upstreamCAs = [try! Certificate.all(
            from: try! SecureFile.read(origin.caPath, what: "ca"))[0]] }
        let proxy = try #require(ui.proxy)
        let url = origin.url("/replayed-h2")
        let sent = try proxy.curl(["--http2", "-o", "/dev/null", "-w", "%{http_version}", url])
        #expect(sent.stdout == "2", "\(sent.output)")
        let original = try #require(try Self.flow(ui, url: url))
        #expect(original["http_version"] as? String == "HTTP/2")
        let originalID = try #require(original["id"] as? String)
        /// The replay's flow: its request's version, and the protocol the origin chose in ALPN.
        func version(of answer: WebUIHarness.Answer) throws -> String? {
            let id = try #require(answer.json["id"] as? String, "\(answer.text)")
            let flow = try ui.request("/api/flows/\(id)").json
            let alpn = ((flow["tls"] as? [String: Any])?["upstream"] as? [String: Any])?["alpn"] as? String
            let version = (flow["request"] as? [String: Any])?["http_version"] as? String
            #expect(alpn == (version == "HTTP/2" ? "h2" : "http/1.1"), "\(version ?? "") over \(alpn ?? "")")
            return version
        }
        #expect(try version(of: try ui.request("/api/flows/\(originalID)/replay", method: "POST")) == "HTTP/2")
        let edited = #"{"method":"GET","url":"\#(url)","headers":[["X-Edited","1"]],"replay_of":"\#(originalID)"}"#
        #expect(try version(of: try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                                                body: edited)) == "HTTP/2")
        _ = try proxy.curl(["--http1.1", "-o", "/dev/null", origin.url("/replayed-h1")])
        let plain = try #require(try Self.flow(ui, url: origin.url("/replayed-h1")))
        let plainID = try #require(plain["id"] as? String)
        #expect(try version(of: try ui.request("/api/flows/\(plainID)/replay", method: "POST")) == "HTTP/1.1")
    }

    @Test func replayReachesTheOriginAgainAndAddsAFlowMarkedAsAReplay() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/report")
        let sent = try proxy.curl(["-d", "first-body", "-H", "X-Kind: original", url])
        #expect(sent.stdout == "echo:first-body")
        let original = try #require(try Self.flow(ui, url: url))
        let originalID = try #require(original["id"] as? String)
        let answer = try ui.request("/api/flows/\(originalID)/replay", method: "POST")
        #expect(answer.status == 200, "\(answer.text)")
        let newID = try #require(answer.json["id"] as? String)
        #expect(newID != originalID)
        #expect(Self.hits(origin) == ["first-body", "first-body"])
        let record = try ui.request("/api/flows/\(newID)")
        #expect(record.status == 200)
        #expect(record.json["replay_of"] as? String == originalID)
        let request = record.json["request"] as? [String: Any]
        let headers = request?["headers"] as? [[String]] ?? []
        #expect(headers.contains(["X-Kind", "original"]))
        #expect(!headers.contains { $0.first?.lowercased() == "x-devproxy-replay" })
        #expect((record.json["response"] as? [String: Any])?["status"] as? Int == 200)
        let summaries = try ui.request("/api/flows?filter=~u%20report").json["flows"] as? [[String: Any]] ?? []
        #expect(summaries.first { $0["id"] as? String == newID }?["replay_of"] as? String == originalID)

        let edited = #"{"method":"POST","url":"\#(url)","headers":[["X-Kind","edited"]],"body":"second-body"}"#
        let resent = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                                    body: edited)
        #expect(resent.status == 200, "\(resent.text)")
        #expect(Self.hits(origin).last == "second-body")
        #expect(try ui.request("/api/replay", method: "POST", body: #"{"method":"GET","url":"ftp://x"}"#).status == 400)
        // A request the proxy refuses before it becomes the replay (a header over its 64 KiB
        // limit) is an error with the proxy's reason: the answer named a flow that did not exist.
        let huge = String(repeating: "a", count: 70_000)
        let refused = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                                     body: #"{"method":"GET","url":"\#(url)","headers":[["X-Huge","\#(huge)"]]}"#)
        #expect(refused.status == 422 && refused.text.contains("the proxy refused the request before sending it: HTTP/1.1 431"),
                "\(refused.status) \(refused.text.prefix(300))")
        // Both bodies given: one was taken silently.
        let both = try ui.request("/api/replay", method: "POST",
                                  body: #"{"method":"POST","url":"\#(url)","body":"a","body_base64":"Yg=="}"#)
        #expect(both.status == 400 && both.text.contains("not several"), "\(both.text)")
        // A value with CR LF (one Character in Swift, which passed a check for "\r" and "\n") is
        // refused: it went out as a second header line.
        for value in [#"a\r\nInjected: 1"#, #"a\nInjected: 1"#, #"a\rb"#, #"a\u0000b"#] {
            let injected = #"{"method":"GET","url":"\#(url)","headers":[["X-Kind","\#(value)"]]}"#
            let refused = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                                         body: injected)
            #expect(refused.status == 400, "\(value): \(refused.text)")
        }
    }

    /// A Host edited in the resend dialog is sent as typed, over a connection to the URL's host
    /// (TLS verified for that host): the proxy replaced it with the URL's, as it does for any
    /// absolute-form request, so the edit did nothing. Checked against origins that echo the Host
    /// they received (Python's http.server, hypercorn, and an HTTP/2-only origin, which gets it as
    /// `:authority`). The new flow keeps the
    /// URL it went to, so a replay of it goes there again; a Host that spells the URL's authority
    /// in other letters or with the default port is the URL's; two Hosts, or one with a space,
    /// are refused.
    @Test func anEditedHostIsSentAsTypedToTheURLsHost() throws {
        let origin = try OriginServer(tls: true)
        let hypercorn = try HTTP2Origin(.hypercornBoth)
        let h2Only = try HTTP2Origin(.misbehaving)
        let ui = try WebUIHarness(withProxy: true) {
            $0.upstreamCAs = try! [origin.caPath, hypercorn.caPath, h2Only.caPath].map {
                try Certificate.all(from: try SecureFile.read($0, what: "ca"))[0]
            }
        }
        func resend(_ url: String, _ headers: String) throws -> WebUIHarness.Answer {
            try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                           body: #"{"method":"GET","url":"\#(url)","headers":\#(headers)}"#)
        }
        func received(_ answer: WebUIHarness.Answer) throws -> (flow: [String: Any], echoed: String) {
            let id = try #require(answer.json["id"] as? String, "\(answer.status) \(answer.text)")
            return (try ui.request("/api/flows/\(id)").json, try ui.request("/api/flows/\(id)/response/body").text)
        }
        let url = origin.url("/headers")
        let edited = try received(try resend(url, #"[["Host","Tenant-B.example:8443"],["X-Kind","edited"]]"#))
        #expect(edited.echoed.contains("Host: Tenant-B.example:8443\n"), "\(edited.echoed)")
        let request = edited.flow["request"] as? [String: Any]
        #expect(request?["url"] as? String == url)
        #expect((request?["headers"] as? [[String]])?.contains(["Host", "Tenant-B.example:8443"]) == true, "\(edited.flow)")
        #expect((edited.flow["response"] as? [String: Any])?["status"] as? Int == 200)
        // Replayed as it was recorded, it goes to the URL with the Host it was sent with, as mitmproxy replays it.
        let again = try received(try ui.request("/api/flows/\(edited.flow["id"] as? String ?? "")/replay", method: "POST"))
        #expect(again.echoed.contains("Host: Tenant-B.example:8443\n"), "\(again.echoed)")
        #expect((again.flow["request"] as? [String: Any])?["url"] as? String == url, "\(again.flow)")
        // Another server (hypercorn), a name without a port.
        let other = try received(try resend(hypercorn.url("/echo"), #"[["Host","tenant-b.example"]]"#))
        let echo = try JSONSerialization.jsonObject(with: Data(other.echoed.utf8)) as? [String: Any]
        #expect((echo?["headers"] as? [[String]])?.contains(["host", "tenant-b.example"]) == true, "\(other.echoed)")
        // An HTTP/2-only origin gets it as :authority.
        let overH2 = try received(try resend(h2Only.url("/authority"), #"[["Host","tenant-b.example:8443"]]"#))
        #expect(overH2.echoed == "tenant-b.example:8443", "\(overH2.echoed)")
        #expect(((overH2.flow["tls"] as? [String: Any])?["upstream"] as? [String: Any])?["alpn"] as? String == "h2")

        let sameHost = try received(try resend(origin.url("/headers"), #"[["Host","LOCALHOST:\#(origin.port)"]]"#))
        #expect(sameHost.echoed.contains("Host: localhost:\(origin.port)"), "\(sameHost.echoed)")
        let two = try resend(url, #"[["Host","a.example"],["host","b.example"]]"#)
        #expect(two.status == 400 && two.text.contains("give one Host header"), "\(two.text)")
        let spaced = try resend(url, #"[["Host","a example"]]"#)
        #expect(spaced.status == 400 && spaced.text.contains("without spaces"), "\(spaced.text)")
    }

    /// A flow whose request named another host than its connection's is replayed to the server
    /// the original went to, with its Host as recorded, as mitmproxy replays a flow (its host and
    /// port, the headers it recorded): an intercepted HTTPS request sent with `Host: tenant-b.test`
    /// to localhost (`server.request_host`) goes to localhost again, and a plain request in a
    /// CONNECT tunnel to the tunnel's address. Both went to the Host's name (`tenant-b.test:PORT`,
    /// which does not resolve: upstream_unresolvable) with the URL's authority as their Host.
    @Test func aFlowIsReplayedToTheServerItWentToWithItsHostAsRecorded() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let plain = try OriginServer(tls: false)
        func replayed(_ url: String) throws -> (flow: [String: Any], echoed: String) {
            let original = try #require(try Self.flow(ui, url: url), "no flow for \(url)")
            let answer = try ui.request("/api/flows/\(original["id"] as? String ?? "")/replay", method: "POST")
            let id = try #require(answer.json["id"] as? String, "\(answer.status) \(answer.text)")
            return (try ui.request("/api/flows/\(id)").json, try ui.request("/api/flows/\(id)/response/body").text)
        }
        let sent = try proxy.curl(["-H", "Host: tenant-b.test", origin.url("/headers")])
        #expect(sent.stdout.contains("Host: tenant-b.test\n"), "\(sent.output)")
        let intercepted = try replayed("https://tenant-b.test:\(origin.port)/headers")
        #expect(intercepted.echoed.contains("Host: tenant-b.test\n"), "\(intercepted.echoed) \(intercepted.flow)")
        let server = intercepted.flow["server"] as? [String: Any]
        #expect(server?["host"] as? String == "localhost" && server?["port"] as? Int == origin.port, "\(intercepted.flow)")
        #expect((intercepted.flow["response"] as? [String: Any])?["status"] as? Int == 200, "\(intercepted.flow)")
        // The replay names tenant-b.test on the connection to localhost, as the original did: its
        // Connection tab says "Request named: tenant-b.test" too (the replay had no request_host).
        #expect(server?["request_host"] as? String == "tenant-b.test", "\(intercepted.flow)")

        let tunnelled = try proxy.curl(["-p", "-H", "Host: tenant-b.test", plain.url("/headers", tls: false)])
        #expect(tunnelled.stdout.contains("Host: tenant-b.test\n"), "\(tunnelled.output)")
        let again = try replayed("http://tenant-b.test:\(plain.port)/headers")
        #expect(again.echoed.contains("Host: tenant-b.test\n"), "\(again.echoed) \(again.flow)")
        #expect((again.flow["server"] as? [String: Any])?["address"] as? String == "127.0.0.1:\(plain.port)", "\(again.flow)")

        // A request whose Host named its URL's host is replayed with that Host (not the URL's
        // authority, `localhost:PORT`, where the client left the port out).
        let portless = try proxy.curl(["-H", "Host: localhost", origin.url("/headers?portless")])
        #expect(portless.stdout.contains("Host: localhost\n"), "\(portless.output)")
        let same = try replayed(origin.url("/headers?portless"))
        #expect(same.echoed.contains("Host: localhost\n"), "\(same.echoed)")
    }

    /// A body in a declared charset other than UTF-8 (Shift_JIS from the origin, Latin-1 from
    /// curl) passes through byte for byte, is recorded and served as its text (read as a browser
    /// reads it), is found by `~bs`/`~bq` in that text, and downloads raw as it was sent.
    @Test func bodiesInADeclaredCharsetReadAsTextAndKeepTheirBytes() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/charset?name=shift_jis&label=Shift_JIS&text=%E6%97%A5%E6%9C%AC%E8%AA%9E")
        let fetched = try proxy.curl(["-o", ui.directory.file("sjis.bin"), url])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let sjis: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]
        #expect([UInt8](FileManager.default.contents(atPath: ui.directory.file("sjis.bin")) ?? Data()) == sjis)
        let summary = try #require(try Self.flow(ui, url: url))
        let id = try #require(summary["id"] as? String)
        let record = try ui.request("/api/flows/\(id)").json
        let body = (record["response"] as? [String: Any])?["body"] as? [String: Any]
        #expect(body?["text"] as? String == "日本語")
        #expect(body?["charset"] as? String == "shift_jis")
        let shown = try ui.request("/api/flows/\(id)/response/body")
        #expect(shown.text == "日本語" && shown.headers["content-type"] == "text/plain; charset=utf-8", "\(shown.headers)")
        #expect(try ui.request("/api/flows/\(id)/response/body?raw=1").body == sjis)
        let found = try ui.request("/api/flows?filter=" + ("~bs 日本語".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        #expect((found.json["flows"] as? [[String: Any]])?.contains { $0["id"] as? String == id } == true, "\(found.text)")

        let latin1File = ui.directory.write("latin1.bin", bytes: [0x63, 0x61, 0x66, 0xE9])
        let postURL = origin.url("/echo-latin1")
        let posted = try proxy.curl(["--data-binary", "@" + latin1File, "-H", "Content-Type: text/plain; charset=ISO-8859-1",
                                     postURL])
        #expect(posted.status == 0, "\(posted.stderr)")
        let postID = try #require(try Self.flow(ui, url: postURL)?["id"] as? String)
        let request = (try ui.request("/api/flows/\(postID)").json["request"] as? [String: Any])?["body"] as? [String: Any]
        #expect(request?["text"] as? String == "café" && request?["charset"] as? String == "iso-8859-1", "\(String(describing: request))")
        #expect(try ui.request("/api/flows/\(postID)/request/body?raw=1").body == [0x63, 0x61, 0x66, 0xE9])
        let cafe = try ui.request("/api/flows?filter=" + ("~bq café".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        #expect((cafe.json["flows"] as? [[String: Any]])?.contains { $0["id"] as? String == postID } == true)

        // Edited and sent again: the text goes out in the charset its Content-Type declares, and
        // text that charset cannot write is refused with the reason.
        let reportURL = origin.url("/report")
        func resend(_ text: String) throws -> WebUIHarness.Answer {
            let edited = #"{"method":"POST","url":"\#(reportURL)","headers":[["Content-Type","text/plain; charset=iso-8859-1"]],"body":"\#(text)"}"#
            return try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"], body: edited)
        }
        let resent = try resend("déjà €")
        #expect(resent.status == 200, "\(resent.text)")
        let reports = [UInt8](FileManager.default.contents(atPath: origin.reportsPath) ?? Data())
        #expect(reports == [0x64, 0xE9, 0x6A, 0xE0, 0x20, 0x80, 0x0A], "\(reports)")
        let refused = try resend("日本")
        #expect(refused.status == 400 && refused.text.contains("iso-8859-1 cannot write"), "\(refused.text)")
    }

    /// An edited request whose body is over what the editor takes sends the stored body whole
    /// (`body_from`): the dialog held only the record's 4 KiB preview, and that was sent.
    @Test func anEditedRequestCanSendAStoredBodyWhole() throws {
        let origin = try OriginServer(tls: true)
        let ui = try WebUIHarness(withProxy: true) {
            $0.upstreamCAs = [try! Certificate.all(from: try! SecureFile.read(origin.caPath, what: "ca"))[0]]
            $0.bodyLimit = 4 << 20
        }
        let proxy = try #require(ui.proxy)
        let url = origin.url("/report")
        let big = ui.directory.write("big.bin", bytes: (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let sent = try proxy.curl(["--data-binary", "@" + big, "-o", "/dev/null", url])
        #expect(sent.status == 0, "\(sent.output)")
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let edited = #"{"method":"POST","url":"\#(url)","headers":[["X-Edited","1"]],"body_from":"\#(id)","replay_of":"\#(id)"}"#
        let resent = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"], body: edited)
        #expect(resent.status == 200, "\(resent.text)")
        let reports = [UInt8](FileManager.default.contents(atPath: origin.reportsPath) ?? Data())
        #expect(reports.count == 2 * ((2 << 20) + 1), "\(reports.count)")
        let both = #"{"method":"POST","url":"\#(url)","body":"x","body_from":"\#(id)"}"#
        #expect(try ui.request("/api/replay", method: "POST", body: both).status == 400)
    }

    /// Text sent again under `Content-Encoding: gzip` (the editor shows a compressed body decoded)
    /// goes out gzipped, as the header says; it went out as plain text under that header. br is
    /// written too (libbrotlienc), where it was a 400.
    @Test func anEditedTextBodyIsWrittenInItsContentEncoding() throws {
        let (ui, _, origin) = try Self.setUp()
        let url = origin.url("/report")
        let edited = #"{"method":"POST","url":"\#(url)","headers":[["Content-Encoding","gzip"]],"body":"{\"edited\":true}"}"#
        let resent = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"], body: edited)
        #expect(resent.status == 200, "\(resent.text)")
        let reports = [UInt8](FileManager.default.contents(atPath: origin.reportsPath) ?? Data())
        let gunzipped = try Subprocess.run("python3", ["-c", "import gzip,sys; sys.stdout.write(gzip.decompress(open(sys.argv[1],'rb').read()[:-1]).decode())",
                                                       origin.reportsPath])
        #expect(reports.starts(with: [0x1F, 0x8B]) && gunzipped.stdout == #"{"edited":true}"#, "\(gunzipped.output)")
        let brotli = #"{"method":"POST","url":"\#(url)","headers":[["Content-Encoding","br"]],"body":"x"}"#
        let coded = try ui.request("/api/replay", method: "POST", body: brotli)
        #expect(coded.status == 200, "\(coded.text)")
        // origin.py appends each report and a newline.
        let both = [UInt8](FileManager.default.contents(atPath: origin.reportsPath) ?? Data())
        let second = Array(both.dropFirst(reports.count).dropLast())
        #expect(ContentDecoder.decode(second, contentEncoding: "br")?.bytes == Array("x".utf8), "\(second)")
    }

    /// A request signed for a `--verify-signature` host is re-signed when replayed (a fresh
    /// timestamp and nonce), so the replay passes the check the original passed rather than
    /// being a `nonce_reused` copy; the signature headers sent are new.
    @Test func replaysOfSignedRequestsAreSignedAfresh() throws {
        let origin = try OriginServer(tls: true)
        let directory = TemporaryDirectory()
        let keyFile = directory.write("hmac.key", "replay-key\n")
        let verifier = try SignatureVerifier(rules: [try SignatureRule.parse("localhost=\(keyFile)")])
        let ui = try WebUIHarness(withProxy: true, signatures: verifier) {
            $0.upstreamCAs = [try! Certificate.all(from: try! SecureFile.read(origin.caPath, what: "ca"))[0]]
        }
        let proxy = try #require(ui.proxy)
        let url = origin.url("/report")
        let signer = try #require(verifier.signer(for: "localhost"))
        let signed = try #require(signer.resign(method: "POST", url: url, headers: [], body: Array("to-sign".utf8)))
        let sent = try proxy.curl(["--data-binary", "to-sign"] + signed.flatMap { ["-H", "\($0[0]): \($0[1])"] } + [url])
        #expect(sent.stdout == "echo:to-sign", "\(sent.output)")
        let original = try #require(try Self.flow(ui, url: url))
        let originalID = try #require(original["id"] as? String)
        let first = try ui.request("/api/flows/\(originalID)").json
        #expect((first["signature"] as? [String: Any])?["valid"] as? Bool == true, "\(first)")
        let answer = try ui.request("/api/flows/\(originalID)/replay", method: "POST")
        let newID = try #require(answer.json["id"] as? String, "\(answer.text)")
        let replay = try ui.request("/api/flows/\(newID)").json
        let check = replay["signature"] as? [String: Any]
        #expect(check?["valid"] as? Bool == true, "the replay was re-signed: \(String(describing: check))")
        let nonce = { (flow: [String: Any]) in
            ((flow["request"] as? [String: Any])?["headers"] as? [[String]])?.first { $0.first == "X-Nonce" }?.last
        }
        #expect(nonce(replay) != nil && nonce(replay) != nonce(first))
        #expect(Self.hits(origin) == ["to-sign", "to-sign"])
    }

    @Test func theEventStreamDeliversAFlowMadeThroughTheProxy() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let events = try WebUIHarness.EventStream(ui)
        #expect(events.read(until: "event: hello"))
        #expect(events.received.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(events.received.contains("Content-Type: text/event-stream"))
        let path = "/headers?unique=\(UUID().uuidString)"
        _ = try proxy.curl([origin.url(path)])
        #expect(events.read(until: path))
        #expect(events.received.contains("event: flows\ndata: {\"flows\":["))
        #expect(events.received.contains("\"url\":\"\(origin.url(path))\""))
    }

    @Test func theProxyRefusesToForwardToTheUI() throws {
        let (ui, proxy, _) = try Self.setUp()
        // 0.0.0.0 is this machine too: it reached the UI (only the UI's Host check stopped it).
        for target in ["http://127.0.0.1:\(ui.port)/api/info", "http://localhost:\(ui.port)/api/flows",
                       "http://0.0.0.0:\(ui.port)/api/info"] {
            let result = try proxy.curl(["-i", "-H", "Authorization: Bearer \(ui.token)", target])
            #expect(result.stdout.hasPrefix("HTTP/1.1 403"), "\(result.output)")
            #expect(result.stdout.contains("DevProxy's own web UI"))
            #expect(!result.stdout.contains("\"version\""))
        }
        let tunnel = try proxy.curl(["-sS", "-p", "-i", "http://127.0.0.1:\(ui.port)/api/info"])
        #expect(tunnel.output.contains("403"))
        let flows = proxy.flows(count: 4)
        #expect(flows.filter { $0.error?.kind == "destination_refused" }.count == 4)
        // The UI itself still answers directly.
        #expect(try ui.request("/api/info").status == 200)
    }

    /// A gRPC call made by grpcio is replayed and exported as curl: both keep `te: trailers`
    /// (grpcio resets a stream without it) and the curl command asks for HTTP/2; the replay,
    /// which goes through the proxy over HTTP/1.1 and on to the origin over h2, gets its own gRPC
    /// view.
    @Test func aGRPCCallCanBeReplayedAndExported() throws {
        let server = try GRPCProxyTests.EchoServer()
        let ui = try WebUIHarness(withProxy: true) {
            $0.upstreamCAs = try! Certificate.all(from: try! SecureFile.read(server.caPath, what: "ca"))
        }
        let proxy = try #require(ui.proxy)
        let calls = try Subprocess.run("python3", [GRPCProxyTests.script, "client", proxy.pki.rootPath, "\(server.port)"],
                                       environment: ["https_proxy": proxy.proxyURL, "no_proxy": "", "no_grpc_proxy": ""],
                                       timeout: 60)
        #expect(calls.stdout.contains("\"unary\": {\"ok\": true"), "\(calls.output)")
        let url = "https://localhost:\(server.port)/lab.Echo/Unary"
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let answer = try ui.request("/api/flows/\(id)/replay", method: "POST")
        #expect(answer.status == 200, "\(answer.text)")
        let newID = try #require(answer.json["id"] as? String)
        let replay = try ui.request("/api/flows/\(newID)").json
        #expect(replay["error"] == nil, "\(replay)")
        let response = replay["response"] as? [String: Any]
        #expect(response?["status"] as? Int == 200)
        #expect((response?["trailers"] as? [[String]])?.contains(["grpc-status", "0"]) == true, "\(replay)")
        let grpc = replay["grpc"] as? [String: Any]
        #expect(grpc?["method"] as? String == "Unary" && grpc?["status"] as? Int == 0, "\(String(describing: grpc))")
        #expect((replay["tls"] as? [String: Any]).flatMap { ($0["upstream"] as? [String: Any])?["alpn"] as? String } == "h2")

        // The list carries grpc-status: a failed call (HTTP 200) is found by `~gs`, and `~grpc` finds them all.
        let failed = try ui.request("/api/flows?filter=~gs%205").json["flows"] as? [[String: Any]] ?? []
        #expect(failed.map { $0["url"] as? String } == ["https://localhost:\(server.port)/lab.Echo/Fail"])
        #expect(failed.first?["grpc_status"] as? Int == 5 && failed.first?["status"] as? Int == 200)
        let grpcFlows = try ui.request("/api/flows?filter=~grpc&limit=100").json["flows"] as? [[String: Any]] ?? []
        #expect(grpcFlows.count >= 7, "the client's calls and the replay: \(grpcFlows.count)")

        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.contains("--http2") && command.contains("-H 'te: trailers'"), "\(command)")
        let run = try Subprocess.run("sh", ["-c", command.trimmingCharacters(in: .newlines)
                                            + " --cacert '\(server.caPath)' --max-time 10 -sS -o /dev/null -D -"])
        #expect(run.status == 0 && run.stdout.contains("grpc-status: 0"), "\(run.output)")
    }

    /// A request for the onboarding site replayed from the UI was answered by the site before the
    /// engine took `X-DevProxy-Replay` off: the flow recorded the header, the run's secret in it,
    /// under an id of its own, and the UI's replay pointed at a flow that did not exist.
    @Test func aReplayedOnboardingRequestIsRecordedUnderItsIDWithoutTheSecret() throws {
        let pki = try PKIFixture()
        let ui = try WebUIHarness(withProxy: true) { $0.onboarding = OnboardingSite(root: pki.root) }
        let answer = try ui.request("/api/replay", method: "POST", headers: ["Content-Type: application/json"],
                                    body: #"{"method":"GET","url":"http://devproxy.test/root.pem"}"#)
        let id = try #require(answer.json["id"] as? String, "\(answer.text)")
        ui.store.flush()
        let record = try ui.request("/api/flows/\(id)")
        #expect(record.status == 200, "\(record.text)")
        #expect((record.json["response"] as? [String: Any])?["status"] as? Int == 200)
        let flows = try #require(ui.proxy).flows(count: 1)
        #expect(flows.map(\.id) == [id])
        let headers = flows.flatMap { $0.request?.headers ?? [] }
        #expect(!headers.contains { $0.first?.lowercased() == "x-devproxy-replay" }, "\(headers)")
    }

    /// The raw export gives each request line as the client sent it: a plain-proxy request's
    /// absolute-form with its own version and bytes (`%7e`, `|{}`, raw UTF-8 were re-encoded
    /// through URLComponents, the target cut to origin-form and the version made `HTTP/1.1`), a
    /// tunnelled request's origin-form, and an HTTP/2 request as `curl -v` shows it.
    @Test func aRawExportGivesTheRequestLineAsReceived() throws {
        let origin = try OriginServer(tls: true)
        let plain = try OriginServer(tls: false)
        let hypercorn = try HTTP2Origin(.hypercornBoth)
        let ui = try WebUIHarness(withProxy: true) {
            $0.upstreamCAs = try! [origin.caPath, hypercorn.caPath].map {
                try Certificate.all(from: try SecureFile.read($0, what: "ca"))[0]
            }
        }
        let proxy = try #require(ui.proxy)
        func raw(_ url: String) throws -> String {
            let id = try #require(try Self.flow(ui, url: url)?["id"] as? String, "no flow for \(url)")
            return try ui.request("/api/flows/\(id)/export?format=raw").text
        }
        let path = "/p/%7e|{x}?q=a%2Fb&\u{e9}"
        let absolute = plain.url(path, tls: false)
        let sent = try Subprocess.run("python3", ["-c", """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(proxy.port)))
            s.sendall(sys.argv[1].encode() + b" HTTP/1.0\\r\\nHost: other.test\\r\\n\\r\\n")
            print(s.recv(100).split(b"\\r\\n")[0].decode())
            """, "GET " + absolute], timeout: 20)
        #expect(sent.stdout.hasPrefix("HTTP/1."), "\(sent.output)")
        let proxied = try raw(absolute)
        // The Host the client sent, which DevProxy replaced with the URL's (the flow's `client_host`).
        #expect(proxied.hasPrefix("GET \(absolute) HTTP/1.0\r\nHost: other.test\r\n"), "\(proxied.debugDescription)")

        let tunnelled = try Subprocess.run("python3", ["-c", proxy.pythonTunnel(to: origin.port) + """

            t.sendall(sys.argv[1].encode() + b" HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\nConnection: close\\r\\n\\r\\n")
            print(t.recv(100).split(b"\\r\\n")[0].decode())
            """, "GET " + path], timeout: 20)
        #expect(tunnelled.stdout.hasPrefix("HTTP/1.1"), "\(tunnelled.output)")
        let inTunnel = try raw(origin.url(path))
        #expect(inTunnel.hasPrefix("GET \(path) HTTP/1.1\r\nHost: localhost:\(origin.port)\r\n"), "\(inTunnel.debugDescription)")

        let h2 = hypercorn.url("/echo?x=%41")
        let fetched = try proxy.curl(["--http2", "-o", "/dev/null", "-w", "%{http_version}", h2])
        #expect(fetched.stdout == "2", "\(fetched.output)")
        let overH2 = try raw(h2)
        #expect(overH2.hasPrefix("GET /echo?x=%41 HTTP/2\r\nHost: localhost:\(hypercorn.port)\r\n"), "\(overH2.debugDescription)")
        #expect(overH2.contains("\r\n\r\nHTTP/2 200\r\n"), "\(overH2.debugDescription)")
        // Its HAR entry lists curl's pseudo-header fields first, as Chrome's export does.
        let id = try #require(try Self.flow(ui, url: h2)?["id"] as? String)
        let har = try ui.request("/api/flows/\(id)/export?format=har").json
        let entry = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first
        let request = entry?["request"] as? [String: Any]
        let names = (request?["headers"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(names.prefix(4)) == [":method", ":scheme", ":authority", ":path"], "\(names)")
        #expect(!names.dropFirst(4).contains { $0.hasPrefix(":") } && request?["headersSize"] as? Int == -1)
    }

    @Test func theCurlExportRepeatsTheRequest() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/report")
        _ = try proxy.curl(["-d", "it's curl", url])
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let command = try ui.request("/api/flows/\(id)/export?format=curl")
        #expect(command.status == 200)
        #expect(command.text.hasPrefix("curl -X 'POST' '\(url)'"))
        let run = try Subprocess.run("sh", ["-c", command.text.trimmingCharacters(in: .newlines)
                                            + " --cacert '\(origin.caPath)' --max-time 10 -sS"])
        #expect(run.stdout == "echo:it's curl", "\(run.output)")
        #expect(Self.hits(origin) == ["it's curl", "it's curl"])
    }

    /// A request that accepted coded answers (a browser's `Accept-Encoding: gzip, deflate, br, zstd`)
    /// is copied with `--compressed` in that header's place, as Chrome's "Copy as cURL" writes it:
    /// the command printed the gzip bytes of the answer to the terminal, where it now prints the JSON.
    @Test func theCurlExportOfARequestThatAcceptedCodingsDecodesTheAnswer() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/gzip")
        _ = try proxy.curl(["-H", "Accept-Encoding: gzip, deflate, br, zstd", url])
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let command = try ui.request("/api/flows/\(id)/export?format=curl").text.trimmingCharacters(in: .newlines)
        #expect(command.hasSuffix(" --compressed") && !command.lowercased().contains("accept-encoding"), "\(command)")
        let run = try Subprocess.run("sh", ["-c", command
                                            + " --cacert '\(origin.caPath)' --max-time 10 -sS"])
        #expect(run.stdout == #"{"compressed": true}"#, "\(run.output)")
    }

    /// A gzip-encoded request body is kept as it was sent beside its decoded text: the store kept
    /// only the text, so a replay sent that text under `Content-Encoding: gzip` (a corrupt request)
    /// or was refused as "not stored whole" (a small body, whose gzip is longer than its text), the
    /// curl export paired the header with the plain text, and `?raw=1` was not the wire bytes.
    @Test(arguments: [5, 300])
    func anEncodedRequestBodyIsReplayedAndExportedAsSent(_ count: Int) throws {
        let (ui, proxy, origin) = try Self.setUp()
        let json = "{\"hello\":\"world\",\"n\":[" + (0..<count).map(String.init).joined(separator: ",") + "]}"
        let plain = ui.directory.write("plain-\(count).json", json)
        let file = ui.directory.file("req-\(count).gz")
        _ = try Subprocess.run("sh", ["-c", "gzip -c -n '\(plain)' > '\(file)'"])
        let sent = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let url = origin.url("/report")
        let first = try proxy.curl(["-H", "Content-Encoding: gzip", "-H", "Content-Type: application/json",
                                    "--data-binary", "@\(file)", url])
        #expect(first.status == 0, "\(first.output)")
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let raw = try ui.request("/api/flows/\(id)/request/body?raw=1")
        #expect(raw.body == sent, "raw: \(raw.body.count) bytes, sent \(sent.count)")
        let shown = try ui.request("/api/flows/\(id)/request/body")
        #expect(shown.text == json && shown.headers["x-devproxy-decoded"] == "gzip", "\(shown.headers)")
        #expect(shown.headers["x-devproxy-truncated"] == nil, "a whole body is not said to be cut: \(shown.headers)")
        let replay = try ui.request("/api/flows/\(id)/replay", method: "POST")
        #expect(replay.status == 200 || replay.status == 201, "\(replay.text)")
        let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: origin.reportsPath)))
        let copies = received.indices.filter { received[$0...].starts(with: sent) }.count
        #expect(copies == 2, "the origin got the gzip bytes twice, not \(copies) times")
        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.contains("base64 -d"), "binary wire bytes go through base64: \(command)")
    }

    /// A request that named another host than its connection's (`server.request_host`) is copied
    /// as curl to the server it went to, its Host as recorded, as a replay goes: the command named
    /// the Host's name as its URL (`https://tenant-b.test:PORT/`), which curl could not resolve.
    @Test func theCurlExportOfARequestToAnotherHostGoesWhereItWent() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let sent = try proxy.curl(["-H", "Host: tenant-b.test", origin.url("/headers?copied")])
        #expect(sent.stdout.contains("Host: tenant-b.test\n"), "\(sent.output)")
        let id = try #require(try Self.flow(ui, url: "https://tenant-b.test:\(origin.port)/headers?copied")?["id"] as? String)
        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.hasPrefix("curl '\(origin.url("/headers?copied"))'"), "\(command)")
        let run = try Subprocess.run("sh", ["-c", command.trimmingCharacters(in: .newlines)
                                            + " --cacert '\(origin.caPath)' --max-time 10 -sS"])
        #expect(run.status == 0 && run.stdout.contains("Host: tenant-b.test\n"), "\(run.output)")
    }

    /// Brackets in a URL (`?a[]=1&b[0]=2`, PHP and Rails arrays) are curl's globbing: the export
    /// failed with "bad range in URL" (exit 3) until it said `-g`.
    @Test func theCurlExportOfABracketedQueryRuns() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/cl?a[]=1&b[0]=2")
        let sent = try proxy.curl(["-g", url])
        #expect(sent.status == 0, "\(sent.output)")
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.hasPrefix("curl -g '\(url)'"), "\(command)")
        let run = try Subprocess.run("sh", ["-c", command.trimmingCharacters(in: .newlines)
                                            + " --cacert '\(origin.caPath)' --max-time 10 -sS"])
        #expect(run.status == 0 && run.stdout == sent.stdout, "\(run.output)")
    }

    /// A multipart body's CR LF went into the command inside single quotes, where a terminal
    /// that the command is pasted into turns CR into LF (the boundaries no longer matched): text
    /// with control characters now goes through printf's escapes. Cookies a client split over
    /// several fields went out as several Cookie lines, of which servers read one: now joined.
    @Test func theCurlExportKeepsControlCharactersAndJoinsCookies() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/report")
        let file = ui.directory.write("note.txt", "100% \\ 'quoted'\u{1b}[1m\ttab\r\nend")
        let sent = try proxy.curl(["-H", "Cookie: a=1", "-H", "Cookie: b=2", "-F", "note=@\(file)", "-F", "who=Ada", url])
        #expect(sent.status == 0 && sent.stdout.contains("\r\n"), "\(sent.output)")
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.hasPrefix("printf '"), "\(command)")
        #expect(!command.contains("\r"), "no raw CR in the command")
        #expect(command.components(separatedBy: "-H 'Cookie: a=1; b=2'").count == 2, "\(command)")
        #expect(!command.contains("Cookie: b=2'"), "\(command)")
        let run = try Subprocess.run("sh", ["-c", command.trimmingCharacters(in: .newlines)
                                            + " --cacert '\(origin.caPath)' --max-time 10 -sS"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout == sent.stdout, "the origin got the same body, byte for byte: \(command)")
    }

    /// A HEAD exports as `curl --head`, which returns once the head is in: `-X HEAD` waited for the
    /// body the answer's Content-Length announced and hit --max-time (exit 28), with the exit
    /// code, output and time of a failure.
    @Test func theCurlExportOfAHEADReturnsWithTheHead() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/cl")
        let head = try proxy.curl(["--head", url])
        #expect(head.status == 0, "\(head.output)")
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let command = try ui.request("/api/flows/\(id)/export?format=curl").text
        #expect(command.hasPrefix("curl --head '\(url)'"), "\(command)")
        let run = try Subprocess.run("sh", ["-c", command.trimmingCharacters(in: .newlines)
                                            + " --cacert '\(origin.caPath)' --max-time 5 -sS"], timeout: 15)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout.hasPrefix("HTTP/1.1 200") && run.stdout.contains("Content-Length: 11"), "\(run.output)")
    }

    /// A form a client posts is shown as its fields: curl's `-F` (multipart, with a binary file and
    /// a text field) and `--data-urlencode` (URL-encoded) through the proxy, read back from
    /// `GET /api/flows/ID/request/form`; a body that is not a form says so.
    @Test func aPostedFormIsReadAsItsFields() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let file = ui.directory.write("photo.bin", bytes: (0..<3000).map { UInt8($0 % 256) })
        let multipartURL = origin.url("/report")
        let upload = try proxy.curl(["-F", "name=Ada Lovelace", "-F", "photo=@\(file);type=image/x-raw", multipartURL])
        #expect(upload.status == 0, "\(upload.output)")
        let multipartID = try #require(try Self.flow(ui, url: multipartURL)?["id"] as? String)
        let multipart = try ui.request("/api/flows/\(multipartID)/request/form")
        #expect(multipart.status == 200, "\(multipart.text)")
        #expect(multipart.json["kind"] as? String == "multipart/form-data")
        #expect(multipart.json["complete"] as? Bool == true)
        let parts = try #require(multipart.json["fields"] as? [[String: Any]])
        #expect(parts.map { $0["name"] as? String } == ["name", "photo"])
        #expect(parts.first?["value"] as? String == "Ada Lovelace")
        #expect(parts.last?["file_name"] as? String == "photo.bin")
        #expect(parts.last?["content_type"] as? String == "image/x-raw")
        #expect(parts.last?["size"] as? Int == 3000)
        #expect(parts.last?["value"] is NSNull)

        let encodedURL = origin.url("/report")   // the newest flow for it, after the multipart one
        _ = try proxy.curl(["--data-urlencode", "q=a&b c", "--data-urlencode", "lang=fr-€", encodedURL])
        var encodedID = multipartID
        for _ in 0..<100 where encodedID == multipartID {
            encodedID = try Self.flow(ui, url: encodedURL)?["id"] as? String ?? multipartID
            if encodedID == multipartID { usleep(50_000) }
        }
        #expect(encodedID != multipartID, "the URL-encoded post's flow was stored")
        let encoded = try ui.request("/api/flows/\(encodedID)/request/form")
        let pairs = try #require(encoded.json["fields"] as? [[String: Any]])
        #expect(pairs.map { "\($0["name"] ?? "")=\($0["value"] ?? "")" } == ["q=a&b c", "lang=fr-€"])

        let notAForm = try ui.request("/api/flows/\(encodedID)/response/form")
        #expect(notAForm.status == 404)
        #expect(notAForm.text.contains("is not a form"), "\(notAForm.text)")
        #expect(try ui.request("/api/flows/nope/request/form").status == 404)
    }

    /// A form labelled with a content coding it does not have (a client that says gzip and sends
    /// the fields as they are) is still read as its fields, as the body view reads it as sent.
    @Test func aFormMislabelledAsGzipIsReadAsSent() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let url = origin.url("/mislabelled")
        _ = try proxy.curl(["-H", "Content-Encoding: gzip", "--data-urlencode", "q=plain text", url])
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let form = try ui.request("/api/flows/\(id)/request/form")
        #expect(form.status == 200, "\(form.text)")
        let fields = try #require(form.json["fields"] as? [[String: Any]])
        #expect(fields.map { "\($0["name"] ?? "")=\($0["value"] ?? "")" } == ["q=plain text"])
    }

    /// A protobuf body outside gRPC (a mobile app's REST call) is decoded without a schema, as
    /// `protoc --decode_raw` does: here a `google.protobuf.Struct` serialised by Python's protobuf
    /// library, `{"name": "Ada", "n": 3}`, posted through the proxy.
    @Test func aProtobufBodyIsDecodedWithoutASchema() throws {
        let (ui, proxy, origin) = try Self.setUp()
        let made = try Subprocess.run("python3", ["-c", """
            import sys
            from google.protobuf import struct_pb2
            message = struct_pb2.Struct()
            message["name"] = "Ada"
            message["n"] = 3
            print(message.SerializeToString().hex())
            """], timeout: 20)
        #expect(made.status == 0, "\(made.output)")
        let hex = Array(made.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        let bytes = stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16) }
        let file = ui.directory.write("struct.bin", bytes: bytes)
        let url = origin.url("/report")
        _ = try proxy.curl(["-H", "Content-Type: application/x-protobuf", "--data-binary", "@\(file)", url])
        let id = try #require(try Self.flow(ui, url: url)?["id"] as? String)
        let answer = try ui.request("/api/flows/\(id)/request/protobuf")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["complete"] as? Bool == true)
        let entries = try #require((answer.json["decoded"] as? [String: Any])?["fields"] as? [[String: Any]])
        func fields(_ field: [String: Any]?) -> [[String: Any]] {
            (field?["message"] as? [String: Any])?["fields"] as? [[String: Any]] ?? []
        }
        #expect(entries.map { $0["number"] as? Int } == [1, 1], "two map entries")
        // A map's entries come in no set order: each is found by its key (field 1).
        func value(of key: String) -> [String: Any]? {
            let entry = entries.first { fields($0).first?["string"] as? String == key }
            return fields(fields(entry).last).first
        }
        #expect(value(of: "name")?["string"] as? String == "Ada", "Value.string_value")
        #expect(value(of: "name")?["number"] as? Int == 3)
        #expect(value(of: "n")?["double"] as? Double == 3, "Value.number_value, a fixed64")
        #expect(value(of: "n")?["number"] as? Int == 2)
        let notProtobuf = try ui.request("/api/flows/\(id)/response/protobuf")
        #expect(notProtobuf.status == 404)
        #expect(notProtobuf.text.contains("is not protobuf"), "\(notProtobuf.text)")
    }
}
