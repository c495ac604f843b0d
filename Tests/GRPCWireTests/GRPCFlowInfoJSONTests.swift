import Foundation
import GRPCWire
import Testing

/// The `grpc` object's spelling, and that it reads back through `Codable` to the same record.
@Suite struct GRPCFlowInfoJSONTests {
    static let sample = GRPCFlowInfo(
        service: "lab.Echo", method: "Unary", status: 5, message: "not found: \"x\"", encoding: "gzip",
        trailersOnly: false, requestMessages: 1, responseMessages: 2,
        messages: [GRPCMessageRecord(direction: .request, compressed: false, length: 4, firstBytesBase64: "CAESAA==",
                                     decoded: ProtobufRawMessage(fields: [
                                        .init(number: 1, value: .varint(UInt64.max)),
                                        .init(number: 2, value: .fixed32(0x3FC0_0000)),
                                        .init(number: 3, value: .fixed64(0x7FF0_0000_0000_0000)),
                                        .init(number: 4, value: .message(.init(fields: [.init(number: 1, value: .string("é"))]))),
                                        .init(number: 5, value: .bytes([0, 1, 2])),
                                        .init(number: 6, value: .group(.init(fields: []))),
                                     ], error: "field limit of 6 reached")),
                   GRPCMessageRecord(direction: .response, compressed: true, length: 70000, firstBytesBase64: "",
                                     decoded: nil, note: "cut short", time: 1796454040.394)],
        notes: ["response: body ended inside a message prefix (3 of 5 bytes)"])

    @Test func fieldsAreSpelledAsDocumented() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(Self.sample), as: UTF8.self)
        #expect(text.hasPrefix("{\"encoding\":\"gzip\",\"message\":\"not found: \\\"x\\\"\",\"messages\":[{\"compressed\":false,"))
        #expect(text.contains("{\"int\":-1,\"number\":1,\"sint\":-9223372036854775808,\"varint\":18446744073709551615,\"wire_type\":0}"))
        #expect(text.contains("{\"fixed32\":1069547520,\"float\":1.5,\"number\":2,\"wire_type\":5}"))
        // +Infinity as a double is not finite: no hint.
        #expect(text.contains("{\"fixed64\":9218868437227405312,\"number\":3,\"wire_type\":1}"))
        #expect(text.contains("\"message\":{\"fields\":[{\"number\":1,\"string\":\"é\",\"wire_type\":2}]}"))
        #expect(text.contains("{\"bytes\":\"AAEC\",\"number\":5,\"wire_type\":2}"))
        #expect(text.contains("{\"group\":{\"fields\":[]},\"number\":6,\"wire_type\":3}"))
        #expect(text.contains("\"first_bytes\":\"CAESAA==\""))
        #expect(text.contains("\"note\":\"cut short\",\"time\":1796454040.394}"), "when the message had arrived")
        #expect(text.contains("\"trailers_only\":false"))
        #expect(text.contains("\"status\":5"))
        #expect(text.contains("\"request_messages\":1,\"response_messages\":2,\"service\":\"lab.Echo\""))
        #expect(!text.contains("response_encoding"))
    }

    @Test func readsBackToTheSameRecord() throws {
        let data = try JSONEncoder().encode(Self.sample)
        #expect(try JSONDecoder().decode(GRPCFlowInfo.self, from: data) == Self.sample)
        #expect(try GRPCFlowInfo(json: Self.sample.json) == Self.sample)
    }

    @Test func aWrongFieldIsNamed() {
        #expect(throws: GRPCJSONError(reason: "grpc.trailers_only is missing")) {
            try GRPCFlowInfo(json: .object([("request_messages", .int(0)), ("response_messages", .int(0)), ("messages", .array([]))]))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(GRPCFlowInfo.self, from: Data("{\"trailers_only\":1}".utf8))
        }
    }
}
