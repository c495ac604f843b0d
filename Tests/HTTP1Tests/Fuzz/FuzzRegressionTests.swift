import Foundation
import Testing
@testable import HTTP1

/// Inputs the fuzz targets (fuzz/run) found, kept as regression tests. Each states the
/// property the target checks and that the input once broke.
@Suite struct FuzzRegressionTests {
    /// Outcome of feeding `input` in pieces of `step` bytes: the status of the error, or nil.
    private func rejection(_ input: [UInt8], step: Int) -> Int? {
        var parser = HTTP1RequestParser()
        var offset = 0
        do {
            while offset < input.count {
                parser.feed(input[offset..<min(input.count, offset + step)])
                offset += step
                while try parser.next() != nil {}
            }
            while try parser.finish() != nil {}
            return nil
        } catch {
            return error.status
        }
    }

    /// fuzz/corpus/http1-request/regression-bare-lf-in-chunk-size: a chunk-size line holding a
    /// CR and ended by a bare LF. Whole, the parser saw the bare LF first; split before the LF,
    /// it saw the non-hex byte first. The reasons differ (both are true); what must not differ
    /// is the verdict: 400 however the bytes arrive.
    @Test func chunkSizeLineWithCRAndBareLFIsRejectedHoweverItArrives() {
        let input = Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\rT#ansfercoding: \n\r\n".utf8)
        for step in [input.count, 1, 2, 80] {
            #expect(rejection(input, step: step) == 400, "fed \(step) bytes at a time")
        }
    }

    /// fuzz/corpus/chunked/regression-long-size-bare-lf: 18 hex digits, a CR, more digits and
    /// a bare LF: too long a size or a bare LF depending on where reads fall; always 400.
    @Test func overlongChunkSizeWithBareLFIsRejectedHoweverItArrives() {
        let body = String(repeating: "f", count: 18) + "\r" + String(repeating: "f", count: 11) + "\nf" + "ffffff\r"
        let input = Array(("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + body).utf8)
        for step in [input.count, 1, 7] {
            #expect(rejection(input, step: step) == 400, "fed \(step) bytes at a time")
        }
    }

    /// fuzz/corpus/http1-request/regression-socks-byte-after-empty-line: a request, an empty
    /// line, then a line that begins with 0x04 (SOCKS4's version) and runs past the start line's
    /// limit. The check for another protocol's first byte ran only before empty lines were
    /// skipped: fed whole it was a 414 (too long), split after the empty line a 400 (SOCKS). It
    /// now runs where each line starts: 400 however the bytes arrive.
    @Test func aSOCKSByteAfterAnEmptyLineIsOneVerdict() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fuzz/corpus/http1-request/regression-socks-byte-after-empty-line")
        let input = [UInt8](try Data(contentsOf: url))
        for step in [input.count, 1, 27, 80] {
            var parser = HTTP1RequestParser(limits: HTTP1Limits(maxStartLineLength: 256, maxHeaderBlockSize: 1024,
                                                                 maxHeaderCount: 16, maxChunkExtensionLength: 64,
                                                                 maxTrailerBlockSize: 512, maxTrailerCount: 8))
            var failure: HTTP1ParseError?
            var offset = 0
            while offset < input.count, failure == nil {
                parser.feed(input[offset..<min(input.count, offset + step)])
                offset += step
                do { while try parser.next() != nil {} } catch { failure = error }
            }
            #expect(failure?.code == .socksGreeting && failure?.status == 400, "fed \(step) bytes at a time: \(String(describing: failure))")
        }
    }

    /// The start line's twin of the trailer case below: a request line over its 8 KiB limit
    /// and ended by a bare LF was 400 (the bare LF) fed whole and 414 (too long) fed in pieces.
    /// The line scanner now lets each reader check a line's bytes before refusing its bare LF.
    @Test func overlongRequestLineWithBareLFIsOneVerdict() {
        let input = Array(("GET /" + String(repeating: "a", count: 9_000) + " HTTP/1.1\nHost: a\r\n\r\n").utf8)
        for step in [input.count, 1, 100, 8_192] {
            #expect(rejection(input, step: step) == 414, "fed \(step) bytes at a time")
        }
    }

    /// Outcome of the chunked fuzz target's decoding (fuzz/Sources/FuzzChunked): its fixed head,
    /// its limits (64-byte extensions, a 512-byte trailer block, 8 trailers), `body` fed `step`
    /// bytes at a time.
    private func chunkedOutcome(_ body: [UInt8], step: Int) -> String {
        var parser = HTTP1RequestParser(limits: HTTP1Limits(maxChunkExtensionLength: 64, maxTrailerBlockSize: 512,
                                                            maxTrailerCount: 8))
        parser.feed(Array("POST /upload HTTP/1.1\r\nHost: fuzz\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        var offset = 0
        do {
            _ = try parser.next()
            while true {
                while let event = try parser.next() {
                    if case .end(let trailers) = event { return "end \(trailers.count)" }
                }
                guard offset < body.count else { break }
                parser.feed(body[offset..<min(body.count, offset + step)])
                offset += step
            }
            return "incomplete"
        } catch {
            return "error \(error.status)"
        }
    }

    /// fuzz/corpus/chunked/regression-trailer-block-over-limit (found by CI's fuzz run): after
    /// the last chunk, ~620 bytes of trailer section with NULs, 0xFF and a bare LF before its
    /// first CRLF, past the 512-byte limit. The verdict must not depend on where reads fall.
    @Test func trailerBlockOverItsLimitWithInvalidBytesHasOneVerdict() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fuzz/corpus/chunked/regression-trailer-block-over-limit")
        let body = [UInt8](try Data(contentsOf: url))
        let whole = chunkedOutcome(body, step: body.count)
        for step in [1, 2, 7, 64, 511] {
            #expect(chunkedOutcome(body, step: step) == whole, "fed \(step) bytes at a time")
        }
    }
}
