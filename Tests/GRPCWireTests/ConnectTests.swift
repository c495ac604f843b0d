import Foundation
import GRPCWire
import Testing

/// The Connect protocol (connectrpc.com/docs/protocol): how its calls are told apart, streaming
/// envelopes ending in a JSON end-of-stream message, unary calls as bare messages with a JSON
/// error and an HTTP status, and JSON-coded messages shown as JSON.
@Suite struct ConnectTests {
    static func envelope(_ payload: [UInt8], flag: UInt8 = 0) -> [UInt8] { GRPCWebTests.frame(payload, flag: flag) }
    static let note = GRPCWebTests.message("hello", 2)

    @Test func contentTypesAndTheHeaderTellConnectCalls() {
        #expect(GRPCFlowRecorder.wireFormat(contentType: "application/connect+proto") == .connect)
        #expect(GRPCFlowRecorder.wireFormat(contentType: "Application/Connect+JSON; charset=utf-8") == .connect)
        #expect(GRPCFlowRecorder.wireFormat(contentType: "application/connectx") == nil)
        #expect(GRPCFlowRecorder.wireFormat(contentType: "application/proto") == nil, "unary needs its header too")
        #expect(GRPCFlowRecorder.isConnectUnary(contentType: " application/proto "))
        #expect(GRPCFlowRecorder.isConnectUnary(contentType: "application/JSON; charset=utf-8"))
        #expect(!GRPCFlowRecorder.isConnectUnary(contentType: "application/protobuf"))
    }

    /// A server stream: messages, then the end-of-stream JSON; no error is success, an error names
    /// its code and message.
    @Test(arguments: [("{}", 0, nil), (#"{"error":{"code":"permission_denied","message":"nope"},"metadata":{}}"#, 7, "nope")])
    func streamsEndInAJSONMessage(_ end: String, _ status: Int, _ message: String?) {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/ServerStream",
                                        requestHeaders: [("content-type", "application/connect+proto")], format: .connect)
        recorder.requestBody(Self.envelope(Self.note))
        recorder.responseHead(headers: [("content-type", "application/connect+proto")], status: 200)
        let body = Self.envelope(GRPCWebTests.message("m0", 0)) + Self.envelope(GRPCWebTests.message("m1", 1))
            + Self.envelope(Array(end.utf8), flag: 0x02)
        for byte in body { recorder.responseBody([byte]) }
        let info = recorder.finish()
        #expect(info.wireProtocol == "connect")
        #expect(info.status == status && info.message == message)
        #expect(info.requestMessages == 1 && info.responseMessages == 2)
        #expect(info.messages.allSatisfy { $0.decoded?.error == nil && $0.note == nil })
        #expect(info.notes.isEmpty, "\(info.notes)")
    }

    /// A unary call that succeeds: one bare message each way, status 0.
    @Test func aUnaryCallIsOneMessageEachWay() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [("Content-Type", "application/proto")],
                                        format: .connectUnary)
        recorder.requestBody(Array(Self.note.prefix(3)))
        recorder.requestBody(Array(Self.note.dropFirst(3)))
        recorder.responseHead(headers: [("content-type", "application/proto")], status: 200)
        recorder.responseBody(Self.note)
        let info = recorder.finish()
        #expect(info.wireProtocol == "connect-unary" && info.status == 0)
        #expect(info.messages.map(\.direction) == [.request, .response])
        #expect(info.messages.allSatisfy { $0.length == Self.note.count && $0.decoded?.fields.first?.value == .string("hello") })
    }

    /// A unary failure: an HTTP status and a JSON error, read for the code and message; without a
    /// code, the HTTP status implies one.
    @Test func aUnaryFailureIsItsJSONError() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Fail", requestHeaders: [], format: .connectUnary)
        recorder.requestBody(Self.note)
        recorder.responseHead(headers: [("content-type", "application/json")], status: 404)
        recorder.responseBody(Array(#"{"code": "not_found", "message": "no such thing"}"#.utf8))
        let info = recorder.finish()
        #expect(info.status == 5 && info.message == "no such thing")
        #expect(info.requestMessages == 1 && info.responseMessages == 0)
        var bare = GRPCFlowRecorder(path: "/lab.Echo/Fail", requestHeaders: [], format: .connectUnary)
        bare.responseHead(headers: [], status: 503)
        bare.responseBody(Array("Service Unavailable".utf8))
        let unavailable = bare.finish()
        #expect(unavailable.status == 14)
        #expect(unavailable.notes == ["response: the HTTP 503 answer is not a JSON object"])
    }

    /// JSON-coded messages are shown as the JSON they are, not decoded as protobuf.
    @Test func jsonMessagesAreShownAsJSON() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [("content-type", "application/json")],
                                        format: .connectUnary)
        recorder.requestBody(Array(#"{"text": "hi", "number": 1}"#.utf8))
        recorder.responseHead(headers: [], status: 200)
        recorder.responseBody(Array("not json".utf8))
        let info = recorder.finish()
        #expect(info.messages.first?.typed == .object([(key: "number", value: .int(1)), (key: "text", value: .string("hi"))]))
        #expect(info.messages.first?.decoded == nil)
        #expect(info.messages.last?.note == "not JSON, though the content type says so")
    }
}
