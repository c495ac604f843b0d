import Foundation

/// A JSON file a person wrote (a config file, a policy, a signature scheme), parsed with a reason
/// a person can act on when it is not an object: where the syntax breaks, by line and column,
/// rather than Foundation's `Error Domain=NSCocoaErrorDomain Code=3840 … around character 36`.
public enum JSONDocument {
    /// The top-level object of `bytes`.
    /// - Throws: `Problem`, whose `reason` reads on after "FILE is " or "FILE: " (`not valid JSON
    ///   (line 3, column 5: invalid value)`, `empty`, `a JSON array, not an object`).
    public static func object(_ bytes: [UInt8]) throws(Problem) -> [String: Any] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            throw Problem(reason: "empty, not a JSON object")
        }
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw Problem(reason: "not valid JSON (\(location(of: error, in: bytes)))")
        }
        try strictCheck(bytes)
        guard let object = value as? [String: Any] else {
            let kind = value is [Any] ? "a JSON array" : value is String ? "a JSON string" : value is NSNull ? "JSON null"
                : "a JSON number or boolean"
            throw Problem(reason: "\(kind), not an object")
        }
        return object
    }

    /// What Foundation's parser lets through and RFC 8259 does not, refused with where it is: a
    /// comma before `}` or `]`, and a key given twice in one object (one of the two values was
    /// dropped without a word: a config file's `"listen"` written twice).
    private static func strictCheck(_ bytes: [UInt8]) throws(Problem) {
        // Per open container: whether it is an object, the keys seen, where the last comma was.
        var stack: [(object: Bool, keys: Set<[UInt8]>, comma: Int?)] = []
        var index = 0
        var expectingKey = false
        func position(_ offset: Int) -> String {
            var line = 1, lineStart = 0
            for (at, byte) in bytes.prefix(offset).enumerated() where byte == 0x0A {
                line += 1
                lineStart = at + 1
            }
            return "line \(line), column \(String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1)"
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                if expectingKey, !stack.isEmpty, stack[stack.count - 1].object {
                    let key = Array(bytes[(start + 1)..<min(index, bytes.count)])
                    if !stack[stack.count - 1].keys.insert(key).inserted {
                        throw Problem(reason: "not valid JSON (\(position(start)): the key \(String(decoding: key, as: UTF8.self)) "
                                      + "is given twice in one object)")
                    }
                }
                expectingKey = false
                if !stack.isEmpty { stack[stack.count - 1].comma = nil }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if !stack.isEmpty { stack[stack.count - 1].comma = nil }
                stack.append((byte == UInt8(ascii: "{"), [], nil))
                expectingKey = byte == UInt8(ascii: "{")
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let comma = stack.last?.comma {
                    throw Problem(reason: "not valid JSON (\(position(comma)): a comma before the \(byte == UInt8(ascii: "}") ? "}" : "]") "
                                  + "that closes it)")
                }
                if !stack.isEmpty { stack.removeLast() }
                if !stack.isEmpty { stack[stack.count - 1].comma = nil }
                expectingKey = false
            case UInt8(ascii: ","):
                if !stack.isEmpty {
                    stack[stack.count - 1].comma = index
                    expectingKey = stack[stack.count - 1].object
                }
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ":"):
                break
            default:
                if !stack.isEmpty { stack[stack.count - 1].comma = nil }
            }
            index += 1
        }
    }

    /// Whether a value JSONSerialization gave is `true` or `false` (an `NSNumber` of type `c`),
    /// which `as? Bool` cannot tell from the numbers 0 and 1.
    public static func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    public struct Problem: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// "line L, column C: what" from Foundation's "… around character N." (N counts bytes from 0),
    /// else Foundation's own words without its error domain.
    private static func location(of error: Error, in bytes: [UInt8]) -> String {
        let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)")
            .trimmingCharacters(in: CharacterSet(charactersIn: ". "))
        if detail.hasPrefix("Unexpected end of file") { return "it ends before the JSON does" }
        guard let range = detail.range(of: " around character "),
              let offset = Int(detail[range.upperBound...].prefix(while: \.isNumber)) else {
            return detail.prefix(1).lowercased() + detail.dropFirst()
        }
        var line = 1
        var lineStart = 0
        for (index, byte) in bytes.prefix(offset).enumerated() where byte == 0x0A {
            line += 1
            lineStart = index + 1
        }
        // Columns count characters, so a line with accented names points at the right place.
        let column = String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1
        let what = String(detail[..<range.lowerBound])
        return "line \(line), column \(column): \(what.prefix(1).lowercased() + what.dropFirst())"
    }
}
