import HTTPTypes
import Testing

/// How a host is written in a URI's authority: IPv6 literals in brackets, once.
struct URIHostTests {
    @Test("A name or an IPv4 address is written as it is")
    func namesAndIPv4AsTheyAre() {
        #expect(URIHost.bracketed("example.com") == "example.com")
        #expect(URIHost.bracketed("203.0.113.5") == "203.0.113.5")
        #expect(URIHost.authority(host: "example.com", port: 8080) == "example.com:8080")
        #expect(URIHost.authority(host: "203.0.113.5", port: 443) == "203.0.113.5:443")
    }

    @Test("An IPv6 literal is bracketed, before its port")
    func ipv6InBrackets() {
        #expect(URIHost.bracketed("::1") == "[::1]")
        #expect(URIHost.bracketed("2001:db8::5") == "[2001:db8::5]")
        #expect(URIHost.authority(host: "::1", port: 8080) == "[::1]:8080")
    }

    @Test("A host already in brackets (as URLComponents.host gives it) is not bracketed twice")
    func alreadyBracketedLeftAlone() {
        #expect(URIHost.bracketed("[::1]") == "[::1]")
        #expect(URIHost.authority(host: "[2001:db8::5]", port: 443) == "[2001:db8::5]:443")
    }

    @Test("A zone id is kept inside the brackets, its % not encoded")
    func zoneIDKept() {
        #expect(URIHost.bracketed("fe80::1%eth0") == "[fe80::1%eth0]")
        #expect(URIHost.authority(host: "fe80::1%eth0", port: 80) == "[fe80::1%eth0]:80")
    }

    @Test("No port, no colon after the host")
    func withoutPort() {
        #expect(URIHost.authority(host: "example.com", port: nil) == "example.com")
        #expect(URIHost.authority(host: "::1", port: nil) == "[::1]")
    }
}
