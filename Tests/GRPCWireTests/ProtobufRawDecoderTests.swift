import Foundation
@testable import GRPCWire
import Testing

/// The schema-less decoder against protoc's `--decode_raw` on messages Python's protobuf
/// serialized, and on broken input, against every limit.
@Suite struct ProtobufRawDecoderTests {
    let decoder = ProtobufRawDecoder()

    /// Every sample decodes without error to exactly what protoc prints, field by field.
    @Test(arguments: PythonProtobuf.samples.keys.sorted())
    func matchesProtocDecodeRaw(_ name: String) throws {
        let bytes = try #require(try PythonProtobuf.serializedSamples()[name])
        let decoded = decoder.decode(bytes)
        #expect(decoded.error == nil)
        let protoc = try #require(try PythonProtobuf.decodeRaw(bytes))
        let ours = ProtocText.render(decoded).split(separator: "\n")
        let theirs = protoc.split(separator: "\n")
        #expect(ours.count == theirs.count)
        for (index, (mine, reference)) in zip(ours, theirs).enumerated() where mine != reference {
            Issue.record("\(name) line \(index + 1): ours \(mine) | protoc \(reference)")
            break
        }
    }

    /// The hints a reader needs: negative int64 as `int`, sint32 as `sint`, float and double,
    /// UTF-8 as a string, binary as bytes, an empty value as an empty string, a group as a group.
    @Test func valuesCarryTheirReadings() throws {
        let samples = try PythonProtobuf.serializedSamples()
        let scalars = decoder.decode(try #require(samples["scalars"]))
        func field(_ number: Int, in message: ProtobufRawMessage) -> ProtobufRawField? {
            message.fields.first { $0.number == number }
        }
        #expect(field(1, in: scalars)?.value == .string("hello"))
        #expect(field(2, in: scalars)?.value == .varint(7))
        #expect(field(3, in: scalars)?.json["int"] == .int(-5))
        #expect(field(3, in: scalars)?.value == .varint(UInt64.max - 4))
        #expect(field(4, in: scalars)?.json["sint"] == .int(-3))
        #expect(field(5, in: scalars)?.value == .fixed32(0xDEAD_BEEF))
        #expect(field(6, in: scalars)?.value == .fixed64((1 << 63) + 5))
        #expect(field(7, in: scalars)?.json["float"] == .double(1.5))
        #expect(field(8, in: scalars)?.json["double"] == .double(-0.1))
        #expect(field(15, in: scalars)?.json["varint"] == .uint(UInt64.max))
        let strings = decoder.decode(try #require(samples["strings"]))
        #expect(field(16, in: strings)?.value == .string("grüße, 世界 😀"))
        #expect(field(10, in: strings)?.value == .bytes(Array(0..<40)))
        #expect(field(10, in: strings)?.json["bytes"] == .string(Data(Array(0..<40)).base64EncodedString()))
        #expect(field(17, in: strings)?.value == .string(""))
        let group = decoder.decode(try #require(samples["group"]))
        let inner = ProtobufRawMessage(fields: [.init(number: 21, value: .varint(5)), .init(number: 22, value: .string("in a group"))])
        #expect(field(20, in: group)?.value == .group(inner))
        #expect(field(20, in: group)?.wireType == .startGroup)
    }

    /// Every cut of a real message: no trap, an error unless the cut falls between fields, and
    /// the fields before the cut decoded as in the whole message.
    @Test func everyCutYieldsAPrefixAndANote() throws {
        let bytes = try #require(try PythonProtobuf.serializedSamples()["nested"])
        let whole = decoder.decode(bytes).fields
        for cut in 0..<bytes.count {
            let partial = decoder.decode(Array(bytes.prefix(cut)))
            #expect(Array(whole.prefix(partial.fields.count)) == partial.fields, "cut at \(cut)")
            if partial.error == nil {
                #expect(partial.fields.count < whole.count, "cut at \(cut)")
            }
        }
    }

    @Test(arguments: [
        ([0x0E, 0x01], "wire type 6"),             // field 1, wire type 6
        ([0x0F], "wire type 7"),
        ([0x00, 0x01], "field number 0"),
        ([0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], "bad varint"),
        ([0x0C], "end of group 1 that was not open"),
        ([0x0B, 0x10, 0x01], "group 1 not closed"),
        ([0x0A, 0x05, 0x61], "overruns"),
        ([0x0D, 0x01, 0x02], "fixed32 cut short"),
        ([0x09, 0x01], "fixed64 cut short"),
        ([0x08], "bad varint"),
    ] as [([UInt8], String)])
    func malformedInputIsReported(_ input: ([UInt8], String)) {
        let decoded = decoder.decode(input.0)
        #expect(decoded.error?.contains(input.1) == true, "\(decoded.error ?? "no error")")
    }

    /// Fields before the damage are kept.
    @Test func malformedInputKeepsWhatCameBefore() {
        let decoded = decoder.decode([0x08, 0x01, 0x12, 0x03, 0x68, 0x69, 0x21, 0x1F])
        #expect(decoded.fields == [.init(number: 1, value: .varint(1)), .init(number: 2, value: .string("hi!"))])
        #expect(decoded.error?.contains("wire type 7") == true)
    }

    /// 60 nested messages: past the depth limit the rest is bytes, with no error.
    @Test func depthIsCapped() throws {
        var bytes: [UInt8] = [0x08, 0x01]
        for _ in 0..<60 { bytes = [0x0A, UInt8(bytes.count)] + bytes }
        let limits = ProtobufRawDecoder.Limits(maxDepth: 8)
        var message = ProtobufRawDecoder(limits: limits).decode(bytes)
        #expect(message.error == nil)
        var depth = 0
        while case .message(let nested) = message.fields.first?.value {
            message = nested
            depth += 1
        }
        #expect(depth == 8)
        if case .bytes = message.fields.first?.value {} else if case .string = message.fields.first?.value {} else {
            Issue.record("the value at the depth limit is \(String(describing: message.fields.first?.value))")
        }
    }

    /// Deep groups stop at the limit with an error rather than recursing on.
    @Test func groupDepthIsCapped() {
        let bytes = [UInt8](repeating: 0x0B, count: 100_000)
        let decoded = ProtobufRawDecoder(limits: .init(maxDepth: 20)).decode(bytes)
        #expect(decoded.error?.contains("nested deeper than 20") == true)
    }

    @Test func fieldCountAndInputSizeAreCapped() {
        let many = [UInt8]((0..<20_000).flatMap { _ in [0x08, 0x01] as [UInt8] })
        let decoded = ProtobufRawDecoder(limits: .init(maxFields: 1000)).decode(many)
        #expect(decoded.fields.count == 1000)
        #expect(decoded.error == "field limit of 1000 reached")
        let cut = ProtobufRawDecoder(limits: .init(maxInputBytes: 100)).decode(many)
        #expect(cut.fields.count == 50)
        #expect(cut.error == "stopped after 100 of 40000 bytes (input limit)")
        // A limit that falls inside a field says so; it read as a field that overruns the data.
        let large = [0x08, 0x01, 0x1A, 0x80, 0x01] + [UInt8](repeating: 0x61, count: 128)
        let inside = ProtobufRawDecoder(limits: .init(maxInputBytes: 100)).decode(large)
        #expect(inside.fields.count == 1)
        #expect(inside.error == "stopped after 100 of 133 bytes (input limit), inside field 3")
        // A length longer than the whole message is damage whatever the limit.
        let damaged = ProtobufRawDecoder(limits: .init(maxInputBytes: 100)).decode([0x1A, 0xFF, 0x01] + large)
        #expect(damaged.error == "length-delimited field 3 overruns the data at byte 0")
    }

    /// A length-delimited value that is not printable UTF-8 and not a message is bytes; printable
    /// text that does not parse is a string, but text that does parse is a message, as in protoc
    /// ("hi" is field 13 = 105), with its text beside it (the string was nowhere: "hi" and
    /// "error" read as `13: 105` and `12: fixed32 …`), in the flow log's JSON too.
    @Test func lengthDelimitedValuesAreClassified() throws {
        var hi = ProtobufRawMessage(fields: [.init(number: 13, value: .varint(105))])
        hi.text = "hi"
        let decoded = decoder.decode([0x0A, 0x02, 0x68, 0x69])
        #expect(decoded.fields.first?.value == .message(hi))
        let json = decoded.fields.first?.json
        #expect(json?["string"] == .string("hi") && json?["message"] != nil, "\(String(describing: json))")
        #expect(try ProtobufRawMessage(json: decoded.json) == decoded, "the hint reads back")
        let text = decoder.decode([0x0A, 0x05] + Array("hello".utf8))
        #expect(text.fields.first?.value == .string("hello"))
        let binary = decoder.decode([0x0A, 0x03, 0xFF, 0xFE, 0x00])
        #expect(binary.fields.first?.value == .bytes([0xFF, 0xFE, 0x00]))
        let nested = decoder.decode([0x0A, 0x02, 0x08, 0x01])
        #expect(nested.fields.first?.value == .message(.init(fields: [.init(number: 1, value: .varint(1))])))
    }
}
