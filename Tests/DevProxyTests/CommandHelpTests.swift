import Foundation
import Testing
import TestSupport

/// `--help` works on every command and subcommand: its usage on stdout, exit 0, no `error:`.
/// `devproxy ca issue --help` (and the other commands of `ca`, `policy`, `qa` and `trust`)
/// answered `error: unknown option --help` with exit 2.
@Suite struct CommandHelpTests {
    static let commands: [[String]] = [
        ["run"], ["ca"], ["ca", "init"], ["ca", "issue"], ["ca", "list"], ["ca", "revoke"], ["ca", "trace"],
        ["ca", "export"], ["ca", "rotate"], ["trust"], ["trust", "install"], ["trust", "uninstall"], ["trust", "status"],
        ["transparent-rules"], ["pins"], ["pins", "snippet"], ["policy"], ["policy", "check"], ["pin-check"], ["qa"],
        ["qa", "init"], ["qa", "verdict"], ["reports"], ["har"], ["sessions"], ["web"],
    ]

    @Test(arguments: commands)
    func helpPrintsUsage(_ command: [String]) throws {
        for flag in ["--help", "-h"] {
            let result = try Subprocess.run(Subprocess.devproxy, command + [flag], timeout: 20)
            #expect(result.status == 0, "\(command) \(flag): \(result.output)")
            #expect(!result.stdout.isEmpty && !result.output.contains("error:"), "\(command) \(flag): \(result.output)")
            #expect(result.stdout.contains("devproxy \(command[0])"), "\(command) \(flag): \(result.stdout)")
        }
    }
}
