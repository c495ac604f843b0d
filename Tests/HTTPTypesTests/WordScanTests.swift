import HTTPTypes
import Testing

/// The word tests against a byte-by-byte reading, every byte value in every position of a word
/// whose other bytes are ordinary (lower-case letters) or at the edges of each test's range.
@Suite struct WordScanTests {
    /// A word of `filler` with `byte` at `position` (0: the lowest, first in memory).
    private func word(_ byte: UInt8, at position: Int, filler: UInt8) -> UInt64 {
        var word = WordScan.ones &* UInt64(filler)
        word &= ~(UInt64(0xFF) << (position * 8))
        return word | UInt64(byte) << (position * 8)
    }

    @Test(arguments: [UInt8(ascii: "a"), 0x21, 0x7E, 0x39, 0x3B])
    func everyTestAgreesWithTheBytes(_ filler: UInt8) {
        for position in 0..<8 {
            for value in 0...255 {
                let byte = UInt8(value)
                let w = word(byte, at: position, filler: filler)
                let bytes = (0..<8).map { UInt8(truncatingIfNeeded: w >> ($0 * 8)) }
                #expect(WordScan.hasNonASCII(in: w) == bytes.contains { $0 >= 0x80 })
                #expect(WordScan.hasByte(below: 0x20, in: w) == bytes.contains { $0 < 0x20 })
                #expect(WordScan.hasByte(0x3A, in: w) == bytes.contains(0x3A),
                        "byte 0x\(String(byte, radix: 16)) at \(position), filler 0x\(String(filler, radix: 16))")
            }
        }
    }

    @Test func anyLooksAtTheTailByteByByte() {
        let bytes = Array("content-typ:".utf8)
        let found = bytes.withUnsafeBufferPointer {
            WordScan.any($0, word: { WordScan.hasByte(0x3A, in: $0) }, byte: { $0 == 0x3A })
        }
        #expect(found, "the colon is in the 4 bytes after the first word")
    }

    /// Every length up to three words, the byte looked for at every position or nowhere: the
    /// whole words, the overlapping last word of a buffer of eight or more, and the bytes of a
    /// shorter one all find it, and nothing is found where it is not.
    @Test func anyFindsTheByteAtEveryPositionOfEveryLength() {
        for length in 0...24 {
            for position in -1..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                if position >= 0 { bytes[position] = 0x3A }
                let found = bytes.withUnsafeBufferPointer {
                    WordScan.any($0, word: { WordScan.hasByte(0x3A, in: $0) }, byte: { $0 == 0x3A })
                }
                #expect(found == (position >= 0), "length \(length), colon at \(position)")
            }
        }
    }
}
