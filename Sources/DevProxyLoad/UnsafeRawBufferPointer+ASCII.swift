import Glibc

/// Byte-level helpers for reading HTTP/1.1 text without building `String`s: RFC 9112 §2.2 parses
/// a message "as a sequence of octets", and every name the load generator looks at is ASCII.
extension UnsafeRawBufferPointer {
    /// Index of the first `byte` at or after `start`, if any.
    func firstIndex(of byte: UInt8, from start: Int) -> Int? {
        guard start < count, let base = baseAddress else { return nil }
        // memchr compares many bytes per instruction; a byte loop costs ~6 instructions a byte.
        guard let found = memchr(base + start, Int32(byte), count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// The bytes from `start` up to (not including) `end`, without copying.
    func bytes(from start: Int, to end: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    /// These bytes without leading and trailing spaces and tabs.
    func trimmingSpacesAndTabs() -> UnsafeRawBufferPointer {
        var start = 0
        var end = count
        while start < end, self[start] == 0x20 || self[start] == 0x09 { start += 1 }
        while end > start, self[end - 1] == 0x20 || self[end - 1] == 0x09 { end -= 1 }
        return bytes(from: start, to: end)
    }

    /// Whether these bytes begin with exactly the bytes of `prefix`.
    func starts(with prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard count >= length else { return false }
        let expected = prefix.utf8Start
        for offset in 0..<length where self[offset] != expected[offset] { return false }
        return true
    }

    /// Whether these bytes are exactly the bytes of `literal`.
    func equals(_ literal: StaticString) -> Bool {
        count == literal.utf8CodeUnitCount && starts(with: literal)
    }

    /// Whether these bytes equal `lowercase` (an all-lowercase ASCII literal), ignoring ASCII case.
    func equalsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
        guard count == lowercase.utf8CodeUnitCount else { return false }
        return matchesIgnoringASCIICase(lowercase, at: 0)
    }

    /// Whether `lowercase` (an all-lowercase ASCII literal) occurs anywhere in these bytes, ignoring ASCII case.
    func containsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
        let length = lowercase.utf8CodeUnitCount
        guard length <= count else { return false }
        for start in 0...(count - length) where matchesIgnoringASCIICase(lowercase, at: start) { return true }
        return false
    }

    /// The value of these bytes as an unsigned integer, read the way `UInt64(_:radix:)` reads a
    /// string: an optional `+` (or `-` before a zero value), then at least one digit, no overflow.
    /// - Parameter radix: 10 or 16 (hex digits in either case).
    func unsignedInteger(radix: UInt64) -> UInt64? {
        var index = 0
        var negative = false
        if index < count, self[index] == 0x2B || self[index] == 0x2D {
            negative = self[index] == 0x2D
            index += 1
        }
        guard index < count else { return nil }
        var value: UInt64 = 0
        while index < count {
            guard let digit = Self.digitValue(self[index]), digit < radix else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: radix)
            let (sum, overflowB) = shifted.addingReportingOverflow(digit)
            guard !overflowA, !overflowB else { return nil }
            value = sum
            index += 1
        }
        // UInt64("-0") is 0; any other negative value does not fit.
        return negative && value != 0 ? nil : value
    }

    /// Whether the bytes at `start` equal `lowercase`, ignoring ASCII case; the caller checked the length.
    private func matchesIgnoringASCIICase(_ lowercase: StaticString, at start: Int) -> Bool {
        let expected = lowercase.utf8Start
        for offset in 0..<lowercase.utf8CodeUnitCount {
            var byte = self[start + offset]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }  // A-Z → a-z; other bytes as they are
            if byte != expected[offset] { return false }
        }
        return true
    }

    /// The value of an ASCII digit `0-9`, `a-z` or `A-Z` (up to 35), or nil.
    private static func digitValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case 0x30...0x39: return UInt64(byte - 0x30)
        case 0x41...0x5A: return UInt64(byte - 0x41 + 10)
        case 0x61...0x7A: return UInt64(byte - 0x61 + 10)
        default: return nil
        }
    }
}
