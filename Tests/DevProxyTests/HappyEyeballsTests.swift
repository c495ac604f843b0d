import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// How the proxy reaches a name with several addresses: `localhost` as browsers and curl resolve
/// it, and the addresses raced (Happy Eyeballs, RFC 8305) so that one that swallows packets
/// costs a quarter of a second, not the connect timeout.
@Suite struct HappyEyeballsTests {
    @Test func localhostNamesAreBothLoopbackAddresses() throws {
        for name in ["localhost", "LocalHost", "localhost.", "app.localhost", "a.b.Localhost."] {
            let addresses = try Resolver.resolve(host: name, port: 8080).map(\.description)
            #expect(addresses == ["[::1]:8080", "127.0.0.1:8080"], "\(name)")
        }
    }

    @Test func otherNamesAreNotLocalhost() {
        #expect(!Resolver.isLocalhostName("localhost.example.com"))
        #expect(!Resolver.isLocalhostName("notlocalhost"))
        #expect(!Resolver.isLocalhostName("127.0.0.1"))
    }

    @Test func theFamiliesTakeTurnsStartingWithTheFirstAddresss() throws {
        let addresses = try ["2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2"]
            .flatMap { try Resolver.resolve(host: $0, port: 443) }
        #expect(Socket.interleavingFamilies(addresses).map(\.host)
                == ["2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3"])
        let v4First = [addresses[3], addresses[0], addresses[4], addresses[1]]
        #expect(Socket.interleavingFamilies(v4First).map(\.host) == ["192.0.2.1", "2001:db8::1", "192.0.2.2", "2001:db8::2"])
    }

    /// The first address accepts no connection and refuses none (its listen queue is full, so
    /// the SYN is dropped): the second is tried beside it after 250 ms and wins.
    @Test func aSwallowedAddressGivesWayToTheNextAfterAQuarterSecond() throws {
        let (port, v4) = try SwallowingPort.listenerOnBothFamilies()
        let swallowed = try SwallowingPort(port: port)
        let addresses = try Resolver.resolve(host: "::1", port: port) + Resolver.resolve(host: "127.0.0.1", port: port)
        let start = Date()
        let socket = try Socket.connect(to: addresses, timeout: 8)
        let elapsed = Date().timeIntervalSince(start)
        #expect(socket.peerAddress?.description == "127.0.0.1:\(port)")
        #expect(elapsed >= 0.2 && elapsed < 2, "took \(elapsed) s")
        socket.close()
        close(v4)
        withExtendedLifetime(swallowed) {}
    }

    @Test func everyAddressRefusedSaysSoForEach() throws {
        let (port, v4) = try SwallowingPort.listenerOnBothFamilies()
        close(v4)
        let start = Date()
        #expect {
            try Socket.connect(host: "localhost", port: port, timeout: 8)
        } throws: { error in
            let error = error as? NetworkError
            return error?.kind == .refused
                && error?.message == "connection refused ([::1]:\(port)); connection refused (127.0.0.1:\(port))"
        }
        #expect(Date().timeIntervalSince(start) < 2)
    }

    /// A development server bound to `::1` alone (Node.js binds `localhost` there) is reached
    /// as `https://localhost:PORT` through the proxy, even where the hosts file names only
    /// `127.0.0.1` for `localhost`.
    @Test func anOriginOnIPv6LoopbackAloneIsReachedAsLocalhost() throws {
        let origin = try OriginServer(bind: "::1")
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let result = try proxy.curl([origin.url("/cl?n=5")])
        #expect(result.status == 0 && result.stdout == "hello", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.server.address == "[::1]:\(origin.port)")
        #expect(flow.response?.status == 200)
    }

    /// Through the proxy: `localhost`'s `::1` swallows the SYN, the origin listens on
    /// `127.0.0.1`; the request is answered within a second, not after the 8 s connect timeout.
    @Test func aSwallowedLocalhostAddressDelaysTheRequestAQuarterSecond() throws {
        let origin = try OriginServer()
        let swallowed = try SwallowingPort(port: origin.port)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas; $0.connectTimeout = 8 })
        let start = Date()
        let result = try proxy.curl([origin.url("/cl?n=5")])
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.status == 0 && result.stdout == "hello", "\(result.output)")
        #expect(elapsed >= 0.2 && elapsed < 3, "took \(elapsed) s")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.server.address == "127.0.0.1:\(origin.port)")
        withExtendedLifetime(swallowed) {}
    }
}

/// A listener on `[::1]:port` whose one-place queue is already taken: a further SYN is neither
/// accepted nor refused, as from an address whose route swallows packets. Closed when released.
private final class SwallowingPort {
    private let listener: Int32
    private let filler: Int32

    init(port: Int) throws {
        let listener = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback6(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        guard bound == 0, listen(listener, 0) == 0 else {
            Glibc.close(listener)
            throw TestFailure("cannot listen on [::1]:\(port): \(String(cString: strerror(errno)))")
        }
        let filler = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(listener)
            Glibc.close(filler)
            throw TestFailure("cannot fill [::1]:\(port)'s queue: \(String(cString: strerror(errno)))")
        }
        self.listener = listener
        self.filler = filler
    }

    deinit {
        Glibc.close(filler)
        Glibc.close(listener)
    }

    /// A port free on `[::1]` that a listener of the returned descriptor holds on `127.0.0.1`.
    static func listenerOnBothFamilies() throws -> (Int, Int32) {
        for _ in 0..<20 {
            let v4 = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ready = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(v4, $0, length) == 0 && listen(v4, 8) == 0 && getsockname(v4, $0, &length) == 0
                }
            }
            let port = Int(UInt16(bigEndian: address.sin_port))
            // The same port must be free on ::1 for the test's other listener.
            let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            var v6 = loopback6(port: port)
            let free = withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
            }
            Glibc.close(probe)
            if ready && free { return (port, v4) }
            Glibc.close(v4)
        }
        throw TestFailure("no port free on both 127.0.0.1 and ::1")
    }

    private static func loopback6(port: Int) -> sockaddr_in6 {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = UInt16(port).bigEndian
        address.sin6_addr = in6addr_loopback
        return address
    }
}
