@testable import DevProxy
import Testing

/// `Destination.url` (the flow log's URL) and `hostHeader`, built for every HTTP/1.1 request.
@Suite struct DestinationTests {
    @Test(arguments: [
        (true, "bench.local", 443, "/100b", "https://bench.local/100b", "bench.local"),
        (true, "bench.local", 9443, "/a?b=c", "https://bench.local:9443/a?b=c", "bench.local:9443"),
        (false, "example.com", 80, "/", "http://example.com/", "example.com"),
        (false, "example.com", 443, "/x", "http://example.com:443/x", "example.com:443"),
        (true, "::1", 8443, "/", "https://[::1]:8443/", "[::1]:8443"),
        (false, "fe80::1", 80, "/p", "http://[fe80::1]/p", "[fe80::1]"),
        (true, "caf\u{E9}.example", 443, "/\u{E9}", "https://caf\u{E9}.example/\u{E9}", "caf\u{E9}.example"),
    ])
    func urlAndHostHeader(_ tls: Bool, _ host: String, _ port: Int, _ path: String, _ url: String, _ hostHeader: String) {
        let destination = Destination(tls: tls, host: host, port: port, pathAndQuery: path)
        #expect(destination.url == url)
        #expect(destination.hostHeader == hostHeader)
    }

    /// `ExchangeContext.otherHost`, run for every HTTPS request: the host a URL names when it is
    /// not the connection's, lower-cased, without a final dot or brackets; nil when they match.
    @Test(arguments: [
        ("https://bench.local/100b", "bench.local", nil),
        ("https://BENCH.Local:9443/x", "bench.local", nil),
        ("https://bench.local./", "Bench.Local", nil),
        ("https://tenant-b.test/a", "tenant-a.test", "tenant-b.test"),
        ("https://Tenant-B.Test:8443?q", "tenant-a.test", "tenant-b.test"),
        ("https://[::1]:8443/", "::1", nil),
        ("https://[::2]/", "::1", "::2"),
        ("https://CAF\u{C9}.example/", "caf\u{E9}.example", nil),
        ("https:///path", "a.test", nil),
        ("no scheme here", "a.test", nil),
        ("x:y://b.test/", "a.test", "b.test"),
    ] as [(String, String, String?)])
    func theHostAURLNames(_ url: String, _ host: String, _ other: String?) {
        #expect(ExchangeContext.otherHost(in: url, than: host) == other)
    }

    /// `Destination.hasPort`, run for every HTTP/2 request's `:authority`: ASCII digits after the
    /// last colon, outside an IPv6 literal's brackets.
    @Test(arguments: [
        ("a.test:443", true), ("a.test", false), ("[::1]", false), ("[::1]:8443", true), (":443", false),
        ("a.test:", true), ("a.test:44x", false), ("a.test:\u{663}", false), ("caf\u{E9}.test:8443", true),
    ] as [(String, Bool)])
    func whetherAnAuthorityNamesAPort(_ authority: String, _ hasPort: Bool) {
        #expect(Destination.hasPort(authority) == hasPort)
    }
}
