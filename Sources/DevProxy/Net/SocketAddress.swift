import Foundation
import HTTPTypes

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: CustomStringConvertible, Sendable {
    let storage: sockaddr_storage

    init(storage: sockaddr_storage) {
        self.storage = storage
    }

    public var family: Int32 { Int32(storage.ss_family) }

    /// The numeric host, without brackets.
    public var host: String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
            }
        }
        return ok == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }

    public var port: Int {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// `127.0.0.1:8080` or `[::1]:8080`.
    public var description: String { URIHost.authority(host: host, port: port) }

    /// Whether this is a loopback address (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        family == AF_INET6 ? host == "::1" : host.hasPrefix("127.")
    }

    /// The any-address of this family, port 0 (what `bind` takes to pick a local port).
    var wildcard: SocketAddress {
        var storage = sockaddr_storage()
        storage.ss_family = sa_family_t(family)
        return SocketAddress(storage: storage)
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var copy = storage
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}

/// Name resolution through getaddrinfo.
public enum Resolver {
    /// Every address of `host` (a name or a literal, brackets allowed), in the resolver's order.
    ///
    /// - Throws: `.unresolvable` when the name does not resolve.
    ///
    /// For a connection (not `passive`), `localhost` and names under `.localhost` are the
    /// loopback addresses of both families, `::1` then `127.0.0.1`, whatever the hosts file says
    /// (RFC 6761 §6.3, as Chromium, Firefox and curl resolve them): a development server that
    /// listens on `::1` alone (Node.js binds `localhost` there), or on a name such as
    /// `app.localhost` that no resolver knows, is reached through the proxy as without it.
    ///
    /// An IPv6 literal's zone id may be written as a URI writes it, `fe80::1%25eth0` (RFC 6874 §2:
    /// a request target's host keeps it so), or as getaddrinfo takes it, `fe80::1%eth0`.
    public static func resolve(host: String, port: Int, passive: Bool = false) throws -> [SocketAddress] {
        var bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.contains(":"), let zone = bare.range(of: "%25"),
           let id = bare[zone.upperBound...].removingPercentEncoding, !id.isEmpty {
            bare = bare[..<zone.lowerBound] + "%" + id
        }
        if !passive && isLocalhostName(bare) {
            return try resolve(host: "::1", port: port, passive: true) + resolve(host: "127.0.0.1", port: port, passive: true)
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(bare.isEmpty ? nil : bare, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw NetworkError(.unresolvable, "cannot resolve \(bare): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: info.pointee.ai_addr, count: Int(info.pointee.ai_addrlen)))
            }
            addresses.append(SocketAddress(storage: storage))
            cursor = info.pointee.ai_next
        }
        return addresses
    }

    /// Whether `name` is `localhost` or under `.localhost` (any case, a trailing dot allowed).
    static func isLocalhostName(_ name: String) -> Bool {
        var name = name.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name == "localhost" || name.hasSuffix(".localhost")
    }
}
