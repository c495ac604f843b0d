@testable import DevProxy
import Foundation
import Synchronization

/// An origin on 127.0.0.1:0 that misbehaves on purpose: after reading a request head it sends
/// exactly the bytes it was given, then closes, resets, or holds the connection open. Runs in
/// this process; stopped when released.
final class ScriptedOrigin: @unchecked Sendable {
    /// What happens after the scripted bytes are sent.
    enum Ending: Sendable {
        /// FIN: a clean close.
        case close
        /// RST: SO_LINGER 0 then close.
        case reset
        /// Keep the connection open and silent for this long, then close.
        case hold(TimeInterval)
        /// Answer every request on the connection the same way until the peer closes.
        case keepAlive
        /// Answer the first request and keep the connection; close it on the next request's
        /// head without answering (a server dropping an idle keep-alive connection just as a
        /// request arrives).
        case closeOnSecondRequest
    }

    let port: Int
    private let listener: Listener
    private let response: [UInt8]
    private let ending: Ending
    private let waitForHead: Bool
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Request heads received, in order.
    private let heads = Mutex<[String]>([])
    private let open = Mutex<[Socket]>([])

    /// - Parameters:
    ///   - response: bytes sent once the request head has arrived.
    ///   - waitForHead: false to answer as soon as anything arrives (e.g. a TLS ClientHello).
    init(_ response: [UInt8], then ending: Ending = .close, waitForHead: Bool = true) throws {
        listener = try Listener(host: "127.0.0.1", port: 0)
        port = listener.address.port
        self.response = response
        self.ending = ending
        self.waitForHead = waitForHead
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    convenience init(_ response: String, then ending: Ending = .close, waitForHead: Bool = true) throws {
        try self.init(Array(response.utf8), then: ending, waitForHead: waitForHead)
    }

    deinit {
        stopped.store(true, ordering: .sequentiallyConsistent)
        open.withLock { $0.forEach { $0.abort() } }
        finished.wait()
    }

    /// The request heads received so far.
    var receivedHeads: [String] { heads.withLock { $0 } }

    private func acceptLoop() {
        defer { finished.signal() }
        var workers: [Thread] = []
        let done = DispatchGroup()
        while !stopped.load(ordering: .sequentiallyConsistent) {
            guard let socket = (try? listener.accept(timeout: 0.1)) ?? nil else { continue }
            open.withLock { $0.append(socket) }
            done.enter()
            let worker = Thread { [self] in
                serve(socket)
                done.leave()
            }
            worker.start()
            workers.append(worker)
        }
        done.wait()
    }

    private func serve(_ socket: Socket) {
        socket.setTimeout(5)
        var pending: [UInt8] = []
        var answered = 0
        repeat {
            guard answer(socket, buffered: &pending, answered: answered) else { break }
            answered += 1
        } while ending.isKeepAlive && !stopped.load(ordering: .sequentiallyConsistent)
        socket.close()
        open.withLock { $0.removeAll { $0 === socket } }
    }

    /// Reads one request head and sends the scripted bytes and ending; false when the peer closed.
    private func answer(_ socket: Socket, buffered pending: inout [UInt8], answered: Int) -> Bool {
        var received = pending
        pending = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if waitForHead, let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                pending = Array(received[end.upperBound...])
                received = Array(received[..<end.upperBound])
                break
            }
            if !waitForHead && !received.isEmpty { break }
            guard let count = try? buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }), count > 0 else { break }
            received += buffer[0..<count]
        }
        if received.isEmpty && ending.isKeepAlive { return false }
        heads.withLock { $0.append(String(decoding: received, as: UTF8.self)) }
        if case .closeOnSecondRequest = ending, answered > 0 { return false }
        try? response.withUnsafeBytes { try socket.write($0) }
        switch ending {
        case .close:
            socket.shutdownWrite()
            // Read until the peer closes so our FIN is not turned into a RST by unread bytes.
            socket.setTimeout(2)
            while let count = try? buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }), count > 0 {}
        case .reset:
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(socket.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        case .hold(let seconds):
            let until = Date().addingTimeInterval(seconds)
            while Date() < until && !stopped.load(ordering: .sequentiallyConsistent) { usleep(20_000) }
        case .keepAlive, .closeOnSecondRequest:
            return true
        }
        return false
    }
}

extension ScriptedOrigin.Ending {
    var isKeepAlive: Bool {
        switch self {
        case .keepAlive, .closeOnSecondRequest: true
        default: false
        }
    }
}
