@testable import DevProxy
import Foundation
import GRPCWire
import Testing
import TestSupport

/// The `grpc` object in the flow log (hand-written bytes equal to JSONEncoder's), in HAR as
/// `_grpc`, and gRPC messages compressed by Python's gzip and zlib and the zstd CLI undone by
/// the body decoders.
@Suite struct FlowGRPCTests {
    /// A call with every kind of field, and doubles whose spelling could differ between writers.
    static let call: GRPCFlowInfo = {
        let doubles: [Double] = [1e15, 1e16, 1e-7, 123456789.125, .leastNonzeroMagnitude, -0.0, 0.1, 1.7976931348623157e308, 4096]
        let fields = doubles.enumerated().map { ProtobufRawField(number: $0.offset + 1, value: .fixed64($0.element.bitPattern)) }
            + [ProtobufRawField(number: 20, value: .fixed32(Float(1e20).bitPattern)),
               ProtobufRawField(number: 21, value: .fixed32(Float(3.4028235e38).bitPattern)),
               ProtobufRawField(number: 22, value: .varint(UInt64.max)),
               ProtobufRawField(number: 23, value: .string("tab\t\"quote\" \u{01} 😀")),
               ProtobufRawField(number: 24, value: .message(.init(fields: [.init(number: 1, value: .bytes([0xFF]))]))),
               ProtobufRawField(number: 25, value: .group(.init(fields: [], error: "group 25 not closed")))]
        return GRPCFlowInfo(service: "lab.Echo", method: "Bidi", status: 0, message: "ok / fine", encoding: "gzip",
                            responseEncoding: "zstd", trailersOnly: false, requestMessages: 3, responseMessages: 1,
                            messages: [.init(direction: .request, compressed: true, length: 99, firstBytesBase64: "H4s=",
                                             decoded: .init(fields: fields), note: "a note")],
                            notes: ["request: body ended inside a message prefix (1 of 5 bytes)"])
    }()

    @Test func theLogWritesWhatJSONEncoderWrites() throws {
        var flow = FlowSamples.get
        flow.grpc = Self.call
        let expected = [UInt8](try FlowJSON.encoder().encode(flow))
        #expect(String(decoding: flow.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(try FlowJSON.decoder().decode(Flow.self, from: Data(flow.jsonBytes)) == flow)
        let text = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(text.contains(",\"grpc\":{\"encoding\":\"gzip\",\"message\":\"ok / fine\",\"messages\":[{"))
    }

    @Test func harEntriesCarryTheCallAsUnderscoreGRPC() throws {
        var flow = FlowSamples.get
        flow.grpc = Self.call
        let document = HARWriter.document(for: [flow, FlowSamples.post])
        #expect(document.log.entries.map(\.grpc) == [Self.call, nil])
        let har = try JSONSerialization.jsonObject(with: Data(try HARWriter.encode([flow]))) as? [String: Any]
        let entry = ((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first
        let grpc = entry?["_grpc"] as? [String: Any]
        #expect(grpc?["service"] as? String == "lab.Echo")
        #expect(grpc?["status"] as? Int == 0)
    }

    /// Each encoding a real compressor made, one message each way, decoded to the same fields.
    @Test(arguments: [("gzip", "gzip.compress(m)"), ("deflate", "zlib.compress(m)"), ("zstd", "zstd(m)")])
    func compressedMessagesAreDecoded(_ encoding: (String, String)) throws {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run("python3", ["-c", """
            import gzip, struct, subprocess, sys, zlib
            def zstd(data): return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout
            m = bytes([0x0A, 0x05]) + b"hello" + bytes([0x10, 0x07]) + bytes([0x1A, 0x03, 0x08, 0x96, 0x01]) * 50
            c = \(encoding.1)
            open(sys.argv[1], "wb").write(struct.pack(">BI", 1, len(c)) + c + struct.pack(">BI", 0, len(m)) + m)
            """, dir.file("body")])
        #expect(result.status == 0, "\(result.output)")
        let body = [UInt8](try #require(FileManager.default.contents(atPath: dir.file("body"))))
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [("grpc-encoding", encoding.0)],
                                        decompressor: GRPCContentDecompressor())
        recorder.requestBody(body)
        let info = recorder.finish()
        #expect(info.messages.count == 2)
        #expect(info.messages[0].compressed)
        #expect(info.messages[0].note == nil, "\(info.messages[0].note ?? "")")
        #expect(info.messages[0].decoded?.fields.count == 52)
        #expect(info.messages[0].decoded == info.messages[1].decoded)
        #expect(info.messages[0].decoded?.fields.first?.value == .string("hello"))
    }

    /// An unknown encoding is named, damaged data is noted, and a bomb stops at the output limit.
    @Test func unknownDamagedAndHugeMessagesAreNoted() throws {
        let decompressor = GRPCContentDecompressor()
        #expect(decompressor.decompress([1, 2, 3], encoding: GRPCEncoding(rawValue: "snappy"), outputLimit: 100) == nil)
        #expect(decompressor.decompress([1, 2, 3], encoding: .gzip, outputLimit: 100)
                == GRPCDecompressed(bytes: [], complete: false, note: "not valid gzip data"))
        let bomb = try RealCompressors.gzip([UInt8](repeating: 0x08, count: 8 << 20))
        let limited = try #require(decompressor.decompress(bomb, encoding: .gzip, outputLimit: 1 << 20))
        #expect(limited.bytes.count == 1 << 20)
        #expect(!limited.complete)
        #expect(limited.note == "output limit of 1048576 bytes reached")

        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [("grpc-encoding", "snappy")],
                                        decompressor: decompressor)
        recorder.requestBody([1, 0, 0, 0, 3, 1, 2, 3])
        let info = recorder.finish()
        #expect(info.messages.first?.note == "grpc-encoding snappy not decoded")
        #expect(info.messages.first?.decoded == nil)
    }
}
