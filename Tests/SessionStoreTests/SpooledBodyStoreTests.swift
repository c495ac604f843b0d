import Foundation
@testable import SessionStore
import Testing
import TestSupport

/// A finished flow's spooled body is kept up to the store's limit, with the line's size and hash
/// of the whole: as a file beside the session (`PATH-bodies/`, the spool file linked, not copied),
/// or copied into the `bodies` table where it cannot be linked; the spool's own file is removed
/// once stored.
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
        let released = Date().addingTimeInterval(5)   // the writer lets go of its batch just after `flush()`
        while spool.fileCount > 0 && Date() < released { usleep(5_000) }
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

    /// The spool file becomes the body's file beside the session: same bytes, cut to the store's
    /// limit, 0600 in a 0700 directory, no bytes in SQLite; every reader reads it, a read-only
    /// reopen included; `clear()` removes it.
    @Test func aSpooledBodyIsKeptAsAFileBesideTheSession() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 1 << 20)
        let path = dir.file("s.sqlite")
        let store = try SessionStore(path: path, configuration: .init(bodyLimit: 1 << 20))
        let wire = (0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        store.finished(flowLogLine: Self.line("linked", logged: "decoded words", size: wire.count, contentEncoding: "br"),
                       spooled: SpooledBodies(response: try Self.spooled(wire, in: spool)))
        store.flush()
        let rows = try store.read {
            try $0.rows("SELECT file, length(data), text FROM bodies") { ($0.string(0), $0.int(1), $0.string(2)) }
        }
        #expect(rows.count == 1 && rows[0].0 == "1-1.body" && rows[0].1 == 0 && rows[0].2 == "decoded words", "\(rows)")
        let file = path + "-bodies/1-1.body"
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(wire.prefix(1 << 20)), "cut to the store's limit")
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-bodies")[.posixPermissions] as? Int == 0o700)
        // The writer lets go of a committed batch (and the spool file's last reference) just after
        // `flush()` returns: under load (CI) the count was read a moment before.
        let released = Date().addingTimeInterval(5)
        while spool.fileCount > 0 && Date() < released { usleep(5_000) }
        #expect(spool.fileCount == 0 && spool.spooledBytes == 0, "the spool let its name go")
        #expect(try store.body(id: "linked", part: .response)?.bytes == Array(wire.prefix(1 << 20)))
        #expect(try store.bodyExtent(id: "linked", part: .response)?.stored == 1 << 20)
        var streamed: [UInt8] = []
        #expect(try store.streamBody(id: "linked", part: .response, chunkSize: 100_000) { streamed += $0 })
        #expect(streamed == Array(wire.prefix(1 << 20)))
        store.close()

        let reopened = try SessionStore(path: path, readOnly: true)
        #expect(try reopened.body(id: "linked", part: .response)?.bytes.count == 1 << 20)
        reopened.close()
        let again = try SessionStore(path: path, configuration: .init(bodyLimit: 1 << 20))
        defer { again.close() }
        again.clear()
        #expect(!FileManager.default.fileExists(atPath: file), "clear removed the body file")
        // A later flow gets a new name: `seq` is never reused.
        let plain = Self.text(200_000, marker: "word-at-150k", at: 150_000)
        again.finished(flowLogLine: Self.line("next", logged: String(decoding: plain.prefix(10), as: UTF8.self), size: 200_000),
                       spooled: SpooledBodies(response: try Self.spooled(plain, in: spool)))
        again.flush()
        #expect(FileManager.default.fileExists(atPath: path + "-bodies/2-1.body"))
        #expect(try again.count(filter: FilterExpression(parsing: "~b word-at-150k")) == 1, "~b reads the file")
    }

    /// A body file that went missing (a session copied without its `-bodies` directory) is a
    /// clear error for that body; `~b` passes over it, and the other flows read as before.
    @Test func aMissingBodyFileIsAClearError() throws {
        let dir = TemporaryDirectory()
        let spool = try BodySpool(directory: dir.file("spool"), storeLimit: 64 << 20)
        let path = dir.file("s.sqlite")
        let store = try SessionStore(path: path)
        defer { store.close() }
        for id in ["gone", "kept"] {
            store.finished(flowLogLine: Self.line(id, logged: "a", size: 100_000),
                           spooled: SpooledBodies(response: try Self.spooled(Self.text(100_000, marker: id, at: 90_000),
                                                                              in: spool)))
        }
        store.flush()
        #expect(unlink(path + "-bodies/1-1.body") == 0)
        #expect(throws: SessionStoreError(.bodyFile, "the body file \(path)-bodies/1-1.body is missing: a session keeps "
                                          + "its bodies past 64 KiB beside it, in \(path)-bodies/")) {
            try store.body(id: "gone", part: .response)
        }
        #expect(throws: SessionStoreError.self) { try store.bodyExtent(id: "gone", part: .response) }
        #expect(try store.count(filter: FilterExpression(parsing: "~b gone")) == 0)
        #expect(try store.count(filter: FilterExpression(parsing: "~b kept")) == 1)
        #expect(try store.body(id: "kept", part: .response)?.bytes.count == 100_000)
        // A session from elsewhere may name any file: only names the writer makes are opened.
        #expect(FileManager.default.createFile(atPath: dir.file("secret"), contents: Data("kept-secret".utf8)))
        try SQLitePeek.execute(path, "UPDATE bodies SET file = '../secret' WHERE seq = 2")
        #expect(throws: SessionStoreError(.bodyFile, "the session names a body file \"../secret\", which is not one "
                                          + "DevProxy writes")) {
            try store.body(id: "kept", part: .response)
        }
        #expect(try store.count(filter: FilterExpression(parsing: "~b kept-secret")) == 0)
        #expect(BodyFiles.isValidName("12-0.body") && BodyFiles.isValidName("7-1.body"))
        #expect(!["-1.body", "1-2.body", "1-10.body", "a-1.body", "1-1.bodyx", "1/1-1.body", "1-1"].contains(where: BodyFiles.isValidName))
    }

    /// Where the spool cannot be linked (another file system: here /dev/shm), the body is copied
    /// into the session file as before.
    @Test func aSpoolOnAnotherFileSystemIsCopiedIn() throws {
        let dir = TemporaryDirectory()
        var shm = stat(), tmp = stat()
        guard stat("/dev/shm", &shm) == 0, stat(dir.path, &tmp) == 0, shm.st_dev != tmp.st_dev,
              access("/dev/shm", W_OK) == 0 else {
            print("skipped: no writable /dev/shm on another file system than \(dir.path)")
            return
        }
        let spoolDirectory = "/dev/shm/devproxy-spool-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: spoolDirectory) }
        let spool = try BodySpool(directory: spoolDirectory, storeLimit: 64 << 20)
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { store.close() }
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        store.finished(flowLogLine: Self.line("copied", logged: "decoded", size: bytes.count, contentEncoding: "gzip"),
                       spooled: SpooledBodies(response: try Self.spooled(bytes, in: spool)))
        store.flush()
        let rows = try store.read { try $0.rows("SELECT file, length(data) FROM bodies") { ($0.string(0), $0.int(1)) } }
        #expect(rows.count == 1 && rows[0].0 == nil && rows[0].1 == bytes.count, "\(rows)")
        #expect(try store.body(id: "copied", part: .response)?.bytes == bytes)
        #expect(!FileManager.default.fileExists(atPath: dir.file("s.sqlite-bodies/1-1.body")))
    }
}
