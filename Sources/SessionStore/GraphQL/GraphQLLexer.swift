/// The tokens of a GraphQL document (GraphQL spec, "Source Text"), read from its UTF-8 bytes.
///
/// Just enough to find a document's definitions: names and punctuators come out as they are;
/// strings (quoted and block strings), numbers, commas, white space and `#` comments are read
/// past, so the word `mutation` inside a string or a comment is never taken for a keyword.
struct GraphQLLexer {
    /// One token.
    enum Token: Equatable {
        /// A name (`query`, `GetUser`, `on`).
        case name(String)
        /// One of `! $ & ( ) : = @ [ ] { | }`, or `...` (as `.`).
        case punctuator(UInt8)
        /// A string or a number: a value, whatever it says.
        case value
        /// The end of the document.
        case end
        /// Bytes that are no GraphQL token (an unterminated string, a stray character).
        case invalid
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next token; `.end` from then on at the end, `.invalid` where the text stops being GraphQL.
    mutating func next() -> Token {
        skipIgnored()
        guard index < bytes.count else { return .end }
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "]"),
             UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            index += 1
            return .punctuator(byte)
        case UInt8(ascii: "."):
            guard index + 2 < bytes.count, bytes[index + 1] == byte, bytes[index + 2] == byte else { return .invalid }
            index += 3
            return .punctuator(byte)
        case UInt8(ascii: "\""):
            return readString() ? .value : .invalid
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            index += 1
            while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
            return .value
        default:
            guard Self.isNameStart(byte) else { return .invalid }
            let start = index
            while index < bytes.count, Self.isNameStart(bytes[index]) || Self.isDigit(bytes[index]) { index += 1 }
            return .name(String(decoding: bytes[start..<index], as: UTF8.self))
        }
    }

    /// White space, line terminators, commas, a byte order mark and `#` comments (to the line's end).
    private mutating func skipIgnored() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ","):
                index += 1
            case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBB && bytes[index + 2] == 0xBF:
                index += 3
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") {
                    index += 1
                }
            default:
                return
            }
        }
    }

    /// Reads past a `"…"` string (backslash escapes; no line break inside) or a `"""…"""` block
    /// string (`\"""` escaped); false when it does not end.
    private mutating func readString() -> Bool {
        if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\""), bytes[index + 2] == UInt8(ascii: "\"") {
            index += 3
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\\"), index + 3 < bytes.count, bytes[index + 1] == UInt8(ascii: "\""),
                   bytes[index + 2] == UInt8(ascii: "\""), bytes[index + 3] == UInt8(ascii: "\"") {
                    index += 4
                } else if bytes[index] == UInt8(ascii: "\""), index + 2 < bytes.count,
                          bytes[index + 1] == UInt8(ascii: "\""), bytes[index + 2] == UInt8(ascii: "\"") {
                    index += 3
                    return true
                } else {
                    index += 1
                }
            }
            return false
        }
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): return false
            default: index += 1
            }
        }
        return false
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Digits, `.`, an exponent and its sign: what follows a number's first byte.
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "-")
    }
}
