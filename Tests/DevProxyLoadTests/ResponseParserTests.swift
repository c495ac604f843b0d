import Testing
@testable import DevProxyLoad

/// What feeding a response produced: the parser afterwards and how many bytes it took.
private struct Outcome {
    var parser: ResponseParser
    var used: Int
}

/// Feeds `text` in pieces that end at `cuts` (indexes into the bytes), as successive socket
/// reads would deliver them, stopping like `Slot` does once the response is complete.
///
/// Each piece is a copy of its own, so a parser that looked outside the piece it was given
/// would not find the bytes of the previous one there.
private func feed(_ text: String, cuttingAt cuts: [Int] = []) throws(LoadError) -> Outcome {
    let bytes = Array(text.utf8)
    var parser = ResponseParser()
    var used = 0
    var start = 0
    for end in cuts.filter({ $0 > 0 && $0 < bytes.count }) + [bytes.count] where !parser.isComplete {
        let piece = Array(bytes[start..<end])
        let taken = try piece.withUnsafeBytes { read in
            Result { () throws(LoadError) in try parser.feed(read) }
        }.get()
        used += taken
        start = end
    }
    return Outcome(parser: parser, used: used)
}

/// Feeds `text` whole, byte by byte and split in two at every index; expects the same outcome each way.
/// - Returns: the outcome of the whole feed.
private func feedEveryWay(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Outcome {
    let whole = try feed(text)
    let count = text.utf8.count
    var splits: [[Int]] = [Array(1..<max(1, count))]
    for cut in 1..<max(1, count) { splits.append([cut]) }
    for cuts in splits {
        let other = try feed(text, cuttingAt: cuts)
        #expect(other.used == whole.used, "cuts \(cuts.prefix(3))", sourceLocation: sourceLocation)
        #expect(other.parser.isComplete == whole.parser.isComplete, sourceLocation: sourceLocation)
        #expect(other.parser.status == whole.parser.status, sourceLocation: sourceLocation)
        #expect(other.parser.bodyBytes == whole.parser.bodyBytes, sourceLocation: sourceLocation)
        #expect(other.parser.closesConnection == whole.parser.closesConnection, sourceLocation: sourceLocation)
    }
    return whole
}

/// The reason of the `LoadError` that feeding `text` (cut at `cuts`) throws, or nil when none is thrown.
private func failure(_ text: String, cuttingAt cuts: [Int] = []) -> String? {
    do throws(LoadError) {
        _ = try feed(text, cuttingAt: cuts)
        return nil
    } catch {
        #expect(error.kind == .io)
        return error.reason
    }
}

@Suite struct ResponseParserTests {
    private static let ok = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"
        + "hello"

    @Test func contentLengthBodyCompletesTheResponseAnyWayItIsSplit() throws {
        let outcome = try feedEveryWay(Self.ok)
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.status == 200)
        #expect(outcome.parser.bodyBytes == 5)
        #expect(!outcome.parser.closesConnection)
        #expect(outcome.used == Self.ok.utf8.count)
    }

    @Test func headWithoutItsBlankLineIsIncomplete() throws {
        let outcome = try feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r")
        #expect(!outcome.parser.isComplete)
        #expect(outcome.parser.status == 0)
        #expect(outcome.parser.started)
    }

    @Test func blankLineSplitAcrossFeedsEndsTheHead() throws {
        let head = "HTTP/1.1 204 No Content\r\nX: y\r\n\r\n"
        let blankLineStart = head.utf8.count - 4
        let cutsInsideTheBlankLine = [[1], [2], [3], [1, 3]].map { $0.map { blankLineStart + $0 } }
        for cuts in cutsInsideTheBlankLine {
            let outcome = try feed(head, cuttingAt: cuts)
            #expect(outcome.parser.isComplete, "cuts \(cuts)")
            #expect(outcome.parser.status == 204)
        }
        // A CR LF CR spread over earlier feeds is not a blank line until its LF arrives.
        let notYet = try feed("HTTP/1.1 204 No Content\r\n\r", cuttingAt: [24, 25])
        #expect(!notYet.parser.isComplete)
    }

    @Test func bareLineFeedsNeitherEndTheHeadNorALine() throws {
        // The whole head is one line, the status line: no Content-Length, so the body runs until close.
        let outcome = try feed("HTTP/1.1 200 OK\n\nContent-Length: 1\r\n\r\nx")
        #expect(outcome.parser.status == 200)
        #expect(!outcome.parser.isComplete)
        #expect(outcome.parser.bodyBytes == 1)
        #expect(outcome.parser.closesConnection)
    }

    @Test func fieldNamesAndValuesAreReadIgnoringCaseAndSurroundingBlanks() throws {
        let outcome = try feedEveryWay("HTTP/1.1 200 OK\r\ncontent-LENGTH: \t 3 \t\r\nCONNECTION:CLOSE\r\n\r\nabc")
        #expect(outcome.parser.bodyBytes == 3)
        #expect(outcome.parser.closesConnection)
    }

    @Test func lastContentLengthWins() throws {
        let outcome = try feed("HTTP/1.1 200 OK\r\nContent-Length: 9\r\nContent-Length: 2\r\n\r\nab")
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.bodyBytes == 2)
    }

    @Test func zeroContentLengthCompletesAtTheHead() throws {
        let outcome = try feed("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.bodyBytes == 0)
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() throws {
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\nA \r\n0123456789\r\nf\t;x\r\n0123456789abcde\r\n"
            + "0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n"
        let outcome = try feedEveryWay(text)
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.bodyBytes == 30)
        #expect(outcome.used == text.utf8.count)
    }

    @Test func chunkedWinsOverContentLengthAndLineFeedAloneEndsAChunkLine() throws {
        let outcome = try feedEveryWay(
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: Chunked\r\n\r\n3\nabc\r\n0\n\n")
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.bodyBytes == 3)
    }

    @Test(arguments: [
        ("chunked", true), ("gzip, chunked", true), ("chunked,,", true), (" CHUNKED ", true),
        ("gzip,\tchunked\t,", true), ("chunked, gzip", false), ("chunked , ,", false), ("gzip", false), (",", false),
        ("chunkedx", false), ("", false),
    ])
    func onlyAFinalChunkedCodingFramesAsChunked(value: String, chunked: Bool) throws {
        let outcome = try feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: \(value)\r\nContent-Length: 2\r\n\r\n0\r\n\r\n")
        #expect(outcome.parser.isComplete)
        // Chunked reads the empty chunked body (7 bytes, none of them body); else 2 body bytes by Content-Length.
        #expect(outcome.parser.bodyBytes == (chunked ? 0 : 2))
        #expect(outcome.used == 59 + value.utf8.count + (chunked ? 5 : 2))
    }

    @Test func interimResponsesAreSkipped() throws {
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 199 Misc\r\n\r\n"
            + "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\nConnection: close\r\n\r\n"
            + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
        let outcome = try feedEveryWay(text)
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.status == 201)
        #expect(outcome.parser.bodyBytes == 2)
        #expect(!outcome.parser.closesConnection)  // the interim response's Connection does not carry over
    }

    @Test(arguments: [204, 304])
    func noContentAndNotModifiedHaveNoBody(status: Int) throws {
        let text = "HTTP/1.1 \(status) X\r\nContent-Length: 10\r\n\r\nnext response"
        let outcome = try feedEveryWay(text)
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.status == status)
        #expect(outcome.parser.bodyBytes == 0)
        #expect(outcome.used == text.utf8.count - "next response".utf8.count)
    }

    @Test(arguments: [
        ("HTTP/1.1", "", false), ("HTTP/1.1", "Connection: close\r\n", true),
        ("HTTP/1.1", "Connection: Upgrade, Close\r\n", true), ("HTTP/1.1", "Connection: keep-alive, close\r\n", false),
        ("HTTP/1.1", "Connection: close\r\nConnection: keep-alive\r\n", false),
        ("HTTP/1.0", "", true), ("HTTP/1.0", "Connection: Keep-Alive\r\n", false),
        ("HTTP/1.0", "Connection: x\r\n", true),
    ])
    func connectionFieldAndVersionDecideWhetherTheServerCloses(version: String, fields: String, closes: Bool) throws {
        let outcome = try feed("\(version) 200 OK\r\n\(fields)Content-Length: 0\r\n\r\n")
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.closesConnection == closes)
    }

    @Test func bodyWithoutLengthRunsUntilTheServerCloses() throws {
        var outcome = try feedEveryWay("HTTP/1.1 200 OK\r\nServer: x\r\n\r\nsome body bytes")
        #expect(!outcome.parser.isComplete)
        #expect(outcome.parser.bodyBytes == 15)
        #expect(outcome.parser.closesConnection)
        let completed = outcome.parser.finishOnClose()
        #expect(completed)
        #expect(outcome.parser.isComplete)
    }

    @Test func closeBeforeTheLengthIsReachedLeavesTheResponseIncomplete() throws {
        var outcome = try feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        let fixedCompleted = outcome.parser.finishOnClose()
        #expect(!fixedCompleted)
        var chunked = try feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
        let chunkedCompleted = chunked.parser.finishOnClose()
        #expect(!chunkedCompleted)
        #expect(!chunked.parser.isComplete)
    }

    @Test func bytesAfterTheResponseAreNotTaken() throws {
        let bytes = Array((Self.ok + "HTTP/1.1 200 OK\r\n").utf8)
        var parser = ResponseParser()
        let used = try bytes.withUnsafeBytes { whole in
            Result { () throws(LoadError) in try parser.feed(whole) }
        }.get()
        #expect(used == Self.ok.utf8.count)
        #expect(parser.isComplete)
        let again = try bytes.withUnsafeBytes { whole in
            Result { () throws(LoadError) in try parser.feed(whole) }
        }.get()
        #expect(again == 0)

        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
        let outcome = try feed(chunked + "extra")
        #expect(outcome.parser.isComplete)
        #expect(outcome.used == chunked.utf8.count)
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK", 200), ("HTTP/1.0 404 Not Found", 404), ("HTTP/1.1   200", 200), ("  HTTP/1.1 999 x", 999),
        ("HTTP/1.1 +200 OK", 200), ("HTTP/1.1 0200 OK", 200), ("HTTP/1.9 200 OK", 200),
    ])
    func statusLinesThatParse(line: String, status: Int) throws {
        let outcome = try feed("\(line)\r\nContent-Length: 0\r\n\r\n")
        #expect(outcome.parser.status == status)
    }

    @Test(arguments: [
        "HTTP/2 200 OK", "http/1.1 200 OK", "HTTP/1.1 abc OK", "HTTP/1.1 99 Low", "HTTP/1.1 1000 High",
        "HTTP/1.1 -200 x",
        "HTTP/1.1", "HTTP/1.1 20 0", "ICY 200 OK", "HTTP/1.1\t200 OK",
    ])
    func malformedStatusLineIsRejectedQuotingIt(line: String) {
        #expect(failure("\(line)\r\nContent-Length: 0\r\n\r\n") == "bad status line '\(line)'")
    }

    @Test func leadingEmptyLineIsSkippedButAnEmptyHeadIsRejected() throws {
        let outcome = try feed("\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(outcome.parser.status == 200)
        #expect(failure("\r\n\r\n") == "empty response head")
    }

    @Test func longBadStatusLineIsQuotedUpTo80Characters() {
        let line = "HTTP/1.1 " + String(repeating: "x", count: 200)
        #expect(failure(line + "\r\n\r\n") == "bad status line '\(line.prefix(80))'")
    }

    @Test(arguments: [
        ("12x", "12x"), ("ABC", "abc"), ("", ""), ("-1", "-1"), ("1 2", "1 2"),
        ("18446744073709551616", "18446744073709551616"),  // UInt64.max + 1
    ])
    func badContentLengthIsRejectedQuotingIt(value: String, quoted: String) {
        #expect(failure("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n") == "bad Content-Length '\(quoted)'")
    }

    @Test func badContentLengthIsRejectedEvenOnAnInterimResponse() {
        #expect(failure("HTTP/1.1 100 Continue\r\nContent-Length: x\r\n\r\n") == "bad Content-Length 'x'")
    }

    @Test func contentLengthAcceptsWhatUInt64Accepts() throws {
        #expect(try feed("HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc").parser.bodyBytes == 3)
        #expect(try feed("HTTP/1.1 200 OK\r\nContent-Length: -0\r\n\r\n").parser.isComplete)
        #expect(try feed("HTTP/1.1 200 OK\r\nContent-Length: 0003\r\n\r\nabc").parser.bodyBytes == 3)
    }

    @Test func headUpTo64KiBIsAcceptedAndOneByteMoreIsNot() throws {
        let start = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: "
        let padding = ResponseParser.maxHeadBytes - start.utf8.count - 4
        let largest = start + String(repeating: "a", count: padding) + "\r\n\r\n"
        #expect(largest.utf8.count == 65536)
        #expect(try feed(largest).parser.isComplete)
        #expect(try feed(largest, cuttingAt: [100, 65533]).parser.isComplete)

        let tooLarge = start + String(repeating: "a", count: padding + 1) + "\r\n\r\n"
        #expect(failure(tooLarge) == "response head over 64 KiB")
        #expect(failure(tooLarge, cuttingAt: [100, 65534]) == "response head over 64 KiB")
        // Without a blank line the limit still applies, however the head arrives.
        let endless = "HTTP/1.1 200 OK\r\n" + String(repeating: "a", count: 70_000)
        #expect(failure(endless) == "response head over 64 KiB")
        let everyKiB = Array(stride(from: 1000, to: 70_000, by: 1000))
        #expect(failure(endless, cuttingAt: everyKiB) == "response head over 64 KiB")
    }

    @Test func theLimitCountsEachHeadOnItsOwn() throws {
        let interim = "HTTP/1.1 103 Early Hints\r\nLink: " + String(repeating: "a", count: 40_000) + "\r\n\r\n"
        let final = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "b", count: 40_000) + "\r\nContent-Length: 0\r\n\r\n"
        let outcome = try feed(interim + final, cuttingAt: [30_000, 50_000])
        #expect(outcome.parser.isComplete)
        #expect(outcome.parser.status == 200)
    }

    @Test func chunkSizeLineUpTo4KiBIsAcceptedAndOneByteMoreIsNot() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let extensionLength = ResponseParser.maxChunkLineBytes - 3  // "1;" + extension + CR
        let longest = head + "1;" + String(repeating: "e", count: extensionLength) + "\r\nx\r\n0\r\n\r\n"
        #expect(try feed(longest).parser.isComplete)
        #expect(try feed(longest, cuttingAt: [head.utf8.count + 10]).parser.isComplete)
        let tooLong = head + "1;" + String(repeating: "e", count: extensionLength + 1) + "\r\nx\r\n0\r\n\r\n"
        #expect(failure(tooLong) == "chunk line over 4 KiB")
        #expect(failure(tooLong, cuttingAt: [head.utf8.count + 10]) == "chunk line over 4 KiB")
    }

    @Test(arguments: ["xyz", "", ";ext", "1000000000000000", "-1"])
    func badChunkSizeIsRejected(line: String) {
        #expect(failure("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(line)\r\n") == "bad chunk size line")
    }

    @Test func chunkDataMustEndWithCRLF() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(failure(head + "3\r\nabcX") == "chunk data not followed by CRLF")
        #expect(failure(head + "3\r\nabc\rX") == "chunk data not followed by CRLF")
    }
}
