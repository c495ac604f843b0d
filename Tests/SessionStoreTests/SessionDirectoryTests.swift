import Foundation
import SessionStore
import TestSupport
import XCTest

/// `sessions/`: a new file per run, the newest kept, listed with counts and sizes.
final class SessionDirectoryTests: XCTestCase {
    func testNewPathsArePerRunAndPruningKeepsTheNewest() throws {
        let directory = TemporaryDirectory()
        let sessions = SessionDirectory(path: directory.file("sessions"), keep: 3)
        let date = Date(timeIntervalSince1970: 1_772_366_462)  // 2026-03-01T12:01:02Z
        var paths: [String] = []
        for offset in 0..<5 {
            let path = try sessions.newSessionPath(at: date.addingTimeInterval(Double(offset)))
            let store = try SessionStore(path: path)
            store.finished(StoreFixtures.record("f\(offset)"), json: "{}", bodies: .init())
            store.close()
            // Bodies past 64 KiB live beside the session (`PATH-bodies/`): pruning removes them too.
            try FileManager.default.createDirectory(atPath: path + "-bodies", withIntermediateDirectories: false)
            XCTAssertTrue(FileManager.default.createFile(atPath: path + "-bodies/1-1.body", contents: Data(count: 100_000)))
            // Distinct modification times, oldest first.
            try FileManager.default.setAttributes([.modificationDate: date.addingTimeInterval(Double(offset))],
                                                  ofItemAtPath: path)
            paths.append(path)
        }
        XCTAssertTrue(paths[0].hasSuffix("/sessions/session-20260301T120102Z.sqlite"), paths[0])
        XCTAssertEqual(directory.mode("sessions"), 0o700)
        let again = try sessions.newSessionPath(at: date)
        XCTAssertTrue(again.hasSuffix("session-20260301T120102Z-2.sqlite"), "a taken name gets a suffix: \(again)")

        XCTAssertEqual(Set(sessions.prune()), Set(paths[0..<2]))
        XCTAssertFalse(FileManager.default.fileExists(atPath: paths[0] + "-bodies"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: paths[2] + "-bodies/1-1.body"))
        let listed = sessions.list()
        XCTAssertEqual(listed.map(\.path), paths[2...].reversed())
        XCTAssertEqual(listed.map(\.flowCount), [1, 1, 1])
        XCTAssertTrue(listed.allSatisfy { $0.size > 100_000 }, "sizes count the body files: \(listed.map(\.size))")
    }

    func testDevproxySessionsListsThemWithCounts() throws {
        let directory = TemporaryDirectory()
        let sessions = SessionDirectory(path: directory.file("sessions"))
        let path = try sessions.newSessionPath()
        let store = try SessionStore(path: path)
        for index in 0..<3 { store.finished(StoreFixtures.record("f\(index)"), json: "{}", bodies: .init()) }
        store.close()
        let result = try Subprocess.run(Subprocess.devproxy, ["sessions", "--ca-dir", directory.path])
        XCTAssertEqual(result.status, 0, result.output)
        let line = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.hasSuffix(path) }, result.stdout)
        XCTAssertTrue(line.contains("  3  "), "the flow count: \(line)")
        XCTAssertTrue(result.stdout.contains("1 session(s) in \(directory.path)/sessions"), result.stdout)
    }
}
