import Foundation
import Synchronization

/// The listeners the proxy never dials (`ProxyConfiguration.forbiddenDestinations`): the web UI's,
/// so a client of the proxy cannot reach the UI's API through it (mitmweb's CVE-2025-23217).
extension Array where Element == SocketAddress {
    /// Why the proxy refuses to connect to `host:port`, or nil when it may. Only a port one of the
    /// listeners uses costs a resolution; the addresses checked are the ones that get dialled.
    func refusal(host: String, port: Int) -> String? {
        refusal(host: host, port: port) { address in
            "refused: \(host):\(port) is DevProxy's own web UI (\(address)); the proxy does not forward to it"
        }
    }

    func refusal(host: String, port: Int, exactly: Bool = false, saying reason: (SocketAddress) -> String) -> String? {
        guard contains(where: { $0.port == port }),
              let addresses = try? Resolver.resolve(host: host, port: port) else { return nil }
        return addresses.first(where: exactly ? isListening : isForbidden).map(reason)
    }

    /// Whether one of the listeners itself accepts connections to `address`: its exact address, or
    /// (a wildcard listener) any of this machine's addresses of the family it accepts. Narrower
    /// than `isForbidden`: `[::1]:8080` is another program's while DevProxy listens on
    /// `127.0.0.1:8080`, and dialling it is no loop.
    func isListening(_ address: SocketAddress) -> Bool {
        let host = Self.connectedHost(address.host.lowercased())
        let mapped = host.hasPrefix("::ffff:") ? String(host.dropFirst("::ffff:".count)) : host
        return contains { listener in
            guard listener.port == address.port else { return false }
            let own = listener.host.lowercased()
            if own == host || own == mapped { return true }
            // `::` also takes IPv4 (a dual-stack socket); `0.0.0.0` only IPv4.
            guard own == "::" || (own == "0.0.0.0" && !mapped.contains(":")) else { return false }
            return address.isLoopback || mapped.hasPrefix("127.") || host == "::1"
                || Self.localHosts().contains(host) || Self.localHosts().contains(mapped)
        }
    }

    /// The address a connection to `host` reaches: the unspecified address (`0.0.0.0`, `::`) is
    /// this machine's loopback (Linux and macOS connect it there), so `http://0.0.0.0:8081/`
    /// reached the web UI on 127.0.0.1 and `--upstream-proxy http://0.0.0.0:PORT` looped.
    static func connectedHost(_ host: String) -> String {
        switch host {
        case "0.0.0.0", "::ffff:0.0.0.0": return "127.0.0.1"
        case "::", "0:0:0:0:0:0:0:0": return "::1"
        default: return host
        }
    }

    /// Whether `address` reaches one of the listeners: its port on any loopback address, its
    /// exact address, or (for a wildcard listener) any of this machine's addresses.
    func isForbidden(_ address: SocketAddress) -> Bool {
        let host = Self.connectedHost(address.host.lowercased())
        let loopback = address.isLoopback || host.hasPrefix("::ffff:127.") || host == "127.0.0.1" || host == "::1"
        return contains { listener in
            guard listener.port == address.port else { return false }
            if loopback || listener.host.lowercased() == host { return true }
            let wildcard = listener.host == "0.0.0.0" || listener.host == "::"
            return wildcard && (host == "0.0.0.0" || host == "::" || Self.localHosts().contains(host))
        }
    }

    /// The numeric addresses of this machine's interfaces.
    private static func localHosts() -> Set<String> {
        var result: Set<String> = []
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return result }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size
                                                      : MemoryLayout<sockaddr_in>.size)
            if getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                // Link-local IPv6 comes back with its zone (`fe80::1%eth0`); addresses compare without.
                result.insert(String(text.split(separator: "%").first ?? "").lowercased())
            }
        }
        return result
    }
}

/// The proxy's own listeners, known once they are bound (port 0 becomes a real port): a request
/// to one of them, or an upstream proxy that is one of them, would come back to the proxy and
/// go round until it ran out of sockets (`--upstream-proxy http://127.0.0.1:8080` on 8080 made
/// ~2,000 nested connections before one failed).
final class OwnListeners: Sendable {
    private let addresses = Mutex<[SocketAddress]>([])

    func set(_ bound: [SocketAddress]) {
        addresses.withLock { $0 = bound }
    }

    /// Why the proxy refuses to dial `host:port` (`what`: "the upstream proxy" when that is what
    /// `host:port` is; empty for a request's destination), or nil when it may.
    func refusal(host: String, port: Int, what: String = "") -> String? {
        let own = addresses.withLock { $0 }
        return own.refusal(host: host, port: port, exactly: true) { address in
            "refused: \(what.isEmpty ? "" : what + " ")\(host):\(port) is DevProxy's own proxy listener (\(address)); "
                + "the request would come back to it in a loop"
        }
    }
}
