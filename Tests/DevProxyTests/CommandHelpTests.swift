import Foundation
import Testing
import TestSupport

/// `--help` works on every command and subcommand: its usage on stdout, exit 0, no `error:`.
/// `devproxy ca issue --help` (and the other commands of `ca`, `policy`, `qa` and `trust`)
/// answered `error: unknown option --help` with exit 2.
@Suite struct CommandHelpTests {
    static let commands: [[String]] = [
        ["run"], ["ca"], ["ca", "init"], ["ca", "issue"], ["ca", "list"], ["ca", "revoke"], ["ca", "trace"],
        ["ca", "export"], ["ca", "rotate"], ["ca", "crl"], ["trust"], ["trust", "install"], ["trust", "uninstall"], ["trust", "status"],
        ["transparent-rules"], ["pins"], ["pins", "snippet"], ["policy"], ["policy", "check"], ["pin-check"], ["qa"],
        ["qa", "init"], ["qa", "verdict"], ["reports"], ["har"], ["sessions"], ["web"], ["benchmark"],
        ["env"], ["exec"],
    ]

    /// `--help` after other arguments: `devproxy run --listen 127.0.0.1:0 --help` said
    /// `error: unknown option --help` (exit 2), as did every command outside `ca`, `policy`, `qa`
    /// and `trust`; a subcommand keeps its own usage.
    static let helpLater: [(arguments: [String], usage: String)] = [
        (["run", "--listen", "127.0.0.1:0", "--help"], "devproxy run"),
        (["--listen", "127.0.0.1:0", "-h"], "devproxy run"),
        (["har", "flows.jsonl", "--help"], "devproxy har"),
        (["pins", "snippet", "--domain", "a.example", "--help"], "--format"),
        (["pins", "ca/root.pem", "--help"], "devproxy pins"),
        (["sessions", "--json", "--help"], "devproxy sessions"),
        (["web", "session.sqlite", "--help"], "devproxy web"),
        (["reports", "--log", "flows.jsonl", "--help"], "devproxy reports"),
        (["transparent-rules", "--port", "8090", "--help"], "devproxy transparent-rules"),
        (["pin-check", "https://example.com/", "--help"], "devproxy pin-check"),
        (["benchmark", "leaves", "--help"], "devproxy benchmark"),
    ]

    /// An empty value (a script's unset variable) read on: `run --log ""` said "cannot write : No
    /// such file or directory", `--passthrough ""` started a proxy whose rule matched nothing.
    @Test(arguments: [
        (["run", "--listen", "127.0.0.1:0", "--log", ""], "log"),
        (["run", "--listen", "127.0.0.1:0", "--passthrough="], "passthrough"),
        (["ca", "issue", "--email", ""], "email"),
        (["har", "flows.jsonl", "-o", ""], "o"),
        (["qa", "verdict", "--log", ""], "log"),
    ])
    func anEmptyOptionValueIsAUsageError(_ arguments: [String], name: String) throws {
        let result = try Subprocess.run(Subprocess.devproxy, arguments, timeout: 20)
        #expect(result.status == 2, "\(arguments): \(result.output)")
        #expect(result.stderr == "error: --\(name) was given an empty value (an unset variable in a script?)\n",
                "\(arguments): \(result.output)")
    }

    /// A command called without what it needs prints its usage on stderr and exits 2, as any
    /// usage error does (`devproxy ca` alone exited 0, where `policy`, `qa` and `trust` exit 2;
    /// the usage went to stdout, where a script took it for output).
    @Test(arguments: [["ca"], ["policy"], ["qa"], ["trust"], ["har"], ["web"], ["pins"]])
    func aMissingSubcommandIsAUsageError(_ command: [String]) throws {
        let result = try Subprocess.run(Subprocess.devproxy, command, timeout: 20)
        #expect(result.status == 2, "\(command): \(result.output)")
        #expect(result.stderr.contains("devproxy \(command[0])") && result.stdout.isEmpty, "\(command): \(result.output)")
    }

    @Test(arguments: helpLater)
    func helpAfterOtherArgumentsPrintsUsage(_ arguments: [String], usage: String) throws {
        let result = try Subprocess.run(Subprocess.devproxy, arguments, timeout: 20)
        #expect(result.status == 0, "\(arguments): \(result.output)")
        #expect(result.stdout.contains(usage) && !result.output.contains("error:"), "\(arguments): \(result.output)")
    }

    @Test(arguments: commands)
    func helpPrintsUsage(_ command: [String]) throws {
        for flag in ["--help", "-h"] {
            let result = try Subprocess.run(Subprocess.devproxy, command + [flag], timeout: 20)
            #expect(result.status == 0, "\(command) \(flag): \(result.output)")
            #expect(!result.stdout.isEmpty && !result.output.contains("error:"), "\(command) \(flag): \(result.output)")
            #expect(result.stdout.contains("devproxy \(command[0])"), "\(command) \(flag): \(result.stdout)")
        }
    }

    /// Every subcommand's `--help` is its own page: `devproxy ca issue --help` (every `ca` and `qa`
    /// subcommand) printed the group's page. The subcommands are walked from the pages themselves
    /// (each `devproxy GROUP WORD` example of a group named by `devproxy --help`; a URL such as
    /// `devproxy browser https://…` is no subcommand), so a new one is
    /// checked too; its page names it in its title or its first worked example, and is not the
    /// group's page (unless the group has no other subcommand).
    @Test func everySubcommandHasAPageThatNamesIt() throws {
        func page(_ arguments: [String]) throws -> String {
            let result = try Subprocess.run(Subprocess.devproxy, arguments, timeout: 20)
            #expect(result.status == 0 && !result.stderr.contains("error:"), "\(arguments): \(result.output)")
            return result.stdout
        }
        func words(after command: [String], in text: String) -> [String] {
            let pattern = try! Regex((["devproxy"] + command).joined(separator: " ") + " ([a-z][a-z-]*)(?![a-z./:-])")
            var found: [String] = []
            for match in text.matches(of: pattern) {
                let word = String(match.output[1].substring ?? "")
                if !found.contains(word) { found.append(word) }
            }
            return found
        }
        let groups = words(after: [], in: try page(["--help"])).filter { !["run", "help"].contains($0) }
        var walked: [String] = []
        for group in groups {
            let groupPage = try page([group, "--help"])
            let subcommands = words(after: [group], in: groupPage)
            for sub in subcommands {
                let command = "\(group) \(sub)"
                walked.append(command)
                let text = try page([group, sub, "--help"])
                let lines = text.split(separator: "\n").map(String.init)
                let title = lines.first ?? ""
                let firstExample = lines.first { $0.hasPrefix("  devproxy ") || $0.hasPrefix("  sudo devproxy ") } ?? ""
                let ownPage = (title + firstExample).contains("devproxy \(command)")
                    && (text != groupPage || subcommands.count == 1)
                #expect(ownPage, "\(command) --help:\n\(text)")
            }
        }
        for command in ["ca init", "ca issue", "ca list", "ca revoke", "ca crl", "ca trace", "ca export", "ca rotate",
                        "qa init", "qa verdict", "pins snippet", "pins verify", "policy check", "benchmark leaves",
                        "trust install", "trust status", "trust uninstall"] {
            #expect(walked.contains(command), "\(command) was not found in the help pages: \(walked)")
        }
    }

    /// `config/devproxy.example.json` says it holds every key `devproxy run` accepts: each flag of
    /// `run --help` is there, as its key or commented out with `_` (it lacked `keep_alt_svc`,
    /// `leaf_key`, `pinset_rewrite` and `proto`).
    @Test func theExampleConfigHasEveryFlagOfRun() throws {
        let help = try Subprocess.run(Subprocess.devproxy, ["run", "--help"], timeout: 20).stdout
        let options = try #require(help.firstRange(of: "Options:").map { help[$0.lowerBound...] })
        let section = options.split(separator: "Then:").first ?? options
        let flags = Set(section.matches(of: /--([a-z0-9][a-z0-9-]+)/).map { String($0.1) })
            .subtracting(["config", "include", "descriptor"])  // protoc's --include_imports, --descriptor_set_out
        #expect(flags.count > 40, "\(flags)")
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/devproxy.example.json")
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: example)) as? [String: Any]).keys
        let named = Set(keys.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 })
        let missing = flags.filter { !named.contains($0.replacingOccurrences(of: "-", with: "_")) }
        #expect(missing.isEmpty, "not in config/devproxy.example.json: \(missing.sorted())")
    }
}
