import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `Alt-Svc` on its way to the client: HTTP/3 alternatives (which would take the client around
/// DevProxy over UDP) are removed whichever versions the two sides speak, every alternative behind
/// a reverse listener, nothing with `--keep-alt-svc`; the flow keeps the origin's header and says
/// what was removed. The origin is hypercorn (`h2origin.py`'s `/alt-svc`), the client curl.
@Suite(.serialized) struct AltSvcTests {
    static let removed = [#"h3=":443"; ma=86400"#, #"h3-29=":443""#, #"quic=":443"; ma=2592000; v="46,43""#]

    /// Commas inside quoted strings (an authority, a parameter) stay inside their alternative.
    @Test func valuesAreSplitOutsideQuotes() {
        #expect(AltSvc.alternatives(#"h3="a,b:443"; ma=1, h2=":443""#) == [#"h3="a,b:443"; ma=1"#, #"h2=":443""#])
        #expect(AltSvc.alternatives(#" h2="x\",y:1" , , h3=":1""#) == [#"h2="x\",y:1""#, #"h3=":1""#])
    }

    @Test func onlyTCPAlternativesAreKept() {
        #expect(AltSvc.filter(#"h3=":443"; ma=86400, h3-29=":443""#, reverse: false)
                == AltSvc.Filtered(kept: nil, removed: [#"h3=":443"; ma=86400"#, #"h3-29=":443""#]))
        #expect(AltSvc.filter(#"H3=":443", h2="alt.test:443"; ma=5"#, reverse: false)
                == AltSvc.Filtered(kept: #"h2="alt.test:443"; ma=5"#, removed: [#"H3=":443""#]))
        #expect(AltSvc.filter(#"http%2F1.1=":8080", h2=":8443""#, reverse: false) == nil, "nothing to remove")
        #expect(AltSvc.filter("clear", reverse: true) == nil, "clear is relayed, even behind a reverse listener")
        #expect(AltSvc.filter(#"h2=":8443""#, reverse: true) == AltSvc.Filtered(kept: nil, removed: [#"h2=":8443""#]))
        #expect(AltSvc.filter(#"hq-interop=":443""#, reverse: false)?.kept == nil)
    }

    private func harness(for origin: HTTP2Origin, configure: @escaping (inout ProxyConfiguration) -> Void = { _ in }) throws -> ProxyHarness {
        try ProxyHarness(configure: {
            $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
            configure(&$0)
        })
    }

    /// The `Alt-Svc` lines of a `curl -D -` output.
    private func altSvc(_ output: String) -> [String] {
        output.split(separator: "\r\n").filter { $0.lowercased().hasPrefix("alt-svc:") }
            .map { String($0.dropFirst("alt-svc:".count)).trimmingCharacters(in: .whitespaces) }
    }

    /// Every pairing of client and origin versions: the client gets the h2 alternative alone.
    @Test(arguments: [(HTTP2Origin.Kind.hypercornBoth, "--http2"), (.hypercornBoth, "--http1.1"),
                      (.hypercornHTTP1, "--http2"), (.hypercornHTTP1, "--http1.1")])
    func http3AlternativesAreRemoved(_ kind: HTTP2Origin.Kind, _ client: String) throws {
        let origin = try HTTP2Origin(kind)
        let proxy = try harness(for: origin)
        let result = try proxy.curl([client, "-D", "-", origin.url("/alt-svc")])
        #expect(result.stdout.hasSuffix("alt"), "\(result.output)")
        #expect(altSvc(result.stdout) == [#"h2="alt.test:8443"; ma=60"#], "\(client) to \(kind): \(result.stdout)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.altSvcRemoved == Self.removed, "\(String(describing: flow.response))")
        // The flow has the origin's fields as they came.
        let recorded = flow.response?.headers.filter { $0.first?.lowercased() == "alt-svc" }.map { $0.last ?? "" }
        #expect(recorded?.count == 2 && recorded?.first?.hasPrefix(#"h3=":443""#) == true, "\(String(describing: recorded))")
        let line = String(decoding: JSONLinesFlowLog.line(for: flow), as: UTF8.self)
        #expect(line.contains(#""alt_svc_removed":["h3=\":443\"; ma=86400","#), "\(line)")
    }

    @Test func keepAltSvcRelaysThemAsTheyCame() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try harness(for: origin, configure: { $0.keepAltSvc = true })
        let result = try proxy.curl(["--http2", "-D", "-", origin.url("/alt-svc")])
        #expect(altSvc(result.stdout).count == 2 && altSvc(result.stdout).first?.hasPrefix(#"h3=":443""#) == true,
                "\(result.stdout)")
        #expect(proxy.flows(count: 1).first?.response?.altSvcRemoved == nil)
    }

    /// Behind a reverse listener every alternative leads away from it: none reaches the client.
    @Test func aReverseListenerRemovesEveryAlternative() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let reversePort = try HTTP2Origin.freePort()
        let url = try ModeURL(parsing: "https://localhost:\(origin.port)", what: "test")
        let proxy = try harness(for: origin, configure: {
            $0.modes = [ListenerMode(kind: .reverse, host: "127.0.0.1", port: reversePort, url: url)]
        })
        for client in ["--http1.1", "--http2-prior-knowledge"] {
            let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", client, "-D", "-",
                                                     "http://127.0.0.1:\(reversePort)/alt-svc"])
            #expect(result.stdout.hasSuffix("alt") && altSvc(result.stdout).isEmpty, "\(client): \(result.output)")
        }
        let flows = proxy.flows(count: 2)
        #expect(flows.allSatisfy { $0.response?.altSvcRemoved?.count == 4 }, "\(flows.map { $0.response?.altSvcRemoved })")
    }
}
