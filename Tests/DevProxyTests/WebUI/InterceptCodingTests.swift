import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport
@testable import WebUI

/// Compressed and charset-coded bodies at a breakpoint (`Intercepts.ShownBody`), end to end: origin.py
/// sends gzip, br and zstd bodies (real encoders), curl `--compressed` asks through the proxy over
/// HTTP/1.1 and HTTP/2, the body is held, read and edited through the web UI's API
/// (`body_decoded_text`, `body_decoded`), and the client gets the edit, coded again.
@Suite(.serialized) struct InterceptCodingTests {
    private typealias Running = InterceptTests.Running

    /// A web UI beside a proxy holding what `filter` passes, trusting `origin`'s CA.
    private func harness(_ filter: String, _ origin: OriginServer) throws -> (WebUIHarness, ProxyHarness, Intercepts) {
        let board = try Intercepts(filter: filter)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let ui = try WebUIHarness(withProxy: true, intercepts: board, configure: {
            $0.upstreamCAs = cas
            $0.intercepts = board
        })
        return (ui, try #require(ui.proxy), board)
    }

    /// curl through `proxy` on a thread of its own (`--http1.1` or `--http2` to the proxy's TLS).
    private func curl(_ proxy: ProxyHarness, _ arguments: [String]) -> Running<Subprocess.Result> {
        let start = ["-sS", "--proxy", proxy.proxyURL, "--cacert", proxy.pki.rootPath, "--max-time", "30"]
        return Running { try Subprocess.run("curl", start + arguments, timeout: 40) }
    }

    private static let csrf = ["X-DevProxy-CSRF: 1", "Content-Type: application/json"]

    /// `{"body_decoded": text}` as JSON.
    private static func decodedEdit(_ text: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["body_decoded": text]), as: UTF8.self)
    }

    private static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A gzip, br or zstd response held: the API shows it decoded and says how; edited there, curl
    /// `--compressed` gets the edit (coded again in the same coding, framed by its new length), and
    /// the flow records it.
    @Test(arguments: [("gzip", "--http1.1"), ("br", "--http1.1"), ("zstd", "--http1.1"), ("gzip", "--http2"),
                      ("br", "--http2"), ("zstd", "--http2")])
    func aCompressedResponseIsEditedDecodedAndSentCodedAgain(_ coding: String, _ version: String) throws {
        let origin = try OriginServer()
        let (ui, proxy, board) = try harness("~u /coded & ~s", origin)
        let dir = TemporaryDirectory()
        let client = curl(proxy, [version, "--compressed", "-D", dir.file("head"), "-o", dir.file("out"),
                                  origin.url("/coded?mb=1&coding=\(coding)")])
        let held = try board.firstHeld(.response, timeout: 15)
        let shown = try ui.request("/api/intercept/\(held.id)")
        #expect(shown.status == 200)
        #expect(shown.json["content_encoding"] as? [String] == [coding], "\(shown.json.keys)")
        #expect(shown.json["body_shown"] as? String == "\(coding): shown decoded, sent re-encoded as \(coding)")
        let text = try #require(shown.json["body_decoded_text"] as? String)
        #expect(text.hasPrefix("{\"id\":0,\"name\":\"item 0 é→😀\""))
        #expect(shown.json["body_decoded_size"] as? Int == 1 << 20)
        #expect(shown.json["body_note"] == nil && shown.json["body_size"] as? Int == held.body.count)
        let listed = try ui.request("/api/intercept")
        #expect((listed.json["held"] as? [[String: Any]])?.first?["content_encoding"] as? [String] == [coding])

        let edited = "{\"edited\": \"at a breakpoint é→😀\", \"coding\": \"\(coding)\"}"
        let answer = try ui.request("/api/intercept/\(held.id)/resume", method: "POST", headers: Self.csrf,
                                    body: try Self.decodedEdit(edited))
        #expect(answer.status == 200, "\(answer.text)")
        let result = try client.result()
        #expect(result.status == 0, "\(result.output)")
        #expect(String(decoding: try Self.bytes(dir.file("out")), as: UTF8.self) == edited)
        let head = try String(contentsOfFile: dir.file("head"), encoding: .utf8).lowercased()
        #expect(head.contains("content-encoding: \(coding)\r\n"), "\(head)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.interceptResponse?.edited == ["body"] && flow.interceptResponse?.outcome == "resumed")
        #expect(flow.response?.body?.text == edited, "\(String(describing: flow.response?.body))")
        let length = flow.response?.headers.first(named: "content-length").flatMap { Int($0) }
        #expect(length == flow.response?.body?.size && length != held.body.count, "framed by the coded edit's length")
    }

    /// Resumed as it came, or with the very text it was shown, a coded body goes byte for byte as
    /// the origin sent it.
    @Test(arguments: ["--http1.1", "--http2"])
    func anUneditedCodedBodyGoesByteForByte(_ version: String) throws {
        let origin = try OriginServer()
        let (ui, proxy, board) = try harness("~u /coded & ~s", origin)
        let dir = TemporaryDirectory()
        let client = curl(proxy, [version, "-o", dir.file("first"), origin.url("/coded?mb=1&coding=br"),
                                  "-o", dir.file("second"), origin.url("/coded?mb=1&coding=gzip")])
        let first = try board.firstHeld(.response, timeout: 15)
        #expect(try ui.request("/api/intercept/\(first.id)/resume", method: "POST", headers: Self.csrf).status == 200)
        let second = try board.firstHeld(.response, timeout: 15)
        let text = try #require(try ui.request("/api/intercept/\(second.id)").json["body_decoded_text"] as? String)
        // A megabyte of JSON: from a file, past what one argument holds.
        try Data(try Self.decodedEdit(text).utf8).write(to: URL(fileURLWithPath: dir.file("edit.json")))
        let same = try ui.request("/api/intercept/\(second.id)/resume", method: "POST", headers: Self.csrf,
                                  extra: ["--data-binary", "@" + dir.file("edit.json")])
        #expect(same.status == 200, "\(same.text)")
        #expect(try client.result().status == 0)
        #expect(try Self.bytes(dir.file("first")) == first.body)
        #expect(try Self.bytes(dir.file("second")) == second.body)
        #expect(first.body.count > 1000 && second.body.starts(with: [0x1F, 0x8B]))
        let flows = proxy.flows(count: 2)
        #expect(flows.allSatisfy { $0.interceptResponse?.edited == [] }, "\(flows.map(\.interceptResponse))")
    }

    /// A gzip body that does not decode is not offered as text: the API says why in one line, an
    /// edit as decoded text is refused with it, and resumed it goes as it came.
    @Test func aCorruptGzipBodyIsSentUnchangedAndSaysWhy() throws {
        let origin = try OriginServer()
        let (ui, proxy, board) = try harness("~u /coded & ~s", origin)
        let dir = TemporaryDirectory()
        let client = curl(proxy, ["--http1.1", "-o", dir.file("out"), origin.url("/coded?coding=gzip&bad=1")])
        let held = try board.firstHeld(.response, timeout: 15)
        let shown = try ui.request("/api/intercept/\(held.id)")
        let note = "the body does not decode as gzip (corrupt or cut short): sent unchanged"
        #expect(shown.json["body_note"] as? String == note && shown.json["body_decoded_text"] == nil, "\(shown.text)")
        #expect(shown.json["content_encoding"] as? [String] == ["gzip"])
        let refused = try ui.request("/api/intercept/\(held.id)/resume", method: "POST", headers: Self.csrf,
                                     body: try Self.decodedEdit("edited"))
        #expect(refused.status == 400 && (refused.json["error"] as? String ?? "").contains(note), "\(refused.text)")
        #expect(try ui.request("/api/intercept/\(held.id)/resume", method: "POST", headers: Self.csrf).status == 200)
        #expect(try client.result().status == 0)
        #expect(try Self.bytes(dir.file("out")) == held.body)
        _ = proxy.flows(count: 1)
    }

    /// A held request with a gzip body (curl uploading one) is shown decoded; the edit goes upstream
    /// gzip-coded again, over HTTP/1.1 and HTTP/2 (origin.py echoes the bytes it got).
    @Test(arguments: ["--http1.1", "--http2"])
    func aCompressedRequestBodyIsEditedDecoded(_ version: String) throws {
        let origin = try OriginServer()
        let (ui, proxy, board) = try harness("~u /echo & ~q", origin)
        let dir = TemporaryDirectory()
        let upload = try #require(ContentEncoder.encode(Array("name=ana&note=é".utf8), contentEncoding: "gzip"))
        try Data(upload).write(to: URL(fileURLWithPath: dir.file("body.gz")))
        let client = curl(proxy, [version, "-o", dir.file("out"), "-H", "Content-Encoding: gzip",
                                  "-H", "Content-Type: application/x-www-form-urlencoded; charset=utf-8",
                                  "--data-binary", "@" + dir.file("body.gz"), origin.url("/echo")])
        let held = try board.firstHeld(.request, timeout: 15)
        let shown = try ui.request("/api/intercept/\(held.id)")
        #expect(shown.json["body_decoded_text"] as? String == "name=ana&note=é", "\(shown.text)")
        #expect(shown.json["body_shown"] as? String == "gzip: shown decoded, sent re-encoded as gzip")
        let answer = try ui.request("/api/intercept/\(held.id)/resume", method: "POST", headers: Self.csrf,
                                    body: try Self.decodedEdit("name=bea&note=edited → here"))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try client.result().status == 0)
        let echoed = try Self.bytes(dir.file("out"))
        #expect(echoed.starts(with: Array("echo:".utf8)))
        let got = ContentDecoder.decode(Array(echoed.dropFirst(5)), contentEncoding: "gzip")
        #expect(got.map { String(decoding: $0.bytes, as: UTF8.self) } == "name=bea&note=edited → here")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.intercept?.edited == ["body"] && flow.request?.body?.text == "name=bea&note=edited → here",
                "\(String(describing: flow.request?.body))")
    }

    /// Text in a declared charset other than UTF-8 (Shift_JIS, no coding) is shown as Unicode and
    /// sent back in that charset; a character it cannot write is refused with the reason.
    @Test func aShiftJISBodyIsShownAsTextAndSentInItsCharset() throws {
        let origin = try OriginServer()
        let (ui, proxy, board) = try harness("~u /charset & ~s", origin)
        let dir = TemporaryDirectory()
        let greeting = "こんにちは".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let query = "name=shift_jis&text=" + greeting
        let client = curl(proxy, ["--http1.1", "-o", dir.file("out"), origin.url("/charset?" + query)])
        let held = try board.firstHeld(.response, timeout: 15)
        let shown = try ui.request("/api/intercept/\(held.id)")
        #expect(shown.json["body_decoded_text"] as? String == "こんにちは", "\(shown.text)")
        #expect(shown.json["charset"] as? String == "shift_jis")
        #expect(shown.json["content_encoding"] as? [String] == [] && shown.json["body_text"] == nil)
        #expect(shown.json["body_shown"] as? String == "shift_jis text: shown as Unicode, sent in shift_jis")
        let refused = try ui.request("/api/intercept/\(held.id)/resume", method: "POST", headers: Self.csrf,
                                     body: try Self.decodedEdit("😀"))
        #expect(refused.status == 400 && (refused.json["error"] as? String ?? "")
            .contains("the text has characters shift_jis cannot write"), "\(refused.text)")
        let answer = try ui.request("/api/intercept/\(held.id)/resume", method: "POST", headers: Self.csrf,
                                    body: try Self.decodedEdit("さようなら"))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try client.result().status == 0)
        let expected = try #require("さようなら".data(using: .shiftJIS))
        #expect(try Self.bytes(dir.file("out")) == Array(expected))
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.body?.text == "さようなら")
    }
}
