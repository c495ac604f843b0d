import Testing
@testable import HTTPTypes

/// Field sections keep order, case and repeats; lookups ignore ASCII case; the forwarding rules
/// (RFC 9110 §7.6.1, RFC 9113 §8.2) drop what belongs to one hop and refuse what would split a
/// message.
@Suite struct HTTPFieldsTests {
    @Test func lookupsIgnoreCaseAndKeepRepeats() {
        let fields: HTTPFields = ["Accept": "a", "X-Id": "1", "accept": "b"]
        #expect(fields["ACCEPT"] == "a")
        #expect(fields.values("accept") == ["a", "b"])
        #expect(fields.contains("x-id"))
        #expect(!fields.contains("x-i"))
        #expect(fields["Accepts"] == nil)
        #expect(fields.map(\.name) == ["Accept", "X-Id", "accept"])
    }

    @Test func equalityIsExact() {
        #expect(HTTPFields(["A": "1"]) != HTTPFields(["a": "1"]))
        #expect(HTTPFields([("a", "1"), ("b", "2")]) != HTTPFields([("b", "2"), ("a", "1")]))
    }

    @Test func caseInsensitiveComparisonOnlyFoldsASCIILetters() {
        #expect(ASCIICase.equal("Content-Type", "cONTENT-tYPE"))
        #expect(!ASCIICase.equal("a-b", "a_b"))
        // `[` (0x5B) and `{` (0x7B) differ only in bit 0x20 but are not letters.
        #expect(!ASCIICase.equal("[", "{"))
        #expect(!ASCIICase.equal("é", "É"))
    }

    @Test func replaceOrAppendKeepsThePositionOfTheFirst() {
        var fields: HTTPFields = ["Host": "a", "X": "1", "host": "b"]
        fields.replaceOrAppend(name: "HOST", value: "c")
        #expect(fields == HTTPFields([("Host", "c"), ("X", "1")]))
        fields.replaceOrAppend(name: "Y", value: "2")
        #expect(fields.map(\.name) == ["Host", "X", "Y"])
    }

    @Test func listElementsAreTrimmedAndEmptyOnesSkipped() {
        let fields: HTTPFields = ["TE": " gzip ,, Trailers\t", "te": "deflate"]
        var elements: [String] = []
        fields.forEachListElement("te") { elements.append(String($0)); return true }
        #expect(elements == ["gzip", "Trailers", "deflate"])
        #expect(fields.hasListElement("TE", "trailers"))
        #expect(!fields.hasListElement("TE", "chunked"))
    }

    @Test(arguments: ["a\rb", "a\nb", "a\u{0}b"])
    func valuesWithCRLFOrNULAreRefused(_ value: String) {
        let fields: HTTPFields = ["Ok": "fine", "X-Bad": value]
        let error = #expect(throws: HTTPFieldError.self) { try fields.checkValues() }
        #expect(error == HTTPFieldError(unsafeValueOf: "X-Bad"))
        #expect(error?.description == "the value of X-Bad holds CR, LF or NUL, which HTTP forbids in a field value")
    }

    @Test func connectionSpecificFieldsAndTheNamedOnesAreDropped() {
        var fields: HTTPFields = [
            "Connection": "keep-alive, X-Hop", "Keep-Alive": "timeout=5", "Proxy-Connection": "close",
            "Transfer-Encoding": "chunked", "Upgrade": "h2c", "HTTP2-Settings": "AAMAAABkAAQAAP__",
            "Proxy-Authorization": "Basic eA==", "x-hop": "1", "X-Kept": "2", "TE": "trailers",
        ]
        fields.removeConnectionSpecific(keepingTrailersTE: false)
        #expect(fields == HTTPFields([("X-Kept", "2")]))
    }

    @Test func teStaysOnlyAsTrailersWhenAsked() {
        var withTrailers: HTTPFields = ["TE": "gzip, trailers", "A": "1"]
        withTrailers.removeConnectionSpecific(keepingTrailersTE: true)
        #expect(withTrailers == HTTPFields([("te", "trailers"), ("A", "1")]))
        var without: HTTPFields = ["TE": "gzip", "A": "1"]
        without.removeConnectionSpecific(keepingTrailersTE: true)
        #expect(without == HTTPFields([("A", "1")]))
    }

    @Test func aSectionWithNothingToDropIsUntouched() {
        var fields: HTTPFields = ["B": "2", "a": "1"]
        fields.removeConnectionSpecific(keepingTrailersTE: true)
        #expect(fields == HTTPFields([("B", "2"), ("a", "1")]))
    }

    @Test func cookieCrumbsAreJoinedAfterTheOtherFields() {
        var fields: HTTPFields = ["cookie": "a=1", "accept": "*/*", "cookie": "b=2"]
        fields.joinCookieCrumbs()
        #expect(fields == HTTPFields([("accept", "*/*"), ("cookie", "a=1; b=2")]))
        var none: HTTPFields = ["accept": "*/*"]
        none.joinCookieCrumbs()
        #expect(none == HTTPFields([("accept", "*/*")]))
    }

    /// A response without a phrase (from HTTP/2) gets its registered one: a 202, 307, 429 or 103
    /// from an h2 origin reached an HTTP/1.1 client as `202 Error`; an unregistered code gets none.
    @Test func reasonPhraseIsTheOneReceivedElseTheRegisteredOne() {
        #expect(HTTPResponse(status: 404).reasonPhrase == "Not Found")
        #expect(HTTPResponse(status: 202).reasonPhrase == "Accepted")
        #expect(HTTPResponse(status: 307).reasonPhrase == "Temporary Redirect")
        #expect(HTTPResponse(status: 429).reasonPhrase == "Too Many Requests")
        #expect(HTTPResponse(status: 103).reasonPhrase == "Early Hints")
        #expect(HTTPResponse(status: 511).reasonPhrase == "Network Authentication Required")
        #expect(HTTPResponse(status: 299).reasonPhrase == "")
        #expect(HTTPResponse(status: 200, reason: "Fine").reasonPhrase == "Fine")
        #expect(HTTPResponse(status: 200, reason: "").reasonPhrase == "")
    }
}
