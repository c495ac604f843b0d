import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// A header field larger than the 64 KiB header list DevProxy takes over HTTP/2
/// (`HTTP2Limits.maxHeaderListSize`): a clear answer on that stream at once (431 for a request,
/// 502 saying why for a response), a flow with the reason, and the connection's next stream
/// served as usual; no hang, no connection error.
@Suite(.serialized) struct HTTP2HeaderSizeTests {
    /// A 70 KiB request field from an h2 client: 431 on its stream, `bad_request` naming the size
    /// and the limit, whichever version the origin speaks; the next stream gets its answer.
    @Test func aRequestFieldOver64KiBIsAnswered431() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let http1 = try OriginServer(names: ["localhost"])
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
            + Certificate.all(from: SecureFile.read(http1.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let big = String(repeating: "a", count: 70 * 1024)
        for (index, (port, path, body)) in [(origin.port, "/ok", "ok"), (http1.port, "/cl", "hello world")].enumerated() {
            let json = try H2Client.run(proxy: proxy, port: port, alpn: "h2", path: path,
                                        extra: ["x-big=\(big)", "--then", path])
            #expect(json.responses.map(\.status) == [431, 200] && json.goaway == nil, "\(json)")
            #expect(json.responses.last?.body == body, "\(json)")
            // The answer says why, as DevProxy's other answers do (it was a bare 431 head).
            let answer = try #require(json.responses.first)
            #expect(answer.body.hasPrefix("431 Request Header Fields Too Large: the request's header list (")
                    && answer.body.contains("exceeds 65536 bytes"), "\(json)")
            #expect(answer.headers.contains(["content-type", "text/plain; charset=utf-8"]), "\(json)")
            let flows = proxy.flows(count: 2 * (index + 1)).suffix(2)
            let refused = try #require(flows.first { $0.response?.status == 431 }, "\(flows)")
            #expect(refused.error?.kind == "bad_request" && refused.error?.message.contains("exceeds 65536 bytes") == true,
                    "\(String(describing: refused.error))")
            #expect(refused.error?.by == "proxy", "\(String(describing: refused.error))")
            #expect(refused.server.address == nil, "the request went upstream: \(refused)")
        }
    }

    /// curl over HTTP/2 with a field of 65,300 bytes (over the list's 64 KiB, under what curl's
    /// nghttp2 will send: 70 KiB it refuses itself): it prints the 431 and its reason.
    @Test func curlGetsThe431AndItsReason() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let result = try proxy.curl(["--http2", "-H", "x-big: " + String(repeating: "a", count: 65_300),
                                     "-w", "\n%{http_code} %{http_version}", "https://localhost:\(origin.port)/ok"])
        #expect(result.stdout.hasPrefix("431 Request Header Fields Too Large: the request's header list (")
                && result.stdout.hasSuffix("\n431 2"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 431 && flow.error?.by == "proxy", "\(flow)")
        #expect(flow.response?.body?.text?.hasPrefix("431 Request Header Fields Too Large") == true, "\(flow)")
    }

    /// A 70 KiB response field from an h2 origin to an h2 client: 502 saying why on that stream,
    /// `upstream_bad_response` in the flow; the next stream on the same connections gets its 200.
    @Test func aResponseFieldOver64KiBIsA502ThatSaysWhy() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/huge-header", extra: ["--then", "/ok"])
        #expect(json.responses.map(\.status) == [502, 200] && json.goaway == nil, "\(json)")
        #expect(json.responses.first?.body.contains("response header list (") == true, "\(json)")
        #expect(json.responses.last?.body == "ok", "\(json)")
        let flow = try #require(proxy.flows(count: 2).first { $0.request?.url.hasSuffix("/huge-header") == true })
        #expect(flow.error?.kind == "upstream_bad_response" && flow.error?.message.contains("exceeds 65536 bytes") == true,
                "\(String(describing: flow.error))")
    }
}
