import Foundation
import SessionStore
import TestSupport
import XCTest

/// 100k flows with 1 KiB bodies: bulk insert, then filters on host, status and bodies. The
/// figures are printed, not asserted (debug build, shared cores: CPU time is printed beside wall
/// time because other processes inflate the latter); the issue's targets are < 300 ms for
/// host/status and < 3 s for `~b`.
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
        let cpuStarted = CPUTime.process()
        for (record, bodies) in records { store.finished(record, json: #"{"id":"\#(record.summary.id)"}"#, bodies: bodies) }
        store.flush()
        let insert = Date().timeIntervalSince(started)
        let insertCPU = CPUTime.process() - cpuStarted
        XCTAssertEqual(store.drops, StoreDrops())
        XCTAssertEqual(try store.count(), count)

        /// Wall and this thread's CPU milliseconds for the first page of `expression`.
        func time(_ expression: String?, expected: Int) throws -> (wall: Double, cpu: Double) {
            let filter = try expression.map { try FilterExpression(parsing: $0) }
            let started = Date()
            let cpu = CPUTime.thread()
            let page = try store.flows(filter: filter, limit: 100)
            let elapsed = (Date().timeIntervalSince(started) * 1000, (CPUTime.thread() - cpu) * 1000)
            XCTAssertEqual(page.total, expected, expression ?? "all")
            return elapsed
        }
        var lines = ["\(count) flows, 1 KiB response bodies: insert + commit \(String(format: "%.2f", insert)) s "
                     + "(CPU \(String(format: "%.2f", insertCPU)) s, both threads); first page of 100, wall / CPU:"]
        for (expression, expected) in [
            (nil, count), ("~d host7.example", count / 100), ("~c 404", count / 50),
            ("~d host7.example & ~c 200", count / 100), ("~u '/items/\\d*99\\d$'", count / 100), ("~hq host42", count / 100),
            ("~b needle", count / 100), ("~b 'needle-\\d+5 '", 0), ("~bs 'needle-\\d+ \\d'", count / 100),
        ] as [(String?, Int)] {
            let (wall, cpu) = try time(expression, expected: expected)
            lines.append("  \(expression ?? "(no filter)"): \(String(format: "%.0f / %.0f", wall, cpu)) ms")
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
        store.close()

        // Summaries alone (`started` events: no record, no bodies), as a busy proxy sends them.
        let summaries = try SessionStore(path: directory.file("summaries.sqlite"), configuration: configuration)
        started = Date()
        let summariesCPU = CPUTime.process()
        for (record, _) in records { summaries.started(record) }
        summaries.flush()
        lines.append("  \(count) started summaries alone: \(String(format: "%.2f", Date().timeIntervalSince(started))) s "
                     + "(CPU \(String(format: "%.2f", CPUTime.process() - summariesCPU)) s)")
        XCTAssertEqual(try summaries.count(), count)
        summaries.close()
        print(lines.joined(separator: "\n"))
    }
}

/// CPU seconds, which other processes on shared cores do not inflate.
enum CPUTime {
    static func process() -> Double { seconds(CLOCK_PROCESS_CPUTIME_ID) }
    static func thread() -> Double { seconds(CLOCK_THREAD_CPUTIME_ID) }

    private static func seconds(_ clock: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(clock, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
