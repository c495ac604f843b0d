@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `--mode` specs and `devproxy transparent-rules`' commands, exactly as printed.
@Suite struct ModeParsingTests {
    @Test func modeSpecsParseWithURLsAndAddresses() throws {
        let reverse = try ListenerMode(parsing: "reverse:https://api.example.com@127.0.0.1:8443")
        #expect(reverse.kind == .reverse)
        #expect(reverse.url == ModeURL(tls: true, host: "api.example.com", port: 443))
        #expect(reverse.host == "127.0.0.1" && reverse.port == 8443)
        #expect(reverse.name == "reverse:https://api.example.com")
        let upstream = try ListenerMode(parsing: "upstream:http://[::1]:3128")
        #expect(upstream.url == ModeURL(tls: false, host: "::1", port: 3128))
        #expect(upstream.host == nil)
        let transparent = try ListenerMode(parsing: "transparent@[::1]:8090")
        #expect(transparent.kind == .transparent && transparent.host == "::1" && transparent.port == 8090)
    }

    /// mitmproxy's `@PORT` (`socks5@1080`, `reverse:http://example.com@8081`) listens on loopback,
    /// as `--listen`'s default does; it stopped the start with "1080 is not HOST:PORT".
    @Test func aPortAloneListensOnLoopback() throws {
        let socks = try ListenerMode(parsing: "socks5@1080")
        #expect(socks.kind == .socks5 && socks.host == "127.0.0.1" && socks.port == 1080)
        let reverse = try ListenerMode(parsing: "reverse:http://example.com@8081")
        #expect(reverse.url == ModeURL(tls: false, host: "example.com", port: 80))
        #expect(reverse.host == "127.0.0.1" && reverse.port == 8081)
        #expect(throws: ConfigurationError.self) { try ListenerMode(parsing: "socks5@70000") }
    }

    /// mitmproxy's `local` mode is answered with what does it here, not only the list of modes:
    /// `devproxy exec --transparent` for a command (it said there was no counterpart, where the
    /// README calls that command mitmproxy's `local` mode), and --mode transparent for the rest.
    @Test(arguments: ["local", "local:curl"])
    func mitmproxysCaptureModesNameTheOneToUse(_ spec: String) {
        #expect {
            try ListenerMode(parsing: spec)
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.contains("mitmproxy's") && text.contains("`devproxy exec --transparent -- COMMAND`")
                && !text.contains("no counterpart") && text.contains("--mode transparent") && text.contains("transparent-rules")
        }
    }

    /// `wireguard` has its own address, never `--listen`'s: UDP 51820 on loopback unless given.
    @Test func wireguardListensOnItsOwnPort() throws {
        let plain = try ListenerMode(parsing: "wireguard")
        #expect(plain.kind == .wireguard && plain.host == "127.0.0.1" && plain.port == 51820)
        let given = try ListenerMode(parsing: "wireguard@0.0.0.0:0")
        #expect(given.host == "0.0.0.0" && given.port == 0 && given.description == "wireguard@0.0.0.0:0")
        #expect(try ListenerMode(parsing: "wireguard@51821").port == 51821)
        #expect(throws: ConfigurationError.self) { try ListenerMode(parsing: "wireguard:http://x") }
    }

    @Test(arguments: ["reverse", "reverse:ftp://x", "upstream:http://user:pw@proxy:3128", "reverse:http://x/path",
                      "transparent:http://x", "bogus", "reverse:http://:80", "socks5@host"])
    func badModeSpecsAreRefusedWithAReason(_ spec: String) {
        #expect(throws: ConfigurationError.self) { try ListenerMode(parsing: spec) }
    }

    /// A host that is no host went on (`http://[::1` as `[:` port 1, `https://a b` as `a b`) and
    /// failed only at the first connection; an IPv6 literal needs its brackets.
    @Test(arguments: ["reverse:http://[::1", "reverse:https://a b", "upstream:http://::1", "reverse:https://*.x.com",
                      "reverse:http://[1.2.3.4]", "upstream:http://[::1]x"])
    func aURLWhoseHostIsNoHostIsRefused(_ spec: String) {
        #expect {
            try ListenerMode(parsing: spec)
        } throws: { error in
            (error as? ConfigurationError)?.description.contains("does not name a host") == true
                || (error as? ConfigurationError)?.description.contains("is not a URL") == true
        }
    }

    @Test func hostsThatAreHostsStillParse() throws {
        for (spec, host) in [("reverse:http://[::1]:8080", "::1"), ("upstream:http://proxy.corp:3128", "proxy.corp"),
                             ("reverse:https://127.0.0.1", "127.0.0.1"), ("reverse:https://API.Example.com", "API.Example.com")] {
            #expect(try ListenerMode(parsing: spec).url?.host == host, "\(spec)")
        }
    }

    @Test func anHTTPSUpstreamProxyIsRefused() throws {
        #expect(throws: ConfigurationError.self) { try UpstreamProxy(url: ModeURL(tls: true, host: "p", port: 443)) }
        // A SOCKS5 one is told what is taken, not "http:// or https://" (https:// is refused next).
        let socks = try Subprocess.run(Subprocess.devproxy, ["run", "--upstream-proxy", "socks5://127.0.0.1:1080"])
        #expect(socks.status != 0)
        #expect(socks.stderr.contains("is not an http:// URL (upstream proxies are spoken to over HTTP; SOCKS5 and https:// "
                                      + "ones are not supported)"), "\(socks.stderr)")
    }

    @Test func transparentRulesPrintsTheCommandsAndTheirUndo() throws {
        let local = try Subprocess.run(Subprocess.devproxy, ["transparent-rules", "--port", "8090", "--uid-exclude",
                                                             "998"])
        #expect(local.status == 0)
        let lines = local.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("sudo iptables -t nat -A OUTPUT -p tcp -m multiport --dports 80,443 "
                               + "-m owner ! --uid-owner 998 -j REDIRECT --to-ports 8090"))
        #expect(lines.contains("sudo nft 'add rule ip devproxy output meta skuid != 998 tcp dport { 80, 443 } "
                               + "redirect to :8090'"))
        let undo = try Subprocess.run(Subprocess.devproxy, ["transparent-rules", "--port", "8090", "--uid-exclude",
                                                            "998", "--undo"])
        #expect(undo.stdout.contains("sudo iptables -t nat -D OUTPUT -p tcp -m multiport --dports 80,443 "
                                     + "-m owner ! --uid-owner 998 -j REDIRECT --to-ports 8090"))
        #expect(undo.stdout.contains("sudo nft delete table ip devproxy"))
        // QUIC (UDP 443) is refused for the same traffic, undone with it; --allow-quic leaves it alone.
        #expect(lines.contains("sudo iptables -A OUTPUT -p udp --dport 443 -m owner ! --uid-owner 998 -j REJECT"))
        #expect(lines.contains("sudo nft 'add rule ip devproxy quic meta skuid != 998 udp dport 443 reject'"))
        #expect(undo.stdout.contains("sudo iptables -D OUTPUT -p udp --dport 443 -m owner ! --uid-owner 998 -j REJECT"))
        let quic = try Subprocess.run(Subprocess.devproxy, ["transparent-rules", "--port", "8090", "--uid-exclude",
                                                            "998", "--allow-quic"])
        #expect(quic.status == 0 && !quic.stdout.contains("udp"), "\(quic.output)")
        let routed = try Subprocess.run(Subprocess.devproxy, ["transparent-rules", "--port", "8090", "--interface",
                                                              "usb0", "--ipv6"])
        #expect(routed.stdout.contains("sudo iptables -t nat -A PREROUTING -i usb0 -p tcp -m multiport --dports 80,443 "
                                       + "-j REDIRECT --to-ports 8090"))
        #expect(routed.stdout.contains("sudo ip6tables -t nat -A PREROUTING -i usb0"))
        #expect(routed.stdout.contains("sudo sysctl -w net.ipv4.ip_forward=1"))
        #expect(routed.stdout.contains("sudo ip6tables -A FORWARD -i usb0 -p udp --dport 443 -j REJECT"))
        #expect(routed.stdout.contains("sudo nft 'add chain ip6 devproxy quic { type filter hook forward priority 0; }'"))
        // Without --ipv6 an app that reaches its origin over IPv6 goes around DevProxy: said, not left to be found.
        #expect(lines.contains("# IPv4 only: a connection to an origin's IPv6 address is not redirected and goes around "
                               + "DevProxy (--ipv6 adds the ip6tables / nft ip6 rules)."), "\(local.stdout)")
        #expect(!routed.stdout.contains("IPv4 only"))
        let hostile = try Subprocess.run(Subprocess.devproxy, ["transparent-rules", "--interface", "eth0;reboot"])
        #expect(hostile.status == 2)
        #expect(hostile.stderr.contains("--interface"))
    }
}
