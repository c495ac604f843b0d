import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// Normal keep-alive traffic mixed with faults from several threads for a bounded time, through
/// `devproxy run` as a child process (with its session store): every request gets a response or
/// a recorded error (the flow log matches the client's count exactly), and the proxy's own
/// descriptors, threads and memory come back to where they started. Measured on the child, the
/// counts are the proxy's alone, whatever other suites run in this process meanwhile.
@Suite(.serialized) struct SoakTests {
    @Test(.backstop) func mixedTrafficLeavesNothingBehind() throws {
        let healthy = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhealthy", then: .keepAlive)
        let malformed = try ScriptedOrigin("HTTP/1.1 200 OK\r\nX-Bad : 1\r\nContent-Length: 0\r\n\r\n")
        let truncated = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", then: .reset)
        let silent = try ScriptedOrigin("", then: .hold(3))
        let dir = TemporaryDirectory()
        let log = dir.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", log, "--session", dir.file("soak.sqlite"),
                                         "--no-web", "--quiet", "--header-timeout", "1", "--idle-timeout", "1",
                                         "--upstream-timeout", "1"])
        let probe = ProcessProbe(pid: proxy.process.processIdentifier)
        // Waits for `count` lines (cheap to count), then reads the log once: a debug build takes
        // seconds to read ten thousand flows.
        func flows(count: Int, timeout: TimeInterval = 10) throws -> [Flow] {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let lines = (try? Data(contentsOf: URL(fileURLWithPath: log)))?.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } ?? 0
                if lines >= count { break }
                usleep(50_000)
            }
            return try FlowLogReader.read(path: log).flows
        }
        // Warm up once so lazily created state (thread-locals, the store's first pages) is in the baseline.
        let warm = try Subprocess.run("curl", ["-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                               "http://127.0.0.1:\(healthy.port)/warm"])
        #expect(warm.stdout == "healthy", "\(warm.output)")
        _ = try flows(count: 1)
        usleep(1_500_000)
        let port = proxy.port, proxyURL = "http://127.0.0.1:\(proxy.port)"
        let (healthyPort, malformedPort, truncatedPort, silentPort) = (healthy.port, malformed.port, truncated.port, silent.port)
        let baseline = (fds: probe.descriptors(), threads: probe.threads(), rss: probe.residentKiB())

        let expected = Mutex<Int>(1)
        let failures = Mutex<[String]>([])
        let deadline = Date().addingTimeInterval(10)
        let group = DispatchGroup()
        let workloads: [@Sendable () throws -> Int] = [
            {   // keep-alive: five requests on one connection, all must succeed
                let client = try RawClient.plain(port: port)
                for index in 0..<5 {
                    client.send("GET http://127.0.0.1:\(healthyPort)/\(index) HTTP/1.1\r\nHost: x\r\n\(index == 4 ? "Connection: close\r\n" : "")\r\n")
                }
                let text = RawAnswer(client.readToEnd(timeout: 10)).text
                let count = text.components(separatedBy: "healthy").count - 1
                if count != 5 { failures.withLock { $0.append("keep-alive got \(count) of 5: \(text.prefix(200))") } }
                return 5
            },
            {   // smuggling attempt: 400
                let client = try RawClient.plain(port: port)
                client.send("POST http://127.0.0.1:\(healthyPort)/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                let answer = RawAnswer(client.readToEnd(timeout: 10))
                if answer.status != 400 { failures.withLock { $0.append("smuggling got \(answer.status)") } }
                return 1
            },
            {   // malformed upstream: 502
                let result = try Subprocess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                                                         "--proxy", proxyURL, "http://127.0.0.1:\(malformedPort)/"])
                if result.stdout != "502" { failures.withLock { $0.append("malformed upstream got \(result.stdout)") } }
                return 1
            },
            {   // truncated body: a cut connection, never a clean end
                let result = try Subprocess.run("curl", ["-s", "-o", "/dev/null", "--max-time", "10",
                                                         "--proxy", proxyURL, "http://127.0.0.1:\(truncatedPort)/"])
                if result.status != 18 && result.status != 56 { failures.withLock { $0.append("truncated body: curl \(result.status)") } }
                return 1
            },
            {   // silent upstream: 504
                let client = try RawClient.plain(port: port)
                client.send("GET http://127.0.0.1:\(silentPort)/ HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = RawAnswer(client.readToEnd(timeout: 10))
                if answer.status != 504 { failures.withLock { $0.append("silent upstream got \(answer.status)") } }
                return 1
            },
            {   // client hangs up mid-body
                let client = try RawClient.plain(port: port)
                client.send("POST http://127.0.0.1:\(healthyPort)/ HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nabc")
                usleep(50_000)
                client.stream.socket.shutdownWrite()
                _ = client.readToEnd(timeout: 10)
                return 1
            },
        ]
        for (index, workload) in workloads.enumerated() {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                while Date() < deadline {
                    do {
                        let sent = try workload()
                        expected.withLock { $0 += sent }
                    } catch {
                        failures.withLock { $0.append("workload \(index): \(error)") }
                        return
                    }
                }
            }
            thread.start()
        }
        #expect(group.wait(timeout: .now() + 40) == .success, "the workloads did not finish")
        let total = expected.withLock { $0 }
        let flows = try flows(count: total)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(flows.count == total, "the client side counted \(total) requests, the log has \(flows.count)")
        #expect(total > 50, "the soak ran only \(total) requests")
        let kinds = Dictionary(grouping: flows, by: { $0.error?.kind ?? "ok" }).mapValues(\.count)
        #expect(kinds["bad_request"] ?? 0 > 0 && kinds["upstream_bad_response"] ?? 0 > 0 && kinds["upstream_timeout"] ?? 0 > 0, "\(kinds)")

        // A connection thread closes its client socket as its last act (ClientConnection.run's
        // defer), so no socket left on the proxy's port means none of its threads is left
        // serving. Upstream sockets may stay pooled, at most 16 per origin.
        #expect(probe.settle(connectionsTo: port, atMost: 0), "\(probe.connections(port: port)) proxy-side sockets left")
        for origin in [malformedPort, truncatedPort, silentPort] {
            #expect(probe.settle(connectionsTo: origin, remote: true, atMost: 0), "sockets left to origin \(origin)")
        }
        #expect(probe.settle(connectionsTo: healthyPort, remote: true, atMost: 16), "sockets left to the healthy origin")
        let pooled = probe.connections(port: healthyPort, remote: true)
        let settled = probe.settle(threads: baseline.threads, descriptors: baseline.fds + pooled, slack: 2)
        #expect(settled, "the proxy's descriptors \(baseline.fds) → \(probe.descriptors()) (\(pooled) pooled upstream), threads \(baseline.threads) → \(probe.threads())")
        let rss = probe.residentKiB()
        print("soak: \(total) requests; the proxy's RSS \(baseline.rss) → \(rss) KiB, descriptors \(baseline.fds) → "
              + "\(probe.descriptors()), threads \(baseline.threads) → \(probe.threads())")
        #expect(rss < baseline.rss + 64 * 1024, "the proxy's RSS grew from \(baseline.rss) KiB to \(rss) KiB")
        #expect(proxy.stop().status == 0)
    }
}
