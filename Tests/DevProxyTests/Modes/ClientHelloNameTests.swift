import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// A client whose ClientHello names another host than its CONNECT or SOCKS5 request (`curl
/// --connect-to`, gRPC's `ssl_target_name_override`, an app with DNS of its own): the origin is
/// dialled where the request said and verified as the ClientHello's name, as the client itself
/// would without a proxy. It was verified as the request's host, and failed with "hostname
/// mismatch" where the same command without the proxy worked.
@Suite struct ClientHelloNameTests {
    /// An origin whose certificate names `origin.test` alone, reached at `localhost`.
    private func origin() throws -> (OriginServer, [Certificate]) {
        let origin = try OriginServer(names: ["origin.test"])
        return (origin, try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca")))
    }

    /// curl's `--connect-to origin.test:P:localhost:P` through the proxy.
    private func connectTo(_ origin: OriginServer) -> [String] {
        ["--connect-to", "origin.test:\(origin.port):localhost:\(origin.port)", "https://origin.test:\(origin.port)/cl?n=5"]
    }

    /// Through CONNECT (HTTP/1.1 and h2 from the client) and SOCKS5 with the name in the request.
    @Test func theOriginIsVerifiedAsTheClientHellosName() throws {
        let (origin, cas) = try origin()
        let socksPort = try HTTP2Origin.freePort()
        let harness = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.modes = [ListenerMode(kind: .regular), ListenerMode(kind: .socks5, host: "127.0.0.1", port: socksPort)]
        })
        for extra in [["--http1.1"], ["--http2"], ["--socks5-hostname", "127.0.0.1:\(socksPort)"]] {
            let result = try harness.curl(extra + connectTo(origin))
            #expect(result.status == 0 && result.stdout == "hello", "\(extra): \(result.output)")
        }
        let flows = harness.flows(count: 3)
        #expect(flows.count == 3)
        for flow in flows {
            #expect(flow.error == nil, "\(String(describing: flow.error))")
            #expect(flow.server.host == "origin.test", "\(flow.server)")
            #expect(flow.server.address == "127.0.0.1:\(origin.port)", "\(flow.server)")
            #expect(flow.tls?.client?.sni == "origin.test")
            #expect(flow.tls?.upstream?.verified == true)
            #expect(flow.request?.url == "https://origin.test:\(origin.port)/cl?n=5")
        }
    }

    /// Through `--upstream-proxy` the CONNECT sent on names where the client's went (`localhost`,
    /// which that proxy can reach), not the ClientHello's name, which resolves nowhere.
    @Test func anUpstreamProxyIsAskedForTheRequestsHost() throws {
        let (origin, cas) = try origin()
        let upstream = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let upstreamRoot = try Certificate.all(from: SecureFile.read(upstream.pki.rootPath, what: "root"))
        let proxyURL = try ModeURL(parsing: upstream.proxyURL, what: "test")
        let front = try ProxyHarness(configure: {
            $0.upstreamCAs = upstreamRoot
            $0.upstreamProxy = try! UpstreamProxy(url: proxyURL)
        })
        let result = try front.curl(connectTo(origin))
        #expect(result.status == 0 && result.stdout == "hello", "\(result.output)")
        let seen = try #require(upstream.flows(count: 1).first)
        #expect(seen.server.host == "origin.test" && seen.server.address == "127.0.0.1:\(origin.port)", "\(seen.server)")
        #expect(seen.tls?.upstream?.verified == true, "\(String(describing: seen.error))")
        let flow = try #require(front.flows(count: 1).first)
        #expect(flow.response?.status == 200, "\(String(describing: flow.error))")
    }

    /// A request whose `Host` (HTTP/1.1) or `:authority` (h2) names another host than its
    /// connection's goes on that connection as the client sent it, as `curl -H 'Host: …'` does
    /// without a proxy (and mitmproxy does: the origin answers, or says 421); its flow says so in
    /// `server.request_host`, where only `server.host` beside the URL told it, and the upstream
    /// side was verified for the connection's name. A request for its own host has none.
    @Test func aRequestNamingAnotherHostSaysWhereItWent() throws {
        let origin = try OriginServer()
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let harness = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        for version in ["--http1.1", "--http2"] {
            let other = try harness.curl([version, "-H", "Host: Tenant-B.test", origin.url("/headers")])
            #expect(other.stdout.lowercased().contains("host: tenant-b.test"), "\(version): \(other.output)")
            let own = try harness.curl([version, origin.url("/cl?n=5")])
            #expect(own.stdout == "hello", "\(version): \(own.output)")
        }
        let flows = harness.flows(count: 4)
        let named = flows.filter { $0.request?.url.contains("/headers") == true }
        #expect(named.count == 2)
        for flow in named {
            #expect(flow.server.host == "localhost" && flow.server.requestHost == "tenant-b.test", "\(flow.server)")
            let line = JSONLinesFlowLog.line(for: flow)
            #expect(String(decoding: line, as: UTF8.self).contains("\"request_host\":\"tenant-b.test\""))
            #expect(try JSONDecoder().decode(Flow.self, from: Data(line)).server == flow.server)
        }
        #expect(flows.filter { $0.request?.url.contains("/cl") == true }.allSatisfy { $0.server.requestHost == nil })
    }
}
