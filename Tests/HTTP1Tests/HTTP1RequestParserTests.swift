import Testing
@testable import HTTP1

@Suite struct HTTP1RequestParserTests {
    private typealias Event = HTTP1RequestEvent

    private static func head(
        _ method: String, _ target: String, _ headers: HTTPHeaders = [:], version: HTTPVersion = .http11
    ) -> Event {
        .head(HTTPRequestHead(method: method, target: target, version: version, headers: headers))
    }

    private static let end = Event.end(trailers: [:])

    @Test func getWithoutBodyEndsAfterHead() {
        expectEvents(
            HTTP1RequestParser.self,
            "GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
            [Self.head("GET", "/index.html?q=1", ["Host": "example.com", "Accept": "*/*"]), Self.end])
    }

    @Test func headerCaseOrderAndRepeatsArePreserved() {
        expectEvents(
            HTTP1RequestParser.self,
            "GET / HTTP/1.0\r\nhOsT:   a.test  \r\nX-Dup: 1\r\nx-dup: 2\r\nEmpty:\r\n\r\n",
            [Self.head("GET", "/", ["hOsT": "a.test", "X-Dup": "1", "x-dup": "2", "Empty": ""], version: .http10),
             Self.end])
    }

    /// A TLS ClientHello where a request line belongs (a client set to use `https://` for a
    /// plain-HTTP proxy) is named as such, whole or a byte at a time, with a 400: it was "request
    /// line ends in a bare LF without CR", wherever a 0x0A fell in the handshake.
    @Test func aTLSHandshakeIsNamed() throws {
        let hello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x0A, 0x0D]
        var whole = HTTP1RequestParser()
        whole.feed(hello)
        var thrown: HTTP1ParseError?
        do { _ = try whole.next() } catch { thrown = error }
        #expect(thrown?.code == .tlsHandshake && thrown?.status == 400, "\(String(describing: thrown))")
        var trickled = HTTP1RequestParser()
        thrown = nil
        for byte in hello where thrown == nil {
            trickled.feed([byte])
            do { _ = try trickled.next() } catch { thrown = error }
        }
        #expect(thrown?.code == .tlsHandshake)
        // A SOCKS greeting is named at once: its client waits for a reply, not a line end.
        for greeting: [UInt8] in [[0x05, 0x01, 0x00], [0x04, 0x01, 0x00, 0x50, 127, 0, 0, 1, 0]] {
            var socks = HTTP1RequestParser()
            socks.feed(greeting)
            do { _ = try socks.next(); Issue.record("no error for \(greeting)") } catch {
                #expect(error.code == .socksGreeting && error.status == 400)
            }
        }
    }

    @Test func contentLengthBodyIsDelivered() {
        expectEvents(
            HTTP1RequestParser.self,
            "POST /upload HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world",
            [Self.head("POST", "/upload", ["Content-Length": "11"]), .body(Array("hello world".utf8)), Self.end])
    }

    @Test func repeatedIdenticalContentLengthIsAccepted() {
        expectEvents(
            HTTP1RequestParser.self,
            "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\nabc",
            [Self.head("POST", "/", ["Content-Length": "3, 3", "Content-Length": "3"]), .body(Array("abc".utf8)),
             Self.end])
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() {
        expectEvents(
            HTTP1RequestParser.self,
            "POST /c HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\nA \r\n0123456789\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n",
            [Self.head("POST", "/c", ["Transfer-Encoding": "gzip, chunked"]),
             .body(Array("hello0123456789".utf8)),
             .end(trailers: ["X-Checksum": "abc", "X-Other": "1"])])
    }

    @Test func chunkedBodyWithoutTrailersEndsWithEmptyTrailers() {
        expectEvents(
            HTTP1RequestParser.self,
            "PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            [Self.head("PUT", "/x", ["Transfer-Encoding": "chunked"]), .body(Array("abc".utf8)), Self.end])
    }

    @Test func emptyLinesBeforeRequestLineAreSkipped() {
        expectEvents(
            HTTP1RequestParser.self, "\r\n\r\nGET / HTTP/1.1\r\n\r\n", [Self.head("GET", "/"), Self.end])
    }

    @Test func absoluteFormAndAuthorityFormHeadsParse() {
        expectEvents(
            HTTP1RequestParser.self, "GET http://[::1]:8080/a?b HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
            [Self.head("GET", "http://[::1]:8080/a?b", ["Host": "[::1]:8080"]), Self.end])
        expectEvents(
            HTTP1RequestParser.self, "OPTIONS * HTTP/1.1\r\n\r\n", [Self.head("OPTIONS", "*"), Self.end])
    }

    @Test func connectThenTunnelBytesAreLeftForTheCaller() throws {
        var parser = HTTP1RequestParser()
        let tls: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0x05, 0x0D, 0x0A]
        parser.feed(Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n".utf8) + tls)
        #expect(try parser.next() == Self.head("CONNECT", "example.com:443", ["Host": "example.com:443"]))
        #expect(try parser.next() == Self.end)
        #expect(parser.takeRemainingBytes() == tls)
        #expect(try parser.next() == nil)
        #expect(try parser.finish() == nil)
    }

    @Test func bodyIsStreamedAsItArrives() throws {
        var parser = HTTP1RequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n".utf8))
        #expect(try parser.next() == Self.head("POST", "/", ["Content-Length": "100000"]))
        var received = 0
        for _ in 0..<100 {
            parser.feed([UInt8](repeating: 0x61, count: 1000))
            guard case .body(let bytes)? = try parser.next() else {
                Issue.record("expected a body event")
                return
            }
            #expect(bytes.count == 1000, "a body event holds what was buffered, no more")
            received += bytes.count
            #expect(try parser.next() == (received == 100_000 ? Self.end : nil))
        }
    }

    @Test func bodyDoesNotSwallowTheNextRequest() throws {
        var parser = HTTP1RequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nokGET /next HTTP/1.1\r\n\r\n".utf8))
        var events: [Event] = []
        while let event = try parser.next() { events.append(event) }
        #expect(events == [Self.head("POST", "/", ["Content-Length": "2"]), .body(Array("ok".utf8)), Self.end,
                           Self.head("GET", "/next"), Self.end])
    }

    @Test func cleanCloseBetweenRequestsIsNotAnError() throws {
        var parser = HTTP1RequestParser()
        parser.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(try parser.next() == Self.head("GET", "/"))
        #expect(try parser.next() == Self.end)
        #expect(try parser.finish() == nil)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: a",
        "GET / HTTP/1.1\r\nHost: a\r\n",
        "GET / HT",
        "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nTrailer: x\r\n",
    ])
    func closeInsideAMessageIsTruncated(input: String) {
        expectError(
            HTTP1RequestParser.self, input, code: .truncated, status: 400,
            reason: "connection closed before the message was complete")
    }

    @Test func expectContinueIsDetected() throws {
        var parser = HTTP1RequestParser()
        parser.feed(Array("PUT /f HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n".utf8))
        guard case .head(let head)? = try parser.next() else {
            Issue.record("expected a head")
            return
        }
        #expect(head.headers.expectsContinue)
        #expect(try parser.next() == nil, "the body has not arrived")
        #expect(!HTTPHeaders([("Expect", "something-else")]).expectsContinue)
    }
}
