import Foundation
import SessionStore
import TestSupport
import XCTest

/// The proxy never waits on the store: a full queue sheds bodies first, then records, and counts both.
final class WriteQueueTests: XCTestCase {
    /// A store whose writer is held inside its first observer call until `release` is signalled.
    private func heldStore(_ directory: TemporaryDirectory, _ configuration: SessionStoreConfiguration)
        throws -> (SessionStore, release: DispatchSemaphore) {
        let store = try SessionStore(path: directory.file("s.sqlite"), configuration: configuration)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = LockedBox(true)
        store.addObserver { _ in
            var isFirst = false
            first.mutate { isFirst = $0; $0 = false }
            guard isFirst else { return }
            entered.signal()
            release.wait()
        }
        store.finished(StoreFixtures.record("first"), json: "{}", bodies: .init())
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "the writer took the first batch")
        return (store, release)
    }

    func testAFullQueueDropsBodiesFromHalfFullThenRecords() throws {
        let directory = TemporaryDirectory()
        let (store, release) = try heldStore(directory, SessionStoreConfiguration(queueCapacity: 10))
        let started = Date()
        for index in 0..<15 {
            store.finished(StoreFixtures.record("f\(index)"), json: "{}",
                           bodies: FlowBodies(response: StoreFixtures.text("body \(index)")))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "offering never waits for the writer")
        XCTAssertEqual(store.drops, StoreDrops(bodies: 5, records: 5))
        release.signal()
        store.flush()
        XCTAssertEqual(try store.count(), 11)
        XCTAssertEqual(try store.body(id: "f4", part: .response)?.text, "body 4")
        XCTAssertNil(try store.body(id: "f5", part: .response))
        XCTAssertEqual(try store.summary(id: "f5")?.bodiesDropped, true)
        XCTAssertEqual(try store.summary(id: "f4")?.bodiesDropped, false)
        XCTAssertNil(try store.summary(id: "f10"))
    }

    func testBodiesOverTheQueuedByteBudgetAreDroppedButTheirFlowsKept() throws {
        let directory = TemporaryDirectory()
        let (store, release) = try heldStore(directory, SessionStoreConfiguration(queuedBodyBytes: 100))
        let big = StoredBody(bytes: [UInt8](repeating: 0x41, count: 80))
        store.finished(StoreFixtures.record("a"), json: "{}", bodies: FlowBodies(request: big))
        store.finished(StoreFixtures.record("b"), json: "{}", bodies: FlowBodies(request: big, response: big))
        XCTAssertEqual(store.drops, StoreDrops(bodies: 2, records: 0))
        release.signal()
        store.flush()
        XCTAssertEqual(try store.body(id: "a", part: .request)?.bytes.count, 80)
        XCTAssertNil(try store.body(id: "b", part: .request))
        XCTAssertEqual(try store.count(), 3)
    }
}
