import Foundation

extension NamespaceCapture {
    /// How far this machine's IPv6 reaches, which the namespace's IPv6 routes copy: an address it
    /// cannot reach from here is unreachable in the namespace too, at once ("Network is
    /// unreachable"), so a client trying IPv6 first (Happy Eyeballs, RFC 8305) goes on with IPv4
    /// as it would without DevProxy. Routed to the bridge instead, the connection would be accepted
    /// there and fail only once DevProxy tried it (a 502, or a closed TLS connection), with no
    /// fallback.
    public enum IPv6Reach: String, Sendable, CaseIterable {
        /// A global address (2000::/3) is the source for the Internet: every IPv6 address is captured.
        case global
        /// Only a unique local address (fc00::/7, RFC 4193): only those are captured.
        case uniqueLocal = "unique-local"
        /// No IPv6 beyond loopback.
        case none

        /// The prefixes routed to the bridge in the namespace.
        public var routes: [String] {
            switch self {
            case .global: ["default"]
            case .uniqueLocal: ["fc00::/7"]
            case .none: []
            }
        }

        /// This machine's, from the source address its routing table picks for a global address
        /// (a UDP socket connected to 2001:4860:4860::8888, which sends nothing; the probe
        /// Chromium makes before it asks for AAAA records).
        public static func probe() -> IPv6Reach {
            let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return .none }
            defer { Glibc.close(fd) }
            var target = sockaddr_in6()
            target.sin6_family = sa_family_t(AF_INET6)
            target.sin6_port = UInt16(53).bigEndian
            guard inet_pton(AF_INET6, "2001:4860:4860::8888", &target.sin6_addr) == 1 else { return .none }
            var source = sockaddr_in6()
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            let found = withUnsafeMutablePointer(to: &target) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
                }
            } && withUnsafeMutablePointer(to: &source) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
            }
            guard found else { return .none }
            let first = withUnsafeBytes(of: source.sin6_addr) { $0[0] }
            return reach(ofSourceStartingWith: first)
        }

        /// The reach a source address gives, by its first byte.
        static func reach(ofSourceStartingWith first: UInt8) -> IPv6Reach {
            if first & 0xE0 == 0x20 { return .global }
            if first & 0xFE == 0xFC { return .uniqueLocal }
            return .none
        }
    }

    /// A TCP socket listening, or a UDP one bound, on ::1 and a free port.
    /// - Throws: `NetworkError` naming `what` when it cannot be bound (a kernel without IPv6).
    static func boundLoopbackV6(stream: Bool, what: String) throws -> (fd: Int32, port: Int) {
        var socketAddress = sockaddr_in6()
        socketAddress.sin6_family = sa_family_t(AF_INET6)
        socketAddress.sin6_addr = in6addr_loopback
        return try bound(socketAddress, family: AF_INET6, stream: stream, what: what + " on ::1")
    }
}
