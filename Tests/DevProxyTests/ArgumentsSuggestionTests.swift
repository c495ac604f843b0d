import Foundation
import Testing
import TestSupport

/// An option a command does not know is refused (exit 2) with what to write instead: DevProxy's
/// spelling of mitmproxy's option, or the option a typo meant. `devproxy run -p 8090` said
/// `error: unknown option -p` and nothing more, as did `--listen-port`, `--ssl-insecure` and
/// `devproxy web FILE --listen ADDRESS`.
@Suite struct ArgumentsSuggestionTests {
    static let together = "DevProxy takes the address and the port together"
    static let insecure = "to skip verifying origins' certificates, --insecure-upstream (each flow then records it)"

    @Test(arguments: [
        (["run", "-p", "8090"], "unknown option -p; \(together): --listen 127.0.0.1:8090"),
        (["run", "--listen-port=9000"], "unknown option --listen-port=9000; \(together): --listen 127.0.0.1:9000"),
        (["run", "--listen-host", "::1"], "unknown option --listen-host; \(together): --listen [::1]:8080"),
        (["run", "--ssl-insecure"], "unknown option --ssl-insecure; \(insecure)"),
        (["run", "-k"], "unknown option -k; \(insecure)"),
        (["run", "-q"], "unknown option -q; DevProxy spells it --quiet"),
        (["run", "--ignore-hosts", "apple"], "unknown option --ignore-hosts; hosts are tunnelled undecrypted with "
            + "--passthrough GLOB ('*.apple.com': a glob, not a regex), repeatable"),
        (["run", "--upstream-cas", "a.pem"], "unknown option --upstream-cas; did you mean --upstream-ca?"),
        (["run", "--quiet=yes"], "--quiet=yes: --quiet takes no value"),
        (["run", "--bogus"], "unknown option --bogus; --help lists the options"),
        // mkcert's spelling reaches `run`, the command of `devproxy -OPTION`.
        (["-install"], "unknown option -install; mkcert's -install and -uninstall are `devproxy trust install` and "
            + "`devproxy trust uninstall` here"),
        // The same word means another option where the command has no --listen.
        (["web", "flows.jsonl", "--listen", "127.0.0.1:0"],
         "unknown option --listen; the web UI's address is --web 127.0.0.1:0"),
        (["env", "-p", "9090"], "unknown option -p; the proxy to go through is --proxy 127.0.0.1:9090"),
        // No hint that names an option the command does not take: `har` has no --quiet.
        (["har", "flows.jsonl", "-q"], "unknown option -q; --help lists the options"),
    ])
    func anUnknownOptionSaysWhatToWriteInstead(_ arguments: [String], _ expected: String) throws {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run(Subprocess.devproxy, arguments + ["--ca-dir", dir.file("ca")], timeout: 20)
        #expect(result.status == 2, "\(arguments): \(result.output)")
        #expect(result.stderr == "error: \(expected)\n", "\(arguments): \(result.output)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("ca")), "nothing was started or created")
    }

    /// `--listen` and `--web` say what is wrong with the address and what to write: a port alone
    /// (as mitmproxy's `-p` takes it) said `8080 is not HOST:PORT`, naming neither the option nor
    /// the fix, and a port out of range the same.
    static let otherMachines = "with --allow-remote to be reached from other machines"

    @Test(arguments: [
        (["run", "--listen", "8080"], "--listen 8080 has no address: write 127.0.0.1:8080 (0.0.0.0:8080 \(otherMachines))"),
        (["run", "--listen", "localhost"],
         "--listen localhost is not HOST:PORT (such as 127.0.0.1:8080; port 0 picks a free one)"),
        (["run", "--listen", "127.0.0.1:99999"],
         "--listen 127.0.0.1:99999: the port must be a number from 0 to 65535 (0 picks a free one)"),
        (["run", "--listen", "127.0.0.1:0", "--web", "8081"],
         "--web 8081 has no address: write 127.0.0.1:8081 (0.0.0.0:8081 \(otherMachines))"),
    ])
    func aListenAddressWithoutItsHostOrPortSaysWhatToWrite(_ arguments: [String], _ expected: String) throws {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run(Subprocess.devproxy, arguments + ["--ca-dir", dir.file("ca")], timeout: 20)
        #expect(result.status == 2, "\(arguments): \(result.output)")
        #expect(result.stderr.hasSuffix("error: \(expected)\n"), "\(arguments): \(result.output)")
    }

    /// A config file's unknown key gets the same help: the key DevProxy takes for another tool's
    /// spelling, or the key a typo meant. It said `unknown key "listen_port"` and nothing more.
    @Test(arguments: [
        (#"{"listen_port": 8090}"#, #"unknown key "listen_port"; did you mean "listen"? (\#(together): "#
            + #"--listen 127.0.0.1:PORT)"#),
        (#"{"ssl_insecure": true}"#, #"unknown key "ssl_insecure"; did you mean "insecure_upstream"? (\#(insecure))"#),
        (#"{"upstrem_ca": "a.pem"}"#, #"unknown key "upstrem_ca"; did you mean "upstream_ca"?"#),
        (#"{"bogus": 1}"#, #"unknown key "bogus""#),
    ])
    func anUnknownConfigKeySaysWhatToWriteInstead(_ config: String, _ expected: String) throws {
        let dir = TemporaryDirectory()
        let file = dir.write("devproxy.json", config)
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--config", file, "--ca-dir", dir.file("ca")],
                                        timeout: 20)
        #expect(result.status == 1, "\(config): \(result.output)")
        #expect(result.stderr == "error: \(file): \(expected); see config/devproxy.example.json\n", "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("ca")), "nothing was started or created")
    }
}
