import Foundation
import HTTPTypes

/// One stream of an HTTP/2 client whose origin speaks only HTTP/1.1 (the client offered only h2,
/// as gRPC clients and some apps do): the request goes out as HTTP/1.1 on a pooled connection,
/// on a thread of its own, and what comes back is posted to the client connection's loop.
///
/// The loop and the thread meet only here, under one lock, and in version-neutral terms
/// (`HTTPResponse`, `HTTPFields`): the thread speaks HTTP/1.1, the loop HTTP/2, and each side
/// converts with its own codec's conversions. Backpressure holds both ways: the
/// loop acknowledges the client's request bytes once the thread has written them upstream
/// (`consumed`), and the thread reads no more of the response while `responseQueueLimit` bytes
/// it posted are not yet on their way to the client (`acknowledge`), or `Intercepts.maxBody`
/// while a breakpoint gathers the response (`setQueueLimit`).
final class HTTP1StreamLeg: @unchecked Sendable {
    /// What the thread reports to the loop.
    enum Report {
        case connected(UpstreamConnection)
        /// The pooled connection turned out closed by the server before any response: the
        /// request goes again on a fresh one (`connected` follows).
        case retrying
        /// This many request bytes went upstream: the client's window may reopen by as many.
        case consumed(Int)
        case interim(HTTPResponse)
        /// The request body stopped going up before its end: the origin answered first (it comes
        /// before the answer's `head`).
        case bodyCut(Flow.BodyCut)
        /// The final response head, and the version of the origin's status line (`HTTP/1.1`).
        case head(HTTPResponse, httpVersion: String)
        case body([UInt8])
        /// Bytes came after the response's end (`UpstreamOverrun`); they were dropped (it comes
        /// before `end`).
        case overran(Int, contentLength: String?)
        /// The response ended, with the origin's trailers (chunked), if any.
        case end(trailers: HTTPFields)
        /// The exchange failed; `responseStarted` tells whether a head was already posted.
        case failed(FlowErrorKind, status: Int, message: String, responseStarted: Bool)
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var requestChunks: [[UInt8]] = []
    private var requestEnded = false
    private var requestTrailers = HTTPFields()
    private var cancelled = false
    private var reports: [Report] = []
    private var unacknowledged = 0
    /// `responseQueueLimit`, or more while a breakpoint gathers the response (`setQueueLimit`).
    private var queueLimit = HTTP1StreamLeg.responseQueueLimit
    private var upstreamSocket: Socket?
    /// Made when the thread first waits for the client's body while watching the origin
    /// (`nextRequestPart`): what the loop hands over (`push`, `finishRequest`, `cancel`) wakes its `poll()`.
    private var bodyWake: WakePipe?

    /// Response bytes posted and not yet handed to the client, at most.
    static let responseQueueLimit = 256 * 1024

    private let wake: WakePipe

    init(wake: WakePipe) {
        self.wake = wake
    }

    // MARK: the loop's side

    /// Request body bytes from the client, in order.
    func push(_ bytes: [UInt8]) {
        condition.withLock {
            requestChunks.append(bytes)
            condition.broadcast()
            bodyWake?.signal()
        }
    }

    /// The client's request ended (with trailers, if any).
    func finishRequest(trailers: HTTPFields = HTTPFields()) {
        condition.withLock {
            requestEnded = true
            requestTrailers = trailers
            condition.broadcast()
            bodyWake?.signal()
        }
    }

    /// The client took `count` response bytes.
    func acknowledge(_ count: Int) {
        condition.withLock {
            unacknowledged = max(0, unacknowledged - count)
            condition.broadcast()
        }
    }

    /// Lets the thread post up to `limit` response bytes the client has not taken (a breakpoint
    /// gathers the whole body before any goes on), or with nil `responseQueueLimit` again.
    func setQueueLimit(_ limit: Int?) {
        condition.withLock {
            queueLimit = limit ?? Self.responseQueueLimit
            condition.broadcast()
        }
    }

    /// The client reset or closed the stream: the thread stops, its upstream socket is cut.
    func cancel() {
        condition.withLock {
            cancelled = true
            upstreamSocket?.abort()
            condition.broadcast()
            bodyWake?.signal()
        }
    }

    /// The reports posted since the last call.
    func takeReports() -> [Report] {
        condition.withLock {
            defer { reports = [] }
            return reports
        }
    }

    // MARK: the thread's side

    func post(_ report: Report) {
        condition.withLock {
            if case .body(let bytes) = report { unacknowledged += bytes.count }
            reports.append(report)
        }
        wake.signal()
    }

    /// Remembers the socket so `cancel` can cut a blocked read or write.
    func attach(_ socket: Socket) -> Bool {
        condition.withLock {
            upstreamSocket = socket
            return !cancelled
        }
    }

    /// The next request chunk; nil when the request ended (then `trailers` holds its trailers).
    /// Throws when the stream was cancelled.
    func nextRequestChunk() throws -> [UInt8]? {
        try condition.withLock {
            while requestChunks.isEmpty && !requestEnded && !cancelled { condition.wait() }
            if cancelled { throw ClientGone(message: "the client reset the stream") }
            if !requestChunks.isEmpty { return requestChunks.removeFirst() }
            return nil
        }
    }

    /// What `nextRequestPart` found first.
    enum RequestPart {
        case chunk([UInt8])
        /// The request ended (`trailers` holds its trailers).
        case end
        /// The origin sent something (or closed) before the client's next part.
        case originSpoke
    }

    /// The next request chunk, the request's end, or the origin speaking while the client has
    /// sent nothing more (a client that pauses mid-upload), whichever comes first: an early answer
    /// (a 413, a 401) reaches the client at once instead of when its next DATA comes. Throws when
    /// the stream was cancelled.
    /// - Parameter origin: the origin connection's socket, watched for input.
    func nextRequestPart(watching origin: Socket) throws -> RequestPart {
        while true {
            // The pipe is made only for a wait, and emptied before the state is read again: a part
            // handed over after that read signals it anew.
            if let ready = try readyPart() { return ready }
            let wake: WakePipe = try condition.withLock {
                if bodyWake == nil { bodyWake = try WakePipe() }
                return bodyWake!
            }
            wake.drain()
            if let ready = try readyPart() { return ready }
            var pollers = [pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: origin.fd, events: Int16(POLLIN), revents: 0)]
            // As long as the client takes to send more (the condition wait of `nextRequestChunk`
            // has no limit either): its reset or its connection's end cancels the leg.
            let count = poll(&pollers, 2, -1)
            if count < 0 && errno != EINTR { throw NetworkError(.failed, "poll failed: errno \(errno)") }
            if count > 0, pollers[1].revents != 0 {
                try throwIfCancelled()
                return .originSpoke
            }
        }
    }

    /// The next chunk or the request's end if either is there; throws when the stream was cancelled.
    private func readyPart() throws -> RequestPart? {
        try condition.withLock {
            if cancelled { throw ClientGone(message: "the client reset the stream") }
            if !requestChunks.isEmpty { return .chunk(requestChunks.removeFirst()) }
            return requestEnded ? .end : nil
        }
    }

    var trailers: HTTPFields { condition.withLock { requestTrailers } }

    /// Forgets the upstream socket, so that a later `cancel` cannot cut it once it serves another
    /// exchange from the pool; false when the stream was cancelled already (the socket is cut).
    func detach() -> Bool {
        condition.withLock {
            upstreamSocket = nil
            return !cancelled
        }
    }

    /// Throws when the stream was cancelled (the client reset it, or its connection ended).
    func throwIfCancelled() throws {
        try condition.withLock {
            if cancelled { throw ClientGone(message: "the client reset the stream") }
        }
    }

    /// Waits while the client is behind on the response by more than the limit.
    func waitForRoom() throws {
        try condition.withLock {
            while unacknowledged > queueLimit && !cancelled { condition.wait() }
            if cancelled { throw ClientGone(message: "the client reset the stream") }
        }
    }
}

/// A pipe the stream threads write a byte to, so the client connection's `poll()` wakes up.
final class WakePipe: @unchecked Sendable {
    let readFD: Int32
    private let writeFD: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw NetworkError(.failed, "cannot create a pipe") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Empties the pipe (the loop then looks at every leg).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readFD, &buffer, buffer.count) > 0 {}
    }
}
