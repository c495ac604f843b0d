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

    /// A GET call's query (connectrpc.com/docs/protocol, Unary-Get-Request): the message in URL-safe
    /// base64 with or without padding, or percent-encoded as it is; only `connect=v1` marks the call.
    @Test func aGETCallsQueryCarriesItsMessage() throws {
        let base64 = Data(Self.note).base64EncodedString()          // "CgVoZWxsbxAC": no padding needed
        let padded = Data([0xFB, 0xFF]).base64EncodedString()        // "+/8=": URL-safe "-_8", padded "-_8="
        for (query, message) in [("connect=v1&encoding=proto&base64=1&message=\(base64)", Self.note),
                                 ("message=-_8&base64=1&encoding=proto&connect=v1", [0xFB, 0xFF]),
                                 ("connect=v1&encoding=proto&base64=1&message=-_8%3D", [0xFB, 0xFF]),
                                 ("encoding=json&message=%7B%22text%22%3A%22a+b%22%7D&connect=v1", Array(#"{"text":"a b"}"#.utf8))] {
            let get = try #require(ConnectGetQuery(target: "/lab.Echo/Unary?" + query), "\(query)")
            #expect(get.message == message, "\(query)")
            #expect(get.problem == nil)
        }
        #expect(padded == "+/8=")
        let compressed = try #require(ConnectGetQuery(target: "/a.B/C?connect=v1&encoding=proto&compression=gzip&base64=1&message=AA"))
        #expect(compressed.codec == "proto" && compressed.compression == "gzip" && compressed.message == [0])
        #expect(ConnectGetQuery(target: "/a.B/C?encoding=proto&message=AA") == nil, "no connect=v1")
        #expect(ConnectGetQuery(target: "/a.B/C?connect=v2&encoding=proto&message=AA&x=connect=v1") == nil)
        #expect(ConnectGetQuery(target: "/a.B/C?connect=v1&message=AA") == nil, "no encoding")
        #expect(ConnectGetQuery(target: "/search?q=connect=v1") == nil)
        let broken = try #require(ConnectGetQuery(target: "/a.B/C?connect=v1&encoding=proto&base64=1&message=A"))
        #expect(broken.message == nil && broken.problem == "the message parameter is not valid base64 (base64=1)")
        let badEscape = try #require(ConnectGetQuery(target: "/a.B/C?connect=v1&encoding=json&message=%7"))
        #expect(badEscape.message == nil && badEscape.problem == "the message parameter is not valid percent-encoding")
    }

    /// A GET call is recorded as a unary call whose request message came from the query; the
    /// service and method come from the path without it.
    @Test func aGETCallIsAUnaryCall() throws {
        let target = "/lab.Echo/Unary?connect=v1&encoding=proto&base64=1&message=" + Data(Self.note).base64EncodedString()
        var recorder = GRPCFlowRecorder(path: target, requestHeaders: [], format: .connectUnary,
                                        connectGet: try #require(ConnectGetQuery(target: target)))
        recorder.responseHead(headers: [("content-type", "application/proto")], status: 200)
        recorder.responseBody(Self.note)
        let info = recorder.finish()
        #expect(info.service == "lab.Echo" && info.method == "Unary" && info.status == 0)
        #expect(info.messages.map(\.direction) == [.request, .response])
        #expect(info.messages.allSatisfy { $0.decoded?.fields.first?.value == .string("hello") }, "\(info.messages)")

        let json = "/lab.Echo/Unary?encoding=json&connect=v1&message=%7B%22text%22%3A%22hi%22%7D"
        var jsonRecorder = GRPCFlowRecorder(path: json, requestHeaders: [], format: .connectUnary,
                                            connectGet: try #require(ConnectGetQuery(target: json)))
        jsonRecorder.responseHead(headers: [], status: 200)
        jsonRecorder.responseBody(Array("{}".utf8))
        #expect(jsonRecorder.finish().messages.first?.typed == .object([(key: "text", value: .string("hi"))]))

        let broken = "/lab.Echo/Unary?connect=v1&encoding=proto&base64=1&message=A"
        var brokenRecorder = GRPCFlowRecorder(path: broken, requestHeaders: [], format: .connectUnary,
                                              connectGet: try #require(ConnectGetQuery(target: broken)))
        brokenRecorder.responseHead(headers: [], status: 400)
        brokenRecorder.responseBody(Array(#"{"code":"invalid_argument","message":"Invalid base64 encoding"}"#.utf8))
        let failed = brokenRecorder.finish()
        #expect(failed.requestMessages == 0 && failed.status == 3)
        #expect(failed.notes == ["request: the message parameter is not valid base64 (base64=1)"])
    }
}
