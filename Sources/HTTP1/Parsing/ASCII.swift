import HTTPTypes

/// Byte constants and character classes from RFC 9110 §5.6 and RFC 9112 that the parsers test against.
enum ASCII {
    static let nul: UInt8 = 0x00
    static let htab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let minus: UInt8 = 0x2D
    static let del: UInt8 = 0x7F

    /// `tchar` from RFC 9110 §5.6.2 (the characters a token — method, field name, coding — may
    /// hold) as a bit set over bytes 0–127: bit n of `tokenLow` is byte n, of `tokenHigh` byte 64 + n.
    /// Digits and `!#$%&'*+-.^` in the low half; letters and `_`, backquote, `|`, `~` in the high.
    private static let tokenLow: UInt64 = 0x03FF_6CFA_0000_0000
    private static let tokenHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    /// Whether `byte` is a `tchar` (RFC 9110 §5.6.2).
    @inline(__always)
    static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<64: return tokenLow & (1 << UInt64(byte)) != 0
        case 64..<128: return tokenHigh & (1 << UInt64(byte - 64)) != 0
        default: return false
        }
    }

    /// Whether every byte of `bytes` is a `tchar` and there is at least one.
    static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenChar)
    }

    /// Whether `byte` is optional whitespace, `OWS = *( SP / HTAB )` (RFC 9110 §5.6.3).
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == htab
    }

    /// Whether `byte` is a control character other than HTAB: never valid in a field value or reason phrase.
    @inline(__always)
    static func isForbiddenControl(_ byte: UInt8) -> Bool {
        (byte < space && byte != htab) || byte == del
    }

    /// Whether `byte` is an ASCII decimal digit.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// The value of a hexadecimal digit, or nil when `byte` is not one.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// `bytes` without leading and trailing SP/HTAB.
    static func trimmingWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, isWhitespace(first) { slice.removeFirst() }
        while let last = slice.last, isWhitespace(last) { slice.removeLast() }
        return slice
    }

    /// Decodes field-value or reason-phrase bytes: UTF-8 when valid, otherwise as `ObsText`, whose
    /// serializing gives back the same bytes.
    ///
    /// RFC 9110 §5.5 calls non-ASCII octets `obs-text` with no defined charset. UTF-8 covers what
    /// real servers send; the ISO-8859-1 fallback keeps every other byte visible rather than
    /// replacing it with U+FFFD.
    static func decodeText(_ bytes: ArraySlice<UInt8>) -> String {
        // Nearly every value is ASCII, which is valid UTF-8 as it stands.
        var index = bytes.startIndex
        while index < bytes.endIndex && bytes[index] < 0x80 { index += 1 }
        if index == bytes.endIndex {
            return String(decoding: bytes, as: UTF8.self)
        }
        // Not UTF-8: its bytes kept as they came (`ObsText`), where Latin-1 left as UTF-8.
        return ObsText.string(bytes)
    }

    /// A byte as `0xNN`, for error reasons.
    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }
}

extension String {
    /// Whether two strings are equal ignoring ASCII case, without allocating lowercased copies.
    public func equalsCaseInsensitive(_ other: String) -> Bool {
        // Header lookups call this for every field of every message: compare the UTF-8 storage
        // directly (native and small strings have it) rather than through two index iterators.
        // Most names asked about differ in length, which native strings know without a scan.
        guard utf8.count == other.utf8.count else { return false }
        let fast: Bool?? = utf8.withContiguousStorageIfAvailable { lhs in
            other.utf8.withContiguousStorageIfAvailable { rhs in ASCII.equalsCaseInsensitive(lhs, rhs) }
        }
        if let fast = fast ?? nil { return fast }
        return utf8.equalsCaseInsensitive(other.utf8)
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes spell `other`, ignoring the case of ASCII letters: a name found in
    /// place in a larger buffer (a URL's host), compared without making it a String.
    public func equalsCaseInsensitive(_ other: String) -> Bool {
        other.withUTF8Bytes { ASCII.equalsCaseInsensitive(self, $0) }
    }
}

extension String {
    /// Calls `body` with the string's UTF-8 bytes: in place for a native or small string (no copy,
    /// no reference count taken, unlike `var copy = self; copy.withUTF8`), through a copy otherwise.
    @inlinable @inline(__always)
    public func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}

extension Collection<UInt8> {
    /// Whether these bytes and `other` are the same, ignoring the case of ASCII letters.
    func equalsCaseInsensitive(_ other: some Collection<UInt8>) -> Bool {
        count == other.count && zip(self, other).allSatisfy(ASCII.equalIgnoringCase)
    }
}

extension ASCII {
    /// Whether two byte strings are equal, ignoring the case of ASCII letters.
    @inline(__always)
    static func equalsCaseInsensitive(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for index in 0..<a.count where !equalIgnoringCase(a[index], b[index]) { return false }
        return true
    }

    /// Whether `bytes` spell `known` (a literal name or token), ignoring the case of ASCII letters.
    @inline(__always)
    static func equalsCaseInsensitive(_ bytes: UnsafeBufferPointer<UInt8>, _ known: StaticString) -> Bool {
        known.withUTF8Buffer { equalsCaseInsensitive(bytes, $0) }
    }

    /// Whether two bytes are equal, or the same ASCII letter in either case.
    @inline(__always)
    static func equalIgnoringCase(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
    }
}
