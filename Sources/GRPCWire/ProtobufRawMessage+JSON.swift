import Foundation

/// The flow-log spelling of a raw decoding: `{fields: [{number, wire_type, <value>}], error}`.
///
/// The value key says how it was read: `varint` (unsigned, with `sint`, the zigzag reading, and
/// `int`, the two's-complement reading when it is negative), `fixed64` (with `double`), `fixed32`
/// (with `float`), `message` (with `string` when its bytes are printable text too), `string`,
/// `bytes` (base64) or `group`. Float hints are left out when not finite.
extension ProtobufRawMessage {
    public var json: JSONValue {
        .sortedObject([("fields", .array(fields.map(\.json))), ("error", error.map(JSONValue.string))])
    }

    init(json: JSONValue) throws {
        let read = JSONReader(json, "decoded")
        self.init(fields: try read.array("fields").map(ProtobufRawField.init(json:)),
                  error: try read.optional("error", \.stringValue))
    }
}

extension ProtobufRawField {
    public var json: JSONValue {
        var pairs: [(String, JSONValue?)] = [("number", .int(Int64(number))),
                                             ("wire_type", .int(Int64(wireType.rawValue)))]
        switch value {
        case .varint(let raw):
            pairs.append(("varint", .uint(raw)))
            pairs.append(("sint", .int(ProtobufRawValue.zigzag(raw))))
            if Int64(bitPattern: raw) < 0 { pairs.append(("int", .int(Int64(bitPattern: raw)))) }
        case .fixed64(let raw):
            pairs.append(("fixed64", .uint(raw)))
            let double = Double(bitPattern: raw)
            if double.isFinite { pairs.append(("double", .double(double))) }
        case .fixed32(let raw):
            pairs.append(("fixed32", .uint(UInt64(raw))))
            let float = Float(bitPattern: raw)
            // The float's shortest spelling (1.1, not 1.100000023841858).
            if float.isFinite { pairs.append(("float", .double(Double("\(float)") ?? Double(float)))) }
        case .message(let nested):
            pairs.append(("message", nested.json))
            // The same bytes as text, a hint as `sint` is beside `varint`.
            if let text = nested.text { pairs.append(("string", .string(text))) }
        case .string(let text): pairs.append(("string", .string(text)))
        case .bytes(let bytes): pairs.append(("bytes", .string(Data(bytes).base64EncodedString())))
        case .group(let nested): pairs.append(("group", nested.json))
        }
        return .sortedObject(pairs)
    }

    init(json: JSONValue) throws {
        let read = JSONReader(json, "decoded.fields[]")
        let number = Int(try read.required("number", \.integer))
        let value: ProtobufRawValue
        if let raw = try read.optional("varint", \.unsigned) {
            value = .varint(raw)
        } else if let raw = try read.optional("fixed64", \.unsigned) {
            value = .fixed64(raw)
        } else if let raw = try read.optional("fixed32", \.unsigned), let narrow = UInt32(exactly: raw) {
            value = .fixed32(narrow)
        } else if let nested = json["message"] {
            var message = try ProtobufRawMessage(json: nested)
            message.text = try read.optional("string", \.stringValue)
            value = .message(message)
        } else if let text = try read.optional("string", \.stringValue) {
            value = .string(text)
        } else if let base64 = try read.optional("bytes", \.stringValue), let data = Data(base64Encoded: base64) {
            value = .bytes([UInt8](data))
        } else if let nested = json["group"] {
            value = .group(try ProtobufRawMessage(json: nested))
        } else {
            throw GRPCJSONError(reason: "decoded.fields[] has no value")
        }
        self.init(number: number, value: value)
    }
}
