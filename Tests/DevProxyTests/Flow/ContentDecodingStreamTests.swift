@testable import DevProxy
import Foundation
import Testing

/// Decoding a body a piece at a time gives what decoding it whole gives, wherever the pieces are
/// cut (inside a gzip member's trailer, between members or zstd frames, one byte at a time), and
/// stops at its output bound.
@Suite struct ContentDecodingStreamTests {
    let original = RealCompressors.text(lines: 3000)

    /// The decoded bytes and end of `coded` fed in pieces of `size` bytes.
    static func decode(_ coded: [UInt8], contentEncoding: String, pieces size: Int,
                       outputLimit: Int = .max) throws -> ContentDecoder.Output {
        let stream = try #require(ContentDecodingStream(contentEncoding: contentEncoding, outputLimit: outputLimit))
        var output: [UInt8] = []
        var offset = 0
        while offset < coded.count {
            let piece = Array(coded[offset..<offset + min(size, coded.count - offset)])
            offset += piece.count
            let goesOn = piece.withUnsafeBytes { stream.write($0) { output.append(contentsOf: $0) } }
            if !goesOn { break }
        }
        return ContentDecoder.Output(bytes: output, end: stream.finish())
    }

    static func coded(_ text: [UInt8], _ coding: ContentCoding) throws -> [UInt8] {
        switch coding {
        case .gzip: try RealCompressors.gzip(text)
        case .deflate: try RealCompressors.zlib(text, wbits: 15)
        case .br: try RealCompressors.brotli(text)
        case .zstd: try RealCompressors.zstd(text, fromPipe: true)
        }
    }

    @Test(arguments: [ContentCoding.gzip, .deflate, .br, .zstd])
    func piecesOfAnySizeGiveTheWhole(coding: ContentCoding) throws {
        // One byte at a time over a smaller body (a debug build runs this).
        let small = RealCompressors.text(lines: 200)
        for (text, sizes) in [(small, [1]), (original, [7, 4096, Int.max])] {
            let coded = try Self.coded(text, coding)
            for size in sizes {
                let output = try Self.decode(coded, contentEncoding: coding.rawValue, pieces: size)
                #expect(output.end == .complete, "\(coding) in pieces of \(size)")
                let same = output.bytes == text
                #expect(same, "\(coding) in pieces of \(size): \(output.bytes.count) bytes")
            }
        }
    }

    /// Two gzip members or two zstd frames, cut exactly between them and one byte either side.
    @Test(arguments: [ContentCoding.gzip, .zstd])
    func aCutBetweenMembersOrFramesKeepsBoth(coding: ContentCoding) throws {
        let first = try Self.coded(Array(original.prefix(5000)), coding)
        let second = try Self.coded(Array(original.dropFirst(5000)), coding)
        let joined = first + second
        for cut in [first.count - 1, first.count, first.count + 1] {
            let stream = try #require(ContentDecodingStream(contentEncoding: coding.rawValue, outputLimit: .max))
            var output: [UInt8] = []
            for piece in [Array(joined[..<cut]), Array(joined[cut...])] {
                piece.withUnsafeBytes { _ = stream.write($0) { output.append(contentsOf: $0) } }
            }
            #expect(stream.finish() == .complete, "\(coding) cut at \(cut)")
            let same = output == original
            #expect(same, "\(coding) cut at \(cut): \(output.count) bytes")
        }
    }

    @Test func aTruncatedBodyEndsAsInputEnded() throws {
        let coded = try RealCompressors.gzip(original)
        let output = try Self.decode(Array(coded.prefix(coded.count / 2)), contentEncoding: "gzip", pieces: 1000)
        #expect(output.end == .inputEnded)
        let prefix = !output.bytes.isEmpty && output.bytes == Array(original.prefix(output.bytes.count))
        #expect(prefix, "\(output.bytes.count) bytes")
    }

    /// A decompression bomb stops at the bound, with exactly the bound's bytes passed on.
    @Test func outputStopsAtTheLimit() throws {
        let bomb = try RealCompressors.zlib([UInt8](repeating: 0, count: 16 << 20), wbits: 31)
        let output = try Self.decode(bomb, contentEncoding: "gzip", pieces: 64 * 1024, outputLimit: 1_000_000)
        #expect(output.end == .outputLimit)
        #expect(output.bytes.count == 1_000_000)
        let exact = try Self.decode(try RealCompressors.gzip(original), contentEncoding: "gzip", pieces: 512,
                                    outputLimit: original.count)
        #expect(exact.end == .complete, "a body of exactly the limit is whole")
        let same = exact.bytes == original
        #expect(same, "\(exact.bytes.count) bytes")
    }

    @Test func chainedCodingsAreUndoneLastFirst() throws {
        let coded = try RealCompressors.brotli(try RealCompressors.gzip(original))
        let output = try Self.decode(coded, contentEncoding: "gzip, br", pieces: 333)
        #expect(output.end == .complete)
        let same = output.bytes == original
        #expect(same, "\(output.bytes.count) bytes")
    }

    @Test func unknownOrNoCodingMakesNoStream() {
        #expect(ContentDecodingStream(contentEncoding: "compress", outputLimit: 10) == nil)
        #expect(ContentDecodingStream(contentEncoding: "identity", outputLimit: 10) == nil)
        #expect(ContentDecodingStream(contentEncoding: nil, outputLimit: 10) == nil)
    }

    @Test func inputThatWasNeverCodedIsCorrupt() throws {
        let output = try Self.decode(Array("not compressed at all".utf8), contentEncoding: "gzip", pieces: 5)
        #expect(output.end == .corrupt)
        #expect(output.bytes.isEmpty)
    }
}
