import Testing
@testable import HTTP1

/// Each limit at its default: exactly at the limit parses, one byte or field over fails with the stated status.
@Suite struct HTTP1LimitsTests {
    private static let limits = HTTP1Limits.default

    /// A request line of exactly `length` bytes (CRLF excluded).
    private static func requestLine(length: Int) -> String {
        let fixed = "GET / HTTP/1.1".utf8.count
        return "GET /" + String(repeating: "a", count: length - fixed) + " HTTP/1.1"
    }

    @Test func defaultsAreAsDocumented() {
        #expect(Self.limits.maxStartLineLength == 8192)
        #expect(Self.limits.maxHeaderBlockSize == 65536)
        #expect(Self.limits.maxHeaderCount == 256)
        #expect(Self.limits.maxChunkSizeDigits == 16)
        #expect(Self.limits.maxChunkExtensionLength == 4096)
        #expect(Self.limits.maxTrailerBlockSize == 16384)
        #expect(Self.limits.maxTrailerCount == 64)
    }

    @Test func requestLineAtLimitPassesAndOneOverIs414() {
        let atLimit = Self.requestLine(length: 8192)
        expectEvents(
            HTTP1RequestParser.self, atLimit + "\r\n\r\n",
            [.head(HTTPRequestHead(method: "GET", target: String(atLimit.dropFirst(4).dropLast(9)))),
             .end(trailers: [:])])
        expectError(
            HTTP1RequestParser.self, Self.requestLine(length: 8193) + "\r\n\r\n", code: .startLineTooLong, status: 414,
            reason: "request line longer than 8192 bytes")
    }

    @Test func overlongRequestLineFailsBeforeItsEnd() throws {
        var parser = HTTP1RequestParser()
        parser.feed(Array(Self.requestLine(length: 8192).utf8) + [0x0D])
        #expect(try parser.next() == nil, "a CR after 8192 bytes may still end a line at the limit")
        parser.feed([0x61])
        #expect(throws: HTTP1ParseError.self) { try parser.next() }
    }

    @Test func statusLineOverLimitIs502() {
        let reason = String(repeating: "r", count: 8193 - "HTTP/1.1 200 ".utf8.count)
        expectError(
            HTTP1ResponseParser.self, "HTTP/1.1 200 \(reason)\r\n\r\n", code: .startLineTooLong, status: 502,
            reason: "status line longer than 8192 bytes", prepare: { $0.expectResponse(toMethod: "GET") })
    }

    /// One field `X: v…` sized so that the header section is `total` bytes with its final CRLF.
    private static func headerSection(total: Int) -> (String, HTTPHeaders) {
        let value = String(repeating: "v", count: total - "X: \r\n\r\n".utf8.count)
        return ("X: \(value)\r\n\r\n", ["X": value])
    }

    @Test func headerBlockAtLimitPassesAndOneOverIs431() {
        let (section, headers) = Self.headerSection(total: 65536)
        expectEvents(
            HTTP1RequestParser.self, "GET / HTTP/1.1\r\n" + section,
            [.head(HTTPRequestHead(method: "GET", target: "/", headers: headers)), .end(trailers: [:])])
        expectError(
            HTTP1RequestParser.self, "GET / HTTP/1.1\r\n" + Self.headerSection(total: 65537).0,
            code: .headerBlockTooLarge, status: 431, reason: "header section larger than 65536 bytes")
    }

    /// `count` fields named `H0`, `H1`, ….
    private static func fields(_ count: Int) -> (String, HTTPHeaders) {
        let pairs = (0..<count).map { ("H\($0)", "\($0)") }
        return (pairs.map { "\($0.0): \($0.1)\r\n" }.joined(), HTTPHeaders(pairs))
    }

    @Test func headerCountAtLimitPassesAndOneOverIs431() {
        let (lines, headers) = Self.fields(256)
        expectEvents(
            HTTP1RequestParser.self, "GET / HTTP/1.1\r\n\(lines)\r\n",
            [.head(HTTPRequestHead(method: "GET", target: "/", headers: headers)), .end(trailers: [:])])
        expectError(
            HTTP1RequestParser.self, "GET / HTTP/1.1\r\n\(Self.fields(257).0)\r\n", code: .tooManyHeaders, status: 431,
            reason: "more than 256 header fields")
    }

    private static let chunkedHead = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    private static let chunkedEvent = HTTP1RequestEvent.head(
        HTTPRequestHead(method: "POST", target: "/", headers: ["Transfer-Encoding": "chunked"]))

    @Test func chunkExtensionAtLimitPassesAndOneOverIs400() {
        let atLimit = ";" + String(repeating: "e", count: 4095)
        expectEvents(
            HTTP1RequestParser.self, Self.chunkedHead + "1\(atLimit)\r\nz\r\n0\r\n\r\n",
            [Self.chunkedEvent, .body([UInt8(ascii: "z")]), .end(trailers: [:])])
        expectError(
            HTTP1RequestParser.self, Self.chunkedHead + "1\(atLimit)e\r\nz\r\n0\r\n\r\n", code: .chunkExtensionTooLong,
            status: 400, reason: "chunk extension longer than 4096 bytes")
    }

    @Test func chunkSizeDigitsAtLimitPassAndOneOverIs400() {
        expectEvents(
            HTTP1RequestParser.self, Self.chunkedHead + "0000000000000002\r\nzz\r\n0\r\n\r\n",
            [Self.chunkedEvent, .body(Array("zz".utf8)), .end(trailers: [:])])
        expectError(
            HTTP1RequestParser.self, Self.chunkedHead + "00000000000000002\r\nzz\r\n0\r\n\r\n",
            code: .chunkSizeTooLarge, status: 400, reason: "chunk size has more than 16 hex digits")
    }

    @Test func largestChunkSizeIsAcceptedAndOneMoreOverflows() throws {
        var parser = HTTP1RequestParser()
        parser.feed(Array((Self.chunkedHead + "FFFFFFFFFFFFFFFF\r\nab").utf8))
        #expect(try parser.next() == Self.chunkedEvent)
        #expect(try parser.next() == .body(Array("ab".utf8)))
        #expect(try parser.next() == nil)
        expectError(
            HTTP1RequestParser.self, Self.chunkedHead + "10000000000000000\r\n", code: .chunkSizeTooLarge, status: 400,
            reason: "overflows 64 bits", limits: HTTP1Limits(maxChunkSizeDigits: 20))
    }

    @Test func trailerBlockAtLimitPassesAndOneOverIs431() {
        let value = String(repeating: "v", count: 16384 - "T: \r\n\r\n".utf8.count)
        expectEvents(
            HTTP1RequestParser.self, Self.chunkedHead + "0\r\nT: \(value)\r\n\r\n",
            [Self.chunkedEvent, .end(trailers: ["T": value])])
        expectError(
            HTTP1RequestParser.self, Self.chunkedHead + "0\r\nT: \(value)v\r\n\r\n", code: .trailerBlockTooLarge,
            status: 431, reason: "trailer section larger than 16384 bytes")
    }

    @Test func trailerCountAtLimitPassesAndOneOverIs431() {
        let (lines, trailers) = Self.fields(64)
        expectEvents(
            HTTP1RequestParser.self, Self.chunkedHead + "0\r\n\(lines)\r\n",
            [Self.chunkedEvent, .end(trailers: trailers)])
        expectError(
            HTTP1RequestParser.self, Self.chunkedHead + "0\r\n\(Self.fields(65).0)\r\n", code: .tooManyTrailers,
            status: 431, reason: "more than 64 trailer fields")
    }

    @Test func limitsAreConfigurable() {
        expectError(
            HTTP1RequestParser.self, "GET /abc HTTP/1.1\r\n\r\n", code: .startLineTooLong, status: 414,
            reason: "longer than 16 bytes", limits: HTTP1Limits(maxStartLineLength: 16))
    }
}
