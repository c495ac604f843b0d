import Testing
@testable import HTTP1

/// Every framing and smuggling case the parsers must reject, with the status and reason a proxy reports.
@Suite struct MessageFramingTests {
    /// One malformed request: what it is, its bytes, and the expected error.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let code: HTTP1ParseError.Code
        let status: Int
        let reason: String

        var testDescription: String { name }

        init(_ name: String, _ input: String, _ code: HTTP1ParseError.Code, _ status: Int, _ reason: String) {
            (self.name, self.input, self.code, self.status, self.reason) = (name, input, code, status, reason)
        }
    }

    static let chunkedHead = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"

    static let requestCases: [Case] = [
        Case("CL and TE together", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
             .contentLengthWithTransferEncoding, 400, "both Content-Length and Transfer-Encoding present"),
        Case("TE and CL together, TE first",
             "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
             .contentLengthWithTransferEncoding, 400, "both Content-Length and Transfer-Encoding present"),
        Case("differing CL fields", "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
             .conflictingContentLength, 400, "several differing Content-Length values"),
        Case("differing CL list", "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n",
             .conflictingContentLength, 400, "several differing Content-Length values"),
        Case("CL not digits", "POST / HTTP/1.1\r\nContent-Length: 5a\r\n\r\n",
             .invalidContentLength, 400, "Content-Length is not a decimal number"),
        Case("CL negative", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
             .invalidContentLength, 400, "Content-Length is not a decimal number"),
        Case("CL with plus sign", "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
             .invalidContentLength, 400, "Content-Length is not a decimal number"),
        Case("CL empty", "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
             .invalidContentLength, 400, "Content-Length is not a decimal number"),
        Case("CL overflows", "POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n",
             .invalidContentLength, 400, "Content-Length overflows 64 bits"),
        Case("TE final coding gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
             .transferEncodingNotChunked, 400, "final coding is not chunked"),
        Case("TE chunked then gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
             .transferEncodingNotChunked, 400, "final coding is not chunked"),
        Case("TE unknown coding", "POST / HTTP/1.1\r\nTransfer-Encoding: foo, chunked\r\n\r\n",
             .unknownTransferCoding, 501, "unknown transfer coding \"foo\""),
        Case("TE chunked twice", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
             .invalidTransferEncoding, 400, "chunked transfer coding applied more than once"),
        Case("TE empty", "POST / HTTP/1.1\r\nTransfer-Encoding: \r\n\r\n",
             .invalidTransferEncoding, 400, "Transfer-Encoding is empty"),
        Case("TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
             .transferEncodingInHTTP10, 400, "Transfer-Encoding in an HTTP/1.0 message"),
        Case("chunk size not hex", chunkedHead + "zz\r\n", .invalidChunkSize, 400, "chunk size is not hexadecimal"),
        Case("chunk size 0x prefix", chunkedHead + "0x5\r\nhello\r\n", .invalidChunkSize, 400,
             "chunk size is not hexadecimal"),
        Case("chunk size empty", chunkedHead + "\r\n", .invalidChunkSize, 400, "chunk size is not hexadecimal"),
        Case("chunk size negative", chunkedHead + "-5\r\n", .invalidChunkSize, 400, "chunk size is negative"),
        Case("chunk size over 16 digits", chunkedHead + "10000000000000000\r\n", .chunkSizeTooLarge, 400,
             "chunk size has more than 16 hex digits"),
        Case("chunk extension too long", chunkedHead + "1;" + String(repeating: "e", count: 4096) + "\r\n",
             .chunkExtensionTooLong, 400, "chunk extension longer than 4096 bytes"),
        Case("chunk extension without semicolon", chunkedHead + "5 ext\r\nhello\r\n", .invalidChunkExtension, 400,
             "malformed chunk extension"),
        Case("no CRLF after chunk data", chunkedHead + "3\r\nabcX\r\n0\r\n\r\n", .missingChunkDataCRLF, 400,
             "missing CRLF after chunk data"),
        Case("bare LF after chunk data", chunkedHead + "3\r\nabc\n0\r\n\r\n", .missingChunkDataCRLF, 400,
             "missing CRLF after chunk data"),
        Case("chunk size line ends in bare LF", chunkedHead + "3\nabc\r\n", .bareLF, 400,
             "chunk size line ends in a bare LF"),
        Case("obs-fold", "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", .obsoleteLineFolding, 400,
             "obsolete line folding (obs-fold) in header section"),
        Case("obs-fold with HTAB", "GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", .obsoleteLineFolding, 400,
             "obsolete line folding"),
        Case("whitespace after request line", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", .obsoleteLineFolding, 400,
             "whitespace between the start line and the first header field"),
        Case("obs-fold in trailers", chunkedHead + "0\r\nX: a\r\n b\r\n\r\n", .obsoleteLineFolding, 400,
             "obs-fold) in trailer section"),
        Case("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", .whitespaceBeforeColon, 400,
             "whitespace between header field name and colon"),
        Case("tab before colon", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", .whitespaceBeforeColon, 400,
             "whitespace between header field name and colon"),
        Case("NUL in header value", "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", .nulCharacter, 400, "NUL byte in header line"),
        Case("bare CR in header value", "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", .bareCR, 400,
             "bare CR (not followed by LF) in header line"),
        Case("bare LF ending a header line", "GET / HTTP/1.1\r\nHost: a\n\r\n", .bareLF, 400,
             "header line ends in a bare LF"),
        Case("bare LF ending the request line", "GET / HTTP/1.1\nHost: a\n\n", .bareLF, 400,
             "request line ends in a bare LF"),
        Case("bare LF ending the header section", "GET / HTTP/1.1\r\nHost: a\r\n\n", .bareLF, 400,
             "header line ends in a bare LF"),
        Case("control character in value", "GET / HTTP/1.1\r\nX: a\u{01}\r\n\r\n", .invalidHeaderValue, 400,
             "control character 0x01 in header line"),
        Case("bare CR in request line", "GET /a\rb HTTP/1.1\r\n\r\n", .bareCR, 400,
             "bare CR (not followed by LF) in request line"),
        Case("NUL in request line", "GET /\0 HTTP/1.1\r\n\r\n", .nulCharacter, 400, "NUL byte in request line"),
        Case("header line without colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", .missingColon, 400,
             "header line has no colon"),
        Case("empty header name", "GET / HTTP/1.1\r\n: a\r\n\r\n", .invalidHeaderName, 400,
             "header field name is empty"),
        Case("non-token header name", "GET / HTTP/1.1\r\nX@Y: a\r\n\r\n", .invalidHeaderName, 400,
             "header field name contains an invalid character (0x40)"),
        Case("HTAB inside header name", "GET / HTTP/1.1\r\nX\tY: a\r\n\r\n", .invalidHeaderName, 400,
             "invalid character (0x09)"),
        Case("request line without version", "GET /\r\n\r\n", .missingVersion, 400, "request line has no HTTP version"),
        Case("request line with method only", "GET\r\n\r\n", .malformedStartLine, 400,
             "request line has no request target"),
        Case("request line with double space", "GET  / HTTP/1.1\r\n\r\n", .malformedStartLine, 400,
             "request line has two spaces before the target"),
        Case("non-token method", "G(T / HTTP/1.1\r\n\r\n", .invalidMethod, 400, "method is empty or not a token"),
        Case("request line starting with space", " GET / HTTP/1.1\r\n\r\n", .invalidMethod, 400,
             "method is empty or not a token"),
        Case("HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", .unsupportedVersion, 505, "HTTP version HTTP/2.0 is not supported"),
        Case("HTTP/1.2", "GET / HTTP/1.2\r\n\r\n", .unsupportedVersion, 505, "HTTP version HTTP/1.2 is not supported"),
        Case("HTTP/0.9 style version", "GET / HTTP/0.9\r\n\r\n", .unsupportedVersion, 505, "HTTP/0.9 is not supported"),
        Case("lowercase version", "GET / http/1.1\r\n\r\n", .malformedVersion, 400, "malformed HTTP version"),
        Case("two-digit minor version", "GET / HTTP/1.10\r\n\r\n", .malformedVersion, 400, "malformed HTTP version"),
        Case("trailing space after version", "GET / HTTP/1.1 \r\n\r\n", .malformedVersion, 400,
             "malformed HTTP version"),
    ]

    /// A byte that is not UTF-8 in the target is named as sent: the message named 0xEF, the first
    /// byte of U+FFFD, which the target's decoding had put in place of the client's 0xFF. Raw
    /// UTF-8 (`/café`) is taken as it came, as nginx and mitmproxy take it.
    @Test func aNonUTF8ByteInTheTargetIsNamedAsSentAndRawUTF8IsTaken() throws {
        expectError(HTTP1RequestParser.self, Array("GET /caf".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8),
                    code: .invalidTarget, status: 400, reason: "request target contains an invalid character (0xFF)")
        var parser = HTTP1RequestParser()
        parser.feed(Array("GET /caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        guard case .head(let head)? = try parser.next() else {
            Issue.record("no head")
            return
        }
        #expect(head.target == "/café")
    }

    @Test(arguments: requestCases)
    func requestIsRejected(_ testCase: Case) {
        expectError(
            HTTP1RequestParser.self, testCase.input, code: testCase.code, status: testCase.status,
            reason: testCase.reason)
    }

    static let responseCases: [Case] = [
        Case("CL and TE together", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
             .contentLengthWithTransferEncoding, 502, "both Content-Length and Transfer-Encoding present"),
        Case("differing CL", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
             .conflictingContentLength, 502, "several differing Content-Length values"),
        Case("CL not digits", "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
             .invalidContentLength, 502, "Content-Length is not a decimal number"),
        Case("TE in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
             .transferEncodingInHTTP10, 502, "Transfer-Encoding in an HTTP/1.0 message"),
        Case("chunk size not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\ng\r\n",
             .invalidChunkSize, 502, "chunk size is not hexadecimal"),
        Case("obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", .obsoleteLineFolding, 502, "obs-fold"),
        Case("space before colon", "HTTP/1.1 200 OK\r\nServer : x\r\n\r\n", .whitespaceBeforeColon, 502,
             "whitespace between header field name and colon"),
        Case("bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", .bareLF, 502, "status line ends in a bare LF"),
        Case("HTTP/2.0 status line", "HTTP/2.0 200 OK\r\n\r\n", .unsupportedVersion, 502, "HTTP/2.0 is not supported"),
        Case("two-digit status", "HTTP/1.1 20 OK\r\n\r\n", .invalidStatusCode, 502, "three digits"),
        Case("status 099", "HTTP/1.1 099 Odd\r\n\r\n", .invalidStatusCode, 502, "three digits from 100 to 999"),
        Case("four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", .invalidStatusCode, 502, "not followed by a space"),
        Case("no status code", "HTTP/1.1\r\n\r\n", .malformedStartLine, 502, "status line has no status code"),
        Case("control character in reason", "HTTP/1.1 200 O\u{7F}K\r\n\r\n", .invalidHeaderValue, 502,
             "control character 0x7F in status line"),
    ]

    @Test(arguments: responseCases)
    func responseIsRejected(_ testCase: Case) {
        expectError(
            HTTP1ResponseParser.self, testCase.input, code: testCase.code, status: testCase.status,
            reason: testCase.reason, prepare: { $0.expectResponse(toMethod: "GET") })
    }

    @Test func unknownTransferCodingInAResponseIsReadUntilClose() throws {
        #expect(try MessageFraming.of(
            .response(status: 200, requestMethod: "GET"), version: .http11, headers: ["Transfer-Encoding": "br"])
            == .untilClose)
    }

    @Test func framingRulesInOrder() throws {
        let chunked: HTTPHeaders = ["Transfer-Encoding": "chunked"]
        #expect(try MessageFraming.of(.request, version: .http11, headers: [:]) == .noBody)
        #expect(try MessageFraming.of(.request, version: .http11, headers: ["Content-Length": "0"]) == .noBody)
        #expect(try MessageFraming.of(.request, version: .http11, headers: ["Content-Length": "7"]) == .length(7))
        #expect(try MessageFraming.of(.request, version: .http11, headers: chunked) == .chunked)
        #expect(try MessageFraming.of(.response(status: 200, requestMethod: "GET"), version: .http11, headers: [:])
            == .untilClose)
        #expect(try MessageFraming.of(.response(status: 200, requestMethod: "HEAD"), version: .http11, headers: chunked)
            == .noBody)
        #expect(try MessageFraming.of(.response(status: 101, requestMethod: "GET"), version: .http11, headers: [:])
            == .tunnel)
        #expect(try MessageFraming.of(.response(status: 204, requestMethod: "CONNECT"), version: .http11, headers: [:])
            == .tunnel)
        #expect(try MessageFraming.of(.response(status: 304, requestMethod: "GET"), version: .http11, headers: chunked)
            == .noBody)
        #expect(try MessageFraming.of(.response(status: 299, requestMethod: "CONNECT"), version: .http11, headers: [:])
            == .tunnel)
        #expect(try MessageFraming.of(
            .response(status: 400, requestMethod: "CONNECT"), version: .http11, headers: chunked)
            == .chunked)
    }
}
