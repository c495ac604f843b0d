@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy run --mode wireguard`: a device whose WireGuard tunnel ends at DevProxy has every
/// connection captured. The device is a network namespace of the test's own, whose datagrams to
/// 127.0.0.1:PORT reach DevProxy's listener on this namespace's loopback (`NamespaceUDPRelay`), running the real userspace WireGuard (wireguard-go, configured by wg(8)) with the
/// config `devproxy wireguard` prints; its curl knows nothing of a proxy, and its resolver asks the
/// tunnel's DNS server (`/etc/netns/NAME/resolv.conf`, which `ip netns exec` puts in place).
@Suite(.serialized) struct WireGuardModeTests {
    static let unavailable: String? = {
        if let reason = NetworkNamespace.unavailableReason { return reason }
        for tool in ["wireguard-go", "wg", "wg-quick"] {
            guard (try? Subprocess.run("sh", ["-c", "command -v \(tool)"], timeout: 10))?.status == 0 else {
                return "needs \(tool) (Debian: wireguard-go, wireguard-tools)"
            }
        }
        return nil
    }()

    /// A device namespace whose WireGuard interface is up with `config` once `connect` is called;
    /// everything removed when released. Its tunnel's endpoint, 127.0.0.1:PORT in the namespace,
    /// is carried to DevProxy's listener on this namespace's 127.0.0.1:PORT by a `NamespaceUDPRelay`:
    /// a veth pair put an address on a new interface here, and headless Chromium in the tests
    /// running beside this one dropped its loads with `ERR_NETWORK_CHANGED`.
    final class Device {
        let namespace: NetworkNamespace
        /// The address DevProxy's wireguard listener takes (`--mode wireguard@HOST:0`).
        let hostAddress = "127.0.0.1"
        /// An interface standing for the device's Wi-Fi (one end of a veth pair whose ends are both
        /// inside the namespace): where the device's own IPv6 address goes.
        let lan = "lan0"
        /// wireguard-go's interface: a name of its own, since wg(8) finds it by a control socket
        /// (/var/run/wireguard/NAME.sock) that every namespace shares.
        let interface = "wgd\(UInt32.random(in: 0...0xFF_FFFF))"
        private var wireguard: Process?
        private var relays: [Int: NamespaceUDPRelay] = [:]
        private let resolvConf: String

        init() throws {
            namespace = try NetworkNamespace()
            try namespace.sh("ip link add \(lan) type veth peer name \(lan)p && ip link set \(lan)p up && ip link set \(lan) up")
            resolvConf = "/etc/netns/\(namespace.name)"
            try FileManager.default.createDirectory(atPath: resolvConf, withIntermediateDirectories: true)
            try "nameserver 10.0.0.1\n".write(toFile: resolvConf + "/resolv.conf", atomically: true, encoding: .utf8)
        }

        deinit {
            if let wireguard, wireguard.isRunning {
                wireguard.terminate()
                wireguard.waitUntilExit()
            }
            relays.values.forEach { $0.stop() }
            try? FileManager.default.removeItem(atPath: resolvConf)
        }

        /// A relay for `config`'s endpoint (127.0.0.1:PORT, the listener's) unless one runs for it.
        private func relay(_ config: String) throws {
            let endpoint = config.split(separator: "\n").first { $0.hasPrefix("Endpoint = ") }?.dropFirst(11) ?? ""
            guard endpoint.hasPrefix("127.0.0.1:"), let port = Int(endpoint.dropFirst("127.0.0.1:".count)) else {
                throw TestFailure("the device's endpoint is not on 127.0.0.1: \(endpoint)")
            }
            if relays[port] == nil { relays[port] = try NamespaceUDPRelay(namespace: namespace, port: port) }
        }

        static func run(_ tool: String, _ arguments: [String]) throws {
            let result = try Subprocess.run(tool, arguments, timeout: 20)
            guard result.status == 0 else { throw TestFailure("\(tool) \(arguments.joined(separator: " ")): \(result.output)") }
        }

        /// wireguard-go in the namespace with `config` (a wg-quick file: its Address, DNS and MTU
        /// applied here as wg-quick would), every route through the tunnel.
        /// The tunnel's peer (DevProxy) removed and set again with `config`'s endpoint: the next
        /// packet starts a new handshake, as a phone's app does when the server restarted.
        func reconnect(_ config: String) throws {
            let key = config.split(separator: "\n").first { $0.hasPrefix("PublicKey = ") }?.dropFirst(12) ?? ""
            let endpoint = config.split(separator: "\n").first { $0.hasPrefix("Endpoint = ") }?.dropFirst(11) ?? ""
            try relay(config)
            try namespace.sh("wg set \(interface) peer \(key) remove && wg set \(interface) peer \(key) endpoint \(endpoint) "
                             + "allowed-ips 0.0.0.0/0,::/0 && ip route replace default dev \(interface)")
        }

        /// The device's resolver asks over TCP only (glibc's `options use-vc`).
        func useVC() throws {
            try "nameserver 10.0.0.1\noptions use-vc\n".write(toFile: resolvConf + "/resolv.conf", atomically: true,
                                                               encoding: .utf8)
        }

        func connect(_ config: String, directory: TemporaryDirectory) throws {
            try relay(config)
            let file = directory.write("device.conf", config)
            chmod(file, 0o600)
            let stripped = try Subprocess.run("wg-quick", ["strip", file], timeout: 20)
            guard stripped.status == 0 else { throw TestFailure("wg-quick strip: \(stripped.output)") }
            let setconf = directory.write("device.wg", stripped.stdout)
            chmod(setconf, 0o600)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = namespace.launcher + ["wireguard-go", "-f", "\(interface)"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            wireguard = process
            let deadline = Date().addingTimeInterval(10)
            while (try? namespace.sh("ip link show \(interface)")) == nil {
                guard Date() < deadline else { throw TestFailure("wireguard-go made no interface") }
                usleep(50_000)
            }
            let address = config.split(separator: "\n").first { $0.hasPrefix("Address = ") }?.dropFirst(10) ?? ""
            try namespace.sh("wg setconf \(interface) \(setconf) && ip addr add \(address) dev \(interface) && "
                             + "ip link set \(interface) mtu 1420 up && ip route add default dev \(interface)")
        }
    }

    /// `devproxy run` with a regular listener and a WireGuard one on `device`'s host address, in
    /// front of an HTTPS origin only DevProxy can resolve (`origin.test`).
    final class Setup {
        let dir: TemporaryDirectory
        let origin: OriginServer
        let proxy: DevProxyProcess
        /// `listening on HOST:PORT (wireguard)`'s address, and the lines after it.
        let endpoint: String
        let lines: [String]

        /// A new run in `after`'s directory (its keys, the names its DNS gave) before an origin of its own.
        init(device: Device, after: Setup? = nil) throws {
            dir = after?.dir ?? TemporaryDirectory()
            origin = try OriginServer(names: ["origin.test"])
            proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"),
                                         "--upstream-ca", origin.caPath, "--session", "off", "--no-web",
                                         "--resolve", "origin.test:\(origin.port):127.0.0.1", "--mode", "regular",
                                         "--mode", "wireguard@\(device.hostAddress):0", "--allow-remote"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
            var lines: [String] = []
            var endpoint: String?
            while endpoint == nil && lines.count < 10 {
                let line = proxy.stdout.fileHandleForReading.readLine()
                lines.append(line)
                if line.hasPrefix("listening on "), line.hasSuffix(" (wireguard)") {
                    endpoint = String(line.dropFirst("listening on ".count).dropLast(" (wireguard)".count))
                }
            }
            guard let endpoint else { throw TestFailure("no wireguard listener: \(proxy.banner) \(lines)") }
            self.endpoint = endpoint
            lines.append(proxy.stdout.fileHandleForReading.readLine())
            self.lines = lines
        }

        /// `devproxy wireguard` with this run's keys and endpoint.
        func config(peer: Int = 1) throws -> String {
            let result = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", dir.file("ca"), "--endpoint", endpoint,
                                                                  "--peer", String(peer)], timeout: 20)
            guard result.status == 0 else { throw TestFailure("devproxy wireguard: \(result.output)") }
            return result.stdout
        }
    }

    /// The device's curl, told of no proxy and trusting DevProxy's root, gets the origin's answer
    /// through the tunnel: its resolver got an address of 198.18.0.0/15 for `origin.test` from
    /// DevProxy's DNS, its TLS was intercepted, and the flow names the wireguard listener and the
    /// device's tunnel address. QUIC (any UDP but DNS) is refused at once, so apps fall back to TCP.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func aDevicesConnectionsThroughItsTunnelAreIntercepted() throws {
        let device = try Device()
        let setup = try Setup(device: device)
        #expect(setup.lines.contains { $0.contains("wireguard: 1 device may connect") }, "\(setup.lines)")
        let config = try setup.config()
        #expect(config.contains("Address = 10.0.0.2/32") && config.contains("DNS = 10.0.0.1")
                && config.contains("Endpoint = \(setup.endpoint)") && config.contains("AllowedIPs = 0.0.0.0/0, ::/0"),
                "\(config)")
        try device.connect(config, directory: setup.dir)
        let lookup = try device.namespace.sh("getent ahostsv4 origin.test")
        #expect(lookup.stdout.hasPrefix("198.18.") || lookup.stdout.hasPrefix("198.19."), "\(lookup.output)")
        let url = "https://origin.test:\(setup.origin.port)/cl?n=5&by=wireguard"
        let fetched = try device.namespace.sh("curl -sS --max-time 20 --cacert \(setup.dir.file("ca/root.pem")) '\(url)'",
                                              timeout: 40)
        #expect(fetched.stdout == "hello", "\(fetched.output)")
        // The onboarding site answers there too, over plain HTTP (the device has no proxy to ask).
        let site = try device.namespace.sh("curl -sS --max-time 20 http://devproxy.test/root.pem", timeout: 40)
        #expect(site.stdout == (try String(contentsOfFile: setup.dir.file("ca/root.pem"), encoding: .utf8)), "\(site.output)")
        let started = Date()
        let quic = try device.namespace.sh("""
            python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
            s.connect(("198.18.0.1", 443)); s.send(b"q")
            try: s.recv(10); print("answered")
            except ConnectionRefusedError: print("refused")
            except socket.timeout: print("timeout")'
            """)
        #expect(quic.stdout == "refused\n" && Date().timeIntervalSince(started) < 4, "\(quic.output)")
        // TCP to the tunnel's DNS server (Android's DNS-over-TLS probe) is reset at once, and is no flow.
        let probe = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
            "curl", "-sS", "--max-time", "5", "telnet://10.0.0.1:853"], timeout: 20)
        #expect(probe.status == 7, "\(probe.output)")
        let stopped = setup.proxy.stop()
        #expect(stopped.stdout.contains("wireguard: peer 1 (10.0.0.2) connected from "), "\(stopped.stdout)")
        let flows = try FlowLogReader.read(path: setup.dir.file("flows.jsonl")).flows
        let flow = flows.first { $0.request?.url == url }
        #expect(flow?.response?.status == 200 && flow?.tls?.client?.sni == "origin.test", "\(flows.map { $0.request?.url })")
        #expect(flow?.listener?.mode == "wireguard" && flow?.listener?.address == setup.endpoint, "\(String(describing: flow?.listener))")
        #expect(flow?.client.hasPrefix("10.0.0.2:") == true, "\(String(describing: flow?.client))")
        #expect(!flows.contains { $0.server.host == "10.0.0.1" }, "\(flows.map { $0.server.host })")
    }

    /// DNS over TCP (RFC 7766: each message after a two-byte length) gets the same answers as over
    /// UDP, whichever server the device asks: glibc told `options use-vc` asks over TCP only, and
    /// two queries written at once on one connection (pipelined) are both answered, in order.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func dnsOverTCPIsAnswered() throws {
        let device = try Device()
        let setup = try Setup(device: device)
        try device.connect(try setup.config(), directory: setup.dir)
        let udp = try device.namespace.sh("getent ahostsv4 origin.test").stdout.split(separator: " ").first ?? ""
        try device.useVC()
        let tcp = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + ["getent", "ahostsv4", "origin.test"],
                                     timeout: 20)
        #expect(tcp.status == 0 && tcp.stdout.split(separator: " ").first == udp, "\(tcp.output) (over UDP: \(udp))")
        let url = "https://origin.test:\(setup.origin.port)/cl?n=5&by=dns-over-tcp"
        let fetched = try device.namespace.sh("curl -sS --max-time 20 --cacert \(setup.dir.file("ca/root.pem")) '\(url)'",
                                              timeout: 40)
        #expect(fetched.stdout == "hello", "\(fetched.output)")
        // Two queries in one write, to a server elsewhere (port 53 of any address is answered).
        let pipelined = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst())
                                           + ["python3", "-c", TransparentExecProtocolTests.pipelinedQueries], timeout: 20)
        let words = pipelined.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        #expect(words.count == 4 && words[0] == "7" && words[1] == String(udp) && words[2] == "8"
                && words[3].hasPrefix("198.1") && words[3] != words[1], "\(pipelined.output)")
        _ = setup.proxy.stop()
        let flows = try FlowLogReader.read(path: setup.dir.file("flows.jsonl")).flows
        #expect(!flows.contains { $0.server.port == 53 }, "\(flows.map { $0.server })")
    }

    /// A device set up while DevProxy runs (`devproxy wireguard --peer 2`) connects without a
    /// restart: its first handshake has DevProxy read the key file again; the console says the
    /// peer was added and connected, and `/api/wireguard` lists it, connected, with its config.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func aPeerAddedWhileRunningConnectsWithoutARestart() throws {
        let device = try Device()
        let run = try WebUIWireGuardTests.Run(wireGuard: device.hostAddress, extra: ["--allow-remote"])
        let listening = try #require(run.listening)
        let added = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", run.dir.file("ca"), "--endpoint", listening,
                                                             "--peer", "2"], timeout: 20)
        #expect(added.status == 0 && added.stdout.contains("Address = 10.0.0.3/32"), "\(added.output)")
        try device.connect(added.stdout, directory: run.dir)
        let pinged = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + ["ping", "-c", "1", "-W", "4",
                                                                                             "10.0.0.1"], timeout: 20)
        #expect(pinged.status == 0, "\(pinged.output)")
        let peers = try #require((try run.json("/api/wireguard"))["peers"] as? [[String: Any]])
        #expect(peers.count == 2 && peers.last?["peer"] as? Int == 2 && peers.last?["address"] as? String == "10.0.0.3"
                && peers.last?["connected"] as? Bool == true && peers.first?["connected"] as? Bool == false, "\(peers)")
        let config = try run.get("/api/wireguard/peers/2/config")
        #expect(config.status == 200 && config.body == added.stdout, "\(config)")
        // A third, listed as soon as the file has it (the API reads it again), before any handshake.
        _ = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", run.dir.file("ca"), "--endpoint", listening,
                                                     "--peer", "3"], timeout: 20)
        let three = try #require((try run.json("/api/wireguard"))["peers"] as? [[String: Any]])
        #expect(three.count == 3 && three.last?["address"] as? String == "10.0.0.4" && three.last?["connected"] as? Bool == false,
                "\(three)")
        let stopped = run.proxy.stop()
        #expect(stopped.stdout.contains("wireguard: peer 2 (10.0.0.3) added from ")
                && stopped.stdout.contains("wireguard: peer 2 (10.0.0.3) connected from "), "\(stopped.stdout)")
    }

    /// IPv6 goes into the tunnel and no further, refused at once: a device with an IPv6 address of
    /// its own (a dual-stack Wi-Fi's) and `::/0` through the tunnel gets a reset for TCP to an IPv6
    /// address, so a client that tries IPv6 first (curl waiting 10 s before IPv4) falls back to
    /// IPv4 without a stall; an AAAA query has no record (NOERROR), so a lookup gives IPv4 alone.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func ipv6IsRefusedAtOnceSoClientsUseIPv4WithoutAStall() throws {
        let device = try Device()
        let setup = try Setup(device: device)
        try device.connect(try setup.config(), directory: setup.dir)
        try device.namespace.sh("ip -6 addr add 2001:db8:5::2/64 dev \(device.lan) nodad && "
                                + "ip -6 route add default dev \(device.interface)")
        let lookup = try device.namespace.sh("""
            python3 -c 'import socket
            print(sorted({a[0].name for a in socket.getaddrinfo("origin.test", 443, type=socket.SOCK_STREAM)}))
            try: socket.getaddrinfo("origin.test", 443, socket.AF_INET6); print("AAAA")
            except socket.gaierror: print("no AAAA")'
            """)
        #expect(lookup.stdout == "['AF_INET']\nno AAAA\n", "\(lookup.output)")
        let v4 = try device.namespace.sh("getent ahostsv4 origin.test").stdout.split(separator: " ").first ?? ""
        let url = "https://origin.test:\(setup.origin.port)/cl?n=5&by=ipv6-first"
        var started = Date()
        let fetched = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
            "curl", "-sS", "--max-time", "8", "--happy-eyeballs-timeout-ms", "10000", "--cacert", setup.dir.file("ca/root.pem"),
            "--resolve", "origin.test:\(setup.origin.port):[2001:db8:ffff::1],\(v4)", url], timeout: 20)
        #expect(fetched.stdout == "hello" && Date().timeIntervalSince(started) < 4, "\(fetched.output)")
        started = Date()
        let literal = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
            "curl", "-sS", "--max-time", "8", "-g", "http://[2001:db8:ffff::1]:80/"], timeout: 20)
        #expect(literal.status == 7 && Date().timeIntervalSince(started) < 4, "\(literal.output)")
        _ = setup.proxy.stop()
    }

    /// ICMP echo: the tunnel's own address (10.0.0.1, the namespace's) answers; any other address
    /// (a name's 198.18.0.0/15 address, another device, IPv6) is refused at once by 10.0.0.1
    /// ("Packet filtered", ICMP administratively prohibited), not left to time out.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func pingsAreAnsweredByTheTunnelsAddressAndRefusedElsewhere() throws {
        let device = try Device()
        let setup = try Setup(device: device)
        try device.connect(try setup.config(), directory: setup.dir)
        try device.namespace.sh("ip -6 addr add 2001:db8:5::2/64 dev \(device.lan) nodad && "
                                + "ip -6 route add default dev \(device.interface)")
        let own = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
            "ping", "-c", "3", "-i", "0.2", "-W", "3", "10.0.0.1"], timeout: 20)
        #expect(own.status == 0 && own.stdout.contains("3 received"), "\(own.output)")
        let name = try device.namespace.sh("getent ahostsv4 origin.test").stdout.split(separator: " ").first.map(String.init) ?? ""
        for (target, words) in [(name, "From 10.0.0.1 icmp_seq=1 Packet filtered"), ("10.0.0.3", "Packet filtered"),
                                ("2001:db8:ffff::1", "Administratively prohibited")] {
            let started = Date()
            let pinged = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
                "ping", "-c", "1", "-W", "5", target], timeout: 20)
            #expect(pinged.status == 1 && pinged.stdout.contains(words) && Date().timeIntervalSince(started) < 3,
                    "\(target): \(pinged.output)")
        }
        _ = setup.proxy.stop()
    }

    /// A device keeps the answers its resolver cached across a restart of DevProxy: the addresses
    /// DevProxy's DNS gave are kept beside its keys (`wireguard-names.txt`, 0600), so a connection
    /// to one after the restart still goes to its name.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func aDevicesCachedAnswersOutliveARestart() throws {
        let device = try Device()
        let first = try Setup(device: device)
        try device.connect(try first.config(), directory: first.dir)
        let address = try device.namespace.sh("getent ahostsv4 origin.test").stdout.split(separator: " ").first.map(String.init)
            ?? ""
        #expect(address.hasPrefix("198.1"), "\(address)")
        _ = first.proxy.stop()
        let kept = try String(contentsOfFile: first.dir.file("ca/wireguard-names.txt"), encoding: .utf8)
        #expect(kept.contains("\(address) origin.test\n"), "\(kept)")
        var info = stat()
        #expect(stat(first.dir.file("ca/wireguard-names.txt"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        let second = try Setup(device: device, after: first)
        try device.reconnect(try second.config())
        // The device's cached answer: no lookup now, the address from before the restart.
        let url = "https://origin.test:\(second.origin.port)/cl?n=5&by=restart"
        let fetched = try device.namespace.sh("curl -sS --max-time 20 --cacert \(second.dir.file("ca/root.pem")) "
                                              + "--resolve origin.test:\(second.origin.port):\(address) '\(url)'", timeout: 40)
        #expect(fetched.stdout == "hello", "\(fetched.output)")
        _ = second.proxy.stop()
    }

    /// Stopping DevProxy gives a device's exchange in flight its grace period, as any client's: the
    /// tunnel keeps carrying its packets until the exchange has ended (it went with the listeners).
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func anExchangeInFlightFinishesWhenDevProxyStops() throws {
        let device = try Device()
        let setup = try Setup(device: device)
        try device.connect(try setup.config(), directory: setup.dir)
        let curl = Process()
        let output = Pipe()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = device.namespace.launcher + ["curl", "-sS", "--max-time", "20", "--cacert",
                                                      setup.dir.file("ca/root.pem"),
                                                      "https://origin.test:\(setup.origin.port)/slow?s=2"]
        curl.standardOutput = output
        curl.standardError = output
        try curl.run()
        Thread.sleep(forTimeInterval: 1)
        let stopped = setup.proxy.stop()
        curl.waitUntilExit()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(curl.terminationStatus == 0 && said == "slow", "\(said) \(stopped.stdout)")
    }

    /// A device whose key DevProxy does not know (a config from another machine's keys) gets
    /// nothing through, and the console says once why its handshakes are refused.
    @Test(.enabled(if: unavailable == nil, "needs root, network namespaces, wireguard-go and wg"))
    func aDeviceWithAnotherKeyIsRefusedWithAReason() throws {
        let device = try Device()
        let setup = try Setup(device: device)
        let other = try Subprocess.run("wg", ["genkey"], timeout: 10).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var config = try setup.config()
        let own = config.split(separator: "\n").first { $0.hasPrefix("PrivateKey = ") } ?? ""
        config = config.replacingOccurrences(of: own, with: "PrivateKey = \(other)")
        try device.connect(config, directory: setup.dir)
        let fetched = try Subprocess.run("ip", Array(device.namespace.launcher.dropFirst()) + [
            "curl", "-sS", "--max-time", "3", "http://10.0.0.1:9/"], timeout: 20)
        #expect(fetched.status != 0, "\(fetched.output)")
        let stopped = setup.proxy.stop()
        let refusals = stopped.stdout.split(separator: "\n").filter { $0.hasPrefix("wireguard: a datagram from ") }
        #expect(refusals.count == 1 && refusals.first?.contains("refused") == true, "\(stopped.stdout)")
        #expect(!stopped.stdout.contains("connected from"), "\(stopped.stdout)")
    }

    /// The keys outlive the run, private to the user: a second `devproxy wireguard` prints the same
    /// device config, `--peer 2` adds a device with its own key and address, the server's public key
    /// in the configs is what `wg pubkey` makes of the file's private key, and a file that is not
    /// DevProxy's keys stops `devproxy wireguard` with one line.
    @Test func keysAreKeptPrivateAndReused() throws {
        let dir = TemporaryDirectory()
        func wireguard(_ extra: [String]) throws -> Subprocess.Result {
            try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", dir.file("ca"), "--endpoint", "192.0.2.7"] + extra,
                               timeout: 20)
        }
        let first = try wireguard([])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.stdout == (try wireguard([])).stdout)
        let path = dir.file("ca/wireguard.json")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let second = try wireguard(["--peer", "2"])
        #expect(second.stdout.contains("Address = 10.0.0.3/32") && second.stdout.contains("Endpoint = 192.0.2.7:51820"),
                "\(second.output)")
        let key = { (text: String, prefix: String) in
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) } ?? ""
        }
        #expect(key(first.stdout, "PrivateKey = ") != key(second.stdout, "PrivateKey = "))
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        let serverPrivate = file?["server_private_key"] as? String ?? ""
        let derived = try Subprocess.run("wg", ["pubkey"], stdin: Array((serverPrivate + "\n").utf8), timeout: 10)
        if derived.status == 0 {
            #expect(key(first.stdout, "PublicKey = ") == derived.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect((file?["peers"] as? [Any])?.count == 2)
        _ = dir.write("ca/wireguard.json", "{\"peers\": 3}")
        let broken = try wireguard([])
        #expect(broken.status == 1 && broken.stderr.hasPrefix("error: ") && broken.stderr.contains("wireguard.json")
                && broken.stderr.split(separator: "\n").count == 1, "\(broken.output)")
        let badEndpoint = try Subprocess.run(Subprocess.devproxy, ["wireguard", "--ca-dir", dir.file("ca"), "--endpoint",
                                                                   "a b:1"], timeout: 20)
        #expect(badEndpoint.status == 2 && badEndpoint.stderr.contains("--endpoint"), "\(badEndpoint.output)")
    }

    /// The command `devproxy run` shows for a device's config, run as shown, gives a config for this
    /// listener: its endpoint (not this machine's first address and port 51820) and its keys (the
    /// run's `--ca-dir`, not the data directory `devproxy wireguard` finds alone, where it made
    /// other keys, which the listener refuses). It showed `devproxy wireguard` whatever they were.
    @Test(.enabled(if: NetworkNamespace.unavailableReason == nil, "needs root and network namespaces"))
    func theCommandShownGivesThisListenersConfig() throws {
        let dir = TemporaryDirectory()
        let elsewhere = ["DEVPROXY_EMAIL": "dev@example.test", "DEVPROXY_HOME": dir.file("home")]
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", "off", "--no-web", "--mode", "regular",
                                         "--mode", "wireguard@127.0.0.1:0"], environment: elsewhere)
        defer { _ = proxy.stop() }
        var lines: [String] = []
        while lines.count < 10, !(lines.last ?? "").contains(" may connect ") {
            lines.append(proxy.stdout.fileHandleForReading.readLine())
        }
        let listening = try #require(lines.first { $0.hasSuffix(" (wireguard)") }, "\(lines)")
        let endpoint = listening.dropFirst("listening on ".count).dropLast(" (wireguard)".count)
        let shown = try #require(lines.last?.split(separator: "`").dropFirst().first, "\(lines)")
        let words = shown.split(separator: " ").map(String.init)
        #expect(words.prefix(2) == ["devproxy", "wireguard"], "\(shown)")
        let config = try Subprocess.run(Subprocess.devproxy, Array(words.dropFirst()), environment: elsewhere, timeout: 20)
        let keys = try WireGuardKeyFile.load(directory: dir.file("ca"))
        #expect(config.status == 0 && config.stdout.contains("Endpoint = \(endpoint)\n")
                && config.stdout.contains("PublicKey = \(keys.server.publicKey.base64)\n"), "\(shown): \(config.output)")
    }

    /// Beyond loopback the WireGuard listener needs --allow-remote, as every listener does; one serves every device.
    @Test func aWireGuardListenerBeyondLoopbackNeedsAllowRemote() throws {
        let dir = TemporaryDirectory()
        let run = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--session", "off", "--no-web",
                                                           "--mode", "wireguard@0.0.0.0:0"],
                                     environment: ["DEVPROXY_EMAIL": "dev@example.test"], timeout: 30)
        #expect(run.status != 0 && run.stderr.contains("--allow-remote"), "\(run.output)")
        let twice = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--session", "off", "--no-web",
                                                             "--mode", "wireguard", "--mode", "wireguard@127.0.0.1:0"],
                                       environment: ["DEVPROXY_EMAIL": "dev@example.test"], timeout: 30)
        #expect(twice.status == 2 && twice.stderr.contains("given twice"), "\(twice.output)")
    }
}
