import DevProxy
import Foundation
import Testing
@testable import WebUI

/// `ReplayTarget`: where a replay of a plain HTTP request recorded in a tunnel goes.
@Suite struct ReplayTargetTests {
    /// A plain HTTP flow for `a.example` that went through a tunnel to `address`.
    static func tunnelled(to address: String) throws -> Flow {
        try JSONDecoder().decode(Flow.self, from: Data((
            #"{"id":"t1","started":"2026-03-01T12:01:02.100Z","ended":"2026-03-01T12:01:02.135Z","#
            + #""client":"127.0.0.1:1","mode":"http","#
            + #""server":{"host":"a.example","port":80,"address":"\#(address)"},"#
            + #""request":{"method":"GET","url":"http://a.example/x","http_version":"HTTP/1.1","#
            + #""headers":[["Host","a.example"]]},"#
            + #""timings":{"connect":1,"tls":-1,"send":1,"wait":1,"receive":1}}"#).utf8))
    }

    @Test("A replay goes to the tunnel's IPv6 address, bracketed, with the recorded Host")
    func ipv6TunnelAddress() throws {
        let flow = try Self.tunnelled(to: "[2001:db8::1]:8080")
        let target = ReplayTarget(replaying: flow, request: try #require(flow.request))
        #expect(target == ReplayTarget(url: "http://[2001:db8::1]:8080/x", host: "a.example"))
    }

    /// getnameinfo names a link-local peer with its zone (`fe80::1%eth0`); setting that as a
    /// URL's host, its `%` not encoded, trapped in Foundation and took the proxy down.
    @Test("A replay to a link-local address with a zone id writes the zone's % as %25 (RFC 6874)")
    func zoneIDIsPercentEncoded() throws {
        let flow = try Self.tunnelled(to: "[fe80::1%eth0]:8080")
        let target = ReplayTarget(replaying: flow, request: try #require(flow.request))
        #expect(target == ReplayTarget(url: "http://[fe80::1%25eth0]:8080/x", host: "a.example"))
    }
}
