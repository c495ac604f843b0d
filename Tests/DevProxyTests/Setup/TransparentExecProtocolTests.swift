@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy exec --transparent` with what is not a plain TCP connection to an IPv4 address: DNS
/// over TCP and IPv6 this machine cannot reach, each met by real programs (glibc's resolver, curl,
/// Python) in the namespace a real `devproxy exec` makes, through a real `devproxy run`.
@Suite(.serialized) struct TransparentExecProtocolTests {
    typealias Setup = TransparentExecTests.Setup

    /// Two queries written at once on one connection to `192.0.2.53:53` (pipelined, RFC 7766
    /// §6.2.1.1); prints each answer's ID and address.
    static let pipelinedQueries = """
        import socket, struct
        def query(ident, name):
            body = struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0)
            body += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\\0" + struct.pack(">HH", 1, 1)
            return struct.pack(">H", len(body)) + body
        s = socket.create_connection(("192.0.2.53", 53), timeout=5)
        s.sendall(query(7, "origin.test") + query(8, "second.test"))
        data = b""
        def message():
            global data
            while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
                chunk = s.recv(4096)
                if not chunk: raise SystemExit("closed after %d bytes" % len(data))
                data += chunk
            size = struct.unpack(">H", data[:2])[0]
            out, data = data[2:2 + size], data[2 + size:]
            return out
        a, b = message(), message()
        for answer in (a, b):
            print(struct.unpack(">H", answer[:2])[0], ".".join(map(str, answer[-4:])), end=" ")
        print()
        """

    /// DNS over TCP gets the answers DNS over UDP gets, whichever server it is sent to: glibc told
    /// `use-vc` (TCP only) resolves `origin.test`, which only DevProxy knows, to the address UDP
    /// gave, and curl reaches it by that name; two pipelined queries to another server are both
    /// answered, in order. No flow goes to port 53 (before, TCP 53 was a CONNECT to the server,
    /// which knew no `origin.test`).
    @Test(.enabled(if: TransparentExecTests.canMakeNamespaces, "needs namespaces and iptables"))
    func dnsOverTCPIsAnswered() throws {
        let setup = try Setup()
        let script = setup.dir.write("pipelined.py", Self.pipelinedQueries)
        let run = try setup.exec(["sh", "-c", """
            getent ahostsv4 origin.test | head -1 | cut -d' ' -f1
            RES_OPTIONS=use-vc getent ahostsv4 origin.test | head -1 | cut -d' ' -f1
            RES_OPTIONS=use-vc curl --noproxy '*' -sS --max-time 20 "$1"; echo
            python3 "$2"
            """, "sh", setup.url("/cl?n=5&by=use-vc"), script])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(run.output)")
        guard lines.count == 4 else { return }
        #expect(lines[0].hasPrefix("198.1") && lines[1] == lines[0], "over UDP \(lines[0]), over TCP \(lines[1])")
        #expect(lines[2] == "hello", "\(run.output)")
        let words = lines[3].split(separator: " ").map(String.init)  // ID, address; ID, address
        #expect(words.count == 4 && words[0] == "7" && words[1] == lines[0] && words[2] == "8"
                && words[3].hasPrefix("198.1") && words[3] != words[1], "\(run.output)")
        let flows = try setup.flows()
        #expect(!flows.contains { $0.server.port == 53 }, "\(flows.map { $0.server })")
    }

    /// Whether this machine has no global IPv6, so that 2001:db8::1 (documentation, RFC 3849) is
    /// unreachable from here.
    static let noGlobalIPv6 = NamespaceCapture.IPv6Reach.probe() != .global

    /// An IPv6 address this machine cannot reach is unreachable in the namespace too, at once, so
    /// curl told `--happy-eyeballs-timeout-ms 10000` with an IPv6 and an IPv4 address goes on with
    /// the IPv4 one without waiting, and an IPv6 literal fails in well under a second, saying it
    /// could not connect. Before, the bridge accepted the connection and DevProxy's 502 was the
    /// answer, with no fallback.
    @Test(.enabled(if: TransparentExecTests.canMakeNamespaces && noGlobalIPv6,
                   "needs namespaces and iptables, and a machine without global IPv6"))
    func ipv6ThisMachineCannotReachFailsAtOnce() throws {
        let setup = try Setup()
        let run = try setup.exec(["sh", "-c", """
            v4=$(getent ahostsv4 origin.test | head -1 | cut -d' ' -f1)
            start=$(date +%s%N)
            curl --noproxy '*' -sS --max-time 20 --happy-eyeballs-timeout-ms 10000 \
                --resolve "origin.test:$2:[2001:db8::1],$v4" "$1" -w ' %{remote_ip}'; echo
            echo $(( ($(date +%s%N) - start) / 1000000 ))
            start=$(date +%s%N)
            curl --noproxy '*' -sS --max-time 20 "http://[2001:db8::1]:$2/" -w '%{http_code}'; echo " exit $?"
            echo $(( ($(date +%s%N) - start) / 1000000 ))
            """, "sh", setup.url("/cl?n=5&by=happy-eyeballs"), String(setup.origin.port)])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(run.output)")
        guard lines.count == 4 else { return }
        #expect(lines[0].hasPrefix("hello 198.1"), "\(run.output)")
        #expect((Int(lines[1]) ?? .max) < 5000, "Happy Eyeballs took \(lines[1]) ms")
        #expect(lines[2] == "000 exit 7" && run.stderr.contains("Couldn't connect"), "\(run.output)")
        #expect((Int(lines[3]) ?? .max) < 1000, "the IPv6 literal took \(lines[3]) ms")
        let flows = try setup.flows()
        #expect(!flows.contains { $0.server.host.contains("2001:db8") }, "\(flows.map { $0.server })")
    }

    /// A resolver whose servers are IPv6 addresses (`::1`, a local resolver's; one this machine
    /// may not reach) gets DevProxy's answers from them, over UDP and TCP: `resolv.conf` replaced
    /// in a mount namespace of the test's own (root only). Before, IPv6 DNS was refused and no
    /// name resolved ("Could not resolve host").
    @Test(.enabled(if: TransparentExecTests.canMakeNamespaces && geteuid() == 0, "needs root and namespaces"))
    func aResolverWithIPv6ServersIsAnswered() throws {
        let setup = try Setup()
        for server in ["::1", "2001:db8::53"] {
            let conf = setup.dir.write("resolv-\(server.count).conf", "nameserver \(server)\n")
            let run = try setup.exec(["sh", "-c", """
                getent ahostsv4 origin.test | head -1 | cut -d' ' -f1
                RES_OPTIONS=use-vc curl --noproxy '*' -sS --max-time 20 "$1"; echo
                """, "sh", setup.url("/cl?n=5&by=v6-dns")],
                launcher: ["unshare", "--mount", "--", "sh", "-c", "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"",
                           conf])
            let lines = run.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines[0].hasPrefix("198.1") && lines[1] == "hello", "\(server): \(run.output)")
        }
    }

    /// The IPv6 servers of a resolv.conf, each once, those with a zone left out, are routed to the
    /// bridge when this machine's IPv6 does not route them there already.
    @Test func ipv6NameserversAreRoutedToTheBridge() {
        let text = "# comment\nnameserver 10.0.0.1\nnameserver fd00::53\nnameserver\t::1\nnameserver fe80::1%eth0\n"
            + "nameserver fd00::53\noptions use-vc\nnameserver 2001:db8::53 \n"
        let servers = NamespaceCapture.nameserversV6(resolvConf: text)
        #expect(servers == ["fd00::53", "::1", "2001:db8::53"])
        let none = NamespaceCapture.networkCommandsV6(bridgePort: 1, dnsPorts: (2, 3), excluded: [], loopback: false,
                                                      reach: .none, nameservers: servers)
        #expect(none.filter { $0.starts(with: ["ip", "-6", "route"]) }.map { $0[4] }
                == ["fd00::53/128", "2001:db8::53/128"], "\(none)")
        #expect(none.contains(["ip6tables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "--dport", "53", "-j", "REDIRECT",
                               "--to-ports", "3"]), "\(none)")
        let global = NamespaceCapture.networkCommandsV6(bridgePort: 1, dnsPorts: (2, 3), excluded: [], loopback: false,
                                                        reach: .global, nameservers: servers)
        #expect(global.filter { $0.starts(with: ["ip", "-6", "route"]) }.map { $0[4] } == ["default"])
    }

    /// Whether iputils' ping is here.
    static let hasPing = (try? Subprocess.run("sh", ["-c", "command -v ping"], timeout: 10).status) == 0

    /// ping, which DevProxy cannot carry, fails at once and says why: each echo gets "Packet
    /// filtered" (ICMP administratively prohibited), to an address or to a name DevProxy's DNS
    /// answered; ping exits 1 in well under its 10 s wait. Before, the echo was dropped: ping said
    /// nothing and waited 10 s (without `-c`, for ever).
    @Test(.enabled(if: TransparentExecTests.canMakeNamespaces && hasPing, "needs namespaces, iptables and ping"))
    func pingIsRefusedAtOnce() throws {
        let setup = try Setup()
        for target in ["192.0.2.1", "origin.test"] {
            let started = Date()
            let run = try setup.exec(["ping", "-c", "1", target])
            let took = Date().timeIntervalSince(started)
            #expect(run.status == 1 && run.stdout.contains("Packet filtered"), "\(target): \(run.output)")
            #expect(took < 5, "\(target): \(took) s")
        }
    }

    /// The namespace routes to the bridge the IPv6 this machine reaches: all of it with a global
    /// source address, unique local addresses with only such a source, none without IPv6.
    @Test func ipv6RoutesFollowThisMachinesReach() {
        let cases: [(UInt8, NamespaceCapture.IPv6Reach, [String])] = [
            (0x20, .global, ["default"]), (0x3F, .global, ["default"]), (0xFD, .uniqueLocal, ["fc00::/7"]),
            (0xFC, .uniqueLocal, ["fc00::/7"]), (0xFE, .none, []), (0x00, .none, []), (0x40, .none, []),
        ]
        for (first, reach, routes) in cases {
            #expect(NamespaceCapture.IPv6Reach.reach(ofSourceStartingWith: first) == reach, "\(first)")
            let commands = NamespaceCapture.networkCommandsV6(bridgePort: 1, dnsPorts: nil, excluded: [],
                                                              loopback: false, reach: reach, nameservers: ["fd00::53"])
            #expect(commands.filter { $0.starts(with: ["ip", "-6", "route"]) }.map { $0[4] } == routes, "\(commands)")
        }
    }
}
