@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy exec --transparent`: a command in a network namespace of its own, every TCP
/// connection and DNS lookup it makes sent to DevProxy. Real clients that ignore proxy settings
/// (`curl --noproxy '*'`, Node.js's `https.get`, Python with its proxies turned off) reach an
/// origin through a real `devproxy run` and are its flows; the namespace is made by the test's
/// own `devproxy exec` (root, or an unprivileged user namespace) and goes with it.
@Suite(.serialized) struct TransparentExecTests {
    /// Whether this machine lets the tests make a network namespace with iptables in it.
    static let canMakeNamespaces: Bool = {
        let probe = geteuid() == 0 ? ["unshare", "--net", "--"] : ["unshare", "--user", "--map-root-user", "--net", "--"]
        let result = try? Subprocess.run(probe[0], Array(probe.dropFirst()) + ["iptables", "-t", "nat", "-L", "OUTPUT"],
                                         timeout: 20)
        return result?.status == 0
    }()

    /// A proxy in front of an HTTPS origin that answers as `origin.test` (resolved by the proxy
    /// alone: nothing inside the namespace, or a browser, can resolve it but through DevProxy).
    final class Setup {
        let dir = TemporaryDirectory()
        let origin: OriginServer
        let proxy: DevProxyProcess

        init() throws {
            origin = try OriginServer(names: ["origin.test"])
            proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"),
                                         "--upstream-ca", origin.caPath, "--session", "off", "--no-web", "--quiet",
                                         "--resolve", "origin.test:\(origin.port):127.0.0.1"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        }

        func url(_ path: String) -> String { "https://origin.test:\(origin.port)\(path)" }

        /// `devproxy exec --transparent [options] -- command`, run by `launcher` when there is one.
        func exec(_ command: [String], options: [String] = [], path: String? = nil,
                  launcher: [String] = [], shell: [String: String] = [:]) throws -> Subprocess.Result {
            var environment = ["SSL_CERT_FILE": origin.caPath, "NO_PROXY": "", "no_proxy": "", "HTTP_PROXY": "",
                               "HTTPS_PROXY": "", "JAVA_TOOL_OPTIONS": "", "NODE_EXTRA_CA_CERTS": ""]
            environment.merge(shell) { $1 }
            if let path { environment["PATH"] = path }
            let argv = launcher + [Subprocess.devproxy, "exec", "--transparent", "--ca-dir", dir.file("ca"), "--proxy",
                                   "127.0.0.1:\(proxy.port)"] + options + ["--"] + command
            return try Subprocess.run(argv[0], Array(argv.dropFirst()), environment: environment, timeout: 60)
        }

        /// The flows logged once the proxy has stopped.
        func flows() throws -> [Flow] {
            let stopped = proxy.stop()
            #expect(stopped.status == 0, "\(stopped.stderr)")
            return try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        }
    }

    /// curl told to use no proxy, Node.js 20's `https.get` (which reads no proxy variable) and
    /// Python's urllib with its proxies turned off all reach the origin through DevProxy, trusting
    /// its root from the environment `exec` sets; curl told to use `HTTPS_PROXY` still does too (the
    /// namespace has a listener at the proxy's address). Each is a flow with the origin's name in
    /// its SNI and URL; the command's exit status is `exec`'s.
    @Test(.enabled(if: canMakeNamespaces, "needs root or unprivileged user namespaces, and iptables"))
    func programsThatIgnoreProxiesAreCaptured() throws {
        let setup = try Setup()
        let node = setup.dir.write("get.js", """
            require('https').get(process.argv[2], (response) => {
              let text = ''; response.on('data', (chunk) => { text += chunk; });
              response.on('end', () => console.log('node ' + text));
            }).on('error', (error) => { console.log('node failed: ' + error.message); process.exit(1); });
            """)
        let script = """
            curl --noproxy '*' -sS --max-time 20 "$1/cl?n=5&by=curl"; echo
            node "$2" "$1/cl?n=5&by=node"
            python3 -c 'import sys, urllib.request as u; print("urllib " + u.build_opener(u.ProxyHandler({})).open(sys.argv[1], timeout=20).read().decode())' "$1/cl?n=5&by=urllib"
            HTTPS_PROXY="http://127.0.0.1:$3" curl -sS --max-time 20 "$1/cl?n=5&by=env"; echo
            exit 7
            """
        let run = try setup.exec(["sh", "-c", script, "sh", setup.url(""), node, "\(setup.proxy.port)"])
        #expect(run.status == 7, "\(run.output)")
        #expect(run.stdout == "hello\nnode hello\nurllib hello\nhello\n", "\(run.output)")
        let flows = try setup.flows()
        for client in ["curl", "node", "urllib", "env"] {
            let flow = flows.first { $0.request?.url == setup.url("/cl?n=5&by=\(client)") }
            #expect(flow?.response?.status == 200 && flow?.tls?.client?.sni == "origin.test",
                    "\(client): \(flows.map { $0.request?.url ?? $0.server.host ?? "?" })")
        }
    }

    /// Each flow names the program in the namespace that made it, as mitmproxy's local mode does:
    /// curl redirected by the kernel, Python through `HTTPS_PROXY` (the bridge's explicit
    /// listener), where every flow named `devproxy` (exec's relay, the only peer `devproxy run`
    /// could see). The header that carries it is no part of the flow, and from a client that is
    /// not devproxy's relay (curl's `--proxy-header` on its CONNECT) it is ignored.
    @Test(.enabled(if: canMakeNamespaces, "needs root or unprivileged user namespaces, and iptables"))
    func eachFlowNamesTheProgramInTheNamespace() throws {
        let setup = try Setup()
        // Three of each, one of which must be named: a lookup that runs out of its time on a loaded
        // machine leaves a flow without a process, as documented.
        let script = """
            for i in 1 2 3; do
            curl --noproxy '*' -sS --max-time 20 "$1/cl?n=5&by=curl"; echo
            HTTPS_PROXY="http://127.0.0.1:$2" python3 -c 'import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=20).read().decode())' "$1/cl?n=5&by=python"
            done
            """
        let run = try setup.exec(["sh", "-c", script, "sh", setup.url(""), "\(setup.proxy.port)"])
        #expect(run.status == 0 && run.stdout == String(repeating: "hello\n", count: 6), "\(run.output)")
        let spoof = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "127.0.0.1:\(setup.proxy.port)",
                                                "--proxy-header", "\(NamespaceCapture.clientHeader): 1",
                                                "--cacert", setup.dir.file("ca/root.pem"),
                                                setup.url("/cl?n=5&by=spoof")], timeout: 30)
        #expect(spoof.status == 0, "\(spoof.output)")
        let flows = try setup.flows()
        for (client, program) in [("curl", "curl"), ("python", "python3")] {
            let named = flows.filter { $0.request?.url.hasSuffix("/cl?n=5&by=\(client)") == true }
            #expect(named.contains { $0.clientProcess?.name == program },
                    "\(client): \(named.map { String(describing: $0.clientProcess) })")
        }
        let spoofed = flows.first { $0.request?.url.hasSuffix("/cl?n=5&by=spoof") == true }
        #expect(spoofed != nil && spoofed?.clientProcess?.pid != 1, "\(String(describing: spoofed?.clientProcess))")
        let headers = flows.map { String(describing: $0.request?.headers) }
        let carried = headers.filter { $0.contains(NamespaceCapture.clientHeader) }
        #expect(carried.isEmpty, "\(carried)")
    }

    /// A client of the bridge's explicit listener that sends no HTTP head (curl to an `https://`
    /// proxy: a ClientHello) is joined to DevProxy at once and fails as it would there, where the
    /// bridge waited 30 s for a head's blank line (to name the program in it) first.
    @Test(.enabled(if: canMakeNamespaces, "needs root or unprivileged user namespaces, and iptables"))
    func aClientThatSendsNoHeadIsNotHeld() throws {
        let setup = try Setup()
        let started = Date()
        let run = try setup.exec(["curl", "-sS", "--max-time", "40", "--proxy", "https://127.0.0.1:\(setup.proxy.port)",
                                  "--proxy-insecure", setup.url("/cl?n=5")])
        let elapsed = Date().timeIntervalSince(started)
        #expect(run.status == 35 && elapsed < 10, "\(elapsed) s: \(run.output)")
        _ = try setup.flows()
    }

    /// A program that looks for a proxy before it connects (Python's `getproxies()`, which reads
    /// the variables, as apps that refuse to run behind a proxy do) finds none, one set in the
    /// calling shell included, and its request is captured all the same; Java gets the trust
    /// store and no proxy property. Every proxy variable was set to DevProxy's address.
    @Test(.enabled(if: canMakeNamespaces, "needs root or unprivileged user namespaces, and iptables"))
    func aProgramThatLooksForAProxyFindsNone() throws {
        let setup = try Setup()
        let script = """
            python3 -c 'import sys, urllib.request as u; p = u.getproxies(); print("proxies %r" % p); print(u.urlopen(sys.argv[1], timeout=20).read().decode() if not p else "refused")' "$1/cl?n=5&by=probe"
            env | grep -iE '^(https?_proxy|all_proxy|grpc_proxy|no_proxy|node_use_env_proxy)=' || echo "no proxy variable"
            echo "java: $JAVA_TOOL_OPTIONS"
            """
        let run = try setup.exec(["sh", "-c", script, "sh", setup.url("")],
                                 shell: ["HTTPS_PROXY": "http://proxy.corp.test:3128", "grpc_proxy": "http://proxy.corp.test:3128"])
        #expect(run.status == 0 && run.stdout.hasPrefix("proxies {}\nhello\nno proxy variable\n"), "\(run.output)")
        let java = run.stdout.split(separator: "\n").first { $0.hasPrefix("java: ") } ?? ""
        #expect(!java.contains("proxyHost") && (java.contains("trustStore=") || java == "java: "), "\(java)")
        let flows = try setup.flows()
        #expect(flows.contains { $0.request?.url == setup.url("/cl?n=5&by=probe") && $0.response?.status == 200 },
                "\(flows.map { $0.request?.url ?? "?" })")
    }

    /// When DevProxy refuses a connection's `CONNECT` (a listener with `--proxy-auth`, whose
    /// credentials exec cannot send), the program sees only a reset; exec says why on stderr,
    /// once for two connections, where it said nothing.
    @Test(.enabled(if: canMakeNamespaces, "needs root or unprivileged user namespaces, and iptables"))
    func aRefusedConnectionIsExplained() throws {
        let setup = try Setup()
        let credentials = setup.dir.write("proxy.cred", "dev:secret\n")
        let guarded = try DevProxyProcess(["--ca-dir", setup.dir.file("ca"), "--proxy-auth", credentials,
                                           "--session", "off", "--no-web", "--quiet"],
                                          environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        defer { _ = guarded.stop() }
        let script = """
            curl --noproxy '*' -sS --max-time 20 "$1/cl?n=5&by=first"
            curl --noproxy '*' -sS --max-time 20 "$1/cl?n=5&by=second"
            exit 0
            """
        let argv = [Subprocess.devproxy, "exec", "--transparent", "--ca-dir", setup.dir.file("ca"), "--proxy",
                    "127.0.0.1:\(guarded.port)", "--", "sh", "-c", script, "sh", setup.url("")]
        let run = try Subprocess.run(argv[0], Array(argv.dropFirst()),
                                     environment: ["SSL_CERT_FILE": setup.origin.caPath, "HTTPS_PROXY": ""], timeout: 60)
        let said: [String] = run.stderr.split(separator: "\n").map(String.init).filter { $0.contains("refused the connection") }
        let target = "origin.test:\(setup.origin.port)"
        var expected = "warning: --transparent: DevProxy at 127.0.0.1:\(guarded.port) refused the connection to "
        expected += target + ", so the command saw it reset: 407 Proxy Authentication Required: proxy credentials "
        expected += "required (devproxy exec sends no proxy credentials: point --proxy at a listener without --proxy-auth)"
        #expect(said == [expected], "\(run.output)")
    }

    /// DevProxy on an address that is not loopback (`--proxy 10.200.0.1:PORT`, a proxy on the LAN):
    /// a program told to use it reaches the bridge's explicit listener at that address, where the
    /// redirect took it first and DevProxy refused the `CONNECT` to its own listener as a loop.
    /// Everything runs in a namespace the test makes, DevProxy on one end of a veth pair there.
    @Test(.enabled(if: NetworkNamespace.unavailableReason == nil && canMakeNamespaces,
                   "needs root (ip netns) and iptables in a namespace"))
    func aProxyOffLoopbackIsReachedByItsAddress() throws {
        let namespace = try NetworkNamespace()
        try namespace.sh("ip link add lan0 type veth peer name lan0p && ip addr add 10.200.0.1/24 dev lan0 "
                         + "&& ip link set lan0 up && ip link set lan0p up")
        let dir = TemporaryDirectory()
        let origin = try OriginServer(names: ["origin.test"], launcher: namespace.launcher)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--listen",
                                         "10.200.0.1:0", "--allow-remote", "--upstream-ca", origin.caPath, "--session",
                                         "off", "--no-web", "--quiet", "--resolve", "origin.test:\(origin.port):127.0.0.1"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], listen: false,
                                        launcher: namespace.launcher)
        let url = "https://origin.test:\(origin.port)/cl?n=5&by=explicit"
        let run = try Subprocess.run("ip", namespace.launcher.dropFirst() + [
            Subprocess.devproxy, "exec", "--transparent", "--ca-dir", dir.file("ca"), "--proxy",
            "10.200.0.1:\(proxy.port)", "--", "sh", "-c",
            "HTTPS_PROXY=http://10.200.0.1:\(proxy.port) curl -sS --max-time 20 \"$1\"", "sh", url,
        ], environment: ["SSL_CERT_FILE": origin.caPath], timeout: 60)
        let stopped = proxy.stop()
        #expect(run.status == 0 && run.stdout == "hello", "\(run.output)")
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        #expect(stopped.status == 0 && flows.contains { $0.request?.url == url && $0.response?.status == 200 },
                "\(flows.map { "\($0.request?.url ?? $0.server.host ?? "?") \($0.error?.message ?? "")" })")
    }

    /// Whether an unprivileged user (nobody) may make a user namespace here, for the rootless case.
    static let nobodyCanMakeNamespaces: Bool = {
        guard geteuid() == 0 else { return false }
        let result = try? Subprocess.run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "unshare", "--user",
                                                     "--map-root-user", "--net", "--", "iptables", "-t", "nat", "-L", "OUTPUT"],
                                         timeout: 20)
        return result?.status == 0
    }()

    /// Without root, as most developers run it: `exec` as nobody makes a user namespace, in which
    /// it may make the network namespace and its rules, and curl told to use no proxy is captured.
    @Test(.enabled(if: nobodyCanMakeNamespaces, "needs root to become nobody, and unprivileged user namespaces"))
    func withoutRootAUserNamespaceIsUsed() throws {
        let setup = try Setup()
        // nobody's own copy of what exec reads and writes: the root and the terminal bundle.
        let ca = setup.dir.file("nobody-ca")
        try FileManager.default.copyItem(atPath: setup.dir.file("ca"), toPath: ca)
        for path in [setup.dir.path, ca] {
            #expect(try Subprocess.run("chmod", ["o+rx", path]).status == 0)
        }
        #expect(try Subprocess.run("chown", ["-R", "65534:65534", ca]).status == 0)
        #expect(try Subprocess.run("chmod", ["o+r", setup.origin.caPath]).status == 0)
        // A copy nobody can reach: the checkout may sit in a 0700 directory (CI's mktemp -d), which
        // the namespace's side, run again by its /proc/self/exe path, could not enter.
        let devproxy = setup.dir.file("devproxy")
        try FileManager.default.copyItem(atPath: Subprocess.devproxy, toPath: devproxy)
        #expect(try Subprocess.run("chmod", ["755", devproxy]).status == 0)
        let run = try Subprocess.run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", devproxy,
                                                 "exec", "--transparent", "--ca-dir", ca, "--proxy",
                                                 "127.0.0.1:\(setup.proxy.port)", "--", "curl", "--noproxy", "*", "-sS",
                                                 "--max-time", "20", setup.url("/cl?n=5&by=nobody")],
                                     environment: ["SSL_CERT_FILE": setup.origin.caPath, "HOME": setup.dir.path,
                                                   "NO_PROXY": "", "HTTPS_PROXY": ""], timeout: 60)
        #expect(run.status == 0 && run.stdout == "hello", "\(run.output)")
        let flows = try setup.flows()
        #expect(flows.contains { $0.request?.url == setup.url("/cl?n=5&by=nobody") && $0.response?.status == 200 },
                "\(flows.map { $0.request?.url ?? "?" })")
    }

    /// A command that is not there is 127, as a shell says it, from inside the namespace.
    @Test(.enabled(if: canMakeNamespaces, "needs root or unprivileged user namespaces, and iptables"))
    func aMissingCommandIs127() throws {
        let setup = try Setup()
        let run = try setup.exec(["no-such-command-devproxy"])
        #expect(run.status == 127 && run.stderr.contains("no-such-command-devproxy: command not found"), "\(run.output)")
    }

    /// Without unshare on PATH, one line says what is missing.
    @Test func withoutUnshareItSaysSo() throws {
        let setup = try Setup()
        let run = try setup.exec(["true"], path: setup.dir.path)
        #expect(run.status == 1 && run.stderr.contains("error: --transparent needs unshare (util-linux) on PATH"),
                "\(run.output)")
    }

    // MARK: The bridge's DNS

    /// A query for `name`, type `type`, as a resolver sends it (RD set, one question).
    static func query(_ name: String, type: UInt16, id: UInt16 = 0x1234) -> [UInt8] {
        var message: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") { message += [UInt8(label.utf8.count)] + Array(label.utf8) }
        return message + [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
    }

    /// An A query gets one address of 198.18.0.0/15, the same for the same name (any case, a
    /// final dot), another for another name, and the bridge knows the name behind it; AAAA (and
    /// any other type) is answered with no record, so resolvers go on with A.
    @Test func aNameGetsAnAddressOfItsOwnAndOtherTypesNone() throws {
        let dns = NamespaceCapture.FakeDNS()
        let answer = try #require(dns.answer(Self.query("api.example.com", type: 1)))
        #expect(answer[0...1] == [0x12, 0x34] && answer[2] & 0x80 != 0 && answer[3] & 0x0F == 0, "\(answer)")
        #expect(answer[6...7] == [0, 1], "one answer")
        let address = Array(answer.suffix(4))
        #expect(address[0] == 198 && (address[1] == 18 || address[1] == 19), "\(address)")
        let number = address.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(dns.name(for: number) == "api.example.com")
        #expect(dns.address(for: "API.Example.com.") == number)
        #expect(dns.address(for: "other.example.com") != number)
        let none = try #require(dns.answer(Self.query("api.example.com", type: 28)))
        #expect(none[3] & 0x0F == 0 && none[6...7] == [0, 0], "AAAA: NOERROR, no answer: \(none)")
    }

    /// What is no query gets FORMERR (a name pointer, a label past its message, two questions),
    /// and a response or a message shorter than a header gets nothing.
    @Test func malformedQueriesGetFormatErrors() {
        let dns = NamespaceCapture.FakeDNS()
        var pointer = Self.query("a.test", type: 1)
        pointer.replaceSubrange(12..<14, with: [0xC0, 0x0C])
        var cut = Self.query("example.test", type: 1)
        cut.removeLast(10)
        var two = Self.query("a.test", type: 1)
        two[5] = 2
        for message in [pointer, cut, two] {
            #expect(dns.answer(message).map { $0[3] & 0x0F } == 1, "\(message)")
        }
        var response = Self.query("a.test", type: 1)
        response[2] |= 0x80
        #expect(dns.answer(response) == nil && dns.answer([1, 2, 3]) == nil)
    }

    /// Loopback stays the namespace's own unless `--intercept-loopback`, which sends it to
    /// DevProxy too, all but the bridge's own ports.
    @Test func loopbackIsRedirectedOnlyWhenAsked() {
        let plain = NamespaceCapture.networkCommands(bridgePort: 4000, dnsPort: 4001, dnsStreamPort: 4002, excluded: [8080],
                                                     loopback: false)
        #expect(plain.contains(["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "!", "-d", "127.0.0.0/8", "-j",
                                "REDIRECT", "--to-ports", "4000"]), "\(plain)")
        let loopback = NamespaceCapture.networkCommands(bridgePort: 4000, dnsPort: 4001, dnsStreamPort: 4002,
                                                        excluded: [8080], loopback: true)
        #expect(loopback.contains(["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-m", "multiport", "!", "--dports",
                                   "4000,4001,4002,8080", "-j", "REDIRECT", "--to-ports", "4000"]), "\(loopback)")
    }
}
