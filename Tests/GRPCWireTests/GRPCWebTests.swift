import Foundation
import GRPCWire
import Testing

/// gRPC-Web (PROTOCOL-WEB.md in grpc/grpc): content types, the trailers frame, and text mode's
/// base64 with padding inside the body, as sonora (PyPI) writes it: each frame encoded by itself.
@Suite struct GRPCWebTests {
    /// A frame: flag byte, 4-byte big-endian length, payload.
    static func frame(_ payload: [UInt8], flag: UInt8 = 0) -> [UInt8] {
        let length = UInt32(payload.count)
        return [flag, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
                UInt8(length & 0xFF)] + payload
    }

    /// Field 1 a string, field 2 a varint, as the end-to-end tests' echo service builds them.
    static func message(_ text: String, _ number: UInt8) -> [UInt8] {
        [0x0A, UInt8(text.utf8.count)] + Array(text.utf8) + [0x10, number]
    }

    static func trailers(_ text: String) -> [UInt8] { frame(Array(text.utf8), flag: 0x80) }

    static func base64(_ bytes: [UInt8]) -> [UInt8] { Array(Data(bytes).base64EncodedString().utf8) }

    @Test(arguments: [
        ("application/grpc", GRPCWireFormat.grpc), ("application/grpc+proto", .grpc),
        ("Application/GRPC-Web", .grpcWeb), ("application/grpc-web+proto; charset=x", .grpcWeb),
        ("application/grpc-web+json", .grpcWeb), ("application/grpc-web-text", .grpcWebText),
        ("application/grpc-web-text+proto", .grpcWebText),
    ])
    func contentTypesNameTheirWire(_ type: String, _ format: GRPCWireFormat) {
        #expect(GRPCFlowRecorder.wireFormat(contentType: type) == format)
        #expect(GRPCFlowRecorder.isGRPC(contentType: type) == (format == .grpc))
    }

    @Test(arguments: ["application/grpc-webx", "application/grpcweb", "application/json", "text/plain", ""])
    func otherContentTypesAreNotGRPC(_ type: String) {
        #expect(GRPCFlowRecorder.wireFormat(contentType: type) == nil)
    }

    /// Only gRPC-Web framing allows the trailers bit; gRPC's own stops at it.
    @Test func theSplitterTakesTheTrailersFlagOnlyForGRPCWeb() {
        let body = Self.frame(Self.message("a", 1)) + Self.trailers("grpc-status: 0\r\n")
        var web = GRPCMessageSplitter(closingFlag: 0x80)
        let frames = web.feed(body)
        #expect(frames.map(\.isTrailers) == [false, true])
        #expect(web.error == nil)
        var grpc = GRPCMessageSplitter()
        #expect(grpc.feed(body).count == 1)
        #expect(grpc.error == .invalidFlag(0x80, offset: 10))
        var wrong = GRPCMessageSplitter(closingFlag: 0x80)
        _ = wrong.feed([0x40, 0, 0, 0, 0])
        #expect(wrong.error == .invalidFlag(0x40, offset: 0))
    }

    /// Base64 whose groups end in padding mid-body, fed in every split of two chunks.
    @Test func theTextDecoderTakesPaddingInsideTheBody() {
        let frames = [Self.frame(Self.message("m0", 0)), Self.frame(Self.message("m1", 1)), Self.trailers("grpc-status: 0\r\n")]
        let text = frames.flatMap(Self.base64)
        #expect(text.filter { $0 == UInt8(ascii: "=") }.count >= 2, "the sample must have padding inside")
        for split in 0...text.count {
            var decoder = GRPCWebTextDecoder()
            let out = decoder.feed(Array(text[..<split])) + decoder.feed(Array(text[split...]))
            #expect(out == frames.flatMap { $0 }, "split at \(split)")
            #expect(decoder.finish() == nil)
        }
        var cut = GRPCWebTextDecoder()
        _ = cut.feed(Array("AAAA".utf8) + Array("AA".utf8))
        #expect(cut.finish() == "base64 body ended inside a group (2 of 4 characters)")
        var bad = GRPCWebTextDecoder()
        #expect(bad.feed(Array("AAA=AAAA*AAA".utf8)) == [0, 0, 0, 0, 0])
        #expect(bad.feed(Array("AAAA".utf8)) == [], "nothing after an error")
        #expect(bad.finish() == "not base64 in characters 8–12; decoding stopped")
    }

    /// The fuzz target's find (fuzz/corpus/grpc/text-padding-then-data): a group with data after
    /// its padding (`AA=K`). Decoded whole it was rejected with the groups before it in the same
    /// Foundation run; cut into 5-byte chunks those groups came out first. Groups are now decoded
    /// one by one, so the output and the error's position are the same however the body is cut.
    @Test func theTextDecoderDoesNotDependOnChunks() {
        let body = Array("AAAAAm0wEAA=aAAAAA=KYA0mgAA=gAAAABBn".utf8)
        var whole = GRPCWebTextDecoder()
        let all = whole.feed(body)
        let note = whole.finish()
        #expect(note == "not base64 in characters 16–20; decoding stopped")
        for step in 1...body.count {
            var pieces = GRPCWebTextDecoder()
            var out: [UInt8] = []
            for start in stride(from: 0, to: body.count, by: step) { out += pieces.feed(Array(body[start..<min(body.count, start + step)])) }
            #expect(out == all && pieces.finish() == note, "step \(step)")
        }
        // What Foundation decodes, group by group, is what comes out.
        var good = GRPCWebTextDecoder()
        let text = "aGVsbG8=IHdvcmxk"
        #expect(good.feed(Array(text.utf8)) == Array("hello world".utf8))
    }

    /// A binary call: messages each way, status and message from the trailers frame, which is not
    /// counted as a message.
    @Test func aBinaryCallReadsItsTrailersFrame() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/ServerStream",
                                        requestHeaders: [("Content-Type", "application/grpc-web+proto")], format: .grpcWeb)
        recorder.requestBody(Self.frame(Self.message("hello", 2)))
        recorder.responseHead(headers: [("content-type", "application/grpc-web+proto")])
        let response = Self.frame(Self.message("m0", 0)) + Self.frame(Self.message("m1", 1))
            + Self.trailers("grpc-status:3\r\nGrpc-Message: bad%20thing\r\nx-trailer: t1\r\n")
        for byte in response { recorder.responseBody([byte]) }
        let info = recorder.finish()
        #expect(info.wireProtocol == "grpc-web")
        #expect(info.service == "lab.Echo" && info.method == "ServerStream")
        #expect(info.status == 3 && info.message == "bad thing")
        #expect(info.requestMessages == 1 && info.responseMessages == 2)
        #expect(info.messages.count == 3 && info.messages.allSatisfy { $0.decoded?.error == nil })
        #expect(!info.trailersOnly)
        #expect(info.notes.isEmpty, "\(info.notes)")
    }

    /// Text mode both ways, each frame base64-encoded by itself, the body in odd-sized chunks.
    @Test func aTextCallIsDecodedFromBase64() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/ServerStream",
                                        requestHeaders: [("content-type", "application/grpc-web-text")],
                                        format: .grpcWebText)
        recorder.requestBody(Self.base64(Self.frame(Self.message("hello", 3))))
        recorder.responseHead(headers: [("content-type", "application/grpc-web-text+proto")])
        let text = [Self.frame(Self.message("m0", 0)), Self.frame(Self.message("m1", 1)), Self.frame(Self.message("m2", 2)),
                    Self.trailers("grpc-status: 0\r\n")].flatMap(Self.base64)
        stride(from: 0, to: text.count, by: 7).forEach { recorder.responseBody(Array(text[$0..<min($0 + 7, text.count)])) }
        let info = recorder.finish()
        #expect(info.wireProtocol == "grpc-web-text")
        #expect(info.status == 0)
        #expect(info.requestMessages == 1 && info.responseMessages == 3)
        #expect(info.messages.last?.decoded?.fields.first?.value == .string("m2"))
        #expect(info.notes.isEmpty, "\(info.notes)")
    }

    /// A text request answered in binary (a server that ignores text for its answers): the
    /// response is read as the response's content type says.
    @Test func theResponseModeFollowsTheResponsesContentType() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [], format: .grpcWebText)
        recorder.requestBody(Self.base64(Self.frame(Self.message("hello", 1))))
        recorder.responseHead(headers: [("content-type", "application/grpc-web+proto")])
        recorder.responseBody(Self.frame(Self.message("hello", 1)) + Self.trailers("grpc-status: 0\r\n"))
        let info = recorder.finish()
        #expect(info.status == 0 && info.requestMessages == 1 && info.responseMessages == 1)
        #expect(info.notes.isEmpty, "\(info.notes)")
    }

    /// Status in the response head and no message (sonora's errors): Trailers-Only; a trailers
    /// frame without a status is noted.
    @Test func trailersOnlyAndStatuslessTrailers() {
        var failing = GRPCFlowRecorder(path: "/lab.Echo/Fail", requestHeaders: [], format: .grpcWeb)
        failing.responseHead(headers: [("grpc-status", "5"), ("grpc-message", "no%20such%20thing")])
        failing.responseBody([])
        let failed = failing.finish()
        #expect(failed.trailersOnly && failed.status == 5 && failed.message == "no such thing")
        var odd = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [], format: .grpcWeb)
        odd.responseHead(headers: [("content-type", "application/grpc-web")])
        odd.responseBody(Self.trailers("b'grpc-status': b'0'\r\n"))
        let info = odd.finish()
        #expect(info.status == nil)
        #expect(info.notes == ["response: trailers frame without grpc-status"])
    }

    /// The record's JSON names the protocol, and reads back; gRPC's own records leave it out.
    @Test func theProtocolRoundTripsThroughJSON() throws {
        let web = GRPCFlowInfo(service: "lab.Echo", method: "Unary", status: 0, wireProtocol: "grpc-web-text")
        #expect(try GRPCFlowInfo(json: web.json) == web)
        #expect(web.json["protocol"] == .string("grpc-web-text"))
        #expect(GRPCFlowInfo(service: "lab.Echo").json["protocol"] == nil)
    }
}
