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
}
