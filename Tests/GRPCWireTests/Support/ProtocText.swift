import GRPCWire

/// A raw decoding written the way `protoc --decode_raw` prints one, so the two can be compared
/// line by line: `N: value`, `N {` … `}` for messages and groups, fixed values as 0x hex, and
/// strings and bytes alike C-escaped in quotes (protoc does not tell them apart).
enum ProtocText {
    static func render(_ message: ProtobufRawMessage, indent: String = "") -> String {
        var text = ""
        for field in message.fields {
            switch field.value {
            case .varint(let value): text += "\(indent)\(field.number): \(value)\n"
            case .fixed64(let value): text += "\(indent)\(field.number): 0x\(hex(value, digits: 16))\n"
            case .fixed32(let value): text += "\(indent)\(field.number): 0x\(hex(UInt64(value), digits: 8))\n"
            case .message(let nested), .group(let nested):
                text += "\(indent)\(field.number) {\n" + render(nested, indent: indent + "  ") + "\(indent)}\n"
            case .string(let string): text += "\(indent)\(field.number): \"\(escape(Array(string.utf8)))\"\n"
            case .bytes(let bytes): text += "\(indent)\(field.number): \"\(escape(bytes))\"\n"
            }
        }
        return text
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// protobuf's CEscape: named escapes for \n \r \t " ' \, octal for other bytes outside 0x20...0x7E.
    private static func escape(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case 0x0A: text += "\\n"
            case 0x0D: text += "\\r"
            case 0x09: text += "\\t"
            case 0x22: text += "\\\""
            case 0x27: text += "\\'"
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let octal = String(byte, radix: 8)
                text += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return text
    }
}
