import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket on 127.0.0.1 for the real-peer tests, with reads bounded in time.
// Unchecked: a listener is handed to the one server thread that accepts on it, then not touched.
final class LoopbackSocket: @unchecked Sendable {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// A listening socket on 127.0.0.1 and a port the kernel chose.
    static func listen() throws -> LoopbackSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket: \(errno)") }
        let socket = LoopbackSocket(fd: fd)
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else { throw TestError("bind/listen: \(errno)") }
        return socket
    }

    /// The local port.
    var port: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connects to 127.0.0.1:`port`, retrying until `timeout` (the peer may still be starting).
    static func connect(port: Int, timeout: TimeInterval = 5) throws -> LoopbackSocket {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: port)
            let rv = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if rv == 0 { return LoopbackSocket(fd: fd) }
            close(fd)
            guard Date() < deadline else { throw TestError("cannot connect to 127.0.0.1:\(port)") }
            usleep(20_000)
        }
    }

    /// Waits at most `timeout` for a connection.
    func accept(timeout: TimeInterval) throws -> LoopbackSocket {
        guard wait(POLLIN, timeout: timeout) else { throw TestError("no connection within \(timeout) s") }
        let client = Glibc.accept(fd, nil, nil)
        guard client >= 0 else { throw TestError("accept: \(errno)") }
        return LoopbackSocket(fd: client)
    }

    /// Writes every byte.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestError("send: \(errno)") }
            offset += n
        }
    }

    /// Reads what is available within `timeout`: nil at end of stream, empty on timeout.
    func read(timeout: TimeInterval) throws -> [UInt8]? {
        guard wait(POLLIN, timeout: timeout) else { return [] }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw TestError("recv: \(errno)") }
        return n == 0 ? nil : Array(buffer[..<n])
    }

    private func wait(_ events: Int32, timeout: TimeInterval) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
        return poll(&entry, 1, Int32(timeout * 1000)) > 0
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
