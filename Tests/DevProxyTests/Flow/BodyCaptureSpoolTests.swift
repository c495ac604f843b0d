@testable import DevProxy
import CertAuthority
import Foundation
@testable import SessionStore
import Testing
import TestSupport

/// A capture with the session store's spool: small bodies stay in memory and make no file; a
/// larger one continues in a 0600 file up to the store's limit; the flow log's body is the same
/// as without a spool; the file goes when its last reference does.
@Suite struct BodyCaptureSpoolTests {
    /// A body of `count` bytes: text (repeating lines) or binary (every byte value).
    static func body(_ count: Int, text: Bool) -> [UInt8] {
        let unit: [UInt8] = text ? Array("line of plain text, 0123456789\n".utf8) : Array(0...255)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + unit.count)
        while bytes.count < count { bytes += unit }
        return Array(bytes.prefix(count))
    }

    /// Feeds `bytes` in pieces of growing, uneven sizes (1 byte up to ~100 KiB).
    static func feed(_ capture: BodyCapture, _ bytes: [UInt8]) {
        var offset = 0
        var piece = 1
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            capture.append(bytes[offset..<end])
            offset = end
            piece = piece * 7 % 100_003 + 1
        }
    }

    static func names(_ directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func bodiesWithinTheHeadMakeNoFile() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        for count in [0, 100, BodySpool.headBytes] {
            let capture = BodyCapture(limit: 1 << 20, spool: spool)
            Self.feed(capture, Self.body(count, text: true))
            let body = capture.finish(contentEncoding: nil, contentType: "text/plain")
            #expect(body.spooled == nil, "\(count) bytes")
            #expect(Self.names(dir.file("spool")).isEmpty, "\(count) bytes")
        }
        #expect(Self.mode(dir.file("spool")) == 0o700)
    }

    /// A running flow's body so far (`preview`) still shows its text once a textual body is
    /// spooled past the in-memory head (a live event stream past 64 KiB), up to the flow log's
    /// limit; a binary one, or one past that limit, shows its size only.
    @Test func aSpooledTextBodyIsShownWhileItComes() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        let events = Self.body(200 * 1024, text: true)
        let capture = BodyCapture(limit: 1 << 20, spool: spool)
        Self.feed(capture, events)
        #expect(!Self.names(dir.file("spool")).isEmpty, "past the head: spooled")
        let shown = try #require(capture.preview(contentEncoding: nil, contentType: "text/event-stream"))
        #expect(shown.size == events.count && shown.sha256.isEmpty)
        #expect(shown.text.map { Array($0.utf8) } == events, "the whole body so far, read back from the file")
        // The same bytes read as binary are not read back (a download's record shows its size).
        let binary = try #require(capture.preview(contentEncoding: nil, contentType: "application/octet-stream"))
        #expect(binary.text == nil && binary.base64 == nil && binary.size == events.count)
        // Past the flow log's limit the digest's queue writes the file: the record shows the size only.
        Self.feed(capture, Self.body(1 << 20, text: true))
        let past = try #require(capture.preview(contentEncoding: nil, contentType: "text/event-stream"))
        #expect(past.text == nil && past.size == events.count + (1 << 20))
        let finished = capture.finish(contentEncoding: nil, contentType: "text/event-stream")
        #expect(finished.size == events.count + (1 << 20) && finished.text?.utf8.count == 1 << 20)
    }

    /// The logged body (size, hash, text or base64, truncation) is what a capture without a spool
    /// records, for sizes around the head and the log's limit, text and binary.
    @Test func theLoggedBodyIsTheSameAsWithoutASpool() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 3 << 20)
        let head = BodySpool.headBytes
        for count in [head + 1, 200_000, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 5 << 20] {
            for text in [true, false] {
                let bytes = Self.body(count, text: text)
                let plain = BodyCapture(limit: 1 << 20)
                let spooling = BodyCapture(limit: 1 << 20, spool: spool)
                Self.feed(plain, bytes)
                Self.feed(spooling, bytes)
                let type = text ? "text/plain" : "application/octet-stream"
                let expected = plain.finish(contentEncoding: nil, contentType: type)
                var got = spooling.finish(contentEncoding: nil, contentType: type)
                let spooled = try #require(got.spooled, "\(count) bytes")
                #expect(spooled.length == min(count, 3 << 20), "\(count) bytes")
                #expect(spooled.prefix(count) == Array(bytes.prefix(3 << 20)), "\(count) bytes, text \(text)")
                got.spooled = nil
                #expect(got == expected, "\(count) bytes, text \(text)")
            }
        }
        #expect(Self.names(dir.file("spool")).isEmpty, "every file went with its capture")
        #expect(spool.spooledBytes == 0 && spool.fileCount == 0)
    }

    /// Past the flow log's part, a large body's spool writes run on the background digest's queue:
    /// the file holds every byte up to the store's limit, in order, whatever the log's limit
    /// (0 keeps only size and hash) and however the body arrives.
    @Test func theDigestQueueWritesTheRestOfALargeBodyInOrder() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 6 << 20)
        let bytes = Self.body(7 << 20, text: false)
        for limit in [0, 1000, BodySpool.headBytes + 7, 1 << 20] {
            let capture = BodyCapture(limit: limit, spool: spool)
            Self.feed(capture, bytes)
            let body = capture.finish(contentEncoding: nil, contentType: nil)
            let spooled = try #require(body.spooled, "limit \(limit)")
            #expect(spooled.isComplete, "limit \(limit)")
            #expect(spooled.length == 6 << 20, "limit \(limit)")
            #expect(spooled.prefix(6 << 20) == Array(bytes.prefix(6 << 20)), "limit \(limit)")
            #expect(body.size == bytes.count && body.sha256 == Digest.sha256(bytes).hex, "limit \(limit)")
        }
    }

    @Test func theSpoolFileIsPrivateAndGoesWithItsLastReference() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 2 << 20)
        var body: Flow.Body?
        do {
            let capture = BodyCapture(limit: 1 << 20, spool: spool)
            Self.feed(capture, Self.body(3 << 20, text: false))
            body = capture.finish(contentEncoding: nil, contentType: nil)
        }
        let path = try #require(body?.spooled?.file?.path)
        #expect(Self.mode(path) == 0o600)
        #expect(Self.names(dir.file("spool")) == [(path as NSString).lastPathComponent])
        #expect(spool.spooledBytes == 2 << 20, "the store's limit, not the body's size")
        body = nil
        #expect(Self.names(dir.file("spool")).isEmpty)
        #expect(spool.spooledBytes == 0)
    }

    /// Past the disk budget the spool still takes the flow log's part (the log stays whole) but no
    /// more: the file says it is incomplete, so the store sheds it and counts it.
    @Test func pastTheDiskBudgetOnlyTheLoggedPartIsSpooled() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 8 << 20, diskBudget: 512 << 10)
        let bytes = Self.body(3 << 20, text: false)
        let plain = BodyCapture(limit: 1 << 20)
        let spooling = BodyCapture(limit: 1 << 20, spool: spool)
        Self.feed(plain, bytes)
        Self.feed(spooling, bytes)
        var got = spooling.finish(contentEncoding: nil, contentType: nil)
        let spooled = try #require(got.spooled)
        #expect(!spooled.isComplete)
        #expect(spooled.length >= 1 << 20 && spooled.length < 3 << 20, "\(spooled.length)")
        got.spooled = nil
        #expect(got == plain.finish(contentEncoding: nil, contentType: nil))
    }

    /// A body between a small `--body-limit` and the head stays in memory and still reaches the
    /// store whole.
    @Test func aSmallLogLimitStillHandsTheStoreTheHead() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        let bytes = Self.body(10_000, text: true)
        let capture = BodyCapture(limit: 100, spool: spool)
        Self.feed(capture, bytes)
        let body = capture.finish(contentEncoding: nil, contentType: "text/plain")
        #expect(body.text?.utf8.count == 100 && body.truncated)
        #expect(body.spooled?.file == nil)
        #expect(body.spooled?.head == bytes)
        #expect(Self.names(dir.file("spool")).isEmpty)
    }

    /// At start the spool removes files of processes that are gone (and any with its own id),
    /// and leaves a running process's.
    @Test func staleFilesOfEndedRunsAreRemovedAtStart() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("spool")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // A pid that ran and exited: a child we waited for.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = child.processIdentifier
        for name in ["\(dead)-1.body", "\(getpid())-7.body", "1-3.body", "notes.txt"] {
            #expect(FileManager.default.createFile(atPath: "\(path)/\(name)", contents: Data("x".utf8)))
        }
        _ = try BodySpool(directory: path, storeLimit: 1 << 20)
        #expect(Set(Self.names(path)) == ["1-3.body", "notes.txt"])
    }
}
