@testable import DevProxy
import Testing

/// `LocalRequest.host`, which every proxied request's local-route check reads.
@Suite struct LocalRequestTests {
    @Test func hostIsTheURLsHostLowercasedWithoutBracketsOrPort() {
        let cases: [(String, String)] = [
            ("https://DevProxy.Test:443/", "devproxy.test"),
            ("http://devproxy.test/root.crt?x=1", "devproxy.test"),
            ("https://bench.local:9443/100b", "bench.local"),
            ("https://[::1]:8443/a", "::1"),
            ("https://[FE80::1]/", "fe80::1"),
            ("http://h?q", "h"),
            ("http://h#f", "h"),
            ("https://xn--caf-dma.example", "xn--caf-dma.example"),
            ("https://Caf\u{c9}.example/p", "caf\u{e9}.example"),
            ("example.com:80/path", "example.com"),
            ("", ""),
        ]
        for (url, host) in cases {
            #expect(LocalRequest(method: "GET", url: url, httpVersion: "HTTP/2", headers: []).host == host, "\(url)")
        }
    }

    /// `withHost` and `OnboardingSite.names` on its bytes, the allocation-free check the onboarding
    /// site's route makes on every request: the same answers as comparing `host` without its
    /// trailing dot, and as `names` on the host as a String (what CONNECT and SOCKS5 ask).
    @Test func theOnboardingHostIsFoundInPlace() {
        let cases: [(String, Bool)] = [
            ("http://devproxy.test/", true),
            ("https://DevProxy.TEST:443/root.crt", true),
            ("http://devproxy.test./", true),
            ("http://devproxy.test?x", true),
            ("http://devproxy.test#f", true),
            ("devproxy.test:80/path", true),
            ("http://devproxy.test../", false),
            ("http://devproxy.tes/", false),
            ("http://xdevproxy.test/", false),
            ("http://devproxy.test.evil/", false),
            ("http://[devproxy.test]/", true),
            ("http://devproxy\u{2E}test/", true),
            ("http://dev\u{130}roxy.test/", false),
            ("http://devpr\u{D6}xy.test/", false),
            ("http://user@devproxy.test/", false),
            ("", false),
        ]
        for (url, expected) in cases {
            let request = LocalRequest(method: "GET", url: url, httpVersion: "HTTP/1.1", headers: [])
            #expect(request.withHost(OnboardingSite.names) == expected, "\(url)")
            #expect(OnboardingSite.names(request.host) == expected, "names of \(url)")
            var bare = request.host
            if bare.hasSuffix(".") { bare.removeLast() }
            #expect((bare == "devproxy.test") == expected, "host of \(url)")
        }
    }
}
