import Glibc

/// An IPv4 loopback socket address, resolved once before the run starts.
///
/// The generator refuses anything outside 127.0.0.0/8: it exists to load servers on this
/// machine, and a typo must not turn it at someone else's.
struct LoopbackAddress: Sendable {
    /// Address in network byte order, ready for `connect`.
    let storage: sockaddr_in

    /// Resolves `host` (a name or an IPv4 literal) with `getaddrinfo`, keeping the first IPv4 answer.
    /// - Throws: `SetupError` when it does not resolve or is not on loopback.
    init(_ target: HostPort) throws(SetupError) {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(target.host, String(target.port), &hints, &result)
        guard status == 0, let first = result, let address = first.pointee.ai_addr else {
            throw SetupError(description: "cannot resolve \(target.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
        ipv4.sin_port = target.port.bigEndian
        let firstOctet = UInt32(bigEndian: ipv4.sin_addr.s_addr) >> 24
        guard firstOctet == 127 else {
            throw SetupError(description: "\(target) is not a loopback address; devproxy-load only dials 127.0.0.0/8")
        }
        storage = ipv4
    }
}
