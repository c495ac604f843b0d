import Foundation
@testable import SessionStore
import TestSupport
import XCTest

/// One writer to a session at a time (`SessionLock`): two proxies given the same `--session FILE`
/// collided on the ids of their record frames, and one lost most of its flows.
final class SessionLockTests: XCTestCase {
    func testASecondWriterIsRefusedWithTheFirstsPidAndReadersAreNot() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("shared.sqlite")
        let first = try SessionStore(path: path)
        XCTAssertEqual(directory.mode("shared.sqlite-lock"), 0o600)
        XCTAssertThrowsError(try SessionStore(path: path)) { error in
            XCTAssertEqual(error as? SessionStoreError,
                           SessionStoreError(.inUse, "another devproxy (pid \(getpid())) is writing to it"))
        }
        // A viewer (`devproxy web FILE`) may watch a session that is being written.
        first.finished(StoreFixtures.record("f1"), json: "{}", bodies: .init())
        first.flush()
        let viewer = try SessionStore(path: path, readOnly: true)
        XCTAssertEqual(try viewer.count(), 1)
        viewer.close()

        first.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-lock"), "the lock file goes with the writer")
        let second = try SessionStore(path: path)
        second.finished(StoreFixtures.record("f2"), json: "{}", bodies: .init())
        second.close()
        let reopened = try SessionStore(path: path, readOnly: true)
        XCTAssertEqual(try reopened.count(), 2)
        reopened.close()
    }

    /// A writer that died without closing leaves its lock file, not its lock: the next one writes.
    func testALeftOverLockFileIsTakenOver() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("s.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: path + "-lock", contents: Data("99999\n".utf8)))
        let store = try SessionStore(path: path)
        XCTAssertEqual(try String(contentsOfFile: path + "-lock", encoding: .utf8), "\(getpid())\n")
        store.close()
    }

    /// Pruning old sessions (each `devproxy run` does) never removes one a running proxy writes to.
    func testPruningSparesASessionThatIsBeingWritten() throws {
        let directory = TemporaryDirectory()
        let sessions = SessionDirectory(path: directory.file("sessions"), keep: 1)
        let date = Date(timeIntervalSince1970: 1_772_366_462)
        let running = try SessionStore(path: try sessions.newSessionPath(at: date))
        let finished = try sessions.newSessionPath(at: date.addingTimeInterval(-10))
        try SessionStore(path: finished).close()
        try FileManager.default.setAttributes([.modificationDate: date.addingTimeInterval(-10)], ofItemAtPath: finished)
        try FileManager.default.setAttributes([.modificationDate: date.addingTimeInterval(-20)], ofItemAtPath: running.path)
        let newest = try sessions.newSessionPath(at: date.addingTimeInterval(10))
        try SessionStore(path: newest).close()

        XCTAssertEqual(sessions.prune(sparing: newest), [finished])
        XCTAssertTrue(FileManager.default.fileExists(atPath: running.path))
        running.close()
        XCTAssertEqual(sessions.prune(sparing: newest), [running.path])
    }

    /// Two `devproxy run` with one `--session FILE`: the second says why and exits 1, the first
    /// goes on.
    func testASecondRunOnTheSameSessionExitsWithTheReason() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("team.sqlite")
        let arguments = ["run", "--listen", "127.0.0.1:0", "--ca-dir", directory.file("ca"), "--session", path, "--no-web",
                         "--quiet"]
        let first = Process()
        first.executableURL = URL(fileURLWithPath: Subprocess.devproxy)
        first.arguments = arguments
        first.environment = ProcessInfo.processInfo.environment.merging(["HOME": directory.path]) { $1 }
        let output = Pipe()
        first.standardOutput = output
        first.standardError = FileHandle.nullDevice
        try first.run()
        defer {
            first.terminate()
            first.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: path + "-lock") && Date() < deadline { usleep(20_000) }
        let second = try Subprocess.run(Subprocess.devproxy, arguments, environment: ["HOME": directory.path], timeout: 30)
        XCTAssertEqual(second.status, 1, second.output)
        XCTAssertEqual(second.stderr.split(separator: "\n").last.map(String.init),
                       "error: cannot open the session store \(path): another devproxy (pid \(first.processIdentifier)) is "
                       + "writing to it; give this run another --session FILE (or watch that one with: devproxy web \(path))")
        XCTAssertTrue(first.isRunning)
    }
}
