import CTLS
import CertAuthority
import DevProxy
import Foundation

// Before anything else touches OpenSSL: no cleanup of its global state at exit. The process ends
// with exit() while connection threads may still be freeing what they used (a thread ending
// releases the last reference to the server, its leaf cache, the signer's certificates); with the
// atexit cleanup, those frees met freed locks, and `run --log /dev/full` died of a segmentation
// fault instead of exiting 1 (CI, RunCommandTests). The process's memory goes with it anyway.
CTLS_init_without_atexit()
// OpenSSL writes to sockets with write(); a peer that has gone must not kill the process.
signal(SIGPIPE, SIG_IGN)
#if os(Linux)
HeapTuning.apply()
#endif
setvbuf(CTLS_stdout(), nil, _IOLBF, 0)

/// Exit codes: 0 success; 1 the command failed (`error: …` says why), or `ca trace` found
/// nothing; 2 the command was called wrongly.
let usage = """
DevProxy: an intercepting HTTPS debugging proxy with a team CA.

  devproxy                                    run the proxy on 127.0.0.1:8080 (creates a local CA on first run)
  devproxy run --listen 127.0.0.1:8080 --log flows.jsonl --har session.har
  devproxy ca init --name "Acme Dev Root"     security lead: create the team root
  devproxy ca issue --email ana@acme.dev      security lead: a 7-day intermediate for one engineer
  devproxy ca list | revoke | trace | export  see `devproxy ca --help`
  devproxy trust install                      trust the root here: system store (sudo), Chromium/Firefox, Java
  eval "$(devproxy env)"                      this shell's curl, Python, git, Go, Node, Java… through the proxy
  devproxy exec -- curl https://example.com/  one command through the proxy, trusting the root
  devproxy exec --transparent -- node app.js  every TCP connection of one command, proxy settings or not (Linux)
  devproxy browser https://app.acme.dev/      a fresh Chrome/Chromium/Edge through the proxy, trusting the root
  devproxy transparent-rules --port 8090      the iptables/nft commands that send traffic to --mode transparent
  devproxy run --mode wireguard@0.0.0.0:51820 --allow-remote     a phone's every connection, via its WireGuard app (Linux)
  devproxy wireguard                          that device's WireGuard config and QR code
  devproxy pins ca/root.pem                   the SPKI pin apps put in TrustKit / Android / OkHttp
  devproxy pins snippet --domain api.example.com --format trustkit-plist --backup next.key
  devproxy policy check Info.plist            validate and lint a pinning policy, predict decisions
  devproxy pin-check https://api.example.com/ --policy Info.plist     evaluate a live chain as the app would
  devproxy qa init | qa verdict --log flows.jsonl                     QA: enforce or report-only, per host
  devproxy reports                            pin-failure reports the proxy captured
  devproxy har flows.jsonl -o session.har     convert a flow log to HAR 1.2
  devproxy sessions                           saved session stores with flow counts and sizes
  devproxy web session.sqlite                 a saved session, flows.jsonl or HAR file in the web UI
  devproxy benchmark leaves                   how fast leaves are minted, per key type
  devproxy --version                          DevProxy's version and its libraries' (for bug reports)

Run `devproxy COMMAND --help` for more. Exit codes: 0 success, 1 failure (`error: …` says why), 2 usage.
"""

/// A command's arguments, or just `--help` when `--help` or `-h` is anywhere among them
/// (`devproxy ca issue --help`, `devproxy run --listen 127.0.0.1:0 --help`), after the
/// subcommand when the command has its own usage for it (`pins snippet`): the parsers would
/// otherwise refuse a `--help` that is not first as an unknown option.
func helpAsked(_ arguments: ArraySlice<String>, subcommands: Set<String> = []) -> ArraySlice<String> {
    guard arguments.contains(where: { $0 == "--help" || $0 == "-h" }) else { return arguments }
    if let first = arguments.first, subcommands.contains(first) { return [first, "--help"] }
    return ["--help"]
}

func main() -> Int32 {
    let arguments = CommandLine.arguments.dropFirst()
    do {
        switch arguments.first {
        case nil: return try RunCommand.run([])
        case "run": return try RunCommand.run(helpAsked(arguments.dropFirst()))
        case "ca": return try CACommand.run(helpAsked(arguments.dropFirst(), subcommands: Set(CACommand.subcommandUsage.keys)))
        case "pins": return try PinsCommand.run(helpAsked(arguments.dropFirst(), subcommands: ["snippet", "publish", "verify"]))
        case "benchmark": return try BenchmarkCommand.run(helpAsked(arguments.dropFirst()))
        case "har": return try HARCommand.run(helpAsked(arguments.dropFirst()))
        case "policy": return try PolicyCommand.run(helpAsked(arguments.dropFirst()))
        case "pin-check": return try PinCheckCommand.run(helpAsked(arguments.dropFirst()))
        case "reports": return try ReportsCommand.run(helpAsked(arguments.dropFirst()))
        case "sessions": return try SessionsCommand.run(helpAsked(arguments.dropFirst()))
        case "web": return try WebCommand.run(helpAsked(arguments.dropFirst()))
        case "qa": return try QACommand.run(helpAsked(arguments.dropFirst(), subcommands: Set(QACommand.subcommandUsage.keys)))
        case "env": return try EnvCommand.run(helpAsked(arguments.dropFirst()))
        // Not helpAsked: `devproxy exec -- curl --help` is curl's help.
        case "exec": return try ExecCommand.run(arguments.dropFirst())
        case "browser": return try BrowserCommand.run(arguments.dropFirst())
        case ExecCommand.insideCommand: return try ExecCommand.runInside(arguments.dropFirst())
        #if os(Linux)
        case WireGuardSetup.insideCommand: return WireGuardSetup.runInside()
        #endif
        case "trust": return try TrustCommand.run(helpAsked(arguments.dropFirst(), subcommands: Set(TrustCommand.subcommandUsage.keys)))
        case "transparent-rules": return try TransparentRulesCommand.run(helpAsked(arguments.dropFirst()))
        case "wireguard": return try WireGuardCommand.run(arguments.dropFirst())
        case "--help", "-h", "help":
            Output.line(usage)
            return 0
        case "--version", "version":
            Output.line(VersionCommand.text())
            return 0
        case let other? where other.hasPrefix("-"):
            return try RunCommand.run(helpAsked(arguments))
        case let other?:
            throw UsageError("unknown command `\(other)`; run `devproxy --help`")
        }
    } catch let error as UsageError {
        Output.error(error.message)
        return 2
    } catch let error as CommandFailure {
        Output.error(error.message)
        return error.exitCode
    } catch let error as CAError {
        Output.error(error.reason)
        return 1
    } catch {
        Output.error("\(error)")
        return 1
    }
}

exit(main())
