@testable import DevProxy
import Foundation
import HTTPTypes
import Testing

/// Which content types make a body text whatever its bytes look like (`BodyText.isTextual`).
@Suite struct BodyTextTests {
    @Test(arguments: [
        "text/plain", "TEXT/HTML; charset=utf-8", "  text/csv", "application/json", "application/JSON;charset=UTF-8",
        "application/vnd.api+json", "application/problem+json", "application/x-ndjson", "image/svg+xml",
        "application/xml", "application/javascript", "text/javascript", "application/x-javascript",
        "application/ecmascript", "application/x-www-form-urlencoded", "application/graphql-response+json",
        "application/graphql", "application/yaml", "application/x-yaml", "text/csv", "application/csv",
    ])
    func textualTypes(_ type: String) {
        #expect(BodyText.isTextual(contentType: type))
    }

    @Test(arguments: [
        "application/octet-stream", "image/png", "application/grpc", "application/grpc+proto", "application/protobuf",
        "multipart/form-data; boundary=json", "application/x-www-form", "video/mp4", "", ";json", "jso", "application/js",
        "application/zip; name=data.json",
    ])
    func binaryTypes(_ type: String) {
        #expect(!BodyText.isTextual(contentType: type))
    }

    @Test func noTypeIsNotTextual() {
        #expect(!BodyText.isTextual(contentType: nil))
    }
}

/// Bodies in a declared character set other than UTF-8 (`BodyCharset`, `BodyText.reading`): read
/// as a browser reads them, through `iconv`, and named in the flow record's `charset`.
@Suite struct BodyCharsetTests {
    @Test func theParameterIsFoundWhereverItIsAndHoweverItIsWritten() {
        let cases: [(String, String?)] = [
            ("text/html; charset=ISO-8859-1", "ISO-8859-1"), ("text/html;charset=\"Shift_JIS\"", "Shift_JIS"),
            ("text/plain; format=flowed; Charset=windows-1251 ", "windows-1251"),
            ("text/plain; name=\"a;charset=koi8-r\"; charset=euc-kr", "euc-kr"), ("text/plain", nil),
            ("text/plain; charset", nil), ("text/plain; charsetx=latin1", nil), ("text/plain; charset =gbk", "gbk"),
        ]
        for (type, expected) in cases {
            #expect(MediaType.parse(type).parameters["charset"] == expected, "\(type)")
        }
    }

    @Test func utf8AndUnknownNamesAreNotACharsetToReadIn() {
        for type in ["text/html; charset=utf-8", "text/html; charset=UTF8", "text/html; charset=no-such-charset",
                     "text/html", "text/html; charset=\"\"", "text/html; charset=a\u{1}b"] {
            #expect(BodyCharset(contentType: type) == nil, "\(type)")
        }
        #expect(BodyCharset(contentType: "text/html; charset=Shift_JIS")?.name == "shift_jis")
    }

    /// Latin-1 is read as windows-1252, as browsers read it: 0x80 is `€`, not a control character.
    @Test func latin1ReadsAsABrowserReadsIt() throws {
        let bytes: [UInt8] = Array("caf".utf8) + [0xE9, 0x20, 0x80, 0x35]
        let reading = try #require(BodyText.reading(bytes, isPrefix: false, contentType: "text/plain; charset=iso-8859-1"))
        #expect(reading.text == "café €5")
        #expect(reading.charset == "iso-8859-1")
        #expect(reading.charsetError == nil)
    }

    @Test func multiByteCharsetsAndAPrefixCutMidCharacter() throws {
        // 日本語 in Shift_JIS, and in EUC-KR 한국.
        let sjis: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]
        let whole = try #require(BodyText.reading(sjis, isPrefix: false, contentType: "text/html; charset=shift_jis"))
        #expect(whole.text == "日本語")
        let cut = try #require(BodyText.reading(Array(sjis.dropLast()), isPrefix: true,
                                                contentType: "text/html; charset=shift_jis"))
        #expect(cut.text == "日本")
        // A whole body may not end mid-character: not Shift_JIS text, and not UTF-8 either.
        let broken = try #require(BodyText.reading(Array(sjis.dropLast()), isPrefix: false,
                                                   contentType: "text/html; charset=shift_jis"))
        #expect(broken.text == nil)
        #expect(broken.charsetError == "not shift_jis text: kept as sent")
        let korean = try #require(BodyText.reading([0xC7, 0xD1, 0xB1, 0xB9], isPrefix: false,
                                                   contentType: "text/plain; charset=EUC-KR"))
        #expect(korean.text == "한국" && korean.charset == "euc-kr")
        // Shift_JIS as browsers read it, Microsoft's windows-31j: ① (87 40) is not in JIS X 0208.
        let circled = try #require(BodyText.reading([0x87, 0x40], isPrefix: false, contentType: "text/html; charset=Shift_JIS"))
        #expect(circled.text == "①", "\(circled)")
    }

    /// UTF-16 is little-endian without a byte order mark (as browsers read it), and a mark decides.
    @Test func utf16FollowsItsByteOrderMark() throws {
        let type = "application/json; charset=utf-16"
        let little: [UInt8] = [0x7B, 0, 0x7D, 0]
        #expect(BodyText.reading(little, isPrefix: false, contentType: type)?.text == "{}")
        let big: [UInt8] = [0xFE, 0xFF, 0, 0x7B, 0, 0x7D]
        #expect(BodyText.reading(big, isPrefix: false, contentType: type)?.text == "{}")
        let marked: [UInt8] = [0xFF, 0xFE, 0x7B, 0, 0x7D, 0]
        #expect(BodyText.reading(marked, isPrefix: false, contentType: type)?.text == "{}")
    }

    /// ASCII bytes read the same in any ASCII-compatible charset: no conversion, no `charset`.
    /// Bytes that are not text in the declared charset but are UTF-8 are read as UTF-8, and the
    /// record says so.
    @Test func asciiNeedsNoCharsetAndAWrongLabelIsSaid() throws {
        let plain = try #require(BodyText.reading(Array("hello".utf8), isPrefix: false,
                                                  contentType: "text/plain; charset=shift_jis"))
        #expect(plain.text == "hello" && plain.charset == nil && plain.charsetError == nil)
        // "Á" in UTF-8 is C3 81: EUC-JP's second byte of a pair is A1–FE, so not EUC-JP.
        let utf8 = Array("Ávila".utf8)
        let wrong = try #require(BodyText.reading(utf8, isPrefix: false, contentType: "text/plain; charset=euc-jp"))
        #expect(wrong.text == "Ávila")
        #expect(wrong.charset == nil)
        #expect(wrong.charsetError == "not euc-jp text: read as UTF-8")
    }

    /// Through `BodyCapture`: the record's `text` is the reading, `charset` names it, the store
    /// keeps the bytes as sent (`wireBytes`), and the flow log carries `charset`. Under a content
    /// coding the decoded bytes are read in the charset.
    @Test func aCapturedBodyRecordsItsCharset() throws {
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let capture = BodyCapture()
        capture.append(latin1)
        let body = capture.finish(contentEncoding: nil, contentType: "text/html; charset=latin1")
        #expect(body.text == "café" && body.charset == "latin1" && body.wireBytes == latin1)
        var flow = FlowSamples.get
        flow.response?.body = body
        let line = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(line.contains(#""charset":"latin1""#), "\(line)")
        let decoded = try JSONDecoder().decode(Flow.self, from: Data(flow.jsonBytes))
        #expect(decoded.response?.body?.charset == "latin1")

        let gzipped = try RealCompressors.gzip(latin1)
        let compressed = BodyCapture()
        compressed.append(gzipped)
        let both = compressed.finish(contentEncoding: "gzip", contentType: "text/html; charset=latin1")
        #expect(both.text == "café" && both.decoded == "gzip" && both.charset == "latin1" && both.wireBytes == gzipped)
    }
}
