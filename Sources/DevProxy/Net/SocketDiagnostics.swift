#if os(Linux)
import Glibc
import Synchronization

/// One TCP socket of this host's network namespace, found by its exact 4-tuple through netlink
/// `NETLINK_SOCK_DIAG`, as `ss` asks the kernel (`man 7 sock_diag`).
///
/// Why netlink rather than `/proc/net/tcp`: the kernel answers one exact-match request with one
/// message (`inet_diag_find_one_icsk`), four syscalls whatever the number of sockets, where the
/// text table is read and parsed whole (every socket of the host) on every lookup. A peer that is
/// not on this host (a LAN device, a `devproxy exec` child in its own namespace) has no such
/// socket here, and the kernel says so (`ENOENT`): that is the "is it local?" test too.
enum SocketDiagnostics {
    /// What the kernel says of the socket: its inode (`socket:[INODE]` in `/proc/PID/fd`) and
    /// the user that created it.
    struct Entry: Equatable {
        let inode: UInt32
        let uid: UInt32
    }

    // linux/netlink.h, linux/sock_diag.h, linux/inet_diag.h: Glibc's module imports none of them.
    private static let netlinkSockDiag: Int32 = 4           // NETLINK_SOCK_DIAG
    private static let sockDiagByFamily: UInt16 = 20        // SOCK_DIAG_BY_FAMILY
    private static let netlinkError: UInt16 = 2             // NLMSG_ERROR
    private static let requestFlag: UInt16 = 1              // NLM_F_REQUEST
    /// `nlmsghdr` (16 bytes) then `inet_diag_req_v2` (8 bytes, then the 48-byte `inet_diag_sockid`).
    private static let requestLength = 16 + 8 + 48
    /// In the answer, after `nlmsghdr` and `inet_diag_msg`'s 4 bytes, `id` (48) and 3 × u32:
    /// `idiag_uid` then `idiag_inode`.
    private static let uidOffset = 16 + 4 + 48 + 12

    /// The socket whose own address is `local` and whose peer is `remote`, in this namespace.
    ///
    /// For a client of the proxy: `local` is the client's address as the proxy sees it (its
    /// `peerAddress`), `remote` the proxy's end (`localAddress`). An IPv4 address mapped into
    /// IPv6 (`::ffff:127.0.0.1`, a dual-stack listener's view of an IPv4 client) is asked as IPv4.
    /// - Returns: nil when there is no such socket here, or netlink cannot be asked.
    static func find(local: SocketAddress, remote: SocketAddress) -> Entry? {
        guard let local = Endpoint(local), let remote = Endpoint(remote), local.family == remote.family else {
            return nil
        }
        // One netlink socket for every lookup, one lookup at a time: opening and closing one per
        // connection was a third of the lookup's cost (perf, `devproxy-load --mode newconn`).
        return channel.withLock { channel in
            if channel.fd < 0 {
                channel.fd = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                                    netlinkSockDiag)
                guard channel.fd >= 0 else { return nil }
                // The kernel answers at once; the bound only guards against a namespace without sock_diag.
                var wait = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(channel.fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            }
            channel.sequence &+= 1
            switch ask(channel.fd, sequence: channel.sequence, local: local, remote: remote) {
            case .found(let entry): return entry
            case .none: return nil
            case .failed:
                // Opened again for the next lookup.
                close(channel.fd)
                channel.fd = -1
                return nil
            }
        }
    }

    /// The netlink socket lookups share, and the sequence number of the last request.
    private struct Channel {
        var fd: Int32 = -1
        var sequence: UInt32 = 0
    }

    private static let channel = Mutex(Channel())

    /// What the kernel answered one request.
    private enum Answer {
        case found(Entry)
        /// No such socket (`ENOENT`), or one without an inode (`TIME_WAIT`).
        case none
        /// The netlink socket failed or did not answer in time.
        case failed
    }

    /// One request on `fd` and its answer.
    private static func ask(_ fd: Int32, sequence: UInt32, local: Endpoint, remote: Endpoint) -> Answer {
        var request = [UInt8](repeating: 0, count: requestLength)
        put(UInt32(requestLength), at: 0, in: &request)              // nlmsg_len
        put(sockDiagByFamily, at: 4, in: &request)                   // nlmsg_type
        put(requestFlag, at: 6, in: &request)                        // nlmsg_flags
        put(sequence, at: 8, in: &request)                           // nlmsg_seq
        request[16] = UInt8(local.family)                            // sdiag_family
        request[17] = UInt8(IPPROTO_TCP)                             // sdiag_protocol
        put(UInt32.max, at: 20, in: &request)                        // idiag_states: any
        // inet_diag_sockid: ports and addresses in network order, as the socket has them.
        request[24] = local.port[0]; request[25] = local.port[1]     // idiag_sport
        request[26] = remote.port[0]; request[27] = remote.port[1]   // idiag_dport
        request.replaceSubrange(28..<(28 + local.address.count), with: local.address)    // idiag_src
        request.replaceSubrange(44..<(44 + remote.address.count), with: remote.address)  // idiag_dst
        // idiag_cookie: INET_DIAG_NOCOOKIE in both words, or the kernel compares it (ESTALE).
        put(UInt32.max, at: 64, in: &request)
        put(UInt32.max, at: 68, in: &request)
        guard send(fd, request, request.count, 0) == request.count else { return .failed }

        var answer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = answer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count >= 16 else { return .failed }
            // An answer to an earlier request that timed out is read past, not taken for this one's.
            guard read(at: 8, in: answer) == sequence else { continue }
            let type = answer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt16.self) }
            guard type == sockDiagByFamily, count >= uidOffset + 8 else { return .none }  // NLMSG_ERROR: ENOENT
            let uid = read(at: uidOffset, in: answer)
            let inode = read(at: uidOffset + 4, in: answer)
            return inode == 0 ? .none : .found(Entry(inode: inode, uid: uid))
        }
    }

    /// A socket address as `inet_diag_sockid` holds it.
    private struct Endpoint {
        let family: Int32
        let port: [UInt8]
        let address: [UInt8]

        init?(_ socketAddress: SocketAddress) {
            var storage = socketAddress.storage
            switch socketAddress.family {
            case AF_INET:
                let inet = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
                family = AF_INET
                port = withUnsafeBytes(of: inet.sin_port) { Array($0) }
                address = withUnsafeBytes(of: inet.sin_addr) { Array($0) }
            case AF_INET6:
                let inet6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
                let bytes = withUnsafeBytes(of: inet6.sin6_addr) { Array($0) }
                port = withUnsafeBytes(of: inet6.sin6_port) { Array($0) }
                if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                    family = AF_INET
                    address = Array(bytes[12..<16])
                } else {
                    family = AF_INET6
                    address = bytes
                }
            default:
                return nil
            }
        }
    }

    private static func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
        // Netlink's headers are in the host's byte order.
        withUnsafeBytes(of: value) { bytes.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }

    private static func read(at offset: Int, in bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }
}
#endif
