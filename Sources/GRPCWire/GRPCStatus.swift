import Foundation

/// The `grpc-status` and `grpc-message` of a call (gRPC `doc/statuscodes.md`, PROTOCOL-HTTP2.md).
public enum GRPCStatus {
    /// The canonical names of codes 0 to 16, indexed by code.
    public static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// `NOT_FOUND` for 5; `nil` for a code outside 0...16.
    public static func name(of code: Int) -> String? {
        names.indices.contains(code) ? names[code] : nil
    }

    /// The code a `grpc-status` value holds: ASCII digits only ("1*DIGIT"), surrounding
    /// whitespace allowed; `nil` for anything else or a value too large for an `Int`.
    public static func code(fromHeader value: String) -> Int? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(trimmed)
    }

    /// `text` as a `grpc-message` value: percent-encoded UTF-8 (PROTOCOL-HTTP2.md, "Responses"),
    /// the printable ASCII range other than `%` left as it is. `decodeMessage` undoes it.
    public static func encodeMessage(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "%") {
                result.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// The status a gRPC client reports for a stream reset with the RST_STREAM code `name`
    /// (`INTERNAL_ERROR`), as PROTOCOL-HTTP2.md's "Errors" table maps them: REFUSED_STREAM is
    /// UNAVAILABLE, CANCEL CANCELLED, ENHANCE_YOUR_CALM RESOURCE_EXHAUSTED, INADEQUATE_SECURITY
    /// PERMISSION_DENIED, and every other code INTERNAL.
    public static func code(forReset name: String) -> Int {
        switch name {
        case "REFUSED_STREAM": 14
        case "CANCEL": 1
        case "ENHANCE_YOUR_CALM": 8
        case "INADEQUATE_SECURITY": 7
        default: 13
        }
    }

    /// The seconds a `grpc-timeout` value gives (PROTOCOL-HTTP2.md: `TimeoutValue TimeoutUnit`, at
    /// most 8 ASCII digits, then `H`, `M`, `S`, `m` for milliseconds, `u` or `n`); `nil` for
    /// anything else.
    public static func timeout(fromHeader value: String) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard let unit = trimmed.last, trimmed.count >= 2, trimmed.count <= 9 else { return nil }
        let digits = trimmed.dropLast()
        guard digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let amount = Double(digits) else { return nil }
        let scale: Double
        switch unit {
        case "H": scale = 3600
        case "M": scale = 60
        case "S": scale = 1
        case "m": scale = 1e-3
        case "u": scale = 1e-6
        case "n": scale = 1e-9
        default: return nil
        }
        return amount * scale
    }

    /// A `grpc-message` value, percent-decoded to text.
    ///
    /// PROTOCOL-HTTP2.md: the value is "Percent-Encoded" UTF-8, and "when decoding invalid values,
    /// implementations MUST NOT error or throw away the message ... [they] can decode valid
    /// portions while leaving broken %-encodings as-is". So a `%` not followed by two hex digits
    /// stays as it is, and bytes that are not UTF-8 after decoding become U+FFFD.
    public static func decodeMessage(_ value: String) -> String {
        String(decoding: PercentDecoding.lenient(value.utf8), as: UTF8.self)
    }
}
