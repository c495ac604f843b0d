import Foundation

extension ProtoSchema {
    /// Bounds on a typed decoding: 32 levels of nesting, 10 000 values.
    static let maxDepth = 32
    static let maxValues = 10_000

    /// `bytes` decoded as the message `type`, written as protobuf's JSON mapping writes it
    /// (proto3 JSON: `json_name` keys, 64-bit integers as strings, enums by name, bytes as base64,
    /// maps as objects, repeated fields as arrays, the well-known types in their own forms:
    /// `ProtoSchema+WellKnown.swift`). A field the schema does not know appears under its number,
    /// as the raw decoding would show its value.
    /// - Throws: `ProtoWireError` when the bytes do not fit the type (a wire type the field cannot
    ///   have, invalid UTF-8 in a string, a type the schema lacks, damage).
    public func decode(_ bytes: [UInt8], as type: String) throws(ProtoWireError) -> JSONValue {
        var budget = Self.maxValues
        return try message(bytes[...], type: type, depth: 0, budget: &budget)
    }

    private func message(_ bytes: ArraySlice<UInt8>, type: String, depth: Int,
                         budget: inout Int) throws(ProtoWireError) -> JSONValue {
        guard depth < Self.maxDepth else { throw ProtoWireError("nested more than \(Self.maxDepth) messages deep") }
        if type == "google.protobuf.Any" { return try any(bytes, depth: depth, budget: &budget) }
        guard let definition = messages[type] else { throw ProtoWireError("the schema has no message \(type)") }
        var found: [Int: [JSONValue]] = [:]
        var order: [Int] = []
        var reader = ProtoWireReader(bytes)
        while let (number, value) = try reader.next() {
            budget -= 1
            guard budget >= 0 else { throw ProtoWireError("more than \(Self.maxValues) values") }
            if found[number] == nil { order.append(number) }
            guard let field = definition.fields[number] else {
                found[number, default: []].append(Self.unknown(value))
                continue
            }
            found[number, default: []] += try values(value, field: field, in: type, depth: depth, budget: &budget)
        }
        var pairs: [(String, JSONValue?)] = []
        for number in order {
            let list = found[number] ?? []
            guard let field = definition.fields[number] else {
                pairs.append((String(number), list.count == 1 ? list[0] : .array(list)))
                continue
            }
            if field.repeated, let typeName = field.typeName, messages[typeName]?.isMapEntry == true {
                pairs.append((field.jsonName, mapObject(list, entry: typeName)))
            } else if field.repeated {
                pairs.append((field.jsonName, .array(list)))
            } else {
                // A singular field seen twice: the last one wins (messages would merge; shown as the last).
                pairs.append((field.jsonName, list.last))
            }
        }
        let generic = JSONValue.sortedObject(pairs)
        return Self.wellKnown(type, generic) ?? generic
    }

    /// A `google.protobuf.Any` (`type_url` = 1, `value` = 2) as protobuf's JSON writes it: the
    /// packed message's fields beside `"@type"`, or `{"@type", "value"}` for a well-known type;
    /// a type the schema lacks keeps its bytes as base64 under `value` (protobuf would refuse).
    private func any(_ bytes: ArraySlice<UInt8>, depth: Int, budget: inout Int) throws(ProtoWireError) -> JSONValue {
        let any = try ProtoAny(bytes)
        if let number = any.unexpectedField {
            throw ProtoWireError("google.protobuf.Any has no field \(number) of that wire type")
        }
        let (typeURL, value, type) = (any.typeURL, any.value, any.typeName)
        guard !typeURL.isEmpty else { return .object([]) }
        guard messages[type] != nil else {
            return .sortedObject([("@type", .string(typeURL)), ("value", .string(Data(value).base64EncodedString()))])
        }
        let packed = try message(value, type: type, depth: depth + 1, budget: &budget)
        if Self.specialJSON.contains(type) {
            return .sortedObject([("@type", .string(typeURL)), ("value", packed)])
        }
        guard case .object(let fields) = packed else { return packed }
        return .object([(key: "@type", value: .string(typeURL))] + fields)
    }

    /// A map field's entries (`{key, value}` objects) as one object, keys as JSON writes them.
    private func mapObject(_ entries: [JSONValue], entry: String) -> JSONValue {
        let definition = messages[entry]
        let valueField = definition?.fields[2]
        var pairs: [(String, JSONValue?)] = []
        var seen: [String: Int] = [:]
        for entry in entries {
            let key: String
            switch entry["key"] {
            case .string(let text)?: key = text
            case .int(let number)?: key = String(number)
            case .bool(let flag)?: key = flag ? "true" : "false"
            default: key = definition?.fields[1].map { defaultValue($0) }.map { Self.keyText($0) } ?? ""
            }
            let value = entry[valueField?.jsonName ?? "value"] ?? valueField.map { defaultValue($0) } ?? .null
            // A repeated key: the last entry wins, as in a parsed map.
            if let index = seen[key] { pairs[index].1 = value } else {
                seen[key] = pairs.count
                pairs.append((key, value))
            }
        }
        return .sortedObject(pairs)
    }

    private static func keyText(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: ""
        }
    }

    /// What proto3 leaves off the wire for a field: its type's zero.
    private func defaultValue(_ field: Field) -> JSONValue {
        switch field.type {
        case 1, 2: .double(0)
        case 3, 4, 6, 16, 18: .string("0")
        case 8: .bool(false)
        case 9, 12: .string("")
        case 11: .object([])
        case 14: field.typeName.flatMap { enums[$0]?[0] }.map(JSONValue.string) ?? .int(0)
        default: .int(0)
        }
    }

    /// The JSON values one wire value holds for `field` (several for a packed repeated field).
    private func values(_ value: ProtoWireReader.Value, field: Field, in type: String, depth: Int,
                        budget: inout Int) throws(ProtoWireError) -> [JSONValue] {
        func mismatch() -> ProtoWireError {
            ProtoWireError("\(type).\(field.name) (\(field.number)) is \(Self.typeNames[field.type] ?? "type \(field.type)") "
                           + "but came as \(Self.wireName(value))")
        }
        switch (field.type, value) {
        case (9, .bytes(let bytes)):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ProtoWireError("\(type).\(field.name) (\(field.number)) is not valid UTF-8")
            }
            return [.string(text)]
        case (12, .bytes(let bytes)):
            return [.string(Data(bytes).base64EncodedString())]
        case (11, .bytes(let bytes)):
            guard let typeName = field.typeName else { throw mismatch() }
            return [try message(bytes, type: typeName, depth: depth + 1, budget: &budget)]
        case (_, .bytes(let bytes)) where field.repeated:
            // A packed repeated scalar.
            let width: Int? = switch field.type {
            case 1, 6, 16: 8
            case 2, 7, 15: 4
            case 3, 4, 5, 8, 13, 14, 17, 18: nil
            default: throw mismatch()
            }
            let raw: [UInt64]
            if let width { raw = try ProtoWireReader.packedFixed(bytes, width: width) } else {
                raw = try ProtoWireReader.packedVarints(bytes)
            }
            budget -= raw.count
            guard budget >= 0 else { throw ProtoWireError("more than \(Self.maxValues) values") }
            var list: [JSONValue] = []
            for number in raw {
                let wire: ProtoWireReader.Value = width == 8 ? .fixed64(number) : width == 4 ? .fixed32(UInt32(number)) : .varint(number)
                list.append(try scalar(wire, field: field, mismatch: mismatch))
            }
            return list
        default:
            return [try scalar(value, field: field, mismatch: mismatch)]
        }
    }

    private func scalar(_ value: ProtoWireReader.Value, field: Field,
                        mismatch: () -> ProtoWireError) throws(ProtoWireError) -> JSONValue {
        switch (field.type, value) {
        case (1, .fixed64(let bits)): return Self.number(Double(bitPattern: bits))
        case (2, .fixed32(let bits)):
            // The float's own shortest spelling (0.1, not 0.10000000149011612), as protobuf writes it.
            let float = Float(bitPattern: bits)
            return Self.number(float.isFinite ? Double(String(describing: float)) ?? Double(float) : Double(float))
        case (3, .varint(let raw)): return .string(String(Int64(bitPattern: raw)))
        case (4, .varint(let raw)): return .string(String(raw))
        case (5, .varint(let raw)): return .int(Int64(Int32(truncatingIfNeeded: raw)))
        case (6, .fixed64(let raw)): return .string(String(raw))
        case (7, .fixed32(let raw)): return .int(Int64(raw))
        case (8, .varint(let raw)): return .bool(raw != 0)
        case (13, .varint(let raw)): return .int(Int64(UInt32(truncatingIfNeeded: raw)))
        case (14, .varint(let raw)):
            let number = Int64(Int32(truncatingIfNeeded: raw))
            return field.typeName.flatMap { enums[$0]?[number] }.map(JSONValue.string) ?? .int(number)
        case (15, .fixed32(let raw)): return .int(Int64(Int32(bitPattern: raw)))
        case (16, .fixed64(let raw)): return .string(String(Int64(bitPattern: raw)))
        case (17, .varint(let raw)): return .int(Int64(Int32(truncatingIfNeeded: Self.unzigzag(raw))))
        case (18, .varint(let raw)): return .string(String(Self.unzigzag(raw)))
        default: throw mismatch()
        }
    }

    private static func unzigzag(_ raw: UInt64) -> Int64 {
        Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A double as proto3 JSON writes it: a number, or "NaN", "Infinity", "-Infinity".
    private static func number(_ value: Double) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .double(value)
    }

    /// A field the schema does not define: its raw value.
    private static func unknown(_ value: ProtoWireReader.Value) -> JSONValue {
        switch value {
        case .varint(let raw): .uint(raw)
        case .fixed64(let raw): .uint(raw)
        case .fixed32(let raw): .uint(UInt64(raw))
        case .bytes(let bytes): .string(Data(bytes).base64EncodedString())
        }
    }

    private static func wireName(_ value: ProtoWireReader.Value) -> String {
        switch value {
        case .varint: "a varint"
        case .fixed64: "a 64-bit value"
        case .fixed32: "a 32-bit value"
        case .bytes: "length-delimited bytes"
        }
    }

    static let typeNames: [Int: String] = [
        1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
        9: "string", 10: "group", 11: "a message", 12: "bytes", 13: "uint32", 14: "an enum", 15: "sfixed32",
        16: "sfixed64", 17: "sint32", 18: "sint64",
    ]
}
