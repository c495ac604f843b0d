import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import DevProxy

@Suite struct ConnectionThreadsTests {
    /// Jobs one after another reuse the thread the first started; jobs at once each get one.
    @Test func aThreadWhoseJobEndedTakesTheNext() {
        let threads = ConnectionThreads(stackSize: 512 * 1024, keepIdle: 5)
        defer { threads.close() }
        let ran = Mutex<[String]>([])
        for _ in 0..<5 {
            let done = DispatchSemaphore(value: 0)
            threads.run {
                ran.withLock { $0.append("\(pthread_self())") }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 5) == .success)
            #expect(Self.waitUntil { threads.idleCount == 1 }, "the thread waits for the next job")
        }
        #expect(threads.threadsStarted == 1)
        #expect(Set(ran.withLock { $0 }).count == 1, "one thread ran all five")

        let release = Self.runBlockedJobs(3, on: threads)
        #expect(threads.threadsStarted == 3, "the waiting thread took one, two more were started")
        for _ in 0..<3 { release.signal() }
        #expect(Self.waitUntil { threads.idleCount == 3 })
    }

    /// A waiting thread exits after `keepIdle`, and `close` lets the waiting ones go at once; a job
    /// after that still runs, on a thread of its own that does not stay.
    @Test func waitingThreadsExitAfterTheirTimeAndAtClose() {
        let threads = ConnectionThreads(stackSize: 512 * 1024, keepIdle: 0.2)
        let done = DispatchSemaphore(value: 0)
        threads.run { done.signal() }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(Self.waitUntil { threads.idleCount == 1 })
        #expect(Self.waitUntil { threads.idleCount == 0 }, "gone after keepIdle")

        let patient = ConnectionThreads(stackSize: 512 * 1024, keepIdle: 60)
        patient.run { done.signal() }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(Self.waitUntil { patient.idleCount == 1 })
        patient.close()
        #expect(patient.idleCount == 0)
        patient.run { done.signal() }
        #expect(done.wait(timeout: .now() + 5) == .success, "a job after close still runs")
        #expect(patient.threadsStarted == 2)
        usleep(100_000)
        #expect(patient.idleCount == 0, "and its thread does not wait")
    }

    /// No more than `maxIdle` threads wait; the rest exit when their jobs end.
    @Test func atMostMaxIdleThreadsWait() {
        let threads = ConnectionThreads(stackSize: 512 * 1024, keepIdle: 5, maxIdle: 2)
        defer { threads.close() }
        let release = Self.runBlockedJobs(4, on: threads)
        for _ in 0..<4 { release.signal() }
        #expect(Self.waitUntil { threads.idleCount == 2 })
        usleep(100_000)
        #expect(threads.idleCount == 2)
    }

    /// A proxy's clients one after another (curl, a connection each) are served on one thread.
    @Test func clientsOfAProxyOneAfterAnotherShareAThread() throws {
        let origin = try OriginServer(tls: false)
        let proxy = try ProxyHarness()
        for _ in 0..<4 {
            let result = try proxy.curl([origin.url("/cl?n=2", tls: false)])
            #expect(result.status == 0, "\(result.output)")
            #expect(Self.waitUntil { proxy.server.connectionThreads.idleCount == 1 })
        }
        #expect(proxy.server.connectionThreads.threadsStarted == 1)
        #expect(proxy.flows(count: 4).map { $0.response?.status } == [200, 200, 200, 200])
    }

    /// Runs `count` jobs that each wait for a signal of the returned semaphore, once all have started.
    private static func runBlockedJobs(_ count: Int, on threads: ConnectionThreads) -> DispatchSemaphore {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            threads.run {
                started.signal()
                release.wait()
            }
        }
        for _ in 0..<count { #expect(started.wait(timeout: .now() + 5) == .success, "\(count) jobs at once all run") }
        return release
    }

    private static func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }
}
