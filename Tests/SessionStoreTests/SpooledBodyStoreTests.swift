import Foundation
@testable import SessionStore
import Testing
import TestSupport

/// A finished flow's spooled body reaches the `bodies` table up to the store's limit (copied in
/// pieces), with the line's size and hash of the whole; its file is removed once stored.
@Suite struct SpooledBodyStoreTests {
    /// A spool file holding `bytes`.
    static func spooled(_ bytes: [UInt8], in spool: BodySpool) throws -> SpooledBody {
        let file = try #require(spool.makeFile())
        #expect(bytes.withUnsafeBytes { file.append($0, required: bytes.count) })
        file.finishWriting()
        return SpooledBody(file: file)
    }

    /// A flow-log line whose response body is `logged` (the log's first bytes) of `size` bytes.
    static func line(_ id: String, logged: String, size: Int, contentEncoding: String? = nil) -> [UInt8] {
        var headers: [[String]] = [["Content-Type", "text/plain"]]
        if let contentEncoding { headers.append(["Content-Encoding", contentEncoding]) }
        var body: [String: Any] = ["size": size, "sha256": "feed", "text": logged,
                                   "truncated": logged.utf8.count < size]
        if let contentEncoding { body["decoded"] = contentEncoding }
        let object: [String: Any] = [
            "id": id, "started": "2026-03-01T12:00:00.000Z", "ended": "2026-03-01T12:00:01.000Z", "mode": "https",
            "server": ["host": "files.example", "port": 443],
            "request": ["method": "GET", "url": "https://files.example/\(id)", "http_version": "HTTP/1.1",
                        "headers": [] as [[String]]],
            "response": ["status": 200, "http_version": "HTTP/1.1", "headers": headers, "body": body],
        ]
        return [UInt8](try! JSONSerialization.data(withJSONObject: object))
    }

    static func text(_ count: Int, marker: String, at offset: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: count)
        bytes.replaceSubrange(offset..<offset + marker.utf8.count, with: Array(marker.utf8))
        return bytes
    }

    /// A 3 MiB plain text body, logged to 1 MiB, stored to the store's 2 MiB: the bytes, not the
    /// logged text, are what `~b` searches, so a word at 1.5 MiB is found and one at 2.5 MiB is not.
    @Test func aSpooledTextBodyIsStoredToTheStoreLimitAndSearchedWhole() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 2 << 20)
        let store = try SessionStore(path: dir.file("s.sqlite"), configuration: .init(bodyLimit: 2 << 20))
        defer { store.close() }
        var bytes = Self.text(3 << 20, marker: "needle-inside", at: 3 << 19)
        bytes.replaceSubrange((5 << 19)..<(5 << 19) + 13, with: Array("needle-beyond".utf8))
        do {
            let body = try Self.spooled(Array(bytes.prefix(2 << 20)), in: spool)
            let logged = String(decoding: bytes.prefix(1 << 20), as: UTF8.self)
            store.finished(flowLogLine: Self.line("big", logged: logged, size: bytes.count),
                           spooled: SpooledBodies(response: body))
        }
        store.flush()
        let stored = try #require(try store.body(id: "big", part: .response))
        #expect(stored.bytes == Array(bytes.prefix(2 << 20)))
        #expect(stored.size == 3 << 20 && stored.sha256 == "feed" && stored.truncated)
        #expect(try store.count(filter: FilterExpression(parsing: "~b needle-inside")) == 1)
        #expect(try store.count(filter: FilterExpression(parsing: "~b needle-beyond")) == 0)
        #expect(spool.fileCount == 0 && spool.spooledBytes == 0, "the file went once stored")
        #expect(store.drops == StoreDrops())
    }

    /// A text body the log holds whole is stored once, as its text, as without a spool.
    @Test func aBodyTheLogHoldsWholeIsStoredAsText() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { store.close() }
        let bytes = Self.text(200_000, marker: "word", at: 150_000)
        let logged = String(decoding: bytes, as: UTF8.self)
        store.finished(flowLogLine: Self.line("whole", logged: logged, size: bytes.count),
                       spooled: SpooledBodies(response: try Self.spooled(bytes, in: spool)))
        store.flush()
        let stored = try #require(try store.body(id: "whole", part: .response))
        #expect(stored.bytes == bytes && stored.text == String(decoding: bytes, as: UTF8.self))
        let kind = try store.read { try $0.rows("SELECT typeof(data) FROM bodies") { $0.string(0) } }
        #expect(kind == ["text"])
    }

    /// A compressed body keeps its wire bytes whole and the log's decoded text beside them.
    @Test func aCompressedBodyKeepsItsBytesAndTheDecodedText() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { store.close() }
        let wire = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        store.finished(flowLogLine: Self.line("gz", logged: "decoded words", size: wire.count, contentEncoding: "gzip"),
                       spooled: SpooledBodies(response: try Self.spooled(wire, in: spool)))
        store.flush()
        let stored = try #require(try store.body(id: "gz", part: .response))
        #expect(stored.bytes == wire && stored.text == "decoded words")
        #expect(try store.count(filter: FilterExpression(parsing: "~bs 'decoded words'")) == 1)
    }

    /// A spool the disk budget cut short is shed: the log's part is kept, the drop counted and marked.
    @Test func anIncompleteSpoolIsShedAndCounted() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20, diskBudget: 100)
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { store.close() }
        let file = try #require(spool.makeFile())
        let bytes = Self.text(5000, marker: "x", at: 0)
        #expect(bytes.withUnsafeBytes { file.append($0, required: 1000) })
        #expect(!file.isComplete && file.length == 1000)
        file.finishWriting()
        let logged = String(decoding: bytes.prefix(1000), as: UTF8.self)
        store.finished(flowLogLine: Self.line("cut", logged: logged, size: 5000),
                       spooled: SpooledBodies(response: SpooledBody(file: file)))
        store.flush()
        let stored = try #require(try store.body(id: "cut", part: .response))
        #expect(stored.bytes == Array(bytes.prefix(1000)))
        #expect(store.drops.bodies == 1)
        #expect(try store.summary(id: "cut")?.bodiesDropped == true)
    }
}
