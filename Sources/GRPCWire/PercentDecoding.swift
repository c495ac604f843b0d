/// Percent-decoding (RFC 3986 §2.1), shared by what reads escaped text: `grpc-message` values,
/// Connect GET queries, form bodies and RFC 8187 parameters.
public enum PercentDecoding {
    /// `bytes` with each `%XX` turned into its byte, and with `plusIsSpace` each `+` into a space
    /// (the form encoding); a `%` not followed by two hex digits stays as it is, as the WHATWG URL
    /// Standard's form parser and gRPC's `grpc-message` rules both want.
    public static func lenient(_ bytes: some Collection<UInt8>, plusIsSpace: Bool = false) -> [UInt8] {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count,
               let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                out.append(high << 4 | low)
                index += 3
                continue
            }
            out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return out
    }

    /// The value of one hex digit; nil for any other byte.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
