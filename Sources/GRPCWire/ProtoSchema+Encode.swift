import Foundation

/// The way back from `decode`: a message given as protobuf's JSON mapping (what the web UI shows
/// and lets you edit) written as protobuf bytes, for a gRPC call resent with edited messages.
/// It takes what `decode` writes and what protobuf's own JSON parser takes: `json_name` or the
/// field's proto name as keys, 64-bit integers as strings or numbers, enums by name or number,
/// bytes as base64 (standard or URL-safe), maps as objects, `null` for a field left out, and the
/// well-known types in their JSON forms. Repeated scalars are packed, as proto3 writes them.
extension ProtoSchema {
    /// `json` written as the message `type`.
    /// - Throws: `ProtoWireError` naming the field and why, for a key the type does not define or
    ///   a value its field cannot take.
    public func encode(_ json: JSONValue, as type: String) throws(ProtoWireError) -> [UInt8] {
        var writer = ProtoWireWriter()
        try message(json, type: type, depth: 0, into: &writer)
        return writer.bytes
    }

    private func message(_ json: JSONValue, type: String, depth: Int, into writer: inout ProtoWireWriter) throws(ProtoWireError) {
        guard depth < Self.maxDepth else { throw ProtoWireError("nested more than \(Self.maxDepth) messages deep") }
        if try wellKnown(json, type: type, depth: depth, into: &writer) { return }
        guard let definition = messages[type] else { throw ProtoWireError("the schema has no message \(type)") }
        guard case .object(let pairs) = json else { throw ProtoWireError("\(type) must be a JSON object, not \(Self.kind(json))") }
        for (key, value) in pairs {
            guard let field = definition.fields.values.first(where: { $0.jsonName == key || $0.name == key }) else {
                throw ProtoWireError("\(type) has no field \"\(key)\"")
            }
            if case .null = value, field.typeName != "google.protobuf.Value" { continue }
            try self.field(value, field: field, in: type, depth: depth, into: &writer)
        }
    }

    private func field(_ value: JSONValue, field: Field, in type: String, depth: Int,
                       into writer: inout ProtoWireWriter) throws(ProtoWireError) {
        let name = "\(type).\(field.jsonName)"
        if field.repeated, let entry = field.typeName, let map = messages[entry], map.isMapEntry {
            guard case .object(let entries) = value else { throw ProtoWireError("\(name) is a map: give a JSON object") }
            guard let keyField = map.fields[1], let valueField = map.fields[2] else {
                throw ProtoWireError("\(entry) is not a map entry the schema describes whole")
            }
            for (key, item) in entries {
                var inner = ProtoWireWriter()
                try single(Self.mapKey(key, type: keyField.type), field: keyField, name: name + " key", depth: depth, into: &inner)
                try single(item, field: valueField, name: "\(name)[\"\(key)\"]", depth: depth, into: &inner)
                writer.lengthDelimited(field.number, inner.bytes)
            }
            return
        }
        guard field.repeated else {
            try single(value, field: field, name: name, depth: depth, into: &writer)
            return
        }
        guard case .array(let items) = value else { throw ProtoWireError("\(name) is repeated: give a JSON array") }
        if Self.packable.contains(field.type) {
            var packed = ProtoWireWriter()
            for (index, item) in items.enumerated() {
                try scalar(item, field: field, name: "\(name)[\(index)]", into: &packed, tagged: false)
            }
            if !items.isEmpty { writer.lengthDelimited(field.number, packed.bytes) }
        } else {
            for (index, item) in items.enumerated() {
                try single(item, field: field, name: "\(name)[\(index)]", depth: depth, into: &writer)
            }
        }
    }

    /// Types that proto3 packs when repeated: every scalar but strings and bytes.
    private static let packable: Set<Int> = [1, 2, 3, 4, 5, 6, 7, 8, 13, 14, 15, 16, 17, 18]

    private func single(_ value: JSONValue, field: Field, name: String, depth: Int,
                        into writer: inout ProtoWireWriter) throws(ProtoWireError) {
        switch field.type {
        case 11:
            guard let typeName = field.typeName else { throw ProtoWireError("\(name) names no message type") }
            var inner = ProtoWireWriter()
            try message(value, type: typeName, depth: depth + 1, into: &inner)
            writer.lengthDelimited(field.number, inner.bytes)
        case 9:
            guard case .string(let text) = value else { throw ProtoWireError("\(name) is a string, not \(Self.kind(value))") }
            writer.lengthDelimited(field.number, Array(text.utf8))
        case 12:
            guard case .string(let text) = value, let bytes = Self.base64(text) else {
                throw ProtoWireError("\(name) is bytes: give them as base64")
            }
            writer.lengthDelimited(field.number, bytes)
        default:
            try scalar(value, field: field, name: name, into: &writer, tagged: true)
        }
    }

    /// A number, bool or enum; with `tagged`, its field's key first (else one element of a packed run).
    private func scalar(_ value: JSONValue, field: Field, name: String, into writer: inout ProtoWireWriter,
                        tagged: Bool) throws(ProtoWireError) {
        func wrong(_ what: String) -> ProtoWireError { ProtoWireError("\(name) is \(what), not \(Self.kind(value)) \(Self.text(value))") }
        switch field.type {
        case 1, 2:
            guard let number = Self.double(value) else { throw wrong(field.type == 1 ? "a double" : "a float") }
            if field.type == 1 {
                if tagged { writer.key(field.number, wire: 1) }
                writer.fixed64(number.bitPattern)
            } else {
                if tagged { writer.key(field.number, wire: 5) }
                writer.fixed32(Float(number).bitPattern)
            }
        case 8:
            guard case .bool(let flag) = value else { throw wrong("a bool") }
            if tagged { writer.key(field.number, wire: 0) }
            writer.varint(flag ? 1 : 0)
        case 14:
            let number: Int64
            if case .string(let label) = value {
                guard let found = field.typeName.flatMap({ enums[$0] })?.first(where: { $0.value == label })?.key else {
                    throw ProtoWireError("\(name): \(field.typeName ?? "the enum") has no value \(label)")
                }
                number = found
            } else if let integer = value.integer, Int32(exactly: integer) != nil {
                number = integer
            } else {
                throw wrong("an enum (a name or a number)")
            }
            if tagged { writer.key(field.number, wire: 0) }
            writer.varint(UInt64(bitPattern: number))
        case 3, 5, 15, 16, 17, 18:
            let bits = field.type == 5 || field.type == 15 || field.type == 17 ? 32 : 64
            guard let number = Self.signed(value), bits == 64 || Int32(exactly: number) != nil else {
                throw wrong(Self.typeNames[field.type] ?? "an integer")
            }
            switch field.type {
            case 15:
                if tagged { writer.key(field.number, wire: 5) }
                writer.fixed32(UInt32(bitPattern: Int32(number)))
            case 16:
                if tagged { writer.key(field.number, wire: 1) }
                writer.fixed64(UInt64(bitPattern: number))
            case 17, 18:
                if tagged { writer.key(field.number, wire: 0) }
                writer.varint(UInt64(bitPattern: (number << 1) ^ (number >> 63)))
            default:
                if tagged { writer.key(field.number, wire: 0) }
                writer.varint(UInt64(bitPattern: number))
            }
        case 4, 6, 7, 13:
            let bits = field.type == 7 || field.type == 13 ? 32 : 64
            guard let number = Self.unsigned(value), bits == 64 || UInt32(exactly: number) != nil else {
                throw wrong(Self.typeNames[field.type] ?? "an unsigned integer")
            }
            switch field.type {
            case 6:
                if tagged { writer.key(field.number, wire: 1) }
                writer.fixed64(number)
            case 7:
                if tagged { writer.key(field.number, wire: 5) }
                writer.fixed32(UInt32(number))
            default:
                if tagged { writer.key(field.number, wire: 0) }
                writer.varint(number)
            }
        default:
            throw ProtoWireError("\(name) has type \(field.type), which this encoder does not write")
        }
    }

    // MARK: - Well-known types

    /// A well-known type from its JSON form (`ProtoSchema+WellKnown.swift` writes them), written
    /// by hand so that a schema without google/protobuf's files still takes them; false when
    /// `type` is not one.
    private func wellKnown(_ json: JSONValue, type: String, depth: Int,
                           into writer: inout ProtoWireWriter) throws(ProtoWireError) -> Bool {
        guard type.hasPrefix(Self.wellKnownPrefix) else { return false }
        let name = String(type.dropFirst(Self.wellKnownPrefix.count))
        func scalarField(_ fieldType: Int) throws(ProtoWireError) {
            let field = Field(name: "value", jsonName: "value", number: 1, type: fieldType, typeName: nil, repeated: false)
            try single(json, field: field, name: type, depth: depth, into: &writer)
        }
        switch name {
        case "Timestamp":
            guard case .string(let text) = json, let (seconds, nanos) = Self.parseTimestamp(text) else {
                throw ProtoWireError("\(type) is an RFC 3339 time (2024-05-01T12:00:00Z), not \(Self.kind(json)) \(Self.text(json))")
            }
            Self.secondsAndNanos(seconds, nanos, into: &writer)
        case "Duration":
            guard case .string(let text) = json, let (seconds, nanos) = Self.parseDuration(text) else {
                throw ProtoWireError("\(type) is seconds with an s (\"1.5s\"), not \(Self.kind(json)) \(Self.text(json))")
            }
            Self.secondsAndNanos(seconds, nanos, into: &writer)
        case "DoubleValue": try scalarField(1)
        case "FloatValue": try scalarField(2)
        case "Int64Value": try scalarField(3)
        case "UInt64Value": try scalarField(4)
        case "Int32Value": try scalarField(5)
        case "UInt32Value": try scalarField(13)
        case "BoolValue": try scalarField(8)
        case "StringValue": try scalarField(9)
        case "BytesValue": try scalarField(12)
        case "FieldMask":
            guard case .string(let text) = json else { throw ProtoWireError("\(type) is a string of paths, not \(Self.kind(json))") }
            for path in text.split(separator: ",") where !path.isEmpty {
                writer.lengthDelimited(1, Array(Self.snakeCase(String(path)).utf8))
            }
        case "Struct":
            guard case .object(let pairs) = json else { throw ProtoWireError("\(type) must be a JSON object") }
            for (key, value) in pairs {
                var entry = ProtoWireWriter()
                entry.lengthDelimited(1, Array(key.utf8))
                var inner = ProtoWireWriter()
                _ = try wellKnown(value, type: Self.wellKnownPrefix + "Value", depth: depth + 1, into: &inner)
                entry.lengthDelimited(2, inner.bytes)
                writer.lengthDelimited(1, entry.bytes)
            }
        case "ListValue":
            guard case .array(let items) = json else { throw ProtoWireError("\(type) must be a JSON array") }
            for item in items {
                var inner = ProtoWireWriter()
                _ = try wellKnown(item, type: Self.wellKnownPrefix + "Value", depth: depth + 1, into: &inner)
                writer.lengthDelimited(1, inner.bytes)
            }
        case "Value":
            guard depth < Self.maxDepth else { throw ProtoWireError("nested more than \(Self.maxDepth) values deep") }
            switch json {
            case .null:
                writer.key(1, wire: 0)
                writer.varint(0)
            case .int, .uint, .double:
                writer.key(2, wire: 1)
                writer.fixed64((json.number ?? 0).bitPattern)
            case .string(let text): writer.lengthDelimited(3, Array(text.utf8))
            case .bool(let flag):
                writer.key(4, wire: 0)
                writer.varint(flag ? 1 : 0)
            case .object:
                var inner = ProtoWireWriter()
                _ = try wellKnown(json, type: Self.wellKnownPrefix + "Struct", depth: depth + 1, into: &inner)
                writer.lengthDelimited(5, inner.bytes)
            case .array:
                var inner = ProtoWireWriter()
                _ = try wellKnown(json, type: Self.wellKnownPrefix + "ListValue", depth: depth + 1, into: &inner)
                writer.lengthDelimited(6, inner.bytes)
            }
        case "Any":
            guard case .object(let pairs) = json else { throw ProtoWireError("\(type) must be a JSON object with \"@type\"") }
            guard let url = pairs.first(where: { $0.key == "@type" }).flatMap({ pair -> String? in
                if case .string(let text) = pair.value { return text } else { return nil }
            }) else { throw ProtoWireError("\(type) needs \"@type\" naming the packed message") }
            let packedType = String(url.split(separator: "/").last ?? "")
            let rest = pairs.filter { $0.key != "@type" }
            let packed = Self.specialJSON.contains(packedType) ? (rest.first { $0.key == "value" }?.value ?? .null) : .object(rest)
            writer.lengthDelimited(1, Array(url.utf8))
            writer.lengthDelimited(2, try encodeNested(packed, as: packedType, depth: depth + 1))
        default:
            return false
        }
        return true
    }

    private func encodeNested(_ json: JSONValue, as type: String, depth: Int) throws(ProtoWireError) -> [UInt8] {
        var inner = ProtoWireWriter()
        try message(json, type: type, depth: depth, into: &inner)
        return inner.bytes
    }

    private static func secondsAndNanos(_ seconds: Int64, _ nanos: Int32, into writer: inout ProtoWireWriter) {
        if seconds != 0 {
            writer.key(1, wire: 0)
            writer.varint(UInt64(bitPattern: seconds))
        }
        if nanos != 0 {
            writer.key(2, wire: 0)
            writer.varint(UInt64(bitPattern: Int64(nanos)))
        }
    }

    /// `2024-05-01T12:00:00.5Z` or with an offset (`+02:00`) as seconds since 1970 and nanos.
    static func parseTimestamp(_ text: String) -> (Int64, Int32)? {
        let pattern = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/
        guard let match = text.wholeMatch(of: pattern), let year = Int64(match.1), let month = Int64(match.2),
              let day = Int64(match.3), let hour = Int64(match.4), let minute = Int64(match.5), let second = Int64(match.6),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        if let sign = match.9, let offsetHours = Int64(match.10 ?? ""), let offsetMinutes = Int64(match.11 ?? "") {
            seconds -= (sign == "-" ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
        }
        let digits = match.7.map(String.init) ?? ""
        let nanos = Int32(digits + String(repeating: "0", count: 9 - digits.count)) ?? 0
        return (seconds, nanos)
    }

    /// `1.5s`, `-0.000000001s` as seconds and nanos of the same sign.
    static func parseDuration(_ text: String) -> (Int64, Int32)? {
        guard let match = text.wholeMatch(of: /^(-)?(\d+)(?:\.(\d{1,9}))?s$/), let whole = Int64(match.2) else { return nil }
        let digits = match.3.map(String.init) ?? ""
        let nanos = Int32(digits + String(repeating: "0", count: 9 - digits.count)) ?? 0
        return match.1 == nil ? (whole, nanos) : (-whole, -nanos)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days-from-civil, the
    /// inverse of the `civil(fromDays:)` the decoding uses).
    private static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `user.displayName` → `user.display_name`, as FieldMask's JSON form comes back to its paths.
    private static func snakeCase(_ path: String) -> String {
        var out = ""
        for character in path {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    // MARK: - JSON values

    private static func signed(_ value: JSONValue) -> Int64? {
        switch value {
        case .string(let text): Int64(text)
        default: value.integer
        }
    }

    private static func unsigned(_ value: JSONValue) -> UInt64? {
        switch value {
        case .string(let text): UInt64(text)
        case .uint(let number): number
        case .int(let number): UInt64(exactly: number)
        case .double(let number): UInt64(exactly: number)
        default: nil
        }
    }

    private static func double(_ value: JSONValue) -> Double? {
        switch value {
        case .string("NaN"): .nan
        case .string("Infinity"): .infinity
        case .string("-Infinity"): -.infinity
        case .string(let text): Double(text)
        default: value.number
        }
    }

    /// Standard or URL-safe base64, padded or not, as protobuf's parser takes it.
    private static func base64(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }

    /// A map key, always a JSON string, as its key field's type.
    private static func mapKey(_ key: String, type: Int) -> JSONValue {
        switch type {
        case 8: key == "true" ? .bool(true) : key == "false" ? .bool(false) : .string(key)
        case 9: .string(key)
        default: .string(key)   // integers: `signed`/`unsigned` read them from the string
        }
    }

    private static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a bool"
        case .int, .uint, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text.prefix(40))\""
        case .int(let number): String(number)
        case .uint(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        default: ""
        }
    }
}
