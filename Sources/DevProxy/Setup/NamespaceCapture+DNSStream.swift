import Foundation
import Synchronization

extension NamespaceCapture {
    /// DNS over TCP for a capture's namespace: the connections the namespace redirects from TCP
    /// port 53 (a resolver's retry after a truncated answer, glibc's `options use-vc`, `dig +tcp`),
    /// each query answered as its UDP twin is (`FakeDNS.answer`). Used by `devproxy exec
    /// --transparent`'s bridge and by the WireGuard capture.
    ///
    /// RFC 7766: each message follows its length (two bytes, big-endian, §8); several queries may
    /// come at once and are answered in the order they came (§6.2.1.1); how long a connection may
    /// wait for its next query is the server's to choose (§6.2.3).
    public final class DNSStreamServer: Sendable {
        /// Connections answered at once; one more is closed as soon as it is accepted.
        public static let connectionLimit = 64
        /// How long a connection may wait for its next query before it is closed, unless told otherwise.
        public static let idleLimit: TimeInterval = 10

        private let fd: Int32
        private let idle: TimeInterval
        private let answer: @Sendable ([UInt8]) -> [UInt8]?
        private let connections = Atomic<Int>(0)

        /// - Parameters:
        ///   - fd: a TCP socket listening (`NamespaceCapture.bound(_:stream:what:)`); its owner
        ///     closes it, after `serve` returned.
        ///   - idle: how long a connection may wait for its next query (`idleLimit`).
        ///   - answer: the reply to one DNS message, or nil to close the connection.
        public init(listening fd: Int32, idle: TimeInterval = idleLimit,
                    answer: @escaping @Sendable ([UInt8]) -> [UInt8]?) {
            self.fd = fd
            self.idle = idle
            self.answer = answer
        }

        /// Accepts connections, each answered on a thread of its own, until `stopped` says so
        /// (looked at every 200 ms). Blocks.
        public func serve(until stopped: @escaping @Sendable () -> Bool = { false }) {
            while !stopped() {
                guard Self.readable(fd) else { continue }
                let client = Glibc.accept(fd, nil, nil)
                guard client >= 0 else { continue }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                guard connections.add(1, ordering: .relaxed).newValue <= Self.connectionLimit else {
                    connections.subtract(1, ordering: .relaxed)
                    Glibc.close(client)
                    continue
                }
                let thread = Thread { [self] in
                    answer(stream: client, until: stopped)
                    Glibc.close(client)
                    connections.subtract(1, ordering: .relaxed)
                }
                thread.name = "devproxy-dns-tcp"
                thread.start()
            }
        }

        /// The queries on `client` answered in order until it closes, sends nothing for
        /// `idle` seconds, sends what gets no answer, or `stopped`.
        private func answer(stream client: Int32, until stopped: () -> Bool) {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var idleSince = Self.now()
            while !stopped() {
                while pending.count >= 2, pending.count >= 2 + (Int(pending[0]) << 8 | Int(pending[1])) {
                    let length = Int(pending[0]) << 8 | Int(pending[1])
                    guard let reply = answer(Array(pending[2..<(2 + length)])), reply.count <= 65_535 else { return }
                    pending.removeFirst(2 + length)
                    guard Self.sendAll([UInt8(reply.count >> 8), UInt8(reply.count & 0xFF)] + reply, to: client) else {
                        return
                    }
                    idleSince = Self.now()
                }
                guard Self.now() - idleSince < idle else { return }
                guard Self.readable(client) else { continue }
                let count = buffer.withUnsafeMutableBytes { Glibc.recv(client, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                pending += buffer[0..<count]
            }
        }

        private static func sendAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
            var written = 0
            while written < bytes.count {
                let sent = bytes.withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                written += sent
            }
            return true
        }

        private static func now() -> TimeInterval { TimeInterval(DispatchTime.now().uptimeNanoseconds) / 1e9 }

        /// Whether `fd` became readable within 200 ms (so the loops see `stopped`).
        private static func readable(_ fd: Int32) -> Bool {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&poller, 1, 200) > 0
        }
    }
}
