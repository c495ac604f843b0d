import GRPCWire

/// The flow log writes a gRPC record (`grpc`) from the tree `GRPCFlowInfo.json` gives, with the
/// same bytes `JSONEncoder` writes for its `Codable` form (FlowJSONWriterTests holds them equal).
extension GRPCFlowInfo: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        json.write(to: &writer)
    }
}

extension JSONValue {
    /// Writes the value; object keys are already sorted, as `.sortedKeys` would write them.
    func write(to writer: inout FlowJSONWriter) {
        switch self {
        case .null:
            for byte in "null".utf8 { writer.append(byte) }
        case .bool(let value): writer.bool(value)
        case .int(let value): writer.number(Int(value))
        case .uint(let value):
            for byte in String(value).utf8 { writer.append(byte) }
        case .double(let value):
            guard value.isFinite else { return writer.number(value) }
            // JSONEncoder's spelling: Swift's description without a trailing ".0" (so -0.0 is
            // "-0" and 1e15 is "1000000000000000"), which FlowJSONWriter.number(Double) differs from.
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            for byte in text.utf8 { writer.append(byte) }
        case .string(let value): writer.string(value)
        case .array(let values): writer.array(values) { $1.write(to: &$0) }
        case .object(let pairs):
            writer.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                writer.string(pair.key)
                writer.append(UInt8(ascii: ":"))
                pair.value.write(to: &writer)
            }
            writer.append(UInt8(ascii: "}"))
        }
    }
}
