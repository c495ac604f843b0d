@testable import DevProxy
import Testing

/// The address `devproxy run` prints for the onboarding page, from the listener's address
/// (resolved, not bound: nothing listens beyond loopback here).
@Suite struct OnboardingAddressTests {
    @Test func loopbackListenersSayOnlyThisMachineReachesThem() throws {
        let v4 = OnboardingAddress(listener: try #require(try Resolver.resolve(host: "127.0.0.1", port: 8080).first))
        #expect(v4 == OnboardingAddress(url: "http://127.0.0.1:8080/", loopbackOnly: true))
        let v6 = OnboardingAddress(listener: try #require(try Resolver.resolve(host: "::1", port: 8443).first))
        #expect(v6 == OnboardingAddress(url: "http://[::1]:8443/", loopbackOnly: true))
    }

    /// On the wildcard the page is offered at an address of one of this machine's interfaces
    /// that is up and not loopback, IPv4 first.
    @Test func wildcardListenersNameAnInterfaceAddress() throws {
        let address = OnboardingAddress(listener: try #require(try Resolver.resolve(host: "0.0.0.0", port: 8080).first))
        #expect(!address.loopbackOnly)
        let interfaces = OnboardingAddress.interfaceAddresses()
        #expect(!interfaces.contains { $0.hasPrefix("127.") || $0 == "::1" || $0.lowercased().hasPrefix("fe80") })
        let expected = interfaces.first.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "0.0.0.0"
        #expect(address.url == "http://\(expected):8080/")
    }
}
