@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Form bodies read into fields: URL-encoded as the WHATWG URL Standard parses them, multipart as
/// RFC 7578 writes them (and as urllib3, which `requests` uses, and curl's `-F` produce them).
@Suite struct FormBodyTests {
    @Test func urlEncodedPairsAreDecoded() throws {
        let body = Array("name=Ada+Lovelace&email=ada%40example.com&empty=&flag&bad=%zz%4&utf8=%E2%82%AC&&last=1".utf8)
        let form = try #require(FormBody.parse(contentType: "application/x-www-form-urlencoded; charset=UTF-8",
                                               body: body, whole: true))
        #expect(form.kind == .urlEncoded)
        #expect(form.isComplete)
        #expect(form.fields.map(\.name) == ["name", "email", "empty", "flag", "bad", "utf8", "last"])
        #expect(form.fields.map(\.value) == ["Ada Lovelace", "ada@example.com", "", "", "%zz%4", "€", "1"])
        #expect(form.fields[5].size == 3, "the value's bytes")
        #expect(!form.fields.contains { $0.isCut })
    }

    @Test func aCutURLEncodedBodyMarksItsLastField() throws {
        let form = try #require(FormBody.parse(contentType: "application/x-www-form-urlencoded",
                                               body: Array("a=1&b=23".utf8), whole: false))
        #expect(!form.isComplete)
        #expect(form.fields.map(\.isCut) == [false, true])
    }

    @Test func aLongValueIsKeptUpToTheLimit() throws {
        let long = String(repeating: "x", count: FormBody.valueLimit + 10)
        let form = try #require(FormBody.parse(contentType: "application/x-www-form-urlencoded",
                                               body: Array("v=\(long)".utf8), whole: true))
        #expect(form.fields[0].value?.count == FormBody.valueLimit)
        #expect(form.fields[0].valueCut)
        #expect(form.fields[0].size == FormBody.valueLimit + 10)
    }

    static let multipartBody = [
        "preamble to ignore\r\n",
        "--AaB03x\r\n",
        "Content-Disposition: form-data; name=\"submit-name\"\r\n\r\n",
        "Larry\r\n",
        "--AaB03x\r\n",
        "content-disposition: form-data; name=\"files\"; filename=\"file1.txt\"\r\n",
        "Content-Type: text/plain\r\n\r\n",
        "... contents of file1.txt ...\r\n",
        "--AaB03x\r\n",
        "Content-Disposition: form-data; name=\"photo\"; filename=\"a.png\"; filename*=UTF-8''%E2%82%AC.png\r\n",
        "Content-Type: image/png\r\n\r\n",
        "\u{0}\u{1}PNG\r\n",
        "--AaB03x\r\n",
        "Content-Disposition: form-data; name=\"quoted \\\"name\\\"\"\r\n\r\n",
        "line one\r\nline two\r\n",
        "--AaB03x--\r\n",
        "epilogue",
    ].joined()

    @Test func multipartPartsBecomeFields() throws {
        let form = try #require(FormBody.parse(contentType: "multipart/form-data; boundary=AaB03x",
                                               body: Array(Self.multipartBody.utf8), whole: true))
        #expect(form.kind == .multipart)
        #expect(form.isComplete)
        #expect(form.fields.map(\.name) == ["submit-name", "files", "photo", "quoted \"name\""])
        #expect(form.fields[0] == .init(name: "submit-name", value: "Larry", size: 5))
        #expect(form.fields[1] == .init(name: "files", fileName: "file1.txt", contentType: "text/plain", size: 29))
        #expect(form.fields[2] == .init(name: "photo", fileName: "€.png", contentType: "image/png", size: 5),
                "filename* wins over filename (RFC 7578 §4.2)")
        #expect(form.fields[3].value == "line one\r\nline two", "a value keeps its own line breaks")
    }

    @Test func aMultipartBodyCutMidPartListsWhatItHas() throws {
        let whole = Array(Self.multipartBody.utf8)
        let cutAt = whole.count - 28   // inside "line two"
        let form = try #require(FormBody.parse(contentType: "multipart/form-data; boundary=\"AaB03x\"",
                                               body: Array(whole[..<cutAt]), whole: false))
        #expect(!form.isComplete)
        #expect(form.fields.count == 4)
        #expect(form.fields.map(\.isCut) == [false, false, false, true])
        #expect(form.fields[3].value?.hasPrefix("line one") == true)
    }

    @Test func notAFormOrNoBoundaryIsNil() {
        #expect(FormBody.parse(contentType: "application/json", body: Array("{}".utf8), whole: true) == nil)
        #expect(FormBody.parse(contentType: nil, body: [], whole: true) == nil)
        #expect(FormBody.parse(contentType: "multipart/form-data", body: Array(Self.multipartBody.utf8), whole: true) == nil)
        #expect(FormBody.parse(contentType: "multipart/form-data; boundary=other", body: Array(Self.multipartBody.utf8),
                               whole: true) == nil, "a body without its boundary is not read as a form")
        #expect(FormBody.isForm(contentType: "Multipart/Form-Data; boundary=x"))
        #expect(!FormBody.isForm(contentType: "text/plain"))
    }

    /// What `requests` sends for `files=` and `data=`: urllib3's encoder, run here.
    @Test func urllib3sMultipartIsRead() throws {
        let result = try Subprocess.run("python3", ["-c", """
            import base64, sys
            from urllib3 import encode_multipart_formdata
            body, content_type = encode_multipart_formdata([
                ("title", "Résumé"), ("upload", ("report.bin", bytes(range(256)) * 10, "application/octet-stream")),
                ("note", ("note.txt", "plain text", "text/plain"))])
            print(content_type)
            print(base64.b64encode(body).decode())
            """], timeout: 20)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let body = try #require(Data(base64Encoded: lines[1]))
        let form = try #require(FormBody.parse(contentType: lines[0], body: Array(body), whole: true))
        #expect(form.isComplete)
        #expect(form.fields.map(\.name) == ["title", "upload", "note"])
        #expect(form.fields[0].value == "Résumé")
        #expect(form.fields[1].fileName == "report.bin" && form.fields[1].size == 2560 && form.fields[1].value == nil)
        #expect(form.fields[1].contentType == "application/octet-stream")
        #expect(form.fields[2].fileName == "note.txt" && form.fields[2].size == 10)
    }
}
