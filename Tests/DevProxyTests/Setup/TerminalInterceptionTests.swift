import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy exec` with real clients through a real `devproxy run`: none is given a proxy or a CA
/// on its command line, each goes through the proxy and trusts its root from the environment
/// alone, and its flow is in the proxy's log.
///
/// The origin's own CA stands in for the system's CAs (`SSL_CERT_FILE`, which `devproxy env` reads
/// as the system bundle): a host passed through (`--passthrough pass.test`) must still verify
/// against it, from the same bundle that trusts the root.
@Suite(.serialized) struct TerminalInterceptionTests {
    final class Setup {
        let dir = TemporaryDirectory()
        let origin: OriginServer
        let proxy: DevProxyProcess

        init() throws {
            origin = try OriginServer(names: ["origin.test", "pass.test"])
            proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--upstream-ca", origin.caPath,
                                         "--session", "off", "--no-web", "--quiet", "--passthrough", "pass.test",
                                         "--resolve", "origin.test:\(origin.port):127.0.0.1",
                                         "--resolve", "pass.test:\(origin.port):127.0.0.1"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        }

        func url(_ host: String = "origin.test", _ path: String = "/cl?n=5") -> String { "https://\(host):\(origin.port)\(path)" }

        /// `devproxy exec -- COMMAND`, from an environment with no proxy or CA variables of its own.
        func exec(_ command: [String]) throws -> Subprocess.Result {
            try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", dir.file("ca"), "--proxy", "127.0.0.1:\(proxy.port)", "--"] + command,
                               environment: ["SSL_CERT_FILE": origin.caPath, "NO_PROXY": "", "no_proxy": "", "HTTP_PROXY": "",
                                             "HTTPS_PROXY": "", "JAVA_TOOL_OPTIONS": "", "NODE_EXTRA_CA_CERTS": ""],
                               timeout: 60)
        }

        /// The flows logged once the proxy has stopped.
        func flows() throws -> [Flow] {
            let stopped = proxy.stop()
            #expect(stopped.status == 0, "\(stopped.stderr)")
            return try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        }
    }

    @Test func curlPythonAndGitAreInterceptedAndAPassedThroughHostStillVerifies() throws {
        let setup = try Setup()
        let clients: [(String, [String])] = [
            ("curl", ["curl", "-sS", "--max-time", "20", setup.url()]),
            ("urllib", ["python3", "-c", "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode(), end='')",
                        setup.url()]),
            ("httpx", ["python3", "-c", "import sys, httpx; print(httpx.get(sys.argv[1], timeout=20).text, end='')", setup.url()]),
            ("requests", ["python3", "-c", "import sys, requests; print(requests.get(sys.argv[1], timeout=20).text, end='')", setup.url()]),
        ]
        for (name, command) in clients {
            let result = try setup.exec(command)
            #expect(result.status == 0 && result.stdout == "hello", "\(name): \(result.output)")
        }
        // git over HTTPS (http_proxy, GIT_SSL_CAINFO): the origin is no git server, so git is told
        // 404, after verifying the leaf DevProxy made.
        let git = try setup.exec(["git", "ls-remote", setup.url("origin.test", "/repo.git")])
        #expect(git.status != 0 && git.stderr.contains("not found") && !git.stderr.contains("SSL"), "git: \(git.output)")
        let passed = try setup.exec(["curl", "-sS", "--max-time", "20", setup.url("pass.test")])
        #expect(passed.status == 0 && passed.stdout == "hello", "pass.test: \(passed.output)")
        let flows = try setup.flows()
        let intercepted = flows.filter { $0.request?.url == setup.url() }
        #expect(intercepted.count == clients.count, "\(flows.map { $0.request?.url ?? $0.server.host ?? "?" })")
        #expect(intercepted.allSatisfy { $0.mode == .https && $0.response?.status == 200 && $0.tls?.client?.sni == "origin.test" })
        #expect(flows.contains { $0.request?.url.hasPrefix(setup.url("origin.test", "/repo.git/info/refs")) == true
                && $0.response?.status == 404 }, "git's request is not among the flows")
        #expect(flows.contains { $0.mode == .tunnel && $0.server.host == "pass.test" }, "\(flows.map(\.mode))")
    }

    /// Node.js reads `NODE_EXTRA_CA_CERTS` in every version; the proxy variables only from 24.5
    /// with `NODE_USE_ENV_PROXY=1` (fetch from 24.0). Before that, a script that tunnels through
    /// `HTTPS_PROXY` itself trusts the root, and `https.get` goes direct (origin.test does not
    /// resolve outside the proxy).
    @Test func nodeTrustsTheRootAndUsesTheProxyFrom24() throws {
        let version = try Subprocess.run("node", ["--version"]).stdout.dropFirst().split(separator: ".").compactMap { Int($0) }
        let honoursProxy = version.count >= 2 && (version[0] > 24 || (version[0] == 24 && version[1] >= 5))
        let setup = try Setup()
        let tunnel = setup.dir.write("tunnel.js", """
            const http = require('http'), tls = require('tls');
            const target = new URL(process.argv[2]), proxy = new URL(process.env.HTTPS_PROXY);
            http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target.host })
              .on('connect', (response, socket) => {
                const secure = tls.connect({ socket, servername: target.hostname }, () => secure.write(
                  `GET ${target.pathname}${target.search} HTTP/1.1\\r\\nHost: ${target.host}\\r\\nConnection: close\\r\\n\\r\\n`));
                let text = '';
                secure.on('data', (chunk) => { text += chunk; });
                secure.on('end', () => process.stdout.write(text.split('\\r\\n\\r\\n')[1]));
                secure.on('error', (error) => { console.error(error.message); process.exit(1); });
              }).end();
            """)
        let tunnelled = try setup.exec(["node", tunnel, setup.url()])
        #expect(tunnelled.status == 0 && tunnelled.stdout == "hello", "\(tunnelled.output)")
        let plain = setup.dir.write("plain.js", """
            require('https').get(process.argv[2], (response) => {
              let text = ''; response.on('data', (chunk) => { text += chunk; }); response.on('end', () => process.stdout.write(text));
            }).on('error', (error) => process.stdout.write('direct: ' + error.code));
            """)
        let direct = try setup.exec(["node", plain, setup.url()])
        #expect(direct.stdout == (honoursProxy ? "hello" : direct.stdout) && (honoursProxy || direct.stdout.hasPrefix("direct: ")),
                "node \(version): \(direct.output)")
        let flows = try setup.flows().filter { $0.request?.url == setup.url() }
        #expect(flows.count == (honoursProxy ? 2 : 1), "\(flows.count)")
    }

    /// grpcio finds the proxy through `grpc_proxy` (which it reads before `https_proxy`, so one set
    /// elsewhere is replaced) and trusts the root through
    /// `GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`: a channel made with default credentials (no root given)
    /// calls a TLS gRPC server through DevProxy, and the call is a flow.
    @Test func grpcioIsInterceptedWithDefaultCredentials() throws {
        let dir = TemporaryDirectory()
        let originCA = CAStore(directory: dir.file("grpc-ca"))
        try originCA.initialize(name: "gRPC Origin Test CA", keyType: .p256, days: 2, passphrase: nil)
        let leaf = try LeafIssuer(signer: try originCA.rootSigner(passphrase: nil)).issue(for: [try LeafName("grpc.test")])
        let server = Process()
        let serverInput = Pipe(), serverOutput = Pipe()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", GRPCProxyTests.script, "server", dir.write("grpc.pem", leaf.certificate.pem),
                            dir.write("grpc.key", bytes: try leaf.key.pem())]
        server.standardInput = serverInput
        server.standardOutput = serverOutput
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            try? serverInput.fileHandleForWriting.close()
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let port = try #require(Int(serverOutput.fileHandleForReading.readLine()), "grpc_echo.py server printed no port")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--upstream-ca",
                                         originCA.rootCertificatePath, "--session", "off", "--no-web", "--quiet",
                                         "--resolve", "grpc.test:\(port):127.0.0.1"], environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        let client = """
            import sys, grpc
            request = b"\\x0a\\x05hello\\x10\\x07"
            channel = grpc.secure_channel(sys.argv[1], grpc.ssl_channel_credentials())
            answer = channel.unary_unary("/lab.Echo/Unary")(request, timeout=20)
            print("echoed" if answer == request else "wrong answer", end="")
            """
        let result = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", dir.file("ca"), "--proxy", "127.0.0.1:\(proxy.port)",
                                                              "--", "python3", "-c", client, "grpc.test:\(port)"],
                                        environment: ["NO_PROXY": "", "no_proxy": "", "SSL_CERT_FILE": "", "grpc_proxy": "http://127.0.0.1:9"],
                                        timeout: 60)
        #expect(result.status == 0 && result.stdout == "echoed", "\(result.output)")
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        #expect(flows.contains { $0.request?.url == "https://grpc.test:\(port)/lab.Echo/Unary" && $0.response?.status == 200 },
                "\(flows.map { $0.request?.url ?? "?" })")
    }

    /// Java's `HttpsURLConnection` and `java.net.http.HttpClient` follow `JAVA_TOOL_OPTIONS`: the
    /// proxy properties, and the trust store of the JDK's CAs and the root.
    @Test func javaIsInterceptedThroughJavaToolOptions() throws {
        guard TerminalTrust.javaCacerts() != nil else { return }
        let setup = try Setup()
        let source = setup.dir.write("Fetch.java", """
            public class Fetch {
                public static void main(String[] arguments) throws Exception {
                    var connection = (java.net.HttpURLConnection) new java.net.URL(arguments[0]).openConnection();
                    System.out.print(new String(connection.getInputStream().readAllBytes()));
                    var client = java.net.http.HttpClient.newHttpClient();
                    var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create(arguments[0])).build();
                    System.out.print(" " + client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body());
                }
            }
            """)
        let result = try setup.exec(["java", source, setup.url()])
        #expect(result.status == 0 && result.stdout == "hello hello", "\(result.output)")
        let flows = try setup.flows()
        #expect(flows.filter { $0.request?.url == setup.url() && $0.response?.status == 200 }.count == 2, "\(flows.count)")
    }
}
