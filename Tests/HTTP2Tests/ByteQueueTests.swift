@testable import HTTP2
import Testing

/// The per-stream body queue keeps the arrays it is given and hands them out in order, in reads of
/// any size, across array boundaries, whatever collection the bytes came in.
@Suite struct ByteQueueTests {
    @Test func readsGiveBackEveryByteInOrderAcrossPieces() {
        var queue = ByteQueue()
        var expected: [UInt8] = []
        var value: UInt8 = 0
        // Arrays, slices and an empty piece, of uneven sizes.
        for size in [1, 0, 7, 16_384, 3, 70_000, 1, 255] {
            let piece = (0..<size).map { _ -> UInt8 in value &+= 1; return value }
            expected += piece
            if size % 2 == 1 {
                queue.append(contentsOf: piece[...])
            } else {
                queue.append(contentsOf: piece)
            }
        }
        #expect(queue.count == expected.count)
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 20_000)
        for want in [1, 5, 16_384, 9, 20_000, 20_000, 20_000, 20_000, 20_000] {
            let n = buffer.withUnsafeMutableBufferPointer { queue.read(into: $0.baseAddress!, max: want) }
            #expect(n == min(want, expected.count - got.count))
            got += buffer.prefix(n)
            #expect(queue.count == expected.count - got.count)
        }
        #expect(got == expected)
        #expect(queue.isEmpty)
        queue.append([1, 2, 3])
        #expect(queue.removeAll() == 3 && queue.isEmpty)
    }

    /// Many small pieces read one byte at a time: the spent ones are dropped as it goes.
    @Test func manySmallPieces() {
        var queue = ByteQueue()
        for i in 0..<1_000 { queue.append([UInt8(i % 256)]) }
        var byte: UInt8 = 0
        for i in 0..<1_000 {
            #expect(queue.read(into: &byte, max: 1) == 1)
            #expect(byte == UInt8(i % 256))
        }
        #expect(queue.read(into: &byte, max: 1) == 0)
    }
}
