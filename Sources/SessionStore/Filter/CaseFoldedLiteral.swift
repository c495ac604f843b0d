import Foundation

/// ASCII text searched for in bytes, ignoring ASCII case, where some positions may be wildcards
/// (a regex `.`: any one character but a line break, one to four bytes of UTF-8).
///
/// The search jumps with `memchr` (vectorised in glibc) to the needle's first byte that is not a
/// letter, when no wildcard comes before it (`-` in `needle-7`), or else between the two cases
/// of a leading letter, and checks each hit; otherwise from each position. No string is built.
struct CaseFoldedLiteral: Sendable {
    private let needle: [UInt8]
    private let wildcards: [Bool]
    private let hasWildcards: Bool
    /// The offset of the first byte whose case cannot differ, with no wildcard before it.
    private let anchor: Int?

    /// Plain ASCII text, no wildcards.
    init(_ text: String) {
        let bytes = Array(text.utf8)
        self.init(bytes: bytes, wildcards: Array(repeating: false, count: bytes.count))
    }

    /// ASCII bytes; `wildcards[i]` makes position `i` match any one character.
    init(bytes: [UInt8], wildcards: [Bool]) {
        let folded = bytes.map(Self.fold)
        let firstWildcard = wildcards.firstIndex(of: true) ?? bytes.count
        needle = folded
        self.wildcards = wildcards
        hasWildcards = firstWildcard < bytes.count
        anchor = folded.indices.first { $0 < firstWildcard && !Self.isLetter(folded[$0]) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- 97 < 26 }

    @inline(__always)
    private static func fold(_ byte: UInt8) -> UInt8 { byte &- 65 < 26 ? byte | 0x20 : byte }

    /// Whether the needle occurs in `haystack`.
    func occurs(in haystack: UnsafeRawBufferPointer) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count, let base = haystack.baseAddress else { return false }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let end = haystack.count
        return needle.withUnsafeBufferPointer { needle in
            wildcards.withUnsafeBufferPointer { wildcards in
                /// Whether the needle matches starting at byte `start`.
                func matches(at start: Int) -> Bool {
                    var position = start
                    for index in 0..<needle.count {
                        guard position < end else { return false }
                        let byte = bytes[position]
                        if wildcards[index] {
                            // One character: a lead byte and its continuation bytes; not a newline.
                            guard byte != 0x0A else { return false }
                            position += 1
                            while position < end, bytes[position] & 0xC0 == 0x80 { position += 1 }
                        } else {
                            guard Self.fold(byte) == needle[index] else { return false }
                            position += 1
                        }
                    }
                    return true
                }
                if let anchor {
                    var position = anchor
                    while position < end {
                        guard let hit = memchr(bytes + position, Int32(needle[anchor]), end - position) else { return false }
                        let found = UnsafePointer<UInt8>(hit.assumingMemoryBound(to: UInt8.self)) - bytes
                        if matches(at: found - anchor) { return true }
                        position = found + 1
                    }
                    return false
                }
                let last = hasWildcards ? end - 1 : end - needle.count
                if !wildcards[0], Self.isLetter(needle[0]), last >= 0 {
                    // A leading letter: jump between its two cases with memchr.
                    func next(_ byte: UInt8, from position: Int) -> Int? {
                        guard position <= last, let hit = memchr(bytes + position, Int32(byte), last - position + 1) else {
                            return nil
                        }
                        return UnsafePointer<UInt8>(hit.assumingMemoryBound(to: UInt8.self)) - bytes
                    }
                    var lower = next(needle[0], from: 0)
                    var upper = next(needle[0] ^ 0x20, from: 0)
                    while let candidate = [lower, upper].compactMap({ $0 }).min() {
                        if matches(at: candidate) { return true }
                        if candidate == lower { lower = next(needle[0], from: candidate + 1) }
                        if candidate == upper { upper = next(needle[0] ^ 0x20, from: candidate + 1) }
                    }
                    return false
                }
                for start in 0...max(last, 0) where bytes[start] & 0xC0 != 0x80 && matches(at: start) { return true }
                return false
            }
        }
    }
}
