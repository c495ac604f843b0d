import CEpoll
import Foundation
import Synchronization

/// One thread running epoll and the jobs of the tasks that prefer it: a task that waits for a
/// socket suspends, and the loop resumes it on the same thread when epoll reports the socket.
///
/// Just enough for the measurement: readability only, no timeouts, never stops.
final class EventLoop: TaskExecutor, @unchecked Sendable {
    // `localJobs`, `waiters` and `loopThread` are touched on the loop's thread only (the
    // enqueue from elsewhere goes through `remoteJobs` and the eventfd).
    private let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
    private let wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    private let remoteJobs = Mutex<[UnownedJob]>([])
    private var localJobs: [UnownedJob] = []
    private var waiters: [Int32: UnsafeContinuation<Void, Never>] = [:]
    private var loopThread: pthread_t?

    init() {
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeFD))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
        let thread = Thread { [self] in run() }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if let loopThread, pthread_equal(loopThread, pthread_self()) != 0 {
            localJobs.append(job)
            return
        }
        remoteJobs.withLock { $0.append(job) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Suspends the calling task until `fd` is readable (one-shot interest).
    func readable(_ fd: Int32) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            waiters[fd] = continuation
            var event = epoll_event(events: EPOLLIN.rawValue | EPOLLONESHOT.rawValue, data: epoll_data_t(fd: fd))
            if epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) != 0 { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
        }
    }

    private func run() {
        loopThread = pthread_self()
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            while !localJobs.isEmpty {
                let batch = localJobs
                localJobs.removeAll(keepingCapacity: true)
                for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            }
            let remote = remoteJobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            if !remote.isEmpty {
                localJobs.append(contentsOf: remote)
                continue
            }
            let ready = epoll_wait(epollFD, &events, Int32(events.count), -1)
            for event in events.prefix(max(0, Int(ready))) {
                if event.data.fd == wakeFD {
                    var count: UInt64 = 0
                    _ = read(wakeFD, &count, 8)
                } else {
                    waiters.removeValue(forKey: event.data.fd)?.resume()
                }
            }
        }
    }
}
