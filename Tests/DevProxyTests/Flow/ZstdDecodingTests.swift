@testable import DevProxy
import Foundation
import Testing

/// zstd bodies made by the `zstd` CLI: whole, without a stated size, in several frames, with
/// skippable frames, damaged, and as a bomb; and the zstd coding in a `Content-Encoding` list.
@Suite struct ZstdDecodingTests {
    let original = RealCompressors.text(lines: 2000)

    @Test func zstdFromTheZstdToolDecodesWhole() throws {
        for fromPipe in [false, true] {
            let output = try #require(ContentDecoder.decode(try RealCompressors.zstd(original, fromPipe: fromPipe),
                                                            coding: .zstd))
            #expect(output.end == .complete, "from a pipe: \(fromPipe)")
            #expect(output.bytes == original, "from a pipe: \(fromPipe)")
        }
    }

    /// Two frames and a skippable frame between them (RFC 8878 §3.1.2: magic 0x184D2A5?, a
    /// 4-byte little-endian size, that many bytes) decode as one body.
    @Test func concatenatedAndSkippableFramesDecodeAsOneBody() throws {
        let first = Array(original[0..<1000]), second = Array(original[1000...])
        let skippable: [UInt8] = [0x53, 0x2A, 0x4D, 0x18, 5, 0, 0, 0] + Array("hello".utf8)
        let joined = try RealCompressors.zstd(first) + skippable + RealCompressors.zstd(second, fromPipe: true)
        let output = try #require(ContentDecoder.decode(joined, coding: .zstd))
        #expect(output.end == .complete)
        #expect(output.bytes == original)
    }

    /// A flipped byte inside the compressed data is caught (the CLI adds a content checksum).
    @Test func damagedInputIsCorrupt() throws {
        var coded = try RealCompressors.zstd(original)
        coded[coded.count - 2] ^= 0xFF
        let output = ContentDecoder.decode(coded, coding: .zstd)
        #expect(output == nil || output?.end == .corrupt)
        #expect(output.map { $0.bytes != original } ?? true)
    }

    /// Bytes after the last frame that are not a frame make the end corrupt, keeping what came before.
    @Test func trailingGarbageIsCorruptButKeepsTheOutput() throws {
        let coded = try RealCompressors.zstd(original) + Array("not a frame".utf8)
        let output = try #require(ContentDecoder.decode(coded, coding: .zstd))
        #expect(output.end == .corrupt)
        #expect(output.bytes == original)
    }

    /// 64 MiB of zeros stop at the output bound.
    @Test func outputIsBounded() throws {
        let bomb = try RealCompressors.zstd([UInt8](repeating: 0, count: 64 << 20), level: 3, fromPipe: true)
        #expect(bomb.count < 64 * 1024)
        let output = try #require(ContentDecoder.decode(bomb, coding: .zstd))
        #expect(output.end == .outputLimit)
        #expect(output.bytes.count == ContentDecoder.defaultOutputLimit)
        let small = try #require(ContentDecoder.decode(bomb, coding: .zstd, outputLimit: 1000))
        #expect(small.bytes.count == 1000)
        #expect(small.end == .outputLimit)
    }

    /// A frame asking for a 128 MiB window (`--long=27`, size unknown) is refused before the
    /// decoder allocates it: RFC 9659 limits the zstd coding to 8 MiB windows.
    @Test func aWindowOverEightMebibytesIsRefused() throws {
        let coded = try RealCompressors.zstd([UInt8](repeating: 7, count: 1 << 20), level: 3, extra: ["--long=27"],
                                             fromPipe: true)
        #expect(ContentDecoder.decode(coded, coding: .zstd) == nil)
        let within = try RealCompressors.zstd(original, level: 3, extra: ["--long=23"], fromPipe: true)
        #expect(ContentDecoder.decode(within, coding: .zstd)?.bytes == original)
    }

    @Test func stackedCodingsAreUndoneLastFirst() throws {
        let coded = try RealCompressors.zstd(try RealCompressors.gzip(original))
        let output = try #require(ContentDecoder.decode(coded, contentEncoding: "gzip, zstd"))
        #expect(output.end == .complete)
        #expect(output.bytes == original)
        let other = try RealCompressors.gzip(try RealCompressors.zstd(original))
        #expect(ContentDecoder.decode(other, contentEncoding: "zstd, gzip")?.bytes == original)
    }

    /// A capture labelled zstd that is not zstd is logged raw, with no `decoded`, as for the other codings;
    /// a cut zstd body shows the text decodable from the kept prefix.
    @Test func bodyCaptureRecordsZstdOrItsAbsence() throws {
        let broken = BodyCapture()
        broken.append(Array("plain after all".utf8))
        let raw = broken.finish(contentEncoding: "zstd", contentType: "text/plain")
        #expect(raw.text == "plain after all")
        #expect(raw.decoded == nil)
        #expect(raw.decodeError == "could not be decoded as zstd: kept as sent")

        let long = RealCompressors.text(lines: 5000)
        let coded = try RealCompressors.zstd(long, fromPipe: true)
        let capture = BodyCapture(limit: coded.count / 2)
        capture.append(coded)
        let body = capture.finish(contentEncoding: "zstd", contentType: "application/json")
        #expect(body.truncated)
        #expect(body.decoded == "zstd")
        let text = try #require(body.text)
        #expect(text.count > 100)
        #expect(String(decoding: long, as: UTF8.self).hasPrefix(text))
    }
}
