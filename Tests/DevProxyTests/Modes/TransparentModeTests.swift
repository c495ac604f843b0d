import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `--mode transparent` inside a network namespace the test makes: an origin on addresses of its
/// own (10.77.0.2, fd77::2), the rules `devproxy transparent-rules` prints redirecting 80 and 443
/// of every user but root (DevProxy runs as root) to DevProxy, and curl as `nobody` with no
/// proxy settings at all.
@Suite(.serialized, .enabled(if: NetworkNamespace.unavailableReason == nil,
                             "network namespaces cannot be made here (needs root and a kernel that allows them)"))
struct TransparentModeTests {
    static let port = 8090

    /// The namespace, an HTTPS origin on 10.77.0.2:443 and [fd77::2]:443, a plain one on
    /// 10.77.0.2:80, DevProxy's transparent listeners on 127.0.0.1 and [::1] port 8090, and the
    /// printed rules applied (`iptables` lines for IPv4, the `nft` lines for IPv6).
    final class Setup {
        let namespace: NetworkNamespace
        let dir = TemporaryDirectory()
        let publicDir = TemporaryDirectory()
        let origins: [OriginServer]
        let proxy: DevProxyProcess
        let rootPath: String

        init(uidExclude: String = "0", extra: [String] = []) throws {
            namespace = try NetworkNamespace()
            try namespace.sh("ip addr add 10.77.0.2/32 dev lo && ip -6 addr add fd77::2/128 dev lo nodad")
            let launcher = namespace.launcher
            let tls4 = try OriginServer(names: ["origin.test"], launcher: launcher, bind: "10.77.0.2", port: 443)
            let tls6 = try OriginServer(names: ["origin.test"], launcher: launcher, bind: "fd77::2", port: 443)
            let plain = try OriginServer(tls: false, launcher: launcher, bind: "10.77.0.2", port: 80)
            origins = [tls4, tls6, plain]
            proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"),
                                         "--upstream-ca", tls4.caPath, "--upstream-ca", tls6.caPath,
                                         "--mode", "transparent@127.0.0.1:\(TransparentModeTests.port)",
                                         "--mode", "transparent@[::1]:\(TransparentModeTests.port)", "--no-web"] + extra,
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], listen: false,
                                        launcher: launcher)
            let rules = try Subprocess.run(Subprocess.devproxy, ["transparent-rules", "--port",
                                                                 String(TransparentModeTests.port),
                                                                 "--uid-exclude", uidExclude, "--ipv6"])
            guard rules.status == 0 else { throw TestFailure("transparent-rules: \(rules.output)") }
            let lines = rules.stdout.split(separator: "\n").map(String.init)
            let apply = lines.filter { $0.hasPrefix("sudo iptables ") }
                + lines.filter { $0.hasPrefix("sudo nft ") && $0.contains(" ip6 ") }
            // iptables: the TCP redirect and the UDP 443 refusal; nft ip6: table, chains and rules.
            guard apply.count == 7 else { throw TestFailure("unexpected rules: \(rules.stdout)") }
            for line in apply { try namespace.sh(String(line.dropFirst("sudo ".count))) }
            // `nobody` must read the root to trust it.
            rootPath = publicDir.write("root.pem", try String(contentsOfFile: dir.file("ca/root.pem"), encoding: .utf8))
            chmod(publicDir.path, 0o755)
            chmod(rootPath, 0o644)
        }

        func curlAsNobody(_ arguments: [String]) throws -> Subprocess.Result {
            try namespace.runAsNobody(["curl", "-sS", "--max-time", "15", "--cacert", rootPath] + arguments)
        }

        /// Stops DevProxy and reads its flow log.
        func flows() -> [Flow] {
            _ = proxy.stop()
            return (try? FlowLogReader.read(path: dir.file("flows.jsonl")).flows) ?? []
        }
    }

    /// HTTPS and plain HTTP to 10.77.0.2 reach the origins through DevProxy with no proxy
    /// configured: the HTTPS leaf is minted for the SNI name and chains to the root (curl
    /// verifies it against that root alone), and each flow names the original destination.
    @Test func ipv4HTTPSAndPlainHTTPAreCapturedWithoutProxySettings() throws {
        let setup = try Setup()
        let https = try setup.curlAsNobody(["--resolve", "origin.test:443:10.77.0.2", "https://origin.test/cl?n=5"])
        #expect(https.status == 0 && https.stdout == "hello", "\(https.output)")
        let plain = try setup.curlAsNobody(["--resolve", "origin.test:80:10.77.0.2", "http://origin.test/cl?n=5"])
        #expect(plain.status == 0 && plain.stdout == "hello", "\(plain.output)")
        let flows = setup.flows()
        let tls = try #require(flows.first { $0.mode == .https }, "\(flows)")
        #expect(tls.listener?.mode == "transparent")
        #expect(tls.server.host == "origin.test")
        #expect(tls.server.address == "10.77.0.2:443")
        #expect(tls.tls?.client?.sni == "origin.test")
        #expect(tls.tls?.upstream?.verified == true)
        #expect(tls.response?.status == 200)
        let http = try #require(flows.first { $0.mode == .http }, "\(flows)")
        #expect(http.request?.url == "http://origin.test/cl?n=5")
        #expect(http.server.address == "10.77.0.2:80")
        #expect(http.response?.status == 200)
    }

    /// Each flow names the app that made it (`client_process`), over IPv4 and IPv6: its socket is
    /// connected to the original destination, not to the listener, and was looked up as if it were
    /// (so the flow of a local app that `--mode transparent` captured named no process).
    /// Three connections each way, one of which must be named: a lookup that runs out of its time
    /// on a loaded machine leaves a flow without a process, as documented.
    @Test func eachFlowNamesTheRedirectedApp() throws {
        let setup = try Setup()
        for resolve in ["origin.test:443:10.77.0.2", "origin.test:443:[fd77::2]"] {
            for _ in 1...3 {
                let https = try setup.curlAsNobody(["--resolve", resolve, "https://origin.test/cl?n=5"])
                #expect(https.status == 0 && https.stdout == "hello", "\(https.output)")
            }
        }
        let flows = setup.flows().filter { $0.mode == .https }
        for address in ["10.77.0.2:443", "[fd77::2]:443"] {
            #expect(flows.contains { $0.server.address == address && $0.clientProcess?.name == "curl" },
                    "\(flows.map { "\($0.server.address ?? "?") \(String(describing: $0.clientProcess))" })")
        }
    }

    /// The same over IPv6 (ip6 nft rule, IP6T_SO_ORIGINAL_DST).
    @Test func ipv6HTTPSIsCaptured() throws {
        let setup = try Setup()
        let https = try setup.curlAsNobody(["--resolve", "origin.test:443:[fd77::2]", "https://origin.test/cl?n=5"])
        #expect(https.status == 0 && https.stdout == "hello", "\(https.output)")
        let flows = setup.flows()
        let tls = try #require(flows.first { $0.mode == .https }, "\(flows)")
        #expect(tls.server.host == "origin.test")
        #expect(tls.server.address == "[fd77::2]:443")
        #expect(tls.listener?.address == "[::1]:\(Self.port)")
        #expect(tls.tls?.upstream?.verified == true)
    }

    /// QUIC cannot be redirected to a TCP listener: the rules refuse the apps' UDP 443 over IPv4
    /// (iptables) and IPv6 (nft), so they fall back to TCP at once (a local socket's send fails with
    /// EPERM), while the excluded user (DevProxy's, root here) still reaches a UDP service on 443.
    @Test func quicIsRefusedSoAppsFallBackToTCP() throws {
        let setup = try Setup()
        let result = try Subprocess.run("ip", ["netns", "exec", setup.namespace.name, "python3",
                                               HTTP2Origin.resource("udp_reach.py"), "10.77.0.2", "fd77::2"], timeout: 60)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines == ["nobody 10.77.0.2 blocked", "root 10.77.0.2 pong", "nobody fd77::2 blocked", "root fd77::2 pong"],
                "\(result.output)")
    }

    /// A connection straight to the transparent listener (nobody redirected it: its original
    /// destination is DevProxy itself) is refused with a flow that says it would loop.
    @Test func aConnectionToTheListenerItselfIsRefusedAsALoop() throws {
        let setup = try Setup()
        let direct = try setup.curlAsNobody(["-k", "https://127.0.0.1:\(Self.port)/"])
        #expect(direct.status != 0)
        let flows = setup.flows()
        let refused = try #require(flows.first, "no flow")
        #expect(refused.error?.kind == FlowErrorKind.wouldLoop.rawValue)
        #expect(refused.error?.message.contains("would loop") == true)
    }

    /// Rules that do not exclude DevProxy's own user send its upstream connection back to it:
    /// that connection is refused as a loop (one level deep, not forever) and the client's
    /// exchange fails with a 502 instead of hanging.
    @Test func devProxysOwnRedirectedTrafficIsRefusedAsALoop() throws {
        let setup = try Setup(uidExclude: "12345")
        let plain = try setup.curlAsNobody(["--resolve", "origin.test:80:10.77.0.2", "http://origin.test/cl?n=5"])
        #expect(plain.stdout != "hello")
        let flows = setup.flows()
        #expect(flows.contains { flow in
                    flow.error?.kind == FlowErrorKind.wouldLoop.rawValue
                        && flow.error?.message.contains("own connection") == true
                },
                "\(flows.map { $0.error?.message ?? "-" })")
        #expect(flows.count <= 3, "the loop went on: \(flows.map { "\($0.client) \($0.error?.message ?? "-")" })")
    }

    /// The app's own request in that loop says why it failed, over plain HTTP and HTTPS (IPv4 and
    /// IPv6): its 502 and its flow (`would_loop`, how to exclude DevProxy's traffic), where they
    /// said "connection reset by peer" (`upstream_reset`) or a failed TLS handshake, and only a
    /// second flow, from an address the user never saw, named the loop.
    @Test func theAppsRequestInALoopSaysWhyItFailed() throws {
        let setup = try Setup(uidExclude: "12345")
        let plain = try setup.curlAsNobody(["-i", "--resolve", "origin.test:80:10.77.0.2", "http://origin.test/cl?n=5"])
        #expect(plain.stdout.hasPrefix("HTTP/1.1 502"), "\(plain.output)")
        #expect(plain.stdout.contains("X-DevProxy-Error: would_loop"), "\(plain.output)")
        #expect(plain.stdout.contains("redirected back to DevProxy"), "\(plain.output)")
        for address in ["10.77.0.2", "[fd77::2]"] {
            let https = try setup.curlAsNobody(["-i", "--resolve", "origin.test:443:\(address)", "https://origin.test/cl?n=5"])
            #expect(https.stdout.lowercased().contains("x-devproxy-error: would_loop"), "\(address): \(https.output)")
        }
        let flows = setup.flows()
        #expect(flows.filter { $0.mode == .https && $0.error?.kind == FlowErrorKind.wouldLoop.rawValue }.count == 2,
                "IPv4 and IPv6: \(flows.map { "\($0.mode) \($0.error?.kind ?? "-")" })")
        for mode in [Flow.Mode.http, .https] {
            let flow = try #require(flows.first { $0.mode == mode && $0.request != nil }, "\(mode): \(flows)")
            #expect(flow.error?.kind == FlowErrorKind.wouldLoop.rawValue, "\(mode): \(String(describing: flow.error))")
            #expect(flow.error?.message.contains("--uid-exclude") == true, "\(mode): \(String(describing: flow.error))")
            #expect(flow.response?.status == 502)
        }
    }

    /// A passthrough tunnel in that loop says so too: it read `tunnel ended: connection reset by peer`.
    @Test func aPassthroughTunnelInALoopSaysWhyItEnded() throws {
        let setup = try Setup(uidExclude: "12345", extra: ["--passthrough", "origin.test"])
        let https = try setup.curlAsNobody(["--resolve", "origin.test:443:10.77.0.2", "https://origin.test/cl?n=5"])
        #expect(https.status != 0, "\(https.output)")
        let flows = setup.flows()
        let tunnel = try #require(flows.first { $0.tunnel?.sni == "origin.test" }, "\(flows)")
        #expect(tunnel.error?.kind == FlowErrorKind.wouldLoop.rawValue, "\(String(describing: tunnel.error))")
        #expect(tunnel.error?.message.contains("--uid-exclude") == true, "\(String(describing: tunnel.error))")
    }
}
