import Testing
@testable import HTTP1

@Suite struct HTTP1ResponseParserTests {
    private typealias Event = HTTP1ResponseEvent

    private static func head(_ status: Int, _ reason: String, _ headers: HTTPHeaders = [:]) -> Event {
        .head(HTTPResponseHead(version: .http11, status: status, reason: reason, headers: headers))
    }

    private static let end = Event.end(trailers: [:])

    private static func answering(_ method: String) -> (inout HTTP1ResponseParser) -> Void {
        { $0.expectResponse(toMethod: method) }
    }

    @Test func contentLengthResponse() {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            [Self.head(200, "OK", ["Content-Length": "5"]), .body(Array("hello".utf8)), Self.end],
            prepare: Self.answering("GET"))
    }

    /// Arrays fed whole into an empty buffer are handed on as body parts without a copy; the
    /// bytes must come out the same and in order whichever way they were fed, and bytes after
    /// the body stay for the next response.
    @Test func bodyFedAsWholeArraysComesOutIntact() throws {
        var parser = HTTP1ResponseParser()
        parser.expectResponse(toMethod: "GET")
        let body = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body[0..<100])
        var received: [UInt8] = []
        var ended = false
        func drain() throws {
            while !ended, let event = try parser.next() {
                switch event {
                case .body(let bytes): received += bytes
                case .end: ended = true
                case .head(let head): #expect(head.status == 200)
                }
            }
        }
        try drain()
        parser.feed(Array(body[100..<16_484]))          // a whole array into an empty buffer
        try drain()
        parser.feed(body[16_484..<20_000])                 // a slice, copied
        parser.feed(Array(body[20_000...]) + Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        try drain()
        #expect(received == body)
        #expect(ended)
        #expect(parser.takeRemainingBytes() == Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
    }

    @Test func chunkedResponseWithTrailers() {
        expectEvents(
            HTTP1ResponseParser.self,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: Digest\r\n\r\n"
                + "4\r\nwiki\r\n0\r\nDigest: x\r\n\r\n",
            [Self.head(200, "OK", ["Transfer-Encoding": "chunked", "Trailer": "Digest"]), .body(Array("wiki".utf8)),
             .end(trailers: ["Digest": "x"])],
            prepare: Self.answering("GET"))
    }

    @Test func closeDelimitedBodyEndsAtFinish() {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nall of this until close",
            [.head(HTTPResponseHead(version: .http10, status: 200, reason: "OK", headers: ["Server": "old"])),
             .body(Array("all of this until close".utf8)), Self.end],
            pipelinable: false, prepare: Self.answering("GET"))
    }

    @Test func transferEncodingNotEndingInChunkedReadsUntilClose() {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n\u{1F}x",
            [Self.head(200, "OK", ["Transfer-Encoding": "gzip"]), .body([0x1F, 0x78]), Self.end],
            pipelinable: false, prepare: Self.answering("GET"))
    }

    @Test func headResponseHasNoBodyDespiteContentLength() {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n",
            [Self.head(200, "OK", ["Content-Length": "1234"]), Self.end], prepare: Self.answering("HEAD"))
    }

    @Test(arguments: [(204, "No Content"), (304, "Not Modified")])
    func noContentAndNotModifiedHaveNoBody(status: Int, reason: String) {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.1 \(status) \(reason)\r\nTransfer-Encoding: chunked\r\n\r\n",
            [Self.head(status, reason, ["Transfer-Encoding": "chunked"]), Self.end], prepare: Self.answering("GET"))
    }

    @Test func interimResponsesPrecedeTheFinalOne() {
        expectEvents(
            HTTP1ResponseParser.self,
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
            [Self.head(100, "Continue"), Self.head(103, "Early Hints", ["Link": "</s.css>; rel=preload"]),
             Self.head(201, "Created", ["Content-Length": "2"]), .body(Array("ok".utf8)), Self.end],
            prepare: Self.answering("POST"))
    }

    @Test func switchingProtocolsEndsHTTP() throws {
        var parser = HTTP1ResponseParser()
        parser.expectResponse(toMethod: "GET")
        let frame: [UInt8] = [0x81, 0x02, 0x68, 0x69]
        parser.feed(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8))
        parser.feed(frame)
        #expect(try parser.next()
            == Self.head(101, "Switching Protocols", ["Upgrade": "websocket", "Connection": "Upgrade"]))
        #expect(try parser.next() == Self.end)
        #expect(parser.isTunnel)
        #expect(try parser.next() == nil)
        #expect(parser.takeRemainingBytes() == frame)
        #expect(try parser.finish() == nil, "end of input in a tunnel is not a truncated message")
    }

    /// An HTTP/2-only server (h2c) answers an HTTP/1.1 request with its SETTINGS frame (the one
    /// nghttpd sends: SETTINGS_MAX_CONCURRENT_STREAMS 100): named as such, not as a truncated or
    /// malformed status line, whether it arrives whole or a byte at a time.
    @Test func http2SettingsFrameIsNamed() throws {
        let settings: [UInt8] = [0x00, 0x00, 0x06, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x64]
        var whole = HTTP1ResponseParser()
        whole.expectResponse(toMethod: "GET")
        whole.feed(settings)
        #expect(throws: HTTP1ParseError.self) { try whole.next() }
        do { _ = try whole.next() } catch { #expect(error.code == .http2Frames && error.status == 502) }
        var trickled = HTTP1ResponseParser()
        trickled.expectResponse(toMethod: "GET")
        var thrown: HTTP1ParseError?
        for byte in settings where thrown == nil {
            trickled.feed([byte])
            do { _ = try trickled.next() } catch { thrown = error }
        }
        #expect(thrown?.code == .http2Frames)
        // Not every leading NUL is a SETTINGS frame: a DATA frame's header is only malformed.
        var other = HTTP1ResponseParser()
        other.expectResponse(toMethod: "GET")
        other.feed([0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x0D, 0x0A])
        do { _ = try other.next() } catch { #expect(error.code != .http2Frames) }
    }

    @Test func connectSuccessTurnsTheConnectionIntoATunnel() throws {
        var parser = HTTP1ResponseParser()
        parser.expectResponse(toMethod: "CONNECT")
        let serverHello: [UInt8] = [0x16, 0x03, 0x03, 0x00, 0x02, 0x48, 0x54]
        parser.feed(Array("HTTP/1.1 200 Connection Established\r\nContent-Length: 10\r\n\r\n".utf8) + serverHello)
        #expect(try parser.next() == Self.head(200, "Connection Established", ["Content-Length": "10"]))
        #expect(try parser.next() == Self.end)
        #expect(try parser.next() == nil)
        #expect(parser.takeRemainingBytes() == serverHello)
    }

    @Test func connectFailureKeepsSpeakingHTTP() {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 2\r\n\r\nno",
            [Self.head(407, "Proxy Authentication Required", ["Content-Length": "2"]), .body(Array("no".utf8)),
             Self.end],
            prepare: Self.answering("CONNECT"))
    }

    @Test func statusLineWithoutReasonIsAccepted() {
        expectEvents(
            HTTP1ResponseParser.self, "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
            [Self.head(200, "", ["Content-Length": "0"]), Self.end], prepare: Self.answering("GET"))
    }

    @Test func pipelinedResponsesFollowTheirMethods() throws {
        var parser = HTTP1ResponseParser()
        parser.expectResponse(toMethod: "HEAD")
        parser.expectResponse(toMethod: "GET")
        let events = try collectEvents(&parser, chunks: [Array(
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8)])
        #expect(events == [Self.head(200, "OK", ["Content-Length": "3"]), Self.end,
                           Self.head(200, "OK", ["Content-Length": "3"]), .body(Array("abc".utf8)), Self.end])
    }

    @Test func responseWithNoRequestWaitingIsRejected() {
        expectError(
            HTTP1ResponseParser.self, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", code: .unexpectedResponse,
            status: 502, reason: "no request waiting")
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort",
        "HTTP/1.1 200 OK\r\nContent-Le",
    ])
    func truncatedResponsesAreBadGateway(input: String) {
        expectError(
            HTTP1ResponseParser.self, input, code: .truncated, status: 502,
            reason: "connection closed before the message was complete", prepare: Self.answering("GET"))
    }
}
