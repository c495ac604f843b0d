@testable import DevProxy
import Foundation
import Testing

/// The hand-written flow JSON must be byte-for-byte what JSONEncoder (sorted keys, slashes
/// unescaped) writes, and decode back to the same flow.
@Suite struct FlowJSONWriterTests {
    @Test(arguments: FlowSamples.all + [Self.everything])
    func matchesJSONEncoderByteForByte(_ flow: Flow) throws {
        let expected = [UInt8](try FlowJSON.encoder().encode(flow))
        #expect(String(decoding: flow.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(try FlowJSON.decoder().decode(Flow.self, from: Data(flow.jsonBytes)) == flow)
    }

    /// Every optional field set, and strings that need escaping.
    static let everything: Flow = {
        var flow = FlowSamples.get
        flow.error = Flow.FlowError(kind: "upstream_closed", message: "quote \" backslash \\ slash / tab \t nl \n cr \r \u{01} ünïcödé 😀", alert: "unknown_ca")
        flow.insecureUpstream = true
        flow.persona = "unpinned"
        flow.signer = Flow.SignerInfo(serial: "abc", email: "a@b.c")
        flow.timings = Flow.Timings(connect: 0.638, tls: 12, send: -1, wait: 1234.5678, receive: 0.001)
        flow.tls = Flow.TLSInfo(client: .init(sni: "a.b", version: "TLSv1.3", cipher: "X", alpn: nil),
                                upstream: .init(version: "TLSv1.2", cipher: "Y", alpn: "http/1.1", verified: false, verifyError: "self-signed certificate",
                                                chain: [.init(subject: "CN = a", issuer: "CN = b", notAfter: "2030-01-01T00:00:00Z", pin: "sha256/x+y/z=")]))
        flow.websocket = [.init(direction: "client_to_server", opcode: "text", length: 5, text: "hello", base64: nil),
                          .init(direction: "server_to_client", opcode: "binary", length: 70000, text: nil, base64: "AAEC")]
        flow.tunnel = Flow.TunnelInfo(sni: nil, bytesFromClient: 10, bytesFromServer: 20, reason: "passthrough rule *.x")
        flow.response?.body = Flow.Body(size: 3, sha256: "ff", text: nil, base64: "AAA=", truncated: true, decoded: "gzip")
        return flow
    }()
}
