@testable import DevProxy
import Foundation
import Testing

/// Decoding gzip, deflate, br and zstd bodies made by real encoders, including the truncated and
/// damaged inputs a capped body capture produces.
@Suite struct ContentDecoderTests {
    let original = RealCompressors.text(lines: 2000)

    @Test func gzipFromTheGzipToolDecodesWhole() throws {
        let output = try #require(ContentDecoder.decode(try RealCompressors.gzip(original), coding: .gzip))
        #expect(output.end == .complete)
        #expect(output.bytes == original)
    }

    @Test func concatenatedGzipMembersDecodeAsOneBody() throws {
        let first = Array(original[0..<1000]), second = Array(original[1000...])
        let joined = try RealCompressors.gzip(first) + RealCompressors.gzip(second)
        let output = try #require(ContentDecoder.decode(joined, coding: .gzip))
        #expect(output.end == .complete)
        #expect(output.bytes == original)
    }

    @Test func deflateIsAcceptedZlibWrappedAndRaw() throws {
        for wbits in [15, -15] {
            let output = try #require(ContentDecoder.decode(try RealCompressors.zlib(original, wbits: wbits),
                                                            coding: .deflate))
            #expect(output.end == .complete, "wbits \(wbits)")
            #expect(output.bytes == original, "wbits \(wbits)")
        }
    }

    @Test func brotliFromLibbrotliencDecodesWhole() throws {
        let output = try #require(ContentDecoder.decode(try RealCompressors.brotli(original), coding: .br))
        #expect(output.end == .complete)
        #expect(output.bytes == original)
    }

    /// Made once with libbrotlienc (quality 11, window 22), so br decoding is tested even where
    /// Python cannot load the encoder (the command, joined into one line):
    /// python3 -c 'import ctypes;l=ctypes.CDLL("libbrotlienc.so.1");
    ///   d=b"DevProxy brotli fixture: "+b"hello, world! "*20;
    ///   o=ctypes.create_string_buffer(2048);n=ctypes.c_size_t(2048);l.BrotliEncoderCompress(11,22,0,len(d),d,
    ///   ctypes.byref(n),o);print(o.raw[:n.value].hex())'
    @Test func brotliFixtureDecodes() throws {
        let hex = "1b3001f8c5dc46a99edd90ccd20d599c3838188cf9c588f10015ab9ce6f63eba5b5031f5c5762958425ac635e748"
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        let output = try #require(ContentDecoder.decode(bytes, coding: .br))
        #expect(output.end == .complete)
        #expect(String(decoding: output.bytes, as: UTF8.self)
                == "DevProxy brotli fixture: " + String(repeating: "hello, world! ", count: 20))
    }

    /// gzip bytes labelled `br` are no br at all. Brotli has no magic number, so gzip's bytes can
    /// read as the start of a brotli stream that never ends (this body, Python's gzip of a JSON
    /// document, does), or as one that ends in its first bytes with more after it: both were shown
    /// as an empty text "decoded from br". A real stream with bytes after it keeps its text,
    /// marked damaged.
    @Test func gzipLabelledBrotliIsNotDecodedToNothing() throws {
        let hex = "1f8b0800003e146b02ffab56ca2c49cd2d56b28aae56ca4bcc4d55b2524acc29c84854d251ca4c51b232acd5818b27a5"
            + "96c0848d6a637594f2f24b40c2e9559905ba59c5f979bab98945d9a9454ab50076e4509154000000"
        let gzipped = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        #expect(ContentDecoder.decode(gzipped, coding: .br) == nil)
        #expect(ContentDecoder.decode(gzipped, contentEncoding: "br") == nil)
        let json = try #require(ContentDecoder.decode(gzipped, coding: .gzip))
        #expect(String(decoding: json.bytes, as: UTF8.self).hasPrefix(#"{"items":[{"name":"alpha""#))
        let capture = BodyCapture()
        capture.append(gzipped)
        let body = capture.finish(contentEncoding: "br", contentType: "application/json")
        #expect(body.decoded == nil && body.text == nil && body.base64 != nil)
        #expect(body.decodeError == "could not be decoded as br: kept as sent")

        let trailed = try RealCompressors.brotli(original) + Array("trailing".utf8)
        let output = try #require(ContentDecoder.decode(trailed, coding: .br))
        #expect(output.end == .corrupt)
        #expect(output.bytes == original)
    }

    /// Every cut of a coded stream decodes to a prefix of the original and never crashes:
    /// what a `--body-limit` cut leaves behind.
    @Test(arguments: [ContentCoding.gzip, .deflate, .br, .zstd])
    func everyTruncationYieldsAPrefix(coding: ContentCoding) throws {
        let small = RealCompressors.text(lines: 60)
        let coded = switch coding {
        case .gzip: try RealCompressors.gzip(small)
        case .deflate: try RealCompressors.zlib(small, wbits: 15)
        case .br: try RealCompressors.brotli(small)
        case .zstd: try RealCompressors.zstd(small, fromPipe: true)
        }
        var longest = 0
        for cut in 0..<coded.count {
            guard let output = ContentDecoder.decode(Array(coded[0..<cut]), coding: coding) else { continue }
            #expect(output.end == .inputEnded, "cut at \(cut)")
            #expect(Array(small.prefix(output.bytes.count)) == output.bytes, "cut at \(cut)")
            longest = max(longest, output.bytes.count)
        }
        // A cut near the end must have yielded most of the text, or "partial" would mean nothing.
        #expect(longest > small.count / 2)
    }

    @Test func damagedInputYieldsWhatCameBeforeTheDamage() throws {
        var coded = try RealCompressors.gzip(original)
        for index in stride(from: coded.count / 2, to: coded.count, by: 7) { coded[index] ^= 0x5A }
        let output = try #require(ContentDecoder.decode(coded, coding: .gzip))
        // Damaged DEFLATE data may still parse to its end and then look merely truncated.
        #expect(output.end == .corrupt || output.end == .inputEnded)
        // Bytes just before the detection point may already be wrong; the early part must be intact.
        let intact = original.count / 10
        #expect(output.bytes.count > intact)
        #expect(Array(output.bytes.prefix(intact)) == Array(original.prefix(intact)))
    }

    /// A wrong CRC-32 in the gzip trailer is damage zlib reports only after all the output.
    @Test func aBadChecksumIsCorruptButKeepsTheOutput() throws {
        var coded = try RealCompressors.gzip(original)
        coded[coded.count - 8] ^= 0xFF
        let output = try #require(ContentDecoder.decode(coded, coding: .gzip))
        #expect(output.end == .corrupt)
        #expect(output.bytes == original)
    }

    @Test func inputThatWasNeverCodedDecodesToNothing() {
        let plain = Array("this is not compressed at all".utf8)
        for coding in ContentCoding.allCases {
            #expect(ContentDecoder.decode(plain, coding: coding) == nil, "\(coding)")
        }
    }

    /// A 64 MiB run of zeros (a decompression bomb) stops at the output bound.
    @Test func outputIsBounded() throws {
        let bomb = try RealCompressors.zlib([UInt8](repeating: 0, count: 64 << 20), wbits: 31)
        let output = try #require(ContentDecoder.decode(bomb, coding: .gzip))
        #expect(output.end == .outputLimit)
        #expect(output.bytes.count == ContentDecoder.defaultOutputLimit)
        let small = try #require(ContentDecoder.decode(bomb, coding: .gzip, outputLimit: 1000))
        #expect(small.bytes.count == 1000)
    }

    @Test func contentEncodingListsAreUndoneLastFirst() throws {
        let coded = try RealCompressors.brotli(try RealCompressors.gzip(original))
        let output = try #require(ContentDecoder.decode(coded, contentEncoding: "gzip, br"))
        #expect(output.end == .complete)
        #expect(output.bytes == original)
    }

    @Test func contentEncodingNames() {
        #expect(ContentCoding.list(fromHeader: nil) == [])
        #expect(ContentCoding.list(fromHeader: "identity") == [])
        #expect(ContentCoding.list(fromHeader: "X-GZIP") == [.gzip])
        #expect(ContentCoding.list(fromHeader: "gzip, br") == [.gzip, .br])
        #expect(ContentCoding.list(fromHeader: "gzip, ZSTD") == [.gzip, .zstd])
        #expect(ContentCoding.list(fromHeader: "compress") == nil)
        #expect(ContentCoding.list(fromHeader: "zstd, dcz") == nil)
        #expect(ContentDecoder.decode(original, contentEncoding: "compress") == nil)
        #expect(ContentDecoder.decode(original, contentEncoding: nil) == nil)
    }
}
