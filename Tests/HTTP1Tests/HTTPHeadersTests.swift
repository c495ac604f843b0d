import Testing
import HTTPTypes
@testable import HTTP1

@Suite struct HTTPHeadersTests {
    @Test func lookupIgnoresCaseAndReturnsTheFirstValue() {
        let headers: HTTPHeaders = ["Host": "a", "X-A": "1", "x-a": "2"]
        #expect(headers["HOST"] == "a")
        #expect(headers["x-A"] == "1")
        #expect(headers["Missing"] == nil)
        #expect(headers.values("X-a") == ["1", "2"])
        #expect(headers.contains("host"))
        #expect(!headers.contains("hos"))
    }

    @Test func iterationKeepsOrderAndCase() {
        var headers = HTTPHeaders()
        headers.add(name: "b-Second", value: "2")
        headers.add(name: "A-first", value: "1")
        #expect(headers.map(\.name) == ["b-Second", "A-first"])
        #expect(headers.map(\.value) == ["2", "1"])
        #expect(headers.count == 2)
    }

    @Test func removeDropsEveryMatchIgnoringCase() {
        var headers: HTTPHeaders = ["Cookie": "a", "Host": "h", "cookie": "b"]
        headers.remove("COOKIE")
        #expect(headers == ["Host": "h"])
    }

    @Test func replaceOrAddKeepsThePositionOfTheFirstMatch() {
        var headers: HTTPHeaders = ["A": "1", "Via": "x", "B": "2", "via": "y"]
        headers.replaceOrAdd(name: "VIA", value: "z")
        #expect(headers == ["A": "1", "Via": "z", "B": "2"])
        headers.replaceOrAdd(name: "New", value: "n")
        #expect(headers == ["A": "1", "Via": "z", "B": "2", "New": "n"])
    }

    @Test func equalityIsExact() {
        #expect((["A": "1", "B": "2"] as HTTPHeaders) != ["B": "2", "A": "1"])
        #expect((["A": "1"] as HTTPHeaders) != ["a": "1"])
        #expect((["A": "1"] as HTTPHeaders) == ["A": "1"])
    }

    @Test func listElementsSplitCommasAndSkipEmptyOnes() {
        let headers: HTTPHeaders = ["Connection": " keep-alive ,, Upgrade", "connection": "close"]
        #expect(headers.listElements("Connection") == ["keep-alive", "Upgrade", "close"])
    }

    @Test func hasListElementMatchesWholeElementsIgnoringCase() {
        let headers: HTTPHeaders = ["Connection": " keep-alive ,, Upgrade", "connection": "CLOSE\t", "Expect": "100-continue-ish"]
        #expect(headers.hasListElement("CONNECTION", "close"), "second field, upper case, trailing tab")
        #expect(headers.hasListElement("Connection", "upgrade"))
        #expect(!headers.hasListElement("Connection", "keep"), "a prefix of an element is not the element")
        #expect(!headers.hasListElement("Expect", "100-continue"))
        #expect(!headers.hasListElement("Upgrade", "close"), "no such field")
        #expect(!headers.hasListElement("Connection", ""), "empty elements are not tokens")
    }

    /// A value that is not UTF-8 leaves byte for byte (it was read as Latin-1 and written as UTF-8:
    /// `r\xe9sum\xe9.pdf` became `r\xc3\xa9sum\xc3\xa9.pdf`, and valid UTF-8 beside a stray byte
    /// was encoded twice); valid UTF-8 is read as UTF-8. The reason phrase likewise.
    @Test func nonUTF8ValueBytesLeaveAsTheyCame() throws {
        let request = Array("GET / HTTP/1.1\r\nX: caf".utf8) + [0xE9] + Array("\r\nY: caf\u{E9}\r\n".utf8)
            + Array("Z: caf\u{E9} ".utf8) + [0xFF] + Array("\r\n\r\n".utf8)
        var parser = HTTP1RequestParser()
        parser.feed(request)
        guard case .head(let head)? = try parser.next() else {
            Issue.record("expected a head")
            return
        }
        #expect(ObsText.readable(head.headers["X"] ?? "") == "caf\u{E9}", "a lone 0xE9 reads as Latin-1")
        #expect(head.headers["Y"] == "caf\u{E9}", "valid UTF-8 is read as UTF-8")
        #expect(HTTP1Serializer.serialize(head) == request, "the bytes leave as they came")
        let response = Array("HTTP/1.1 200 D".utf8) + [0xE9, 0x6A, 0xE0] + Array(" vu\r\nContent-Disposition: attachment; filename=\"r".utf8)
            + [0xE9] + Array("sum".utf8) + [0xE9] + Array(".pdf\"\r\nContent-Length: 0\r\n\r\n".utf8)
        var responses = HTTP1ResponseParser()
        responses.expectResponse(toMethod: "GET")
        responses.feed(response)
        guard case .head(let answer)? = try responses.next() else {
            Issue.record("expected a response head")
            return
        }
        #expect(HTTP1Serializer.serialize(answer) == response)
        #expect(ObsText.readable(answer.reason) == "D\u{E9}j\u{E0} vu")
    }
}
