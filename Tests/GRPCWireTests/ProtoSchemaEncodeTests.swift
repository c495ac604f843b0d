import Foundation
@testable import GRPCWire
import Testing
import TestSupport

/// Typed encoding (an edited gRPC message sent again): protobuf's own JSON of each of
/// `ProtoSchemaTests`' samples (`json_format.MessageToDict`), written as bytes by `encode`, and
/// those bytes parsed by Python's protobuf must equal the sample.
@Suite struct ProtoSchemaEncodeTests {
    @Test func encodingsParseBackAsProtobufsOwnMessages() throws {
        let dir = TemporaryDirectory()
        _ = dir.write("shop.proto", ProtoSchemaTests.proto)
        var script = ProtoSchemaTests.pythonPrelude + "samples = {}\n"
        for (name, lines) in ProtoSchemaTests.samples {
            script += "m = shop_pb2.Order()\n" + lines + "\nsamples['\(name)'] = m\n"
        }
        script += """
        if sys.argv[2] == "write":
            for name, m in samples.items():
                open(sys.argv[1] + "/" + name + ".json", "w").write(json.dumps(json_format.MessageToDict(m)))
        else:
            for name, m in samples.items():
                ours = shop_pb2.Order.FromString(open(sys.argv[1] + "/" + name + ".ours", "rb").read())
                print(name, "equal" if ours == m else "differs: " + str(ours))

        """
        let written = try Subprocess.run("python3", ["-c", script, dir.path, "write"], timeout: 60)
        try #require(written.status == 0, "\(written.output)")
        let schema = try ProtoSchema(descriptorSet: [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("shop.desc")))))
        for name in ProtoSchemaTests.samples.keys {
            let json = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: dir.file(name + ".json"))))
            let bytes = try schema.encode(json, as: "shop.v1.Order")
            FileManager.default.createFile(atPath: dir.file(name + ".ours"), contents: Data(bytes))
        }
        let checked = try Subprocess.run("python3", ["-c", script, dir.path, "check"], timeout: 60)
        #expect(checked.status == 0, "\(checked.output)")
        let lines = checked.stdout.split(separator: "\n").sorted()
        #expect(lines == ["empty equal", "full equal", "unicode equal", "wellknown equal"], "\(checked.output)")
    }

    @Test func whatTheTypeCannotTakeIsNamed() throws {
        let compiled = try ProtoSchemaTests.compile()
        let schema = try ProtoSchema(descriptorSet: compiled.descriptorSet)
        func refusal(_ json: String) -> String? {
            do {
                _ = try schema.encode(try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)), as: "shop.v1.Order")
                return nil
            } catch let error as ProtoWireError {
                return error.reason
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(#"{"orderId": 5}"#) == "shop.v1.Order.orderId is a string, not a number")
        #expect(refusal(#"{"nope": 1}"#) == "shop.v1.Order has no field \"nope\"")
        #expect(refusal(#"{"items": [{"color": "BLUE"}]}"#) == "shop.v1.Item.color: shop.v1.Color has no value BLUE")
        #expect(refusal(#"{"zig": 3000000000}"#)?.hasPrefix("shop.v1.Order.zig is sint32") == true)
        #expect(refusal(#"{"created": "yesterday"}"#)?.hasPrefix("google.protobuf.Timestamp is an RFC 3339 time") == true)
        #expect(refusal(#"{"packed": 3}"#) == "shop.v1.Order.packed is repeated: give a JSON array")
        // The proto name and json_name both name a field; null leaves it out; enums by number.
        #expect(refusal(#"{"order_id": "a", "totalCents": null, "items": [{"color": 2}]}"#) == nil)
        // Timestamps with an offset, durations of either sign.
        let timestamp = try #require(ProtoSchema.parseTimestamp("2023-11-14T23:13:20.5+01:00"))
        #expect(timestamp.0 == 1_700_000_000 && timestamp.1 == 500_000_000)
        let duration = try #require(ProtoSchema.parseDuration("-1.5s"))
        #expect(duration.0 == -1 && duration.1 == -500_000_000)
    }
}
