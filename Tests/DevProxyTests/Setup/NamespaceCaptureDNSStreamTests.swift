@testable import DevProxy
import Foundation
import Synchronization
import Testing

/// `NamespaceCapture.DNSStreamServer`, DNS over TCP (RFC 7766), on 127.0.0.1 with FakeDNS's
/// answers: a query sent a byte at a time, queries pipelined in one write, what gets no answer,
/// the idle limit and the connection limit.
@Suite struct NamespaceCaptureDNSStreamTests {
    /// A server on a free port of 127.0.0.1, serving until the test ends.
    final class Running: Sendable {
        let port: Int
        let fd: Int32
        let stopped = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)

        init(idle: TimeInterval = NamespaceCapture.DNSStreamServer.idleLimit) throws {
            (fd, port) = try NamespaceCapture.bound(0x7F00_0001, stream: true, what: "the test's listener")
            let dns = NamespaceCapture.FakeDNS()
            let server = NamespaceCapture.DNSStreamServer(listening: fd, idle: idle) { dns.answer($0) }
            Thread { [self] in
                server.serve { [self] in stopped.load(ordering: .relaxed) }
                done.signal()
            }.start()
        }

        func stop() {
            stopped.store(true, ordering: .relaxed)
            done.wait()
            close(fd)
        }

        func connect() throws -> Socket {
            let socket = try Socket.connect(host: "127.0.0.1", port: port, timeout: 5)
            socket.setTimeout(5)
            return socket
        }
    }

    static func framed(_ message: [UInt8]) -> [UInt8] {
        [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    }

    /// The next framed message, or nil when the server closed (or reset) the connection first.
    static func message(from socket: Socket) -> [UInt8]? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 2 || received.count < 2 + (Int(received[0]) << 8 | Int(received[1])) {
            let count = (try? buffer.withUnsafeMutableBytes { try socket.read(into: $0) }) ?? 0
            guard count > 0 else { return nil }
            received += buffer[0..<count]
        }
        return Array(received[2...])
    }

    static func send(_ bytes: [UInt8], to socket: Socket) throws {
        try bytes.withUnsafeBytes { try socket.write($0) }
    }

    /// A query written one byte at a time is answered once whole; two in one write are both
    /// answered, in order, with their IDs, on the same connection.
    @Test func queriesAreAnsweredWholeOneByteAtATimeAndPipelined() throws {
        let running = try Running()
        defer { running.stop() }
        let socket = try running.connect()
        defer { socket.close() }
        for byte in Self.framed(TransparentExecTests.query("one.test", type: 1, id: 1)) {
            try Self.send([byte], to: socket)
        }
        let one = try #require(Self.message(from: socket))
        #expect(one[0...1] == [0, 1] && one[6...7] == [0, 1], "\(one)")
        try Self.send(Self.framed(TransparentExecTests.query("two.test", type: 1, id: 2))
                      + Self.framed(TransparentExecTests.query("one.test", type: 28, id: 3)), to: socket)
        let two = try #require(Self.message(from: socket))
        let three = try #require(Self.message(from: socket))
        #expect(two[0...1] == [0, 2] && two.suffix(4) != one.suffix(4), "\(two)")
        #expect(three[0...1] == [0, 3] && three[6...7] == [0, 0], "AAAA: no record: \(three)")
    }

    /// What gets no answer (a response, a message shorter than a header) closes the connection.
    @Test func whatIsNoQueryClosesTheConnection() throws {
        let running = try Running()
        defer { running.stop() }
        var response = TransparentExecTests.query("a.test", type: 1)
        response[2] |= 0x80
        for message in [[1, 2, 3], response] {
            let socket = try running.connect()
            defer { socket.close() }
            try Self.send(Self.framed(message), to: socket)
            #expect(Self.message(from: socket) == nil, "\(message)")
        }
    }

    /// A connection that sends no query for the idle limit is closed, not before.
    @Test func anIdleConnectionIsClosed() throws {
        let running = try Running(idle: 1)
        defer { running.stop() }
        let socket = try running.connect()
        defer { socket.close() }
        let started = Date()
        #expect(Self.message(from: socket) == nil)
        let took = Date().timeIntervalSince(started)
        #expect(took >= 0.9 && took < 3, "closed after \(took) s")
    }

    /// 64 connections are answered at once; the 65th is closed as soon as it is accepted, and one
    /// more is answered once one of the 64 has gone.
    @Test func connectionsPastTheLimitAreClosed() throws {
        let running = try Running()
        defer { running.stop() }
        var open: [Socket] = []
        defer { open.forEach { $0.close() } }
        for index in 0..<NamespaceCapture.DNSStreamServer.connectionLimit {
            let socket = try running.connect()
            open.append(socket)
            try Self.send(Self.framed(TransparentExecTests.query("n\(index).test", type: 1)), to: socket)
            #expect(Self.message(from: socket) != nil, "connection \(index + 1)")
        }
        let extra = try running.connect()
        defer { extra.close() }
        try Self.send(Self.framed(TransparentExecTests.query("extra.test", type: 1)), to: extra)
        #expect(Self.message(from: extra) == nil, "the 65th is closed")
        open.removeFirst().close()
        // The server sees the close within its 200 ms poll.
        var answered = false
        for _ in 0..<20 where !answered {
            Thread.sleep(forTimeInterval: 0.1)
            let again = try running.connect()
            defer { again.close() }
            try? Self.send(Self.framed(TransparentExecTests.query("again.test", type: 1)), to: again)
            answered = Self.message(from: again) != nil
        }
        #expect(answered, "a connection after one of the 64 went")
    }
}
