import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The pinning-QA story end to end with real peers: OkHttp 3.13 pinning the team root through
/// `devproxy run` with personas, `qa verdict` from that log, and pin-failure reports captured
/// by the proxy and traced back to the engineer.
@Suite struct PinnedClientEndToEndTests {
    static let hosts = ["team.example.com", "unpinned.example.com"]

    /// A team CA with ana's intermediate, the QA alternate root, an origin serving both hosts,
    /// and `devproxy run` showing `unpinned.example.com` the QA alternate root.
    struct Setup {
        let pki: PKIFixture
        let qaRoot: String
        let origin: OriginServer
        let proxy: DevProxyProcess
        let log: String

        init(extra: [String] = []) throws {
            pki = try PKIFixture()
            qaRoot = QAAlternateRoot(store: pki.store).certificatePath
            try QAAlternateRoot(store: pki.store).create()
            let origin = try OriginServer(names: PinnedClientEndToEndTests.hosts + ["reports.example.com"])
            self.origin = origin
            log = pki.directory.file("flows.jsonl")
            let resolve = (PinnedClientEndToEndTests.hosts + ["reports.example.com"]).flatMap { ["--resolve", "\($0):\(origin.port):127.0.0.1"] }
            proxy = try DevProxyProcess(["--ca-dir", pki.store.directory, "--intermediate", pki.bundlePath, "--log", log,
                                         "--upstream-ca", origin.caPath, "--persona", "unpinned.example.com=unpinned", "--quiet"] + resolve + extra)
        }

        func url(_ host: String, _ path: String = "/cl?n=5") -> String { "https://\(host):\(origin.port)\(path)" }
    }

    @Test func okHttpPinningTheTeamRootIsDebuggableUnderTeamAndEnforcedUnderUnpinned() throws {
        let setup = try Setup()
        let classes = try Self.compileClient(in: setup.pki.directory)
        func okhttp(_ host: String) throws -> Subprocess.Result {
            try Subprocess.run("java", ["-cp", classes, "PinnedClient", String(setup.proxy.port), setup.url(host), setup.pki.root.pin,
                                        setup.pki.rootPath, setup.qaRoot], timeout: 60)
        }
        let team = try okhttp("team.example.com")
        #expect(team.status == 0, "\(team.output)")
        #expect(team.stdout == "200 hello")
        let unpinned = try okhttp("unpinned.example.com")
        #expect(unpinned.status == 3, "\(unpinned.output)")
        #expect(unpinned.stdout.contains("SSLPeerUnverifiedException: Certificate pinning failure"))
        _ = setup.proxy.stop()

        let verdict = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", setup.log, "--json"])
        #expect(verdict.status == 0, "\(verdict.output)")
        let verdicts = try #require(try JSONSerialization.jsonObject(with: Data(verdict.stdout.utf8)) as? [String: Any])["verdicts"] as? [[String: Any]]
        let byHost = Dictionary(uniqueKeysWithValues: (verdicts ?? []).map { ("\($0["host"] ?? "")/\($0["persona"] ?? "")", $0["verdict"] as? String) })
        #expect(byHost["team.example.com/team"] == "debuggable", "\(verdict.stdout)")
        #expect(byHost["unpinned.example.com/unpinned"] == "enforced", "\(verdict.stdout)")
        let flows = try FlowLogReader.read(path: setup.log).flows
        #expect(flows.contains { $0.server.host == "unpinned.example.com" && $0.error?.kind == "client_closed_after_handshake" && $0.persona == "unpinned" })
    }

    /// The same story against an origin that speaks HTTP/2 (nghttpd), as most APIs now do:
    /// OkHttp negotiates h2 with DevProxy, checks its pins after the handshake and closes before
    /// its connection preface. That close left no flow at all, and `qa verdict` had no evidence:
    /// it is `client_closed_after_handshake` on an h2 connection, and the host is `enforced`.
    @Test func okHttpPinningAgainstAnHTTP2OriginIsEnforcedUnderUnpinned() throws {
        let pki = try PKIFixture()
        let alternate = QAAlternateRoot(store: pki.store)
        try alternate.create()
        let origin = try HTTP2Origin(.nghttpd)
        let log = pki.directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", pki.store.directory, "--intermediate", pki.bundlePath, "--log", log,
                                         "--upstream-ca", origin.caPath, "--persona", "localhost=unpinned", "--quiet"])
        let classes = try Self.compileClient(in: pki.directory)
        let unpinned = try Subprocess.run("java", ["-cp", classes, "PinnedClient", String(proxy.port), origin.url("/index.html"),
                                                   pki.root.pin, pki.rootPath, alternate.certificatePath], timeout: 60)
        #expect(unpinned.status == 3, "\(unpinned.output)")
        #expect(unpinned.stdout.contains("SSLPeerUnverifiedException: Certificate pinning failure"), "\(unpinned.output)")
        // A client that went on to send its connection preface (a gRPC channel's readiness check)
        // accepted the chain: it is no pinning evidence (it was recorded as OkHttp's refusal).
        let preface = """
            import socket, ssl, sys, time
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.sendall(("CONNECT localhost:%s HTTP/1.1\\r\\nHost: localhost:%s\\r\\n\\r\\n" % (sys.argv[2], sys.argv[2])).encode())
            while not s.recv(4096).endswith(b"\\r\\n\\r\\n"): pass
            context = ssl.create_default_context(cafile=sys.argv[3])
            context.set_alpn_protocols(["h2"])
            t = context.wrap_socket(s, server_hostname="localhost")
            t.sendall(b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
            t.recv(4096)
            t.close()
            print(t.selected_alpn_protocol() if hasattr(t, "selected_alpn_protocol") else "closed")
            """
        let warmUp = try Subprocess.run("python3", ["-c", preface, String(proxy.port), String(origin.port),
                                                    alternate.certificatePath], timeout: 30)
        #expect(warmUp.status == 0, "\(warmUp.output)")
        _ = proxy.stop()
        let flows = try FlowLogReader.read(path: log).flows
        let closed = try #require(flows.first { $0.error?.kind == "client_closed_after_handshake" }, "\(flows.map(\.error))")
        #expect(closed.tls?.client?.alpn == "h2" && closed.h2 != nil && closed.persona == "unpinned", "\(closed)")
        #expect(flows.filter { $0.error?.kind == "client_closed_after_handshake" }.count == 1, "\(flows.map(\.error))")
        #expect(flows.contains { $0.error?.kind == "client_closed_unused" && $0.error?.message.contains("connection preface") == true },
                "\(flows.map(\.error))")
        let verdict = try Subprocess.run(Subprocess.devproxy, ["qa", "verdict", "--log", log, "--json"])
        #expect(verdict.status == 0, "\(verdict.output)")
        #expect(verdict.stdout.contains("\"enforced\""), "\(verdict.stdout)")
    }

    @Test func reportOnlyPolicyUnderUnpinnedSendsAReportTheProxyCaptures() throws {
        let setup = try Setup(extra: ["--sink-reports"])
        let policy = setup.pki.directory.write("report-only.json", """
        {"TSKPinnedDomains": {"unpinned.example.com": {"TSKPublicKeyHashes": ["\(setup.pki.root.pin.dropFirst(7))", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
          "TSKEnforcePinning": false, "TSKDisableDefaultReportUri": true, "TSKReportUris": ["http://reports.example.com:\(setup.origin.port)/report"]}}}
        """)
        let check = try Subprocess.run(Subprocess.devproxy, ["pin-check", setup.url("unpinned.example.com", "/"), "--policy", policy,
                                                             "--proxy", "127.0.0.1:\(setup.proxy.port)", "--ca-file", setup.qaRoot, "--send-reports"])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.stdout.contains("validation-result 1"), "\(check.stdout)")
        _ = setup.proxy.stop()
        #expect(!FileManager.default.fileExists(atPath: setup.origin.reportsPath), "--sink-reports keeps reports from the collector")
        let reports = try Subprocess.run(Subprocess.devproxy, ["reports", setup.pki.directory.file("reports.jsonl"), "--json"])
        #expect(reports.status == 0, "\(reports.output)")
        #expect(reports.stdout.contains("unpinned.example.com"))
        #expect(reports.stdout.contains("\"validation-result\" : 1") || reports.stdout.contains("\"validation-result\":1"), "\(reports.stdout)")
    }

    @Test func reportFromAnEngineersIntermediateTracesToTheirEmail() throws {
        let setup = try Setup(extra: ["--sink-reports"])
        let policy = setup.pki.directory.write("other-pins.json", """
        {"TSKPinnedDomains": {"team.example.com": {"TSKPublicKeyHashes": ["BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
          "TSKEnforcePinning": false, "TSKDisableDefaultReportUri": true, "TSKReportUris": ["http://reports.example.com:\(setup.origin.port)/report"]}}}
        """)
        let check = try Subprocess.run(Subprocess.devproxy, ["pin-check", setup.url("team.example.com", "/"), "--policy", policy,
                                                             "--proxy", "127.0.0.1:\(setup.proxy.port)", "--ca-file", setup.pki.rootPath, "--send-reports"])
        #expect(check.status == 0, "\(check.output)")
        _ = setup.proxy.stop()
        let reports = try Subprocess.run(Subprocess.devproxy, ["reports", setup.pki.directory.file("reports.jsonl")])
        #expect(reports.stdout.contains("team.example.com"))
        #expect(reports.stdout.contains("ana@acme.dev"), "\(reports.output)")
        let flow = try #require(try FlowLogReader.read(path: setup.log).flows.first { $0.request?.url.hasSuffix("/report") == true })
        #expect(flow.response?.status == 204)
        let report = setup.pki.directory.write("report.json", try #require(flow.request?.body?.text))
        let trace = try Subprocess.run(Subprocess.devproxy, ["ca", "trace", report, "--ca-dir", setup.pki.store.directory])
        #expect(trace.status == 0, "\(trace.output)")
        #expect(trace.stdout.contains("ana@acme.dev"))
    }

    /// Compiles `PinnedClient.java` (or another client in `TestSupport/Resources`) against Debian's
    /// OkHttp jars; returns the classpath.
    static func compileClient(in directory: TemporaryDirectory, source name: String = "PinnedClient.java") throws -> String {
        let jars = ["/usr/share/java/okhttp.jar", "/usr/share/java/okio.jar"]
        guard jars.allSatisfy(FileManager.default.fileExists(atPath:)) else {
            throw TestFailure("OkHttp is missing: apt-get install libokhttp-java (scripts/test does)")
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestSupport/Resources/\(name)").path
        let output = directory.file("classes")
        let compiled = try Subprocess.run("javac", ["-cp", jars.joined(separator: ":"), "-d", output, source], timeout: 120)
        guard compiled.status == 0 else { throw TestFailure("javac failed: \(compiled.output)") }
        return ([output] + jars).joined(separator: ":")
    }
}

/// A connection closed without a request is a pinning signal only when the close follows the
/// handshake at once: a browser opens connections ahead of need (preconnect) and closes the
/// unused ones seconds later, which `qa verdict` counted as pins enforced.
@Suite struct UnusedConnectionTests {
    @Test func aCloseSecondsAfterTheHandshakeIsAnUnusedConnection() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        // Over HTTP/1.1 and over h2, closed at once and after 2.3 s of silence; and an h2 one
        // reset at once (SO_LINGER 0), which fails the proxy's first write (its SETTINGS) rather
        // than a read: that close left no flow, and CI's first run of this test lost one so.
        let script = """
            import socket, ssl, struct, sys, time
            for alpn, wait, reset in (("http/1.1", 0, False), ("h2", 0, False), ("h2", 0, True),
                                      ("http/1.1", 2.3, False), ("h2", 2.3, False)):
                s = socket.create_connection(("127.0.0.1", \(proxy.port)))
                s.sendall(b"CONNECT localhost:\(origin.port) HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\n\\r\\n")
                assert s.recv(1024).startswith(b"HTTP/1.1 200")
                context = ssl.create_default_context(cafile="\(proxy.pki.rootPath)")
                context.set_alpn_protocols([alpn])
                t = context.wrap_socket(s, server_hostname="localhost")
                assert t.selected_alpn_protocol() == alpn, t.selected_alpn_protocol()
                time.sleep(wait)
                if reset:
                    t.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                t.close()
                time.sleep(0.3)
            """
        let run = try Subprocess.run("python3", ["-c", script], timeout: 30)
        #expect(run.status == 0, "\(run.output)")
        let flows = proxy.flows(count: 5)
        #expect(flows.map { $0.error?.kind ?? "none" } == ["client_closed_after_handshake", "client_closed_after_handshake",
                                                          "client_closed_after_handshake", "client_closed_unused",
                                                          "client_closed_unused"],
                "\(flows.map { "\($0.tls?.client?.alpn ?? "-") \($0.error?.kind ?? "none")" })")
        #expect(flows.map { $0.tls?.client?.alpn } == ["http/1.1", "h2", "h2", "http/1.1", "h2"])
        #expect(flows.last?.error?.message.contains("not a pinning check") == true, "\(String(describing: flows.last?.error))")
        // They began when their connections opened, seconds before they ended: `started` was the
        // close's own millisecond, and the log lost when a refused or idle connection came.
        for flow in flows.suffix(2) {
            let lasted = try #require(ISO8601.date(flow.ended)).timeIntervalSince(try #require(ISO8601.date(flow.started)))
            #expect(lasted >= 2.2, "\(flow.started) → \(flow.ended)")
        }
        // An unused connection is no evidence: the verdict stays inconclusive.
        let verdict = QAVerdict.judge(host: "localhost", persona: "unpinned", flows: Array(flows.suffix(2)), reports: [])
        #expect(verdict.verdict == .inconclusive, "\(verdict)")
    }
}

/// Pinners that check once TLS is done and reset the connection at once (Node's
/// `checkServerIdentity`): the reset reaches the proxy while it writes TLS 1.3's session tickets,
/// and can take the client's Finished with it. Recorded as `client_handshake_failed` ("during the
/// TLS handshake"), `qa verdict` called a correctly pinned app inconclusive.
@Suite struct ResetAfterHandshakeTests {
    @Test func aResetRightAfterTheHandshakeIsARefusalNotAFailedHandshake() throws {
        let origin = try OriginServer(tls: true)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        // Through memory BIOs, as Node's TLS does: the client's Finished is made once the server's
        // flight is in, and a pinner that destroys the socket then never sends it (the first
        // three, a plain close); the last three send it and reset at once.
        let script = """
            import socket, ssl, struct, time
            context = ssl.create_default_context(cafile="\(proxy.pki.rootPath)")
            context.minimum_version = ssl.TLSVersion.TLSv1_3
            for sends_finished in (False, False, False, True, True, True):
                s = socket.create_connection(("127.0.0.1", \(proxy.port)))
                s.sendall(b"CONNECT localhost:\(origin.port) HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\n\\r\\n")
                assert s.recv(1024).startswith(b"HTTP/1.1 200")
                incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
                client = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
                while True:
                    try:
                        client.do_handshake()
                        break
                    except ssl.SSLWantReadError:
                        pending = outgoing.read()
                        if pending:
                            s.sendall(pending)
                        incoming.write(s.recv(65536))
                if sends_finished:
                    # Its Finished, then a reset at once (tickets on their way find it gone).
                    s.sendall(outgoing.read())
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                # Without: a plain close, as Node's socket.destroy() makes, our flight read.
                s.close()
                time.sleep(0.2)
            """
        let run = try Subprocess.run("python3", ["-c", script], timeout: 30)
        #expect(run.status == 0, "\(run.output)")
        let flows = proxy.flows(count: 6)
        let kinds = flows.map { $0.error?.kind ?? "none" }
        #expect(kinds.count == 6 && kinds.allSatisfy { ["client_closed_after_handshake", "client_rejected_certificate"].contains($0) },
                "\(flows.map { "\($0.error?.kind ?? "none"): \($0.error?.message ?? "")" })")
        let verdict = QAVerdict.judge(host: "localhost", persona: "unpinned", flows: flows, reports: [])
        #expect(verdict.verdict == .enforced, "\(verdict)")
    }

    /// A pinner in OpenSSL's verify callback (a native app through libcurl's
    /// `CURLOPT_SSL_CTX_FUNCTION`) refuses with `handshake_failure` once it has the certificate:
    /// a rejection of the certificate, not a failed negotiation.
    @Test func aVerifyCallbackPinnersAlertIsARejection() throws {
        let directory = TemporaryDirectory()
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestSupport/Resources/callback_pinner.c").path
        let binary = directory.file("callback_pinner")
        let compiled = try Subprocess.run("cc", ["-o", binary, source, "-lssl", "-lcrypto"], timeout: 120)
        try #require(compiled.status == 0, "\(compiled.output)")
        let origin = try OriginServer(tls: true)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let run = try Subprocess.run(binary, [String(proxy.port), "localhost", String(origin.port), proxy.pki.rootPath],
                                     timeout: 30)
        #expect(run.stdout.contains("refused"), "\(run.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.error?.kind == "client_rejected_certificate" && flow.error?.alert == "handshake_failure",
                "\(String(describing: flow.error))")
    }
}
