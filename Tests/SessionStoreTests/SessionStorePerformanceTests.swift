import Foundation
import SessionStore
import TestSupport
import XCTest

/// 100k flows with 1 KiB bodies: bulk insert, then filters on host, status and bodies. The
/// figures are printed, not asserted (debug build, shared cores); the issue's targets are
/// < 300 ms for host/status and < 3 s for `~b`.
final class SessionStorePerformanceTests: XCTestCase {
    func testHundredThousandFlowsTimings() throws {
        // SESSIONSTORE_PERF_FLOWS=10000 for a quicker run (the expected totals scale with it).
        let count = ProcessInfo.processInfo.environment["SESSIONSTORE_PERF_FLOWS"].flatMap(Int.init) ?? 100_000
        let directory = TemporaryDirectory()
        let configuration = SessionStoreConfiguration(queueCapacity: 2 * count + 10, queuedBodyBytes: 1 << 30)
        let store = try SessionStore(path: directory.file("big.sqlite"), configuration: configuration)
        let filler = String(repeating: "lorem ipsum dolor sit amet ", count: 38)  // ~1 KiB
        let records = (0..<count).map { index -> (FlowRecord, FlowBodies) in
            let record = StoreFixtures.record("flow-\(index)", host: "host\(index % 100).example.com",
                                              path: "/items/\(index)", status: index % 50 == 0 ? 404 : 200,
                                              requestHeaders: [["Host", "host\(index % 100).example.com"]],
                                              responseHeaders: [["Content-Type", "application/json"]])
            let marker = index % 100 == 0 ? "needle-\(index)" : "hay"
            return (record, FlowBodies(response: StoreFixtures.text("\(filler) \(marker) \(index)")))
        }

        var started = Date()
        for (record, bodies) in records { store.finished(record, json: #"{"id":"\#(record.summary.id)"}"#, bodies: bodies) }
        store.flush()
        let insert = Date().timeIntervalSince(started)
        XCTAssertEqual(store.drops, StoreDrops())
        XCTAssertEqual(try store.count(), count)

        func time(_ expression: String?, expected: Int) throws -> Double {
            let filter = try expression.map { try FilterExpression(parsing: $0) }
            let started = Date()
            let page = try store.flows(filter: filter, limit: 100)
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(page.total, expected, expression ?? "all")
            return elapsed * 1000
        }
        var lines = ["\(count) flows, 1 KiB response bodies: insert + commit \(String(format: "%.2f", insert)) s"]
        for (expression, expected) in [
            (nil, count), ("~d host7.example", count / 100), ("~c 404", count / 50),
            ("~d host7.example & ~c 200", count / 100), ("~u '/items/\\d*99\\d$'", count / 100), ("~hq host42", count / 100),
            ("~b needle", count / 100), ("~b 'needle-\\d+5 '", 0), ("~bs 'needle-\\d+ \\d'", count / 100),
        ] as [(String?, Int)] {
            let milliseconds = try time(expression, expected: expected)
            lines.append("  \(expression ?? "(no filter)"): \(String(format: "%.0f", milliseconds)) ms")
        }
        started = Date()
        var cursor: FlowCursor?
        var pages = 0
        repeat {
            let page = try store.flows(filter: FilterExpression(parsing: "~d host7.example"), limit: 100, cursor: cursor)
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil
        lines.append("  all \(pages) pages of ~d host7.example: \(String(format: "%.0f", Date().timeIntervalSince(started) * 1000)) ms")
        let size = (try FileManager.default.attributesOfItem(atPath: directory.file("big.sqlite"))[.size] as? NSNumber)?.intValue ?? 0
        let walSize = (try? FileManager.default.attributesOfItem(atPath: directory.file("big.sqlite-wal"))[.size] as? NSNumber)?.intValue ?? 0
        lines.append("  file \((size + walSize) / 1_048_576) MiB with its WAL")
        print(lines.joined(separator: "\n"))
        store.close()
    }
}
