import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// gRPC-Web through DevProxy: sonora's gRPC-Web server (PyPI, under hypercorn) as the origin and
/// curl as the client, sending what a browser's gRPC-Web client sends (the framed request, its
/// content type and `x-grpc-web`), over HTTP/1.1 and h2, in binary and text mode. The flow's
/// `grpc` view names the call, reads the status from the trailers frame in the body, and decodes
/// each message; the bytes the client gets are the origin's.
@Suite(.serialized) struct GRPCWebProxyTests {
    /// A frame of the echo service's request: field 1 "hello", field 2 the count of messages
    /// ServerStream answers with.
    static func request(count: UInt8) -> [UInt8] {
        let message: [UInt8] = [0x0A, 0x05] + Array("hello".utf8) + [0x10, count]
        return [0, 0, 0, 0, UInt8(message.count)] + message
    }

    struct Call {
        let flow: Flow
        let body: [UInt8]
    }

    /// POSTs `body` to `path` on the origin through the proxy with gRPC-Web's headers.
    private func call(_ harness: ProxyHarness, _ origin: HTTP2Origin, path: String, body: [UInt8], text: Bool,
                      http2: Bool, expectedFlows: Int) throws -> Call {
        let directory = TemporaryDirectory()
        let input = directory.write("request", bytes: text ? Array(Data(body).base64EncodedString().utf8) : body)
        let output = directory.file("response")
        let type = text ? "application/grpc-web-text" : "application/grpc-web+proto"
        let result = try harness.curl([http2 ? "--http2" : "--http1.1", "-H", "content-type: \(type)", "-H", "accept: \(type)",
                                       "-H", "x-grpc-web: 1", "--data-binary", "@\(input)", "-o", output,
                                       origin.url(path)])
        #expect(result.status == 0, "\(result.output)")
        let flow = try #require(harness.flows(count: expectedFlows).last)
        return Call(flow: flow, body: Array(try Data(contentsOf: URL(fileURLWithPath: output))))
    }

    private func harness(for origin: HTTP2Origin) throws -> ProxyHarness {
        try ProxyHarness(configure: { $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca")) })
    }

    /// Binary mode over HTTP/1.1 (a browser's fetch to an Envoy-style endpoint): three messages and
    /// a trailers frame come back; the view has them all and status 0.
    @Test func binaryCallOverHTTP1() throws {
        let origin = try HTTP2Origin(.grpcWeb)
        let proxy = try harness(for: origin)
        let call = try call(proxy, origin, path: "/lab.Echo/ServerStream", body: Self.request(count: 3), text: false,
                            http2: false, expectedFlows: 1)
        #expect(call.body.count == 3 * 11 + 5 + "grpc-status: 0\r\n".utf8.count, "\(call.body)")
        #expect(call.body.suffix(16) == Array("grpc-status: 0\r\n".utf8))
        let grpc = try #require(call.flow.grpc, "\(call.flow)")
        #expect(call.flow.request?.httpVersion == "HTTP/1.1")
        #expect(grpc.wireProtocol == "grpc-web")
        #expect(grpc.service == "lab.Echo" && grpc.method == "ServerStream")
        #expect(grpc.status == 0 && !grpc.trailersOnly)
        #expect(grpc.requestMessages == 1 && grpc.responseMessages == 3)
        #expect(grpc.messages.first?.decoded?.fields.first?.value == .string("hello"))
        #expect(grpc.messages.last?.decoded?.fields.first?.value == .string("m2"))
        #expect(grpc.notes.isEmpty, "\(grpc.notes)")
        // The body is kept as it went: the frames, trailers frame included.
        #expect(call.flow.response?.body?.size == call.body.count)
    }

    /// Text mode over h2: sonora encodes each frame by itself, so the base64 has padding inside;
    /// the view decodes every message anyway. A gRPC-Web call over h2 is not treated as gRPC
    /// proper (no `grpc-status` made up), and its flow says which protocol it was.
    @Test func textCallOverHTTP2() throws {
        let origin = try HTTP2Origin(.grpcWeb)
        let proxy = try harness(for: origin)
        let call = try call(proxy, origin, path: "/lab.Echo/ServerStream", body: Self.request(count: 3), text: true,
                            http2: true, expectedFlows: 1)
        let text = String(decoding: call.body, as: UTF8.self)
        #expect(text.dropLast().contains("="), "padding inside the body: \(text)")
        let grpc = try #require(call.flow.grpc, "\(call.flow)")
        #expect(call.flow.request?.httpVersion == "HTTP/2")
        #expect(grpc.wireProtocol == "grpc-web-text")
        #expect(grpc.status == 0)
        #expect(grpc.requestMessages == 1 && grpc.responseMessages == 3)
        #expect(grpc.messages.map { $0.decoded?.fields.first?.value } == [.string("hello"), .string("m0"), .string("m1"), .string("m2")])
        #expect(grpc.notes.isEmpty, "\(grpc.notes)")
    }

    /// An error answered in the response head (Trailers-Only), over both HTTP versions.
    @Test(arguments: [false, true])
    func errorsInTheHeadAreTrailersOnly(_ http2: Bool) throws {
        let origin = try HTTP2Origin(.grpcWeb)
        let proxy = try harness(for: origin)
        let call = try call(proxy, origin, path: "/lab.Echo/Fail", body: Self.request(count: 1), text: false,
                            http2: http2, expectedFlows: 1)
        let grpc = try #require(call.flow.grpc, "\(call.flow)")
        #expect(grpc.method == "Fail" && grpc.status == 5 && grpc.message == "no such thing: 100% gone")
        #expect(grpc.trailersOnly && grpc.responseMessages == 0)
    }
}
