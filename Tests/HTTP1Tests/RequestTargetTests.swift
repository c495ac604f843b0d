import Testing
@testable import HTTP1

@Suite struct RequestTargetTests {
    @Test(arguments: [
        ("GET", "/a/b?c=d", RequestTarget.origin("/a/b?c=d")),
        ("GET", "http://example.com/x?y",
         .absolute(scheme: "http", host: "example.com", port: nil, pathAndQuery: "/x?y")),
        ("GET", "HTTPS://Example.com:8443",
         .absolute(scheme: "https", host: "Example.com", port: 8443, pathAndQuery: "/")),
        ("GET", "http://a.test?q", .absolute(scheme: "http", host: "a.test", port: nil, pathAndQuery: "/?q")),
        ("GET", "http://a.test:/p", .absolute(scheme: "http", host: "a.test", port: nil, pathAndQuery: "/p")),
        ("GET", "http://[2001:db8::1]:8080/p",
         .absolute(scheme: "http", host: "2001:db8::1", port: 8080, pathAndQuery: "/p")),
        ("GET", "http://[::1]/", .absolute(scheme: "http", host: "::1", port: nil, pathAndQuery: "/")),
        ("GET", "ws://10.0.0.1:9/chat", .absolute(scheme: "ws", host: "10.0.0.1", port: 9, pathAndQuery: "/chat")),
        ("CONNECT", "example.com:443", .authority(host: "example.com", port: 443)),
        ("CONNECT", "[::1]:8443", .authority(host: "::1", port: 8443)),
        ("CONNECT", "192.168.1.1:0", .authority(host: "192.168.1.1", port: 0)),
        // RFC 6874: a link-local literal's zone id, kept as the URI writes it (the web UI's replay
        // names a peer getnameinfo gave as fe80::1%eth0 so).
        ("GET", "http://[fe80::1%25eth0]:8080/x",
         .absolute(scheme: "http", host: "fe80::1%25eth0", port: 8080, pathAndQuery: "/x")),
        ("GET", "http://[fe80::1%25en%301]/",
         .absolute(scheme: "http", host: "fe80::1%25en%301", port: nil, pathAndQuery: "/")),
        ("CONNECT", "[fe80::1%25wlan0.5_a~b-c]:443", .authority(host: "fe80::1%25wlan0.5_a~b-c", port: 443)),
        ("OPTIONS", "*", .asterisk),
    ])
    func parsesEachForm(method: String, target: String, expected: RequestTarget) throws {
        #expect(try RequestTarget(parsing: target, method: method) == expected)
        #expect(try HTTPRequestHead(method: method, target: target).requestTarget() == expected)
    }

    @Test(arguments: [
        ("CONNECT", "example.com", "CONNECT target must be host:port"),
        ("CONNECT", "example.com:", "CONNECT target must be host:port"),
        ("CONNECT", "/path", "host contains an invalid character (0x2F)"),
        ("CONNECT", "[::1:443", "no closing ']'"),
        ("CONNECT", "[zz::1]:443", "invalid IPv6 literal"),
        ("GET", "http://[fe80::1%eth0]/", "invalid IPv6 literal"),
        ("GET", "http://[fe80::1%25]/", "invalid IPv6 zone id"),
        ("GET", "http://[fe80::1%25eth%zz]/", "invalid IPv6 zone id"),
        ("GET", "http://[fe80::1%25eth0%2]/", "invalid IPv6 zone id"),
        ("GET", "http://[fe80::1%25eth:0]/", "invalid IPv6 zone id"),
        ("GET", "http://[%25eth0]/", "invalid IPv6 literal"),
        ("CONNECT", "example.com:65536", "invalid port"),
        ("CONNECT", "example.com:44a", "invalid port"),
        ("GET", "*", "only allowed with OPTIONS"),
        ("GET", "example.com", "not in origin, absolute, authority or asterisk form"),
        ("GET", "http:/x", "not in origin, absolute, authority or asterisk form"),
        ("GET", "http://user:pw@example.com/", "userinfo"),
        ("GET", "http:///path", "empty host"),
        ("GET", "/a#frag", "fragment"),
        ("GET", "http://[::1]x/", "junk after the host"),
        ("GET", "http://exa mple.com/", "invalid character (0x20)"),
    ])
    func rejectsMalformedTargets(method: String, target: String, reason: String) {
        #expect {
            try RequestTarget(parsing: target, method: method)
        } throws: { error in
            guard let error = error as? HTTP1ParseError else { return false }
            return error.code == .invalidTarget && error.status == 400 && error.reason.contains(reason)
        }
    }

    @Test func parserRejectsConnectWithoutAuthorityForm() {
        expectError(
            HTTP1RequestParser.self, "CONNECT / HTTP/1.1\r\n\r\n", code: .invalidTarget, status: 400,
            reason: "host contains an invalid character (0x2F)")
    }
}
