import Foundation
import SessionStore
import TestSupport
import XCTest

/// The proxy waits on the store only while its writer is behind, and briefly: a writer that is
/// behind gets time to catch up and nothing is lost; a stuck one holds the proxy up once, then a
/// full queue sheds bodies first, then records, and counts both.
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
        // One offer waited the 100 ms for the stuck writer; the rest did not wait at all.
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.6, "a stuck writer holds offers up once")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.09)
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

    /// A writer slower than the threads that offer (each batch held 10 ms, a queue of 10): with
    /// a wait (longer than the default here, so that a slow test machine cannot trip it) every
    /// flow is stored, bodies and all; without one flows are shed.
    func testAWriterThatIsBehindSlowsOffersInsteadOfLosingFlows() throws {
        for wait in [5.0, 0] {
            let directory = TemporaryDirectory()
            let store = try SessionStore(path: directory.file("s.sqlite"),
                                         configuration: SessionStoreConfiguration(queueCapacity: 10, offerWait: wait))
            store.addObserver { _ in Thread.sleep(forTimeInterval: 0.01) }
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<50 {
                    store.finished(StoreFixtures.record("t\(thread)-\(index)"), json: "{}",
                                   bodies: FlowBodies(response: StoreFixtures.text("body \(thread) \(index)")))
                }
            }
            store.flush()
            if wait > 0 {
                XCTAssertEqual(store.drops, StoreDrops())
                XCTAssertEqual(try store.count(), 200)
                XCTAssertEqual(try store.body(id: "t3-49", part: .response)?.text, "body 3 49")
            } else {
                XCTAssertGreaterThan(store.drops.records + store.drops.bodies, 0, "without waiting, flows are shed")
                XCTAssertLessThan(try store.count(), 200)
            }
            store.close()
        }
    }

    /// An offer waiting for room goes on as soon as the writer takes a batch out of the queue, not
    /// once that batch is committed: the second batch's commit is held here, and the offer that
    /// waited for it to be taken has already returned.
    func testAWaitingOfferGoesOnWhenTheWriterTakesABatchNotWhenItIsCommitted() throws {
        let directory = TemporaryDirectory()
        let store = try SessionStore(path: directory.file("s.sqlite"),
                                     configuration: SessionStoreConfiguration(queueCapacity: 10, offerWait: 5))
        let entered = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let release = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let commits = LockedBox(0)
        store.addObserver { _ in
            var commit = 0
            commits.mutate { $0 += 1; commit = $0 }
            guard commit <= 2 else { return }
            entered[commit - 1].signal()
            _ = release[commit - 1].wait(timeout: .now() + 10)
        }
        store.finished(StoreFixtures.record("first"), json: "{}", bodies: .init())
        XCTAssertEqual(entered[0].wait(timeout: .now() + 10), .success, "the writer took the first batch")
        // The queue half full: the next offer waits for room.
        for index in 0..<5 { store.finished(StoreFixtures.record("f\(index)"), json: "{}", bodies: .init()) }
        let offered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            store.finished(StoreFixtures.record("waited"), json: "{}", bodies: .init())
            offered.signal()
        }
        Thread.sleep(forTimeInterval: 0.05)
        release[0].signal()
        XCTAssertEqual(entered[1].wait(timeout: .now() + 10), .success, "the writer took the second batch")
        XCTAssertEqual(offered.wait(timeout: .now() + 2), .success,
                       "the offer went on while the writer committed the batch that made room for it")
        release[1].signal()
        store.flush()
        XCTAssertEqual(try store.count(), 7)
        XCTAssertEqual(store.drops, StoreDrops())
        store.close()
    }
}
