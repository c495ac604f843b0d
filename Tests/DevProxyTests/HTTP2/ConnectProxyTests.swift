import CertAuthority
@testable import DevProxy
import Foundation
import GRPCWire
import Testing
import TestSupport

/// The Connect protocol through DevProxy: connect-python's server (PyPI, under hypercorn) as the
/// origin and curl sending what connect-go, -es, -swift and -kotlin clients send (a bare protobuf
/// or JSON message with `Connect-Protocol-Version: 1` for unary calls, envelopes for streams), over
/// HTTP/1.1 and h2. The flow's `grpc` view names the call, its outcome and its messages.
@Suite(.serialized) struct ConnectProxyTests {
    static let note: [UInt8] = [0x0A, 0x05] + Array("hello".utf8) + [0x10, 0x02]   // lab.Note{text: "hello", number: 2}

    private func call(_ harness: ProxyHarness, _ origin: HTTP2Origin, path: String, body: [UInt8], contentType: String,
                      http2: Bool, flows: Int) throws -> (flow: Flow, status: String) {
        let directory = TemporaryDirectory()
        let input = directory.write("request", bytes: body)
        let result = try harness.curl([http2 ? "--http2" : "--http1.1", "-H", "content-type: \(contentType)",
                                       "-H", "connect-protocol-version: 1", "--data-binary", "@\(input)", "-o", "/dev/null",
                                       "-w", "%{http_code}", origin.url(path)])
        let flow = try #require(harness.flows(count: flows).last)
        return (flow, result.stdout)
    }

    private func harness(for origin: HTTP2Origin) throws -> ProxyHarness {
        try ProxyHarness(configure: { $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca")) })
    }

    @Test func unaryCallsOverBothVersions() throws {
        let origin = try HTTP2Origin(.connect)
        let proxy = try harness(for: origin)
        let ok = try call(proxy, origin, path: "/lab.Echo/Unary", body: Self.note, contentType: "application/proto",
                          http2: false, flows: 1)
        #expect(ok.status == "200")
        let grpc = try #require(ok.flow.grpc, "\(ok.flow)")
        #expect(grpc.wireProtocol == "connect-unary" && grpc.service == "lab.Echo" && grpc.method == "Unary")
        #expect(grpc.status == 0 && grpc.requestMessages == 1 && grpc.responseMessages == 1)
        #expect(grpc.messages.allSatisfy { $0.decoded?.fields.first?.value == .string("hello") }, "\(grpc.messages)")

        let failed = try call(proxy, origin, path: "/lab.Echo/Fail", body: Self.note, contentType: "application/proto",
                              http2: true, flows: 2)
        #expect(failed.status == "404")
        #expect(failed.flow.request?.httpVersion == "HTTP/2")
        #expect(failed.flow.grpc?.status == 5 && failed.flow.grpc?.message == "no such thing", "\(String(describing: failed.flow.grpc))")

        let json = try call(proxy, origin, path: "/lab.Echo/Unary", body: Array(#"{"text":"hi","number":1}"#.utf8),
                            contentType: "application/json", http2: true, flows: 3)
        #expect(json.status == "200")
        #expect(json.flow.grpc?.messages.last?.typed?["text"] == .string("hi"), "\(String(describing: json.flow.grpc))")
    }

    /// Idempotent methods are called with GET (connect-go's `WithHTTPGet`, connect-es's
    /// `useHttpGet`): the message is in the query, base64 for protobuf, percent-encoded for JSON.
    @Test func getCallsCarryTheirMessageInTheQuery() throws {
        let origin = try HTTP2Origin(.connect)
        let proxy = try harness(for: origin)
        let base64 = Data(Self.note).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let calls: [(http2: Bool, query: String)] = [
            (false, "connect=v1&encoding=proto&base64=1&message=\(base64)"),
            (true, "connect=v1&encoding=json&message=%7B%22text%22%3A%22hello%22%2C%22number%22%3A2%7D"),
        ]
        for (index, call) in calls.enumerated() {
            let result = try proxy.curl([call.http2 ? "--http2" : "--http1.1", "-o", "/dev/null", "-w", "%{http_code}",
                                         origin.url("/lab.Echo/Lookup?" + call.query)])
            #expect(result.stdout == "200", "\(result.output)")
            let flow = try #require(proxy.flows(count: index + 1).last)
            #expect(flow.request?.method == "GET" && flow.request?.httpVersion == (call.http2 ? "HTTP/2" : "HTTP/1.1"))
            let grpc = try #require(flow.grpc, "\(flow)")
            #expect(grpc.wireProtocol == "connect-unary" && grpc.service == "lab.Echo" && grpc.method == "Lookup")
            #expect(grpc.status == 0 && grpc.requestMessages == 1 && grpc.responseMessages == 1, "\(grpc)")
            #expect(grpc.notes.isEmpty, "\(grpc.notes)")
            if call.http2 {
                // JSON both ways: the request from the query, the response as the origin coded it.
                #expect(grpc.messages.allSatisfy { $0.typed?["text"] == .string("hello") && $0.typed?["number"] == .int(2) },
                        "\(grpc.messages)")
            } else {
                #expect(grpc.messages.allSatisfy { $0.decoded?.fields.first?.value == .string("hello") }, "\(grpc.messages)")
            }
        }
    }

    /// With compression negotiated (`connect-accept-encoding: gzip`) the origin compresses every
    /// message, its end-of-stream one too: all are read through the gzip decoding.
    @Test func aCompressedServerStreamIsReadWhole() throws {
        let origin = try HTTP2Origin(.connect)
        let proxy = try harness(for: origin)
        let envelope = [UInt8(0), 0, 0, 0, UInt8(Self.note.count)] + Self.note
        let directory = TemporaryDirectory()
        let input = directory.write("request", bytes: envelope)
        let result = try proxy.curl(["--http2", "-H", "content-type: application/connect+proto",
                                     "-H", "connect-accept-encoding: gzip", "--data-binary", "@\(input)", "-o", "/dev/null",
                                     "-w", "%{http_code}", origin.url("/lab.Echo/ServerStream")])
        #expect(result.stdout == "200", "\(result.output)")
        let grpc = try #require(proxy.flows(count: 1).first?.grpc)
        #expect(grpc.responseEncoding == "gzip", "\(grpc)")
        #expect(grpc.status == 0 && grpc.responseMessages == 2, "\(grpc)")
        #expect(grpc.messages.last?.compressed == true && grpc.messages.last?.decoded?.fields.first?.value == .string("m1"),
                "\(grpc.messages)")
        #expect(grpc.notes.isEmpty, "\(grpc.notes)")
    }

    @Test func aServerStreamEndsWithItsEndOfStreamMessage() throws {
        let origin = try HTTP2Origin(.connect)
        let proxy = try harness(for: origin)
        let envelope = [UInt8(0), 0, 0, 0, UInt8(Self.note.count)] + Self.note
        let stream = try call(proxy, origin, path: "/lab.Echo/ServerStream", body: envelope,
                              contentType: "application/connect+proto", http2: true, flows: 1)
        #expect(stream.status == "200")
        let grpc = try #require(stream.flow.grpc, "\(stream.flow)")
        #expect(grpc.wireProtocol == "connect" && grpc.status == 0)
        #expect(grpc.requestMessages == 1 && grpc.responseMessages == 2)
        #expect(grpc.messages.last?.decoded?.fields.first?.value == .string("m1"))
        #expect(grpc.notes.isEmpty, "\(grpc.notes)")
    }
}
