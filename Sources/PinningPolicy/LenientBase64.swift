import Foundation

/// The forgiving base64 decoders Android and OkHttp use for pins.
enum LenientBase64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `android.util.Base64.decode(text, DEFAULT)`, its decoder's state machine: a byte that is
    /// neither in the alphabet nor `=` is skipped anywhere; padding is optional, but when present
    /// it must be complete (`xx==`, `xxx=`) and nothing but skipped bytes may follow it, so `…==`
    /// after three characters, or two pins pasted into one `<pin>`, is an error ("bad base-64"),
    /// as are `=` before the second character of a quad and a lone trailing sextet.
    static func android(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                // One `=` after two characters of a quad needs a second; one after three ends it.
                switch (values.count % 4, padding) {
                case (2, 0), (2, 1), (3, 0): padding += 1
                default: return nil
                }
            } else if let value = standard.firstIndex(of: byte) {
                guard padding == 0 else { return nil }
                values.append(UInt8(value))
            }
        }
        if values.count % 4 == 2, padding == 1 { return nil }
        return decode(values)
    }

    /// Okio `String.decodeBase64()`: trailing `=` and whitespace dropped, both the standard and
    /// URL-safe alphabets, whitespace inside skipped, anything else makes it nil.
    static func okio(_ text: String) -> [UInt8]? {
        var bytes = Array(text.utf8)
        while let last = bytes.last, last == UInt8(ascii: "=") || last == 0x20 || last == 0x0a || last == 0x0d
                || last == 0x09 {
            bytes.removeLast()
        }
        var values: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            case 0x20, 0x0a, 0x0d, 0x09: continue
            default:
                guard let value = standard.firstIndex(of: byte) else { return nil }
                values.append(UInt8(value))
            }
        }
        return decode(values)
    }

    /// Packs 6-bit values into bytes; nil when one value is left over (not a whole byte).
    private static func decode(_ values: [UInt8]) -> [UInt8]? {
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for value in values {
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((accumulator >> UInt32(bits)) & 0xff))
            }
        }
        return out
    }
}
