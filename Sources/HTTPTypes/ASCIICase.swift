/// ASCII case-insensitive comparison of field names and tokens (RFC 9110 §5.1: "Field names are
/// case-insensitive"), on the UTF-8 bytes: no lower-cased copies, no grapheme breaking.
enum ASCIICase {
    /// Whether `a` and `b` are the same string, ignoring the case of ASCII letters.
    static func equal(_ a: String, _ b: String) -> Bool {
        // Native strings know their UTF-8 length without a scan, and most names asked about
        // differ in length.
        guard a.utf8.count == b.utf8.count else { return false }
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { lhs in
            b.utf8.withContiguousStorageIfAvailable { rhs in equal(lhs, rhs) }
        }
        if let fast = fast ?? nil { return fast }
        return a.utf8.elementsEqual(b.utf8, by: equal)
    }

    /// Whether two byte strings are equal, ignoring the case of ASCII letters.
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for index in 0..<a.count where !equal(a[index], b[index]) { return false }
        return true
    }

    /// Whether two bytes are equal, or the same ASCII letter in either case.
    @inline(__always)
    static func equal(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
    }

    /// Whether `byte` is optional whitespace (SP or HTAB, RFC 9110 §5.6.3).
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }
}
