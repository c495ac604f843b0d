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
}
