import Foundation

/// A listening TCP socket.
public final class Listener: @unchecked Sendable {
    // Closed once from `close()`; `accept` runs on the single accept thread.
    private let fd: Int32
    public let address: SocketAddress

    /// Binds and listens on `host:port` (port 0 picks a free one); `transparent` asks for
    /// IP_TRANSPARENT (TPROXY) where the process may set it.
    ///
    /// - Throws: `NetworkError` when the address cannot be bound (in use, not local, …).
    public init(host: String, port: Int, backlog: Int32 = 1024, transparent: Bool = false) throws {
        guard let target = try Resolver.resolve(host: host, port: port, passive: true).first else {
            throw NetworkError(.unresolvable, "cannot resolve \(host)")
        }
        let fd = socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NetworkError(.failed, "socket(): \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if transparent {
            Self.setTransparent(fd, family: target.family)
            if target.family == AF_INET6 {
                // `[::]` takes IPv6 only, beside the `0.0.0.0` listener `transparent-rules --ipv6`
                // prints: dual-stack, it could not bind next to it (in use), and IPv4 connections
                // arrived v4-mapped, without an original destination, refused as loops.
                setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        guard target.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
            let inUse = errno == EADDRINUSE
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            // 8080 and 8081 are many tools' defaults (other proxies, dev servers): say what to do.
            throw NetworkError(.failed, "cannot listen on \(target): \(reason)"
                               + (inUse ? " (another program listens there: choose another port, or port 0 for any free one)" : ""))
        }
        guard listen(fd, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw NetworkError(.failed, "cannot listen on \(target): \(reason)")
        }
        self.fd = fd
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        address = SocketAddress(storage: storage)
    }

    /// A socket already listening, made elsewhere (a WireGuard capture's, in its network
    /// namespace, passed over a Unix socket); this listener owns and closes it.
    public init(listeningDescriptor fd: Int32) {
        self.fd = fd
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        address = SocketAddress(storage: storage)
    }

    deinit { Glibc.close(fd) }

    /// Waits up to `timeout` for a connection; nil when none arrived (so the caller can check
    /// for shutdown).
    public func accept(timeout: TimeInterval) throws -> Socket? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(timeout * 1000))
        guard ready > 0 else { return nil }
        let client = Glibc.accept(fd, nil, nil)
        guard client >= 0 else {
            if errno == EAGAIN || errno == EINTR || errno == ECONNABORTED { return nil }
            if errno == EMFILE || errno == ENFILE {
                // Out of descriptors: the connection stays queued until one frees. poll() says it is
                // ready again at once, so without a pause the accept loop spun a core (98 % measured)
                // and starved the connections being served.
                usleep(UInt32(min(timeout, 0.1) * 1_000_000))
                return nil
            }
            throw NetworkError.from(errno: errno, connectingTo: nil)
        }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        return Socket(takingOwnership: client)
    }
}
