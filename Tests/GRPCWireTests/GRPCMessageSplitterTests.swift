import Foundation
import GRPCWire
import Testing
import TestSupport

/// Splitting gRPC bodies framed by Python (`struct.pack(">BI", flag, len)`, messages compressed
/// with Python's gzip), fed whole, a byte at a time and in uneven chunks; and every limit.
@Suite struct GRPCMessageSplitterTests {
    /// Three messages: 5 bytes, empty, and a gzip-compressed 3000-byte one, then a 1 MiB + 1 one.
    static func pythonBody() throws -> [UInt8] {
        try PythonProtobuf.bytes(from: """
    import gzip, struct, sys
    def frame(flag, m): return struct.pack(">BI", flag, len(m)) + m
    big = bytes(range(256)) * 12
    out = frame(0, b"hello") + frame(0, b"") + frame(1, gzip.compress(big[:3000])) + frame(0, b"z" * (1024 * 1024 + 1))
    open(sys.argv[1], "wb").write(out)
    """)
    }

    func split(_ body: [UInt8], chunks: [Int], limits: GRPCMessageSplitter.Limits = .init())
        -> (messages: [GRPCWireMessage], cut: GRPCWireMessage?, error: GRPCSplitError?) {
        var splitter = GRPCMessageSplitter(limits: limits)
        var messages: [GRPCWireMessage] = []
        var offset = 0, index = 0
        while offset < body.count {
            let size = max(1, chunks[index % chunks.count])
            messages += splitter.feed(Array(body[offset..<min(body.count, offset + size)]))
            offset += size
            index += 1
        }
        let cut = splitter.finish()
        return (messages, cut, splitter.error)
    }

    @Test func wholeByteByByteAndUnevenChunksAgree() throws {
        let body = try Self.pythonBody()
        let whole = split(body, chunks: [body.count])
        #expect(whole.messages.count == 4)
        #expect(whole.cut == nil && whole.error == nil)
        #expect(whole.messages.map(\.length).prefix(2) == [5, 0])
        #expect(whole.messages[0].bytes == Array("hello".utf8))
        #expect(whole.messages.map(\.compressed) == [false, false, true, false])
        #expect(whole.messages[2].isHeld)
        #expect(Array(whole.messages[2].bytes.prefix(2)) == [0x1F, 0x8B])
        // 1 MiB + 1 is over the default hold: counted, first 4 KiB kept.
        #expect(whole.messages[3].length == 1024 * 1024 + 1)
        #expect(whole.messages[3].received == whole.messages[3].length)
        #expect(!whole.messages[3].isHeld)
        #expect(whole.messages[3].bytes == [UInt8](repeating: UInt8(ascii: "z"), count: 4096))
        for chunks in [[1], [2, 3, 5, 7], [4999, 1, 65536]] {
            let other = split(body, chunks: chunks)
            #expect(other.messages == whole.messages, "chunks \(chunks)")
            #expect(other.cut == nil && other.error == nil)
        }
    }

    @Test func aBodyCutInsideAMessageReportsTheCutMessage() throws {
        let cut = Array(try Self.pythonBody().prefix(5 + 5 + 5 + 5 + 100))
        let result = split(cut, chunks: [7])
        #expect(result.messages.count == 2)
        let last = try #require(result.cut)
        #expect(last.compressed == true)
        #expect(last.received == 100)
        #expect(!last.isComplete)
        #expect(result.error == nil)
    }

    @Test func aBodyCutInsideAPrefixIsAnError() throws {
        let result = split(Array(try Self.pythonBody().prefix(10 + 3)), chunks: [1])
        #expect(result.messages.count == 1)
        #expect(result.cut == nil)
        #expect(result.error == .truncatedPrefix(bytes: 3))
    }

    /// A flag byte other than 0 or 1 stops splitting there, and later bytes are ignored.
    @Test func anInvalidFlagStopsSplitting() {
        let body: [UInt8] = [0, 0, 0, 0, 1, 0x41, 2, 0, 0, 0, 1, 0x42, 0, 0, 0, 0, 0]
        for chunks in [[body.count], [1]] {
            let result = split(body, chunks: chunks)
            #expect(result.messages.count == 1)
            #expect(result.error == .invalidFlag(2, offset: 6))
            #expect(result.error?.note.contains("invalid compressed flag 2") == true)
        }
    }

    /// A declared 4 GiB message allocates nothing up front; only `keptBytes` are kept; the
    /// hold limit is exact.
    @Test func memoryIsBoundedByTheLimits() {
        let limits = GRPCMessageSplitter.Limits(keptBytes: 10, heldBytes: 100)
        var splitter = GRPCMessageSplitter(limits: limits)
        #expect(splitter.feed([0, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 7, count: 5000)).isEmpty)
        let cut = splitter.finish()
        #expect(cut?.length == 0xFFFF_FFFF)
        #expect(cut?.received == 5000)
        #expect(cut?.bytes.count == 10)
        for (length, held) in [(100, true), (101, false)] {
            var splitter = GRPCMessageSplitter(limits: limits)
            let message = splitter.feed([0, 0, 0, 0, UInt8(length)] + [UInt8](repeating: 1, count: length)).first
            #expect(message?.isHeld == held)
            #expect(message?.bytes.count == (held ? length : 10))
        }
    }
}
