@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// What a captured body records: the first `limit` bytes, the size and SHA-256 of all of
/// them, and the prefix as text or base64.
@Suite struct BodyCaptureTests {
    @Test func exactlyAtTheLimitIsNotTruncated() {
        let capture = BodyCapture(limit: 10)
        capture.append(Array("0123456789".utf8))
        let body = capture.finish(contentEncoding: nil, contentType: "text/plain")
        #expect(body.size == 10)
        #expect(body.truncated == false)
        #expect(body.text == "0123456789")
    }

    @Test func oneByteOverTheLimitIsTruncated() {
        let capture = BodyCapture(limit: 10)
        capture.append(Array("0123456789A".utf8))
        let body = capture.finish(contentEncoding: nil, contentType: "text/plain")
        #expect(body.size == 11)
        #expect(body.truncated == true)
        #expect(body.text == "0123456789")
    }

    /// A `Content-Encoding` that could not be undone says why in `decode_error`, the bytes kept
    /// as sent: gzip bytes labelled `br`, a coding DevProxy does not know (`compress`, listed
    /// with a known one). A coding that decodes, `identity`, no label, or no bytes at all (a
    /// HEAD's or 304's label) says nothing.
    @Test func aCodingThatCouldNotBeUndoneSaysSo() throws {
        let text = Array(#"{"hello":"compressed"}"#.utf8)
        let gzipped = try RealCompressors.gzip(text)
        func body(_ bytes: [UInt8], _ coding: String?) -> Flow.Body {
            let capture = BodyCapture()
            capture.append(bytes)
            return capture.finish(contentEncoding: coding, contentType: "application/json")
        }
        let mislabelled = body(gzipped, "br")
        #expect(mislabelled.decodeError == "could not be decoded as br: kept as sent")
        #expect(mislabelled.decoded == nil && mislabelled.base64 == Data(gzipped).base64EncodedString())
        let unknown = body(text, "gzip, compress")
        #expect(unknown.decodeError == "unknown content coding compress: kept as sent")
        #expect(unknown.text == String(decoding: text, as: UTF8.self))
        for (bytes, coding) in [(gzipped, "gzip"), (gzipped, "x-gzip"), (text, "identity"), (text, nil), ([], "gzip")] {
            let fine = body(bytes, coding)
            #expect(fine.decodeError == nil, "\(String(describing: coding)): \(String(describing: fine.decodeError))")
        }
        #expect(body(gzipped, "gzip").decoded == "gzip")
        // The flow log carries it, between `base64` and `decoded` in key order.
        var flow = FlowSamples.get
        flow.response?.body = mislabelled
        let line = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(line.contains(#""decode_error":"could not be decoded as br: kept as sent""#), "\(line)")
    }

    /// A small compressed body that decodes past the 4 MiB the record decodes says it was cut
    /// (`truncated`, `decoded_cut`, and the HAR's note): its text stopped at 4 MiB with
    /// `truncated: false`, and the HAR gave 4 MiB as the content's size.
    @Test func aDecodingCutAtItsLimitSaysSo() throws {
        let whole = [UInt8](repeating: UInt8(ascii: "a"), count: 5 << 20)
        let gzipped = try RealCompressors.gzip(whole)
        let capture = BodyCapture()
        capture.append(gzipped)
        let body = capture.finish(contentEncoding: "gzip", contentType: "text/plain")
        #expect(body.truncated && body.decodedCut == ContentDecoder.defaultOutputLimit)
        #expect(body.text?.utf8.count == ContentDecoder.defaultOutputLimit)
        var flow = FlowSamples.get
        flow.response?.body = body
        let line = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(line.contains(#""decoded_cut":4194304"#) && line.contains(#""truncated":true"#))
        let har = HARWriter.document(for: [flow])
        let content = try #require(har.log.entries.first?.response.content)
        #expect(content.truncated == true && content.comment?.contains("decoded only the first 4194304 bytes") == true,
                "\(String(describing: content.comment))")
    }

    /// The limit holds whichever way the bytes are split, down to one byte per call.
    /// A whole body whose coding does not end well says so: cut short (an origin that died
    /// mid-compression) or damaged. The partial text read as the whole response, with no
    /// `decode_error`. A prefix kept by `--body-limit` is not an error.
    @Test func aDamagedOrCutCodingSaysSo() throws {
        let text = RealCompressors.text(lines: 200)
        let gzip = try RealCompressors.gzip(text)
        func record(_ bytes: [UInt8], limit: Int = 1 << 20) -> Flow.Body {
            let capture = BodyCapture(limit: limit)
            capture.append(bytes)
            return capture.finish(contentEncoding: "gzip", contentType: "text/plain")
        }
        let whole = record(gzip)
        #expect(whole.decodeError == nil && whole.text?.utf8.count == text.count)
        let cut = record(Array(gzip.dropLast(20)))
        #expect(cut.decodeError?.hasPrefix("the gzip stream stops before its end (the body was cut short)") == true,
                "\(String(describing: cut.decodeError))")
        #expect(cut.text.map { text.starts(with: Array($0.utf8)) } == true)
        var damaged = gzip
        damaged[damaged.count - 6] ^= 0xFF
        #expect(record(damaged).decodeError?.hasPrefix("the gzip stream is damaged") == true,
                "\(String(describing: record(damaged).decodeError))")
        let limited = record(gzip, limit: gzip.count / 2)
        #expect(limited.truncated && limited.decodeError == nil)
    }

    @Test func theLimitHoldsAcrossPieces() {
        let bytes = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        for limit in [0, 1, 9, 10, 11, 26, 27] {
            let capture = BodyCapture(limit: limit)
            for byte in bytes { capture.append([byte]) }
            let body = capture.finish(contentEncoding: nil, contentType: nil)
            #expect(body.size == 26)
            #expect(body.truncated == (limit < 26), "limit \(limit)")
            #expect(body.text == String(decoding: bytes.prefix(limit), as: UTF8.self), "limit \(limit)")
        }
    }

    @Test func theHashCoversEveryByteAndMatchesOpenSSL() throws {
        let dir = TemporaryDirectory()
        var body: [UInt8] = []
        var state: UInt32 = 2463534242
        for _ in 0..<(5 << 20) {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            body.append(UInt8(truncatingIfNeeded: state))
        }
        let capture = BodyCapture(limit: 1000)
        var offset = 0, piece = 1
        while offset < body.count {
            let end = min(body.count, offset + piece)
            capture.append(body[offset..<end])
            offset = end
            piece = piece * 3 % 100_003 + 1
        }
        let recorded = capture.finish(contentEncoding: nil, contentType: "application/octet-stream")
        let openssl = try Subprocess.run("openssl", ["dgst", "-sha256", "-r", dir.write("body", bytes: body)])
        #expect(recorded.sha256 == String(openssl.stdout.prefix(64)))
        #expect(recorded.size == body.count)
        #expect(recorded.truncated)
        #expect(recorded.base64 == Data(body.prefix(1000)).base64EncodedString())
        #expect(recorded.text == nil)
    }

    @Test func finishingTwiceGivesTheSameBody() {
        let capture = BodyCapture()
        capture.append(Array("abc".utf8))
        let first = capture.finish(contentEncoding: nil, contentType: nil)
        #expect(capture.finish(contentEncoding: nil, contentType: nil) == first)
        #expect(first.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func anEmptyBodyIsTheEmptyBody() {
        #expect(BodyCapture().finish(contentEncoding: nil, contentType: nil) == Flow.Body.empty)
        #expect(Flow.Body.empty.sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// Past `inlineHashBytes` the hash runs on another thread, fed the arrays in batches: every
    /// way of appending, at every size around the switch and the batches, hashes as OpenSSL does.
    @Test(arguments: [BodyCapture.inlineHashBytes - 1, BodyCapture.inlineHashBytes, BodyCapture.inlineHashBytes + 1,
                      BodyCapture.inlineHashBytes + 5 * BackgroundDigest.batchBytes + 7, 9 << 20])
    func largeBodiesHashedBesideTheRelayMatchOpenSSL(size: Int) throws {
        let dir = TemporaryDirectory()
        var body = [UInt8](repeating: 0, count: size)
        var state: UInt32 = 88172645
        for index in body.indices {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            body[index] = UInt8(truncatingIfNeeded: state)
        }
        let capture = BodyCapture(limit: 100)
        var offset = 0, piece = 16_384, kind = 0
        while offset < body.count {
            let end = min(body.count, offset + piece)
            switch kind % 3 {
            case 0: capture.append(Array(body[offset..<end]))
            case 1: capture.append(body[offset..<end])
            default: body[offset..<end].withUnsafeBytes { capture.append($0) }
            }
            offset = end
            kind += 1
            piece = piece * 7 % 70_001 + 1
        }
        let recorded = capture.finish(contentEncoding: nil, contentType: "application/octet-stream")
        let openssl = try Subprocess.run("openssl", ["dgst", "-sha256", "-r", dir.write("body", bytes: body)])
        #expect(recorded.sha256 == String(openssl.stdout.prefix(64)))
        #expect(recorded.size == size)
        #expect(recorded.base64 == Data(body.prefix(100)).base64EncodedString())
    }

    @Test func gzipTextIsDecodedAndSaysSo() throws {
        let original = RealCompressors.text(lines: 100)
        let coded = try RealCompressors.gzip(original)
        let capture = BodyCapture()
        capture.append(coded)
        let body = capture.finish(contentEncoding: "gzip", contentType: "application/json")
        #expect(body.text == String(decoding: original, as: UTF8.self))
        #expect(body.decoded == "gzip")
        #expect(body.size == coded.count)
    }

    /// A cut through a br body still shows the text decodable from the kept prefix.
    @Test func aTruncatedCompressedPrefixDecodesAsFarAsItGoes() throws {
        let original = RealCompressors.text(lines: 5000)
        let coded = try RealCompressors.brotli(original)
        let capture = BodyCapture(limit: coded.count / 2)
        capture.append(coded)
        let body = capture.finish(contentEncoding: "br", contentType: "application/json")
        #expect(body.truncated)
        #expect(body.decoded == "br")
        let text = try #require(body.text)
        #expect(text.count > 100)
        #expect(String(decoding: original, as: UTF8.self).hasPrefix(text))
    }

    @Test func aBodyLabelledGzipThatIsNotStaysRaw() {
        let capture = BodyCapture()
        capture.append(Array("plain after all".utf8))
        let body = capture.finish(contentEncoding: "gzip", contentType: "text/plain")
        #expect(body.text == "plain after all")
        #expect(body.decoded == nil)
    }

    @Test func binaryIsBase64() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00]
        let capture = BodyCapture()
        capture.append(png)
        let body = capture.finish(contentEncoding: nil, contentType: "image/png")
        #expect(body.text == nil)
        #expect(body.base64 == Data(png).base64EncodedString())
        // The bytes go along for the session store, which would otherwise decode the base64 again;
        // they are not logged and do not make a body read back from the log compare unequal.
        #expect(body.base64Bytes == png)
        let logged = try! JSONDecoder().decode(Flow.Body.self, from: JSONEncoder().encode(body))
        #expect(logged.base64Bytes == nil && logged == body)
        #expect(SessionStoreSink.finishedBodies(Self.flow(response: body)).response?.bytes == png)
        #expect(SessionStoreSink.finishedBodies(Self.flow(response: logged)).response?.bytes == png)
    }

    private static func flow(response body: Flow.Body) -> Flow {
        var flow = FlowSamples.get
        flow.response?.body = body
        return flow
    }

    /// Base64 of a binary body matches Foundation's, for each padding (none, `=`, `==`).
    @Test(arguments: [1, 2, 3, 4, 5, 6, 1000, 1001, 1002])
    func base64MatchesFoundationAtEveryPadding(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) }   // starts with NUL: binary
        let capture = BodyCapture()
        capture.append(bytes)
        #expect(capture.finish(contentEncoding: nil, contentType: nil).base64 == Data(bytes).base64EncodedString())
    }

    /// Textual media types are recognised in any letter case, after spaces, before parameters.
    @Test(arguments: [("TEXT/HTML; charset=utf-8", true), (" application/problem+JSON", true),
                      ("application/x-www-form-urlencoded", true), ("image/svg+xml", true),
                      ("application/octet-stream; note=json", false), ("json", true), ("js", false), ("", false)])
    func textualTypesAreRecognised(contentType: String, textual: Bool) {
        let capture = BodyCapture()
        capture.append(Array("a\u{0}bcdefghijklmnopqrstuvwxyz".utf8))
        let body = capture.finish(contentEncoding: nil, contentType: contentType)
        #expect((body.text != nil) == textual)
    }

    /// Valid UTF-8 with NUL bytes is text only when the type says so, and then only while NULs
    /// are no more than one byte in 16: megabytes of NULs labelled text/plain (a decompression
    /// bomb) became `\u0000` six bytes each in the record, and every live preview of it too.
    @Test func nulBytesMeanBinaryUnlessTheTypeIsTextual() {
        let bytes = Array("a\u{0}bcdefghijklmnopqrstuvwxyz".utf8)
        let untyped = BodyCapture(), typed = BodyCapture()
        untyped.append(bytes)
        typed.append(bytes)
        #expect(untyped.finish(contentEncoding: nil, contentType: nil).base64 == Data(bytes).base64EncodedString())
        #expect(typed.finish(contentEncoding: nil, contentType: "application/json; charset=utf-8").text
                == "a\u{0}bcdefghijklmnopqrstuvwxyz")
        let zeros = BodyCapture()
        zeros.append(Array("ab".utf8) + [UInt8](repeating: 0, count: 4096))
        let body = zeros.finish(contentEncoding: nil, contentType: "text/plain")
        #expect(body.text == nil && body.base64 != nil)
    }

    @Test func invalidUTF8IsBase64EvenForTextTypes() {
        let capture = BodyCapture()
        capture.append([0x61, 0xFF, 0x62])
        #expect(capture.finish(contentEncoding: nil, contentType: "text/plain").base64 == "Yf9i")
    }

    /// A limit that cuts "é" in half drops the half character instead of calling it binary.
    @Test func aCutThroughAMultiByteCharacterStaysText() {
        let capture = BodyCapture(limit: 4)
        capture.append(Array("abcé".utf8))
        let body = capture.finish(contentEncoding: nil, contentType: "text/plain")
        #expect(body.truncated)
        #expect(body.text == "abc")
    }
}

/// A byte order mark wins over the declared charset, as browsers read a body (the WHATWG
/// Encoding Standard's decode sniffs it first): UTF-8 with its mark labelled iso-8859-1 read as
/// mojibake, and UTF-16 under another label was kept as base64.
@Suite struct ByteOrderMarkTests {
    func record(_ bytes: [UInt8], _ contentType: String) -> Flow.Body {
        let capture = BodyCapture()
        capture.append(bytes)
        return capture.finish(contentEncoding: nil, contentType: contentType)
    }

    @Test func theMarkWinsOverTheLabel() {
        let text = "Grüße, café"
        let utf8 = record([0xEF, 0xBB, 0xBF] + Array(text.utf8), "text/plain; charset=iso-8859-1")
        #expect(utf8.text == "\u{FEFF}" + text && utf8.charset == nil && utf8.decodeError == nil)
        let little: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for label in ["utf-16be", "utf-8"] {
            let body = record(little, "text/plain; charset=\(label)")
            #expect(body.text == text && body.charset == "utf-16le", "\(label): \(body)")
        }
        let big: [UInt8] = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(record(big, "text/plain").text == text)
    }
}
