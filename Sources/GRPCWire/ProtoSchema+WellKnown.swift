import Foundation

/// Protobuf's JSON mapping of its well-known types (google/protobuf/*.proto, the "JSON Mapping"
/// table of protobuf.dev/programming-guides/proto3): a `Timestamp` is an RFC 3339 string, a
/// `Duration` seconds with an `s`, a wrapper its bare value, `Struct`, `Value` and `ListValue`
/// plain JSON, a `FieldMask` its paths in lowerCamelCase joined by commas, an `Any` the packed
/// message with its `@type`. Each is built from the type's ordinary decoding (`message`), and a
/// value protobuf would refuse to write (a timestamp outside years 1–9999, a duration past
/// 10,000 years or with mixed signs) keeps that ordinary form.
extension ProtoSchema {
    static let wellKnownPrefix = "google.protobuf."

    /// The well-known types with a JSON form of their own (packed in an `Any`, theirs goes under
    /// `"value"`).
    static let specialJSON: Set<String> = Set(["Any", "Timestamp", "Duration", "DoubleValue", "FloatValue", "Int64Value",
                                               "UInt64Value", "Int32Value", "UInt32Value", "BoolValue", "StringValue",
                                               "BytesValue", "Struct", "ListValue", "Value", "FieldMask"]
                                              .map { wellKnownPrefix + $0 })

    /// The JSON of a well-known type decoded as an ordinary message as `generic`; nil when `type`
    /// is not one (or the value is out of its range).
    static func wellKnown(_ type: String, _ generic: JSONValue) -> JSONValue? {
        guard type.hasPrefix(wellKnownPrefix) else { return nil }
        switch type.dropFirst(wellKnownPrefix.count) {
        case "Timestamp":
            return timestamp(seconds: integer(generic["seconds"]), nanos: integer(generic["nanos"]))
        case "Duration":
            return duration(seconds: integer(generic["seconds"]), nanos: integer(generic["nanos"]))
        case "DoubleValue", "FloatValue": return generic["value"] ?? .double(0)
        case "Int64Value", "UInt64Value": return generic["value"] ?? .string("0")
        case "Int32Value", "UInt32Value": return generic["value"] ?? .int(0)
        case "BoolValue": return generic["value"] ?? .bool(false)
        case "StringValue", "BytesValue": return generic["value"] ?? .string("")
        case "Struct": return generic["fields"] ?? .object([])
        case "ListValue": return generic["values"] ?? .array([])
        case "Value":
            guard case .object(let pairs) = generic, let kind = pairs.first else { return .null }
            return kind.key == "nullValue" ? .null : kind.value
        case "FieldMask":
            guard case .array(let paths)? = generic["paths"] else { return .string("") }
            return .string(paths.compactMap { path -> String? in
                guard case .string(let text) = path else { return nil }
                return lowerCamel(text)
            }.joined(separator: ","))
        default:
            return nil
        }
    }

    private static func integer(_ value: JSONValue?) -> Int64 {
        switch value {
        case .string(let text)?: Int64(text) ?? 0
        default: value?.integer ?? 0
        }
    }

    /// `seconds` since 1970 UTC and `nanos` as RFC 3339 (`2023-11-14T22:13:20.000000005Z`), the
    /// fraction in 3, 6 or 9 digits as protobuf writes it.
    static func timestamp(seconds: Int64, nanos: Int64) -> JSONValue? {
        // 0001-01-01T00:00:00Z through 9999-12-31T23:59:59Z.
        guard (-62_135_596_800...253_402_300_799).contains(seconds), (0..<1_000_000_000).contains(nanos) else { return nil }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return .string("\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):"
                       + "\(two(secondOfDay % 60))\(fraction(nanos))Z")
    }

    /// `3s`, `-1.500s`, `0.000000001s`; nil out of protobuf's range (±315,576,000,000 s, nanos
    /// of the seconds' sign).
    static func duration(seconds: Int64, nanos: Int64) -> JSONValue? {
        guard abs(seconds) <= 315_576_000_000, abs(nanos) < 1_000_000_000,
              seconds == 0 || nanos == 0 || (seconds < 0) == (nanos < 0) else { return nil }
        let negative = seconds < 0 || nanos < 0
        return .string((negative ? "-" : "") + String(abs(seconds)) + fraction(abs(nanos)) + "s")
    }

    /// `.` and the nanoseconds in 3, 6 or 9 digits, the fewest that hold them; empty for none.
    private static func fraction(_ nanos: Int64) -> String {
        guard nanos != 0 else { return "" }
        let digits = String(nanos)
        let nine = String(repeating: "0", count: 9 - digits.count) + digits
        if nanos % 1_000_000 == 0 { return "." + nine.prefix(3) }
        if nanos % 1_000 == 0 { return "." + nine.prefix(6) }
        return "." + nine
    }

    /// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
    /// days-to-civil algorithm, chrono-Compatible Low-Level Date Algorithms).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A field path in lowerCamelCase, as FieldMask's JSON has it (`user.display_name` →
    /// `user.displayName`).
    private static func lowerCamel(_ path: String) -> String {
        var out = ""
        var upper = false
        for character in path {
            if character == "_" {
                upper = true
            } else {
                out.append(upper ? Character(character.uppercased()) : character)
                upper = false
            }
        }
        return out
    }
}
