import Foundation

/// `devproxy transparent-rules`: prints the iptables and nft commands that send TCP 80 and 443
/// to a `--mode transparent` listener, for the two common set-ups, and the commands that undo
/// them. It changes nothing itself: the commands need root and are the user's to run.
///
/// - This machine's own apps: a nat OUTPUT rule redirects their connections, except those of
///   the user DevProxy runs as (`-m owner ! --uid-owner`, nft `meta skuid !=`), so DevProxy's
///   own upstream connections go out (iptables-extensions(8) "owner"; nft(8) "meta skuid").
/// - A phone or VM routed through this machine: a nat PREROUTING rule on the interface it comes
///   in on (`-i IF`, nft `iifname`), with forwarding on (REDIRECT sends the connection to the
///   address of that interface, so DevProxy listens there).
///
/// QUIC (HTTP/3, UDP 443) cannot be redirected to a TCP listener, and an app that reaches its
/// origin over it is gone from the capture; so the same traffic's UDP 443 is refused (filter
/// OUTPUT or FORWARD, REJECT: an ICMP port unreachable, on which Chromium, Cronet and URLSession
/// fall back to TCP at once), unless `--allow-quic`.
enum TransparentRulesCommand {
    static let usage = """
    Print the iptables / nft commands that send connections to a transparent listener.

      devproxy transparent-rules --port 8090 --uid-exclude 1001       this machine's apps (DevProxy runs as uid 1001)
      devproxy transparent-rules --port 8090 --interface usb0         a phone or VM routed through usb0
      devproxy transparent-rules --port 8090 --uid-exclude 1001 --undo   the commands that remove them

    TCP 80 and 443 are redirected; UDP 443 (QUIC, HTTP/3) is refused so apps fall back to TCP.

    Options: --port P (default 8080)  --uid-exclude UID (default: the invoking user, $SUDO_UID under sudo)
             --interface IF  --ipv6 (ip6tables / nft ip6 rules too)  --undo
             --allow-quic (leave UDP 443 alone: QUIC traffic then goes around DevProxy)
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(raw, valued: ["port", "uid-exclude", "interface"],
                                      booleans: ["ipv6", "undo", "allow-quic"])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument `\(arguments.positionals[0])`; "
                             + "see `devproxy transparent-rules --help`")
        }
        let portText = arguments.value("port") ?? "8080"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw UsageError("--port \(portText) is not a port from 1 to 65535")
        }
        let interface = try arguments.value("interface").map { name in
            guard Self.isSafeName(name, extra: ".-_@", maxLength: 15) else {
                throw UsageError("--interface \(name) is not an interface name (letters, digits, . - _ @; at most 15)")
            }
            return name
        }
        let uid = try arguments.value("uid-exclude").map { value in
            guard Self.isSafeName(value, extra: "-_", maxLength: 32) else {
                throw UsageError("--uid-exclude \(value) is not a user id or user name")
            }
            return value
        }
        let rules = Rules(port: port, uid: uid ?? Self.invokingUser(), interface: interface,
                          ipv6: arguments.flag("ipv6"), uidGiven: uid != nil, blockQUIC: !arguments.flag("allow-quic"))
        Output.line(arguments.flag("undo") ? rules.undo() : rules.install(undoHint: Self.undoHint(raw)))
        return 0
    }

    /// The user whose traffic is left alone by default: `$SUDO_UID` under sudo, else this process's.
    static func invokingUser() -> String {
        if let sudo = ProcessInfo.processInfo.environment["SUDO_UID"], Int(sudo) != nil { return sudo }
        return String(getuid())
    }

    static func isSafeName(_ text: String, extra: String, maxLength: Int) -> Bool {
        !text.isEmpty && text.count <= maxLength && text.unicodeScalars.allSatisfy {
            ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || extra.unicodeScalars.contains($0)
        }
    }

    private static func undoHint(_ raw: ArraySlice<String>) -> String {
        "devproxy transparent-rules " + (Array(raw) + ["--undo"]).joined(separator: " ")
    }

    /// The commands, as text to print.
    struct Rules {
        let port: Int
        let uid: String
        let interface: String?
        let ipv6: Bool
        let uidGiven: Bool
        /// Refuse the same traffic's UDP 443 (QUIC), which cannot be redirected.
        var blockQUIC = true

        private var families: [(iptables: String, nft: String, loopback: String, sysctl: String)] {
            [("iptables", "ip", "127.0.0.1", "net.ipv4.ip_forward")]
                + (ipv6 ? [("ip6tables", "ip6", "[::1]", "net.ipv6.conf.all.forwarding")] : [])
        }

        /// One iptables rule, `-A` to add or `-D` to delete.
        private func iptablesRule(_ command: String, _ action: String) -> String {
            if let interface {
                return "sudo \(command) -t nat \(action) PREROUTING -i \(interface) -p tcp "
                    + "-m multiport --dports 80,443 -j REDIRECT --to-ports \(port)"
            }
            return "sudo \(command) -t nat \(action) OUTPUT -p tcp -m multiport --dports 80,443 "
                + "-m owner ! --uid-owner \(uid) -j REDIRECT --to-ports \(port)"
        }

        /// The iptables rule refusing QUIC, `-A` to add or `-D` to delete.
        private func quicRule(_ command: String, _ action: String) -> String {
            if let interface {
                return "sudo \(command) \(action) FORWARD -i \(interface) -p udp --dport 443 -j REJECT"
            }
            return "sudo \(command) \(action) OUTPUT -p udp --dport 443 -m owner ! --uid-owner \(uid) -j REJECT"
        }

        func install(undoHint: String) -> String {
            var lines: [String] = []
            if let interface {
                lines.append("# A phone or VM routed through this machine via \(interface): its TCP 80 and 443 go to "
                             + "DevProxy on port \(port).")
                lines.append("# REDIRECT sends them to \(interface)'s own address, so DevProxy listens there "
                             + "(or on all addresses):")
                lines.append("#   devproxy run --mode transparent@0.0.0.0:\(port) --allow-remote"
                             + (ipv6 ? " --mode transparent@[::]:\(port)" : ""))
                lines.append("# Point the device's gateway at this machine's address on \(interface).")
            } else {
                lines.append("# This machine's own apps: their TCP 80 and 443 go to DevProxy on port \(port), "
                             + "except the traffic of")
                let you = uidGiven ? "" : " (you; --uid-exclude UID for another)"
                lines.append("# user \(uid)\(you), which must be the user DevProxy runs as, so its own upstream "
                             + "connections go out.")
                lines.append("# Run the apps as another user. Start DevProxy as user \(uid):")
                lines.append("#   devproxy run --mode transparent@127.0.0.1:\(port)"
                             + (ipv6 ? " --mode transparent@[::1]:\(port)" : ""))
            }
            if blockQUIC {
                lines.append("# UDP 443 (QUIC, HTTP/3) cannot be redirected to DevProxy: it is refused, so apps fall "
                             + "back to TCP (--allow-quic leaves it alone).")
            }
            if !ipv6 {
                lines.append("# IPv4 only: a connection to an origin's IPv6 address is not redirected and goes around "
                             + "DevProxy (--ipv6 adds the ip6tables / nft ip6 rules).")
            }
            for family in families {
                lines.append("# with \(family.iptables):")
                if interface != nil { lines.append("sudo sysctl -w \(family.sysctl)=1") }
                lines.append(iptablesRule(family.iptables, "-A"))
                if blockQUIC { lines.append(quicRule(family.iptables, "-A")) }
            }
            for family in families {
                lines.append("# or with nft:")
                if interface != nil { lines.append("sudo sysctl -w \(family.sysctl)=1") }
                lines.append(contentsOf: nftRules(family.nft))
            }
            lines.append("# Undo: \(undoHint)")
            return lines.joined(separator: "\n")
        }

        private func nftRules(_ family: String) -> [String] {
            let (hook, match) = interface.map { ("prerouting", "iifname \"\($0)\"") }
                ?? ("output", "meta skuid != \(uid)")
            var rules = [
                "sudo nft add table \(family) devproxy",
                "sudo nft 'add chain \(family) devproxy \(hook) { type nat hook \(hook) priority -100; }'",
                "sudo nft 'add rule \(family) devproxy \(hook) \(match) tcp dport { 80, 443 } redirect to :\(port)'",
            ]
            if blockQUIC {
                let filterHook = interface == nil ? "output" : "forward"
                rules += [
                    "sudo nft 'add chain \(family) devproxy quic { type filter hook \(filterHook) priority 0; }'",
                    "sudo nft 'add rule \(family) devproxy quic \(match) udp dport 443 reject'",
                ]
            }
            return rules
        }

        func undo() -> String {
            var lines: [String] = []
            for family in families {
                lines.append("# if you added the \(family.iptables) rule\(blockQUIC ? "s" : ""):")
                lines.append(iptablesRule(family.iptables, "-D"))
                if blockQUIC { lines.append(quicRule(family.iptables, "-D")) }
            }
            for family in families {
                lines.append("# if you added the nft rules:")
                lines.append("sudo nft delete table \(family.nft) devproxy")
            }
            if interface != nil {
                lines.append("# and, if forwarding was off before:")
                lines.append(contentsOf: families.map { "sudo sysctl -w \($0.sysctl)=0" })
            }
            return lines.joined(separator: "\n")
        }
    }
}
