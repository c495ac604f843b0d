import Foundation
@testable import GRPCWire
import Testing
import TestSupport

/// Typed decoding with a schema: a `.proto` compiled at test time by `grpc_tools.protoc` into a
/// descriptor set (what `--proto` takes), messages serialized by Python's `protobuf`, and each
/// decoding held to protobuf's own JSON mapping (`json_format.MessageToDict`) of the same bytes.
@Suite struct ProtoSchemaTests {
    static let proto = """
    syntax = "proto3";
    package shop.v1;
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/duration.proto";
    import "google/protobuf/wrappers.proto";
    import "google/protobuf/struct.proto";
    import "google/protobuf/field_mask.proto";
    import "google/protobuf/any.proto";
    import "google/protobuf/empty.proto";
    enum Color { COLOR_UNSPECIFIED = 0; RED = 1; GREEN = 2; }
    message Item {
      string item_id = 1; int32 quantity = 2; double price = 3; Color color = 4;
      message Note { string text = 1; sint64 delta = 2; }
      repeated Note notes = 5;
    }
    message Order {
      string order_id = 1; repeated Item items = 2; map<string, int32> counts = 3; int64 total_cents = 4;
      uint64 big = 5; bool paid = 6; bytes blob = 7; float ratio = 8; repeated int32 packed = 9;
      fixed64 f64 = 10; sfixed32 sf32 = 11; sint32 zig = 12; map<int32, Item> by_slot = 13;
      google.protobuf.Timestamp created = 14; repeated string tags = 15; uint32 small = 16; fixed32 f32 = 17;
      google.protobuf.Duration ttl = 18; google.protobuf.Int64Value limit = 19; google.protobuf.StringValue label = 20;
      google.protobuf.BoolValue gift = 21; google.protobuf.DoubleValue weight = 22; google.protobuf.BytesValue token = 23;
      google.protobuf.Struct extra = 24; google.protobuf.FieldMask mask = 25; google.protobuf.Any attachment = 26;
      repeated google.protobuf.Any attachments = 27; google.protobuf.Value anything = 28;
      google.protobuf.Timestamp early = 29; google.protobuf.Duration backoff = 30; google.protobuf.UInt32Value zero = 31;
      google.protobuf.ListValue list = 32;
    }
    message Empty {}
    service Shop {
      rpc PlaceOrder(Order) returns (Item);
      rpc Watch(Empty) returns (stream Order);
    }
    """

    /// Python lines filling `m = shop_pb2.Order()`, by sample name.
    static let samples: [String: String] = [
        "full": """
        m.order_id = "o-1"; m.total_cents = -1234; m.big = 2**64 - 1; m.paid = True; m.blob = bytes(range(20))
        m.ratio = 0.1; m.packed.extend([1, -2, 300]); m.f64 = 2**63 + 1; m.sf32 = -7; m.zig = -300
        m.counts["apples"] = 3; m.counts["pears"] = 0; m.tags.extend(["a", "b"]); m.small = 4000000000; m.f32 = 7
        it = m.items.add(); it.item_id = "sku-1"; it.quantity = 2; it.price = 9.99; it.color = shop_pb2.GREEN
        n = it.notes.add(); n.text = "gift"; n.delta = -5
        m.by_slot[7].item_id = "slot"; m.by_slot[7].color = shop_pb2.RED
        m.created.seconds = 1700000000; m.created.nanos = 5
        """,
        "wellknown": """
        m.created.seconds = 1700000000; m.created.nanos = 120000000; m.early.seconds = -62135596800
        m.ttl.seconds = 90; m.ttl.nanos = 5000; m.backoff.seconds = -1; m.backoff.nanos = -500000000
        m.limit.value = -9000000000; m.label.value = "grüße"; m.gift.value = False; m.weight.value = 2.5
        m.token.value = b"\\x00\\xff"; m.zero.SetInParent()
        m.extra.update({"a": 1, "b": [True, None, "x"], "c": {"d": -2.5}})
        m.mask.paths.extend(["user.display_name", "items"]); m.anything.string_value = "v"
        m.list.extend([1, "two"])
        it = shop_pb2.Item(item_id="packed", quantity=3); m.attachment.Pack(it)
        d = duration_pb2.Duration(seconds=3); m.attachments.add().Pack(d)
        e = empty_pb2.Empty(); m.attachments.add().Pack(e)
        """,
        "empty": "",
        "unicode": """
        m.order_id = "grüße 😀"; it = m.items.add(); it.color = 5
        """,
    ]

    struct Compiled {
        let descriptorSet: [UInt8]
        let messages: [String: [UInt8]]
        /// MessageToDict of each sample, as JSON text.
        let json: [String: String]
    }

    /// Python that compiles `shop.proto` in the directory `sys.argv[1]` (grpcio-tools' protoc,
    /// with protobuf's own well-known .proto files) into `shop.desc` and `shop_pb2`, and imports it.
    static let pythonPrelude = """
        import json, sys
        sys.path.insert(0, sys.argv[1])
        from grpc_tools import protoc
        import grpc_tools, os
        include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
        assert protoc.main(["protoc", "-I" + sys.argv[1], "-I" + include, "--python_out=" + sys.argv[1],
                            "--include_imports", "--descriptor_set_out=" + sys.argv[1] + "/shop.desc",
                            sys.argv[1] + "/shop.proto"]) == 0
        import shop_pb2
        from google.protobuf import duration_pb2, empty_pb2, json_format

        """

    static func compile() throws -> Compiled {
        let dir = TemporaryDirectory()
        _ = dir.write("shop.proto", proto)
        var script = pythonPrelude
        for (name, lines) in samples {
            script += "m = shop_pb2.Order()\n" + lines + "\n"
            script += "open(sys.argv[1] + '/\(name).bin', 'wb').write(m.SerializeToString())\n"
            script += "open(sys.argv[1] + '/\(name).json', 'w').write(json.dumps(json_format.MessageToDict(m)))\n"
        }
        let result = try Subprocess.run("python3", ["-c", script, dir.path], timeout: 60)
        guard result.status == 0 else { throw TestFailure("python protobuf failed: \(result.output)") }
        func read(_ name: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: dir.file(name)) else { throw TestFailure("no \(name)") }
            return [UInt8](data)
        }
        return Compiled(descriptorSet: try read("shop.desc"),
                        messages: try samples.keys.reduce(into: [:]) { $0[$1] = try read("\($1).bin") },
                        json: try samples.keys.reduce(into: [:]) { $0[$1] = String(decoding: try read("\($1).json"), as: UTF8.self) })
    }

    /// JSON text as Foundation objects, for a comparison that ignores key order and spacing.
    static func object(_ text: String) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
    }

    static func text(_ value: JSONValue) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    @Test func decodingsMatchProtobufsOwnJSON() throws {
        let compiled = try Self.compile()
        let schema = try ProtoSchema(descriptorSet: compiled.descriptorSet)
        for (name, bytes) in compiled.messages {
            let ours = try Self.text(try schema.decode(bytes, as: "shop.v1.Order"))
            let theirs = try #require(compiled.json[name])
            // The well-known types included (Timestamp as RFC 3339, Duration, wrappers, Struct,
            // FieldMask, Any): each in its own form, as MessageToDict writes it.
            #expect(try Self.object(ours) == Self.object(theirs), "\(name): ours \(ours)\ntheirs \(theirs)")
        }
    }

    /// Timestamps and durations as protobuf spells them (3, 6 or 9 fraction digits; the spec's
    /// own example), and values it would refuse to write left as ordinary messages.
    @Test func timestampsAndDurationsAreSpelledAsProtobufDoes() {
        #expect(ProtoSchema.timestamp(seconds: 63_108_020, nanos: 21_000_000) == .string("1972-01-01T10:00:20.021Z"))
        #expect(ProtoSchema.timestamp(seconds: 0, nanos: 1_000) == .string("1970-01-01T00:00:00.000001Z"))
        #expect(ProtoSchema.timestamp(seconds: -1, nanos: 0) == .string("1969-12-31T23:59:59Z"))
        #expect(ProtoSchema.timestamp(seconds: 253_402_300_799, nanos: 999_999_999) == .string("9999-12-31T23:59:59.999999999Z"))
        #expect(ProtoSchema.timestamp(seconds: 253_402_300_800, nanos: 0) == nil)
        #expect(ProtoSchema.timestamp(seconds: 0, nanos: -1) == nil)
        #expect(ProtoSchema.duration(seconds: 1, nanos: 500_000_000) == .string("1.500s"))
        #expect(ProtoSchema.duration(seconds: 0, nanos: -1) == .string("-0.000000001s"))
        #expect(ProtoSchema.duration(seconds: 1, nanos: -1) == nil, "mixed signs")
        #expect(ProtoSchema.duration(seconds: 315_576_000_001, nanos: 0) == nil)
        let generic: JSONValue = .object([(key: "seconds", value: .string("1")), (key: "nanos", value: .int(-1))])
        #expect(ProtoSchema.wellKnown("google.protobuf.Duration", generic) == nil)
    }

    @Test func methodsAreFoundByTheirGRPCPath() throws {
        let schema = try ProtoSchema(descriptorSet: try Self.compile().descriptorSet)
        #expect(schema.method(path: "/shop.v1.Shop/PlaceOrder") == ProtoSchema.Method(input: "shop.v1.Order", output: "shop.v1.Item"))
        #expect(schema.method(path: "/shop.v1.Shop/Watch")?.output == "shop.v1.Order")
        #expect(schema.method(path: "/shop.v1.Shop/Nope") == nil)
        #expect(schema.messages["shop.v1.Item.Note"]?.fields[2]?.type == 18)
        #expect(schema.messages["google.protobuf.Timestamp"] != nil, "--include_imports brings the imports")
        #expect(schema.enums["shop.v1.Color"]?[2] == "GREEN")
    }

    /// The recorder uses the schema for the method the path calls; bytes that do not fit the type
    /// keep their raw decoding and say why.
    @Test func theRecorderAddsTypedMessages() throws {
        let compiled = try Self.compile()
        let schema = try ProtoSchema(descriptorSet: compiled.descriptorSet)
        let order = try #require(compiled.messages["full"])
        var recorder = GRPCFlowRecorder(path: "/shop.v1.Shop/PlaceOrder", requestHeaders: [], schema: schema)
        recorder.requestBody(GRPCWebTests.frame(order))
        recorder.responseHead(headers: [])
        recorder.responseBody(GRPCWebTests.frame([0x08, 0x01]))   // field 1 (a string in Item) as a varint
        recorder.responseTrailers([("grpc-status", "0")])
        let info = recorder.finish()
        let request = try #require(info.messages.first)
        #expect(request.messageType == "shop.v1.Order")
        #expect(request.typed?["orderId"] == .string("o-1"))
        #expect(request.decoded != nil, "the raw decoding stays")
        let response = try #require(info.messages.last)
        #expect(response.messageType == "shop.v1.Item" && response.typed == nil)
        #expect(response.note == "not a shop.v1.Item as the schema defines it: shop.v1.Item.item_id (1) is string but came as a varint")
        // Another service's path: no typed decoding at all.
        var other = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [], schema: schema)
        other.requestBody(GRPCWebTests.frame(order))
        #expect(other.finish().messages.first?.messageType == nil)
        // The record's JSON carries both and reads back.
        #expect(try GRPCFlowInfo(json: info.json) == info)
    }

    /// Message types nested 10,000 deep (3 bytes a level) are refused, not recursed into until
    /// the stack runs out.
    @Test func deeplyNestedTypesAreRefused() {
        var message: [UInt8] = [0x0A, 0x01, 0x41]   // DescriptorProto { name: "A" }
        for _ in 0..<10_000 { message = [0x1A] + Self.varint(message.count) + message }   // nested_type
        let file = [0x22] + Self.varint(message.count) + message                          // message_type
        let set = [0x0A] + Self.varint(file.count) + file
        #expect(throws: ProtoWireError.self) { try ProtoSchema(descriptorSet: set) }
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    @Test(arguments: [
        ([UInt8]("syntax = \"proto3\";".utf8), "not a FileDescriptorSet"),
        ([], "not a FileDescriptorSet: no file in it"),
        ([0x0A, 0x05, 0x0A], "longer than the message"),
    ])
    func whatIsNotADescriptorSetIsRefused(_ bytes: [UInt8], _ reason: String) {
        #expect(throws: ProtoWireError.self) { try ProtoSchema(descriptorSet: bytes) }
        do {
            _ = try ProtoSchema(descriptorSet: bytes)
        } catch {
            #expect(error.reason.contains(reason), "\(error.reason)")
        }
    }
}
