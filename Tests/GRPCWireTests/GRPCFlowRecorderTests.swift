import Foundation
import GRPCWire
import Testing

/// Playbooks for a call: heads, body chunks and trailers in, a `GRPCFlowInfo` out.
@Suite struct GRPCFlowRecorderTests {
    static func frame(_ message: [UInt8], compressed: Bool = false) -> [UInt8] {
        let length = UInt32(message.count)
        return [compressed ? 1 : 0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
                UInt8(length & 0xFF)] + message
    }

    @Test func aUnaryCallIsRecorded() throws {
        let samples = try PythonProtobuf.serializedSamples()
        let request = try #require(samples["scalars"]), response = try #require(samples["nested"])
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [("content-type", "application/grpc"),
                                                                                   ("te", "trailers")])
        let body = Self.frame(request)
        for byte in body { recorder.requestBody([byte]) }
        recorder.responseHead(headers: [(":status", "200"), ("content-type", "application/grpc")])
        recorder.responseBody(Self.frame(response))
        recorder.responseTrailers([("grpc-status", "0"), ("grpc-message", "")])
        let info = recorder.finish()
        #expect(info.service == "lab.Echo" && info.method == "Unary")
        #expect(info.status == 0)
        #expect(info.message == "")
        #expect(!info.trailersOnly)
        #expect(info.requestMessages == 1 && info.responseMessages == 1)
        #expect(info.messages.map(\.direction) == [.request, .response])
        #expect(info.messages[0].length == request.count)
        #expect(info.messages[0].decoded == ProtobufRawDecoder().decode(request))
        #expect(info.messages[1].decoded == ProtobufRawDecoder().decode(response))
        #expect(info.messages[0].firstBytesBase64 == Data(request).base64EncodedString())
        #expect(info.messages.allSatisfy { $0.note == nil })
        #expect(info.notes.isEmpty)
    }

    /// A call answered with another HTTP status or without a gRPC content type (a load
    /// balancer's 503 text/plain) fails with the code gRPC's HTTP status mapping gives, and its
    /// body is not read as gRPC frames; a gRPC response that ends without grpc-status fails
    /// UNKNOWN. Both read as successes (no status), with "invalid compressed flag" notes.
    @Test func callsTheClientSeesFailHaveAStatus() {
        var balancer = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [("content-type", "application/grpc")])
        balancer.requestBody(Self.frame([0x0A, 0x01, 0x78]))
        balancer.responseHead(headers: [("content-type", "text/plain")], status: 503)
        balancer.responseBody(Array("no healthy upstream".utf8))
        let unavailable = balancer.finish()
        #expect(unavailable.status == 14)
        #expect(unavailable.notes == ["response: HTTP 503 text/plain is not a gRPC response: the client reports UNAVAILABLE "
                                      + "(gRPC's HTTP status mapping)"])
        #expect(unavailable.responseMessages == 0)
        var notFound = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [])
        notFound.responseHead(headers: [("content-type", "text/html")], status: 404)
        #expect(notFound.finish().status == 12)
        var silent = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [])
        silent.responseHead(headers: [("content-type", "application/grpc")], status: 200)
        silent.responseBody(Self.frame([0x0A, 0x01, 0x78]))
        let unknown = silent.finish()
        #expect(unknown.status == 2 && unknown.responseMessages == 1)
        #expect(unknown.notes.first?.hasPrefix("response: no grpc-status") == true, "\(unknown.notes)")
    }

    /// A call the client reset before its status came has the status the client reports: its
    /// deadline's when `grpc-timeout` had run out (give or take 50 ms), CANCELLED otherwise, none
    /// for another code; never the UNKNOWN of a response that ended without grpc-status. A status
    /// that came first stays.
    @Test(arguments: [
        // (grpc-timeout, response begun, status already, code, elapsed, status, note prefix)
        ("477m", false, nil, "CANCEL", 0.482, 4, "request: the client reset the stream (CANCEL) as its deadline"),
        ("500m", true, nil, "CANCEL", 0.46, 4, "request: the client reset the stream (CANCEL) as its deadline"),
        ("20S", true, nil, "CANCEL", 0.5, 1, "request: the client cancelled the call"),
        (nil, true, nil, "CANCEL", 30, 1, "request: the client cancelled the call"),
        ("1S", true, nil, "INTERNAL_ERROR", 2, nil, "request: the client reset the stream (INTERNAL_ERROR)"),
        ("1S", true, "0", "CANCEL", 2, 0, nil),
    ] as [(String?, Bool, String?, String, Double, Int?, String?)])
    func aCallTheClientResetHasTheClientsStatus(_ row: (String?, Bool, String?, String, Double, Int?, String?)) {
        let (timeout, begun, status, code, elapsed, expected, note) = row
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Ticks", requestHeaders: [("content-type", "application/grpc")]
                                            + (timeout.map { [("grpc-timeout", $0)] } ?? []))
        recorder.requestBody(Self.frame([0x10, 0x05]))
        if begun {
            recorder.responseHead(headers: [("content-type", "application/grpc")], status: 200)
            recorder.responseBody(Self.frame([0x10, 0x01]))
        }
        if let status { recorder.responseTrailers([("grpc-status", status)]) }
        recorder.clientReset(code: code, elapsed: elapsed)
        let info = recorder.finish()
        #expect(info.status == expected)
        #expect(info.notes.first?.hasPrefix(note ?? "") ?? (note == nil), "\(info.notes)")
        #expect(info.notes.count == (note == nil ? 0 : 1), "\(info.notes)")
    }

    /// A call whose client closed its connection before the status ends CANCELLED (its deadline's
    /// when grpc-timeout had run out); a status that came first stays.
    @Test(arguments: [
        // (grpc-timeout, status already, elapsed, status)
        ("20S", nil, 1.0, 1), (nil, nil, 1.0, 1), ("1S", nil, 1.2, 4), ("1S", "5", 1.2, 5),
    ] as [(String?, String?, Double, Int)])
    func aCallWhoseClientClosedIsCancelled(_ row: (String?, String?, Double, Int)) {
        let (timeout, status, elapsed, expected) = row
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Ticks", requestHeaders: [("content-type", "application/grpc")]
                                            + (timeout.map { [("grpc-timeout", $0)] } ?? []))
        recorder.responseHead(headers: [("content-type", "application/grpc")], status: 200)
        if let status { recorder.responseTrailers([("grpc-status", status)]) }
        recorder.clientClosed(elapsed: elapsed)
        let info = recorder.finish()
        #expect(info.status == expected)
        #expect(info.notes.count == (status == nil ? 1 : 0), "\(info.notes)")
        #expect(status != nil || info.notes.first?.hasPrefix("request: the client closed its connection") == true)
    }

    /// A call whose connection the proxy cut before its status is UNAVAILABLE; one with a status keeps it.
    @Test func aCallCutBeforeItsStatusIsUnavailable() {
        var cut = GRPCFlowRecorder(path: "/lab.Echo/Ticks", requestHeaders: [("content-type", "application/grpc")])
        cut.responseHead(headers: [("content-type", "application/grpc")], status: 200)
        cut.connectionCut("DevProxy shut down")
        let info = cut.finish()
        #expect(info.status == 14)
        #expect(info.notes == ["response: DevProxy shut down before the call's status: the client reports UNAVAILABLE"])
        var done = GRPCFlowRecorder(path: "/lab.Echo/Ticks", requestHeaders: [("content-type", "application/grpc")])
        done.responseTrailers([("grpc-status", "0")])
        done.connectionCut("DevProxy shut down")
        #expect(done.finish().status == 0)
    }

    /// Status in the response head and no body: Trailers-Only, message percent-decoded.
    @Test func trailersOnlyErrorsAreRecognised() {
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Fail", requestHeaders: [])
        recorder.requestBody(Self.frame([0x0A, 0x01, 0x78]))
        recorder.responseHead(headers: [(":status", "200"), ("Grpc-Status", "5"), ("grpc-message", "no%20such%20thing%3A%20%E2%9C%97")])
        let info = recorder.finish()
        #expect(info.status == 5)
        #expect(info.message == "no such thing: ✗")
        #expect(info.trailersOnly)
        #expect(info.responseMessages == 0)
    }

    /// Without a decompressor for it, a compressed message is recorded as such, not mis-decoded.
    @Test func anEncodingWithoutADecompressorIsNoted() {
        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [("grpc-encoding", "gzip")])
        recorder.requestBody(Self.frame([0x1F, 0x8B, 0x08, 0x00], compressed: true))
        recorder.requestBody(Self.frame([0x08, 0x01], compressed: false))
        let info = recorder.finish()
        #expect(info.encoding == "gzip")
        #expect(info.messages[0].decoded == nil)
        #expect(info.messages[0].note == "grpc-encoding gzip not decoded")
        #expect(info.messages[1].decoded?.fields.count == 1)
    }

    @Test func compressedWithoutAnEncodingIsNoted() {
        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [])
        recorder.requestBody(Self.frame([0x08, 0x01], compressed: true))
        #expect(recorder.finish().messages.first?.note == "compressed flag set but no grpc-encoding")
    }

    /// A body cut inside a message, a bad flag and a bad status all end up in the record.
    @Test func framingProblemsAreNoted() {
        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [])
        recorder.requestBody([0, 0, 0, 0, 10, 0x08, 0x01])
        recorder.responseBody([7, 1, 2])
        recorder.responseTrailers([("grpc-status", "x")])
        let info = recorder.finish()
        #expect(info.messages.first?.note == "cut short: 2 of 10 bytes")
        #expect(info.messages.first?.decoded?.fields == [.init(number: 1, value: .varint(1))])
        #expect(info.notes == ["grpc-status is not a number: x",
                               "response: invalid compressed flag 7 at byte 0; splitting stopped"])
        #expect(info.status == nil)
    }

    /// Past `recordedMessages`, messages are counted but not kept; a message over the hold limit
    /// keeps its first bytes only.
    @Test func theRecordIsBounded() throws {
        let limits = GRPCFlowRecorder.Limits(splitter: .init(keptBytes: 4, heldBytes: 8), recordedMessages: 3)
        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [], limits: limits)
        for _ in 0..<10 { recorder.requestBody(Self.frame([0x08, 0x01])) }
        recorder.responseBody(Self.frame([0x08, 0x01, 0x10, 0x02, 0x18, 0x03, 0x20, 0x04, 0x28, 0x05]))
        let info = recorder.finish()
        #expect(info.requestMessages == 10 && info.responseMessages == 1)
        #expect(info.messages.count == 3)
        // Said once, so a long watch whose list stopped growing says why.
        #expect(info.notes == ["only the first 3 messages are recorded; request_messages and response_messages count them all"],
                "\(info.notes)")
        var big = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [], limits: limits)
        big.responseBody(Self.frame([0x08, 0x01, 0x10, 0x02, 0x18, 0x03, 0x20, 0x04, 0x28, 0x05]))
        let record = try #require(big.finish().messages.first)
        #expect(record.firstBytesBase64 == Data([0x08, 0x01, 0x10, 0x02]).base64EncodedString())
        #expect(record.note == "10 bytes is over the 8-byte hold limit; first bytes only")
        #expect(record.decoded?.fields.count == 2)
        // First bytes that end inside a field say so; a length longer than the whole message is damage.
        var cut = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [], limits: limits)
        cut.responseBody(Self.frame([0x08, 0x01, 0x12, 0x06] + Array("abcdef".utf8)))
        cut.responseBody(Self.frame([0x08, 0x01, 0x12, 0x7F] + Array("abcdef".utf8)))
        let cutRecords = cut.finish().messages
        let fieldCounts: [Int] = cutRecords.map { $0.decoded?.fields.count ?? -1 }
        #expect(fieldCounts == [1, 1])
        #expect(cutRecords.first?.decoded?.error == "the 4 bytes kept of 10 end inside field 2")
        #expect(cutRecords.last?.decoded?.error == "length-delimited field 2 overruns the data at byte 2")
    }

    /// The call's decodings share one budget (`decodedBytesPerCall`): past it, messages keep their
    /// first bytes and say why they are not decoded. Twenty calls of 64 decoded 100 KB messages
    /// took the proxy past 1 GB.
    @Test func decodingsShareOneBudgetPerCall() throws {
        let limits = GRPCFlowRecorder.Limits(decodedBytesPerCall: 5)
        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [], limits: limits)
        for _ in 0..<4 { recorder.requestBody(Self.frame([0x08, 0x01, 0x10, 0x02])) }
        let messages = recorder.finish().messages
        #expect(messages.map { $0.decoded != nil } == [true, true, false, false])
        #expect(messages.last?.note == "not decoded: the call's 5 bytes of decodings are spent", "\(String(describing: messages.last?.note))")
    }

    @Test func contentTypes() {
        #expect(GRPCFlowRecorder.isGRPC(contentType: "application/grpc"))
        #expect(GRPCFlowRecorder.isGRPC(contentType: "application/grpc+proto"))
        #expect(GRPCFlowRecorder.isGRPC(contentType: "Application/GRPC; charset=utf-8"))
        #expect(!GRPCFlowRecorder.isGRPC(contentType: "application/grpc-web"))
        #expect(!GRPCFlowRecorder.isGRPC(contentType: "application/json"))
        #expect(!GRPCFlowRecorder.isGRPC(contentType: nil))
    }
}
