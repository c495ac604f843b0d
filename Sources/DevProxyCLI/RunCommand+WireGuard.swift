import CertAuthority
import CSystem
import DevProxy
import Foundation
import HTTPTypes
import QRCode

/// `devproxy run --mode wireguard`: the capture's network namespace, made by a helper process
/// (this program again, as `__wireguard-namespace`, under `unshare`), which hands its TUN device
/// and sockets over a Unix socket and then waits, keeping the namespace, until devproxy exits.
extension RunCommand {
    /// `wireguard: …` lines saying how a device connects, and the first device's QR code (peer 1's
    /// unless it was removed) when stdout is a terminal or with `--qr` (the WireGuard apps scan it: "Create from QR code").
    static func printWireGuard(_ capture: WireGuardCapture, keys: WireGuardKeyFile, options: RunOptions,
                               quiet: Bool) throws {
        let endpoint = WireGuardKeyFile.endpoint(for: capture.address)
        // `devproxy wireguard` writes this machine's first private address and port 51820 unless
        // told: the command shown names this listener's endpoint when that is another.
        let usual = (try? Resolver.resolve(host: "0.0.0.0", port: ListenerMode.wireGuardPort, passive: true).first)
            .flatMap { $0 }.map(WireGuardKeyFile.endpoint(for:))
        // And the data directory, when it is not the one `devproxy wireguard` finds alone (`--ca-dir`):
        // there it would make other keys, which this listener refuses.
        let directory = String(keys.path.dropLast(WireGuardKeyFile.fileName.count + 1))
        let told = (directory == CAStore.resolveDirectory(flag: nil) ? "" : " --ca-dir " + ShellSyntax.sh.word(directory))
            + (usual == endpoint ? "" : " --endpoint " + ShellSyntax.sh.word(endpoint))
        guard let first = keys.firstDevice else {
            Output.line("wireguard: no device may connect: every one in \(keys.path) was removed; `devproxy wireguard "
                        + "--peer \(keys.peers.count + 1)\(told)` adds one (accepted at once), endpoint \(endpoint)")
            return
        }
        let peers = keys.deviceCount == 1 ? "1 device" : "\(keys.deviceCount) devices"
        Output.line("wireguard: \(peers) may connect (keys in \(keys.path)); `devproxy wireguard\(told)` prints a "
                    + "device's config and QR code for the WireGuard app, endpoint \(endpoint)")
        guard !capture.address.isLoopback else {
            Output.line("wireguard: on loopback, this machine only (an Android emulator reaches it as 10.0.2.2:"
                        + "\(capture.address.port): `devproxy wireguard --endpoint 10.0.2.2:\(capture.address.port)`); "
                        + "for a phone run with --mode wireguard@0.0.0.0:\(capture.address.port) --allow-remote")
            return
        }
        guard try options.flag("qr") || (!quiet && isatty(STDOUT_FILENO) == 1),
              let config = keys.clientConfig(peer: first, endpoint: endpoint),
              let code = try? QRCode(encoding: config) else { return }
        Output.raw(String(code.terminalText().dropLast()))
    }
}

enum WireGuardSetup {
    /// The hidden subcommand that runs inside the namespace.
    static let insideCommand = "__wireguard-namespace"

    #if os(Linux)
    /// The capture for `mode`, its keys read (or made) in `directory`; the namespace's helper stays
    /// until this process exits.
    static func capture(_ mode: ListenerMode, directory: String, allowRemote: Bool) throws
        -> (WireGuardCapture, WireGuardKeyFile) {
        // Said before the namespace is made (as every listener's bind is refused before it is made).
        let host = mode.host ?? "127.0.0.1"
        if !allowRemote, let address = try? Resolver.resolve(host: host, port: 0, passive: true).first, !address.isLoopback {
            throw CommandFailure("refusing to listen on \(URIHost.authority(host: host, port: mode.port ?? 0)) (wireguard): "
                                 + "a device there would send the proxy all its traffic; pass --allow-remote to do it anyway")
        }
        let keys: WireGuardKeyFile
        do {
            keys = try WireGuardKeyFile.load(directory: directory)
        } catch let error as ConfigurationError {
            throw CommandFailure("--mode wireguard: \(error.description)")
        }
        let namespace = try makeNamespace()
        do {
            let capture = try WireGuardCapture(host: mode.host ?? "127.0.0.1", port: mode.port ?? ListenerMode.wireGuardPort,
                                               privateKey: keys.server, peers: keys.capturePeers, namespace: namespace,
                                               namesFile: directory + "/wireguard-names.txt", keysPath: keys.path)
            return (capture, keys)
        } catch let error as NetworkError {
            throw CommandFailure("--mode wireguard: \(error.message)")
        }
    }

    /// Spawns the helper and takes its descriptors (TUN, listener, DNS, DNS over TCP).
    private static func makeNamespace() throws -> WireGuardCapture.Namespace {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw CommandFailure("--mode wireguard: socketpair: \(String(cString: strerror(errno)))")
        }
        // As root the network namespace alone; otherwise a user namespace too, in which this user
        // is root and may make the namespace's TUN device and rules (as `devproxy exec --transparent`).
        let unshare = geteuid() == 0 ? ["unshare", "--net", "--"] : ["unshare", "--user", "--map-root-user", "--net", "--"]
        let argv = unshare + [try ExecCommand.ownExecutable(), insideCommand]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 3)
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, argv[0], &actions, nil, arguments, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw CommandFailure(spawned == ENOENT ? "--mode wireguard needs unshare (util-linux) on PATH"
                                 : "--mode wireguard: cannot run unshare: \(String(cString: strerror(spawned)))")
        }
        // The helper's end stays open in it; ours stays open in this process until it exits.
        var poller = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        var fds = [Int32](repeating: -1, count: 4)
        var received: Int32 = 0
        var said = [UInt8](repeating: 0, count: 1024)
        let count = poll(&poller, 1, 20_000) > 0
            ? CSystem_receiveDescriptors(ends[0], &fds, 4, &received, &said, UInt(said.count)) : -1
        let text = count > 0 ? String(decoding: said[0..<count], as: UTF8.self) : ""
        guard text == "ok", received == 4 else {
            for fd in fds.prefix(Int(received)) { close(fd) }
            close(ends[0])
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            let reason = text.hasPrefix("error: ") ? String(text.dropFirst(7)) : "its helper gave no answer"
            throw CommandFailure("--mode wireguard could not make its network namespace: \(reason); it needs Linux, "
                                 + "/dev/net/tun, ip and iptables (iproute2, iptables), and root or unprivileged user "
                                 + "namespaces (sysctl kernel.unprivileged_userns_clone=1)")
        }
        return WireGuardCapture.Namespace(tun: fds[0], listener: fds[1], dns: fds[2], dnsStream: fds[3])
    }

    /// Inside the namespace, as its root: the TUN device with DevProxy's tunnel address, a TCP
    /// listener and DNS sockets (UDP and TCP) on every address, every TCP connection and DNS query
    /// from the tunnel redirected to them and other UDP (QUIC) refused; the four descriptors sent
    /// on descriptor 3 with `ok`, or `error: …`. Then waits for devproxy to go (the socket's end).
    static func runInside() -> Int32 {
        let channel: Int32 = 3
        func answer(_ text: String, _ fds: [Int32] = []) {
            var bytes = Array(text.utf8)
            _ = CSystem_sendDescriptors(channel, fds, Int32(fds.count), &bytes, UInt(bytes.count))
        }
        let interface = WireGuardCapture.interface
        let environment = ProcessInfo.processInfo.environment
        do {
            try NamespaceCapture.configureNetwork([["ip", "link", "set", "lo", "up"]], environment: environment)
            let tun = CSystem_openTUN(interface)
            guard tun >= 0 else {
                let denied = errno == EACCES || errno == EPERM
                answer("error: cannot make a TUN device (/dev/net/tun): \(String(cString: strerror(errno)))"
                       + (denied ? " (this user may not open /dev/net/tun: run as root, or give it mode 0666 as most "
                          + "distributions do)" : ""))
                return 1
            }
            let serverAddress = NamespaceCapture.dotted(WireGuardCapture.serverAddress)
            let address = serverAddress + "/\(WireGuardCapture.prefixLength)"
            try NamespaceCapture.configureNetwork([
                ["ip", "addr", "add", address, "dev", interface],
                ["ip", "link", "set", interface, "mtu", String(WireGuardCapture.mtu), "up"],
            ], environment: environment)
            let listener = try NamespaceCapture.bound(0, stream: true, what: "the namespace's listener")
            let dns = try NamespaceCapture.bound(0, stream: false, what: "the namespace's DNS socket")
            let dnsStream = try NamespaceCapture.bound(0, stream: true, what: "the namespace's DNS-over-TCP listener")
            // REDIRECT sends each to the tunnel address (the interface's), where both sockets listen.
            try NamespaceCapture.configureNetwork([
                ["iptables", "-t", "nat", "-A", "PREROUTING", "-i", interface, "-p", "udp", "--dport", "53",
                 "-j", "REDIRECT", "--to-ports", String(dns.port)],
                // DNS over TCP (a resolver's retry after a truncated answer; `dig +tcp`; glibc's
                // `options use-vc`), to any server, the tunnel's own address too: the same answers.
                ["iptables", "-t", "nat", "-A", "PREROUTING", "-i", interface, "-p", "tcp", "--dport", "53",
                 "-j", "REDIRECT", "--to-ports", String(dnsStream.port)],
                // TCP to DevProxy's own tunnel address (the device's DNS server) goes nowhere: the
                // namespace answers it with a reset, so Android's DNS-over-TLS probe of its DNS
                // server (port 853, "Private DNS: Automatic") fails at once and falls back to UDP,
                // instead of a failed flow to 10.0.0.1:853 each time the tunnel comes up.
                ["iptables", "-t", "nat", "-A", "PREROUTING", "-i", interface, "-d", serverAddress, "-p", "tcp",
                 "-j", "RETURN"],
                ["iptables", "-t", "nat", "-A", "PREROUTING", "-i", interface, "-p", "tcp",
                 "-j", "REDIRECT", "--to-ports", String(listener.port)],
                // QUIC and any other UDP: to a port nothing listens on, which answers ICMP port
                // unreachable, on which apps fall back to TCP at once.
                ["iptables", "-t", "nat", "-A", "PREROUTING", "-i", interface, "-p", "udp",
                 "-j", "REDIRECT", "--to-ports", "9"],
            ], environment: environment)
            // Whatever else comes in (ICMP echo to any address but the tunnel's own, which the
            // namespace answers; any IPv6, which goes no further) is refused at once rather than
            // dropped: routed back out to the device, through a FORWARD chain that rejects it
            // (IPv4: ICMP "administratively prohibited", so ping says "Packet filtered"; IPv6 TCP:
            // a reset, so a client trying an IPv6 address falls back to IPv4 without waiting; other
            // IPv6: ICMPv6 "administratively prohibited"). No packet is forwarded anywhere.
            try NamespaceCapture.configureNetwork([
                ["ip", "route", "add", "default", "dev", interface],
                ["iptables", "-P", "FORWARD", "DROP"],
                ["iptables", "-A", "FORWARD", "-i", interface, "-j", "REJECT", "--reject-with", "icmp-admin-prohibited"],
            ], environment: environment)
            // No ICMP redirect first (a packet routed back out where it came from would get one, and
            // the per-host ICMP rate limit would then swallow the refusal). A switch not written
            // leaves those packets dropped, as without the rules.
            for name in ["all", interface] {
                try? NamespaceCapture.setSwitch("/proc/sys/net/ipv4/conf/\(name)/send_redirects", to: "0")
            }
            try? NamespaceCapture.setSwitch("/proc/sys/net/ipv4/ip_forward", to: "1")
            // IPv6 when the kernel has it (best effort: without it, IPv6 from a device is dropped as before).
            if (try? NamespaceCapture.configureNetwork([
                ["ip", "-6", "route", "add", "default", "dev", interface],
                ["ip6tables", "-P", "FORWARD", "DROP"],
                ["ip6tables", "-A", "FORWARD", "-i", interface, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
                ["ip6tables", "-A", "FORWARD", "-i", interface, "-j", "REJECT", "--reject-with", "icmp6-adm-prohibited"],
            ], environment: environment)) != nil {
                try? NamespaceCapture.setSwitch("/proc/sys/net/ipv6/conf/all/forwarding", to: "1")
            }
            answer("ok", [tun, listener.fd, dns.fd, dnsStream.fd])
            close(tun)
            close(listener.fd)
            close(dns.fd)
            close(dnsStream.fd)
        } catch let error as NetworkError {
            answer("error: \(error.message)")
            return 1
        } catch {
            answer("error: \(error)")
            return 1
        }
        var byte: UInt8 = 0
        while true {
            let count = read(channel, &byte, 1)
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            return 0
        }
    }

    #endif
}
