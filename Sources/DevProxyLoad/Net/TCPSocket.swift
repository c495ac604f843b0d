import Glibc

/// One non-blocking TCP socket; closes its descriptor in `deinit`.
///
/// The only file here that calls `socket`/`connect`/`read`/`write` directly; TLS reads and
/// writes go through OpenSSL's socket BIO on the same descriptor.
final class TCPSocket {
    /// The descriptor, valid until this object goes away.
    let fd: Int32

    /// Result of a non-blocking read or write.
    enum IOResult {
        case bytes(Int)
        case wouldBlock
        case closed
        case failed(Int32)
    }

    /// Creates a socket with `TCP_NODELAY` and starts a non-blocking connect.
    /// - Returns: the socket and whether the connect already completed.
    /// - Throws: `LoadError(.connect)` when the kernel refuses at once.
    static func connect(to address: LoopbackAddress) throws(LoadError) -> (TCPSocket, connected: Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoadError(kind: .connect, reason: "socket: \(String(cString: strerror(errno)))") }
        let sock = TCPSocket(fd: fd)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var target = address.storage
        let rc = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc == 0 { return (sock, true) }
        guard errno == EINPROGRESS else {
            throw LoadError(kind: .connect, reason: "connect: \(String(cString: strerror(errno)))")
        }
        return (sock, false)
    }

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// After the socket turned writable, tells whether the non-blocking connect succeeded.
    /// - Throws: `LoadError(.connect)` with the pending socket error.
    func finishConnect() throws(LoadError) {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { throw LoadError(kind: .connect, reason: "connect: \(String(cString: strerror(error)))") }
    }

    /// Reads what is available, without blocking.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .closed }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .failed(errno)
    }

    /// Writes what the kernel accepts, without blocking.
    func write(_ buffer: UnsafeRawBufferPointer) -> IOResult {
        let n = Glibc.write(fd, buffer.baseAddress, buffer.count)
        if n >= 0 { return .bytes(n) }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .failed(errno)
    }
}
