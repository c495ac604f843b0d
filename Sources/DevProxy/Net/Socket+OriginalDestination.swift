#if os(Linux)
import CSystem
#endif
import Foundation

extension Socket {
    /// Where a transparently redirected connection was going: `SO_ORIGINAL_DST` (IPv4) or
    /// `IP6T_SO_ORIGINAL_DST` (IPv6) after an iptables/nftables REDIRECT; else the socket's own
    /// local address, which a TPROXY rule leaves as the original destination (and which is the
    /// listener itself for a connection nobody redirected). Nil off Linux.
    public var originalDestination: SocketAddress? {
        #if os(Linux)
        guard let local = localAddress else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            local.family == AF_INET6
                ? CSystem_originalDestinationIPv6(fd, pointer, &length)
                : CSystem_originalDestinationIPv4(fd, pointer, &length)
        }
        return result == 0 ? SocketAddress(storage: storage) : local
        #else
        return nil
        #endif
    }
}

extension Listener {
    /// Sets IP_TRANSPARENT (IPV6_TRANSPARENT) so TPROXY can hand the listener connections for
    /// addresses that are not this machine's; needs CAP_NET_ADMIN. REDIRECT works without it,
    /// so a refusal is not an error. Returns whether it was set.
    @discardableResult
    static func setTransparent(_ fd: Int32, family: Int32) -> Bool {
        #if os(Linux)
        return (family == AF_INET6 ? CSystem_setTransparentIPv6(fd, 1) : CSystem_setTransparentIPv4(fd, 1)) == 0
        #else
        return false
        #endif
    }
}
