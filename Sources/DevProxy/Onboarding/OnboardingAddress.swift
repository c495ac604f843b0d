import Foundation
import HTTPTypes

/// The address a device uses to reach the onboarding page on the proxy's own port.
public struct OnboardingAddress: Sendable, Equatable {
    /// `http://HOST:PORT/`.
    public let url: String
    /// True when only this machine can reach it (the proxy listens on loopback).
    public let loopbackOnly: Bool

    init(url: String, loopbackOnly: Bool) {
        self.url = url
        self.loopbackOnly = loopbackOnly
    }

    /// The page's address for a listener bound to `listener`: its own host, or, for the
    /// wildcard (`0.0.0.0`, `::`), this machine's first non-loopback address that is up (IPv4
    /// first, as phones on Wi-Fi most often have it).
    public init(listener: SocketAddress) {
        let bound = listener.host
        var host = bound
        if bound == "0.0.0.0" || bound == "::" {
            host = Self.interfaceAddresses().first ?? bound
        }
        loopbackOnly = listener.isLoopback
        url = "http://\(URIHost.authority(host: host, port: listener.port))/"
    }

    /// The non-loopback addresses of interfaces that are up, IPv4 before IPv6, link-local IPv6
    /// (`fe80::/10`, unusable without a zone) left out.
    static func interfaceAddresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        var v4: [String] = [], v6: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = entry.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var storage = sockaddr_storage()
            let length = family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
            withUnsafeMutableBytes(of: &storage) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: length))
            }
            let host = SocketAddress(storage: storage).host
            if family == AF_INET {
                v4.append(host)
            } else if !host.lowercased().hasPrefix("fe80") {
                v6.append(host)
            }
        }
        return v4 + v6
    }
}
