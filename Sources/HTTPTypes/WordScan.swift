/// Bytes looked at eight at a time (SWAR): whether any byte of a buffer is one a parser or writer
/// must stop at. Field lines and flow-record strings are checked on every message; nearly all of
/// them pass, so the common case costs a few instructions per eight bytes.
///
/// The tests on a word are the classic "has a zero byte" / "has a byte less than n" identities
/// (valid for n ≤ 128): exact as a yes-or-no answer for the word, not for which byte it was.
public enum WordScan {
    public static let ones: UInt64 = 0x0101_0101_0101_0101
    public static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is less than `limit` (at most 128).
    @inlinable
    public static func hasByte(below limit: UInt8, in word: UInt64) -> Bool {
        (word &- ones &* UInt64(limit)) & ~word & highs != 0
    }

    /// Whether some byte of `word` is `byte`.
    @inlinable
    public static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
        let zeroWhereEqual = word ^ (ones &* UInt64(byte))
        return (zeroWhereEqual &- ones) & ~zeroWhereEqual & highs != 0
    }

    /// Whether some byte of `word` has its high bit set (is past ASCII).
    @inlinable
    public static func hasNonASCII(in word: UInt64) -> Bool { word & highs != 0 }

    /// Whether any eight-byte word of `bytes` makes `word` true, or any byte of the last
    /// `count % 8` makes `byte` true. The two tests must agree on what they look for.
    @inlinable
    public static func any(_ bytes: UnsafeBufferPointer<UInt8>, word: (UInt64) -> Bool,
                           byte: (UInt8) -> Bool) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        var offset = 0
        while offset + 8 <= bytes.count {
            if word(UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)) { return true }
            offset += 8
        }
        // The last few bytes of a buffer of eight or more: one word ending at its end (the
        // bytes it shares with the word before are looked at again, which cannot change a yes).
        if offset < bytes.count && bytes.count >= 8 {
            return word(UnsafeRawPointer(base + bytes.count - 8).loadUnaligned(as: UInt64.self))
        }
        while offset < bytes.count {
            if byte(base[offset]) { return true }
            offset += 1
        }
        return false
    }
}
