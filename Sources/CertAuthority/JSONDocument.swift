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
        guard let object = value as? [String: Any] else {
            let kind = value is [Any] ? "a JSON array" : value is String ? "a JSON string" : value is NSNull ? "JSON null"
                : "a JSON number or boolean"
            throw Problem(reason: "\(kind), not an object")
        }
        return object
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
