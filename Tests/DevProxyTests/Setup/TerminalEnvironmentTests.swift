import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `devproxy env` and `devproxy exec` without a proxy running: what the lines set, read back by
/// the real shells, the bundle's contents checked with openssl, and `exec`'s exit statuses.
@Suite struct TerminalEnvironmentTests {
    /// A CA directory whose path has a space, both quotes, a `$`, a backtick and a backslash, and a
    /// root in it: every shell must read the bundle's path back as it is.
    static func awkwardCA() throws -> (TemporaryDirectory, String) {
        let dir = TemporaryDirectory()
        let caDirectory = dir.file("it's a \"dir\" $HOME `x` \\n")
        try CAStore(directory: caDirectory).initialize(name: "Terminal Test Root", keyType: .p256, days: 2, passphrase: nil)
        return (dir, caDirectory)
    }

    /// The environment a shell ends with after evaluating `script`, as `NAME=value` lines of `env -0`.
    static func environment(afterRunning shell: String, _ arguments: [String], extra: [String: String] = [:]) throws -> [String: String] {
        let result = try Subprocess.run(shell, arguments, environment: extra, timeout: 30)
        #expect(result.status == 0, "\(shell): \(result.output)")
        var values: [String: String] = [:]
        for entry in result.stdout.split(separator: "\0") {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            values[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return values
    }

    static let cleared = ["NO_PROXY": "", "no_proxy": "", "JAVA_TOOL_OPTIONS": "", "SSL_CERT_FILE": ""]

    @Test func shOutputEvaluatedBySHSetsEveryVariable() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let bundle = ca + "/terminal/ca-bundle.pem"
        let script = "eval \"$(\"$DEVPROXY\" env --ca-dir \"$CA\" --proxy 127.0.0.1:9)\" && env -0"
        for shell in ["sh", "bash"] {
            let values = try Self.environment(afterRunning: shell, ["-c", script],
                                              extra: Self.cleared.merging(["DEVPROXY": Subprocess.devproxy, "CA": ca]) { $1 })
            for name in TerminalEnvironment.proxyVariables { #expect(values[name] == "http://127.0.0.1:9", "\(shell) \(name)") }
            for name in TerminalEnvironment.caVariables { #expect(values[name] == bundle, "\(shell) \(name): \(values[name] ?? "unset")") }
            #expect(values["NO_PROXY"] == "localhost,127.0.0.1,::1" && values["no_proxy"] == "localhost,127.0.0.1,::1")
            #expect(values["NODE_USE_ENV_PROXY"] == "1")
        }
        #expect(dir.mode("\((ca as NSString).lastPathComponent)/terminal/ca-bundle.pem") == 0o644)
    }

    @Test func fishOutputIsReadBackByFish() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let output = try Subprocess.run(Subprocess.devproxy, ["env", "--ca-dir", ca, "--shell", "fish", "--proxy", "127.0.0.1:9"],
                                        environment: Self.cleared)
        #expect(output.status == 0, "\(output.output)")
        let bundle = ca + "/terminal/ca-bundle.pem"
        let quoted = "'" + bundle.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        #expect(output.stdout.contains("set -gx SSL_CERT_FILE \(quoted)\n"), "\(output.stdout)")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") else { return }
        let values = try Self.environment(afterRunning: "fish", ["-c", "\"$DEVPROXY\" env --ca-dir \"$CA\" --shell fish | source; env -0"],
                                          extra: Self.cleared.merging(["DEVPROXY": Subprocess.devproxy, "CA": ca]) { $1 })
        #expect(values["SSL_CERT_FILE"] == bundle && values["HTTPS_PROXY"] == "http://127.0.0.1:8080", "\(values)")
    }

    /// PowerShell's single-quoted strings double a quote, the typographic ones too (PowerShell
    /// takes them for `'`); pwsh reads it back where it is installed.
    @Test func powershellOutputDoublesQuotes() throws {
        let dir = TemporaryDirectory()
        let ca = dir.file("o'brien ‘x’ $env:HOME")
        try CAStore(directory: ca).initialize(name: "Terminal Test Root", keyType: .p256, days: 2, passphrase: nil)
        let output = try Subprocess.run(Subprocess.devproxy, ["env", "--ca-dir", ca, "--shell", "powershell"], environment: Self.cleared)
        #expect(output.status == 0, "\(output.output)")
        let expected = "$env:SSL_CERT_FILE = '\(dir.path)/o''brien ‘‘x’’ $env:HOME/terminal/ca-bundle.pem'"
        #expect(output.stdout.contains(expected + "\n"), "\(output.stdout)")
        #expect(output.stdout.contains("$env:HTTPS_PROXY = 'http://127.0.0.1:8080'\n"))
        guard let pwsh = ["/usr/bin/pwsh", "/usr/local/bin/pwsh"].first(where: FileManager.default.isExecutableFile) else { return }
        let read = try Subprocess.run(pwsh, ["-NoProfile", "-Command",
                                             "& $env:DEVPROXY env --ca-dir $env:CA --shell powershell | Out-String | Invoke-Expression; "
                                             + "[Console]::Out.Write($env:SSL_CERT_FILE)"],
                                      environment: ["DEVPROXY": Subprocess.devproxy, "CA": ca])
        #expect(read.stdout == ca + "/terminal/ca-bundle.pem", "\(read.output)")
    }

    /// The bundle holds every certificate of the system bundle and the root, and openssl verifies
    /// both the root and a system CA against it alone. A new root (`--root`) rewrites it.
    @Test func theBundleHoldsTheSystemCAsAndTheRoot() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let system = try #require(TerminalTrust.systemBundle(environment: [:]), "no system CA bundle on this machine")
        let result = try Subprocess.run(Subprocess.devproxy, ["env", "--ca-dir", ca], environment: Self.cleared)
        #expect(result.status == 0, "\(result.output)")
        let bundle = ca + "/terminal/ca-bundle.pem"
        let systemCount = try Certificate.all(from: SecureFile.read(system, what: "system")).count
        #expect(systemCount > 10)
        let inBundle = try Certificate.all(from: SecureFile.read(bundle, what: "bundle"))
        #expect(inBundle.count == systemCount + 1)
        #expect(result.stdout.contains("\(systemCount) CAs of \(system) and the root"), "\(result.stdout)")
        let root = ca + "/root.pem"
        let verified = try Subprocess.run("openssl", ["verify", "-CAfile", bundle, root])
        #expect(verified.status == 0 && verified.stdout.contains(": OK"), "\(verified.output)")
        let aSystemCA = dir.write("system-ca.pem", try #require(inBundle.first).pem)
        let systemVerified = try Subprocess.run("openssl", ["verify", "-CAfile", bundle, aSystemCA])
        #expect(systemVerified.status == 0, "\(systemVerified.output)")

        let other = TemporaryDirectory()
        defer { withExtendedLifetime(other) {} }
        try CAStore(directory: other.file("ca")).initialize(name: "Rotated Root", keyType: .p256, days: 2, passphrase: nil)
        let again = try Subprocess.run(Subprocess.devproxy, ["env", "--ca-dir", ca, "--root", other.file("ca/root.pem")],
                                       environment: Self.cleared)
        #expect(again.status == 0, "\(again.output)")
        let rewritten = try Certificate.all(from: SecureFile.read(bundle, what: "bundle"))
        #expect(rewritten.count == systemCount + 1 && rewritten.last?.commonName == "Rotated Root")
        let oldRoot = try Subprocess.run("openssl", ["verify", "-CAfile", bundle, root])
        #expect(oldRoot.status != 0, "\(oldRoot.output)")
    }

    /// The bundle follows the system bundle (`SSL_CERT_FILE` names it here): one CA, then two,
    /// then the bundle is written again with each, and left alone (same bytes, same inode) when
    /// nothing changed.
    @Test func theBundleFollowsTheSystemBundle() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        var systemCAs: [String] = []
        for index in 0..<2 {
            let store = CAStore(directory: dir.file("system-\(index)"))
            try store.initialize(name: "System CA \(index)", keyType: .p256, days: 2, passphrase: nil)
            systemCAs.append(try store.rootCertificate().pem)
        }
        let one = dir.write("one.pem", systemCAs[0])
        let two = dir.write("two.pem", systemCAs.joined())
        let bundle = ca + "/terminal/ca-bundle.pem"
        func names(withSystemBundle system: String) throws -> [String?] {
            let result = try Subprocess.run(Subprocess.devproxy, ["env", "--ca-dir", ca], environment: ["SSL_CERT_FILE": system])
            #expect(result.status == 0 && result.stdout.contains("CA bundle \(bundle): 1 CAs of \(one)") == (system == one),
                    "\(result.output)")
            return try Certificate.all(from: SecureFile.read(bundle, what: "bundle")).map(\.commonName)
        }
        #expect(try names(withSystemBundle: one) == ["System CA 0", "Terminal Test Root"])
        #expect(try names(withSystemBundle: two) == ["System CA 0", "System CA 1", "Terminal Test Root"])
        let inode = try FileManager.default.attributesOfItem(atPath: bundle)[.systemFileNumber] as? Int
        #expect(try names(withSystemBundle: two).count == 3)
        #expect(try FileManager.default.attributesOfItem(atPath: bundle)[.systemFileNumber] as? Int == inode)
    }

    /// On a machine with no system CA bundle (here /etc/ssl/certs hidden by an empty tmpfs in a
    /// private mount namespace), the bundle holds the root alone and a warning says what that
    /// breaks and what to do.
    @Test(.enabled(if: geteuid() == 0 && (try? Subprocess.run("unshare", ["--mount", "--propagation", "private", "true"]).status) == 0,
                   "needs root and unshare"))
    func noSystemBundleLeavesTheRootAloneAndSaysSo() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let script = "mount -t tmpfs none /etc/ssl/certs && mount -t tmpfs none /etc/pki 2>/dev/null; \"$0\" env --ca-dir \"$1\""
        let result = try Subprocess.run("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, Subprocess.devproxy, ca],
                                        environment: ["SSL_CERT_FILE": ""])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.contains("warning: no system CA bundle found") && result.stderr.contains("holds the root alone"),
                "\(result.stderr)")
        #expect(result.stdout.contains("no system CAs and the root"), "\(result.stdout)")
        let names = try Certificate.all(from: SecureFile.read(ca + "/terminal/ca-bundle.pem", what: "bundle")).map(\.commonName)
        #expect(names == ["Terminal Test Root"])
    }

    /// A bundle of ours in `SSL_CERT_FILE` (a shell that evaluated the lines before) is not taken
    /// for the system's: the bundle does not grow each time.
    @Test func evaluatingTwiceChangesNothing() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let script = "eval \"$(\"$DEVPROXY\" env --ca-dir \"$CA\")\"; eval \"$(\"$DEVPROXY\" env --ca-dir \"$CA\")\"; env -0"
        let values = try Self.environment(afterRunning: "sh", ["-c", script],
                                          extra: ["DEVPROXY": Subprocess.devproxy, "CA": ca, "NO_PROXY": ".corp.example,localhost",
                                                  "no_proxy": "", "SSL_CERT_FILE": "", "JAVA_TOOL_OPTIONS": "-Xmx64m -Dhttps.proxyHost=old.example"])
        #expect(values["NO_PROXY"] == "localhost,127.0.0.1,::1,.corp.example", "\(values["NO_PROXY"] ?? "unset")")
        let system = try #require(TerminalTrust.systemBundle(environment: [:]))
        let systemCount = try Certificate.all(from: SecureFile.read(system, what: "system")).count
        #expect(try Certificate.all(from: SecureFile.read(ca + "/terminal/ca-bundle.pem", what: "bundle")).count == systemCount + 1)
        if TerminalTrust.javaCacerts() != nil {
            let java = try #require(values["JAVA_TOOL_OPTIONS"])
            #expect(java.hasPrefix("-Xmx64m -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=8080 -Dhttps.proxyHost=127.0.0.1"), "\(java)")
            #expect(!java.contains("old.example") && java.components(separatedBy: "trustStore=").count == 2, "\(java)")
        }
    }

    /// `--unset` removes every variable but keeps what was not DevProxy's: the other hosts of
    /// `NO_PROXY` and the other options of `JAVA_TOOL_OPTIONS`. `--intercept-loopback` leaves
    /// loopback out of `NO_PROXY`.
    @Test func unsetAndInterceptLoopback() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let script = "eval \"$(\"$DEVPROXY\" env --ca-dir \"$CA\")\"; eval \"$(\"$DEVPROXY\" env --unset)\"; env -0"
        let values = try Self.environment(afterRunning: "sh", ["-c", script],
                                          extra: ["DEVPROXY": Subprocess.devproxy, "CA": ca, "NO_PROXY": ".corp.example",
                                                  "no_proxy": "", "JAVA_TOOL_OPTIONS": "-Xmx64m", "SSL_CERT_FILE": ""])
        for name in TerminalEnvironment.proxyVariables + TerminalEnvironment.caVariables + ["NODE_USE_ENV_PROXY"] {
            #expect(values[name] == nil, "\(name) is still \(values[name] ?? "")")
        }
        #expect(values["NO_PROXY"] == ".corp.example" && values["JAVA_TOOL_OPTIONS"] == "-Xmx64m", "\(values)")

        let loopback = try Subprocess.run(Subprocess.devproxy, ["env", "--ca-dir", ca, "--intercept-loopback"], environment: Self.cleared)
        #expect(loopback.stdout.contains("unset NO_PROXY\n") && loopback.stdout.contains("unset no_proxy\n"), "\(loopback.stdout)")
    }

    /// Java reads `JAVA_TOOL_OPTIONS` back to the same trust store path, quotes and all, and that
    /// store holds the JDK's CAs and the root.
    @Test func javaReadsTheTrustStorePathBack() throws {
        guard TerminalTrust.javaCacerts() != nil else { return }
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let script = "eval \"$(\"$DEVPROXY\" env --ca-dir \"$CA\")\" && java -XshowSettings:properties -version"
        let result = try Subprocess.run("sh", ["-c", script], environment: Self.cleared.merging(["DEVPROXY": Subprocess.devproxy, "CA": ca]) { $1 })
        #expect(result.stderr.contains("javax.net.ssl.trustStore = \(ca)/terminal/truststore.p12\n"), "\(result.stderr)")
        #expect(result.stderr.contains("https.proxyPort = 8080"), "\(result.stderr)")
        let list = try Subprocess.run("keytool", ["-list", "-keystore", ca + "/terminal/truststore.p12", "-storepass", "changeit"])
        let root = TrustRoot(certificate: try CAStore(directory: ca).rootCertificate())
        #expect(list.stdout.contains(root.nickname), "\(list.output)")
        #expect(list.stdout.components(separatedBy: "trustedCertEntry").count > 10, "\(list.stdout.prefix(300))")
    }

    @Test(arguments: [
        ("8080", "has no port"), ("127.0.0.1:0", "the port must be a number from 1 to 65535"),
        ("127.0.0.1:http", "the port must be"), ("::1:8080", "write an IPv6 address in brackets, [::1]:8080"),
        ("socks5://127.0.0.1:1080", "not socks5://"), ("http://ana:secret@127.0.0.1:8080", "credentials are not taken"),
        ("a b:8080", "is not a host name or IP address"),
    ])
    func aMalformedProxyIsAUsageError(_ proxy: String, reason: String) throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        for command in [["env"], ["exec"]] {
            let result = try Subprocess.run(Subprocess.devproxy, command + ["--ca-dir", ca, "--proxy", proxy] + (command == ["exec"] ? ["--", "true"] : []))
            #expect(result.status == 2 && result.stdout.isEmpty, "\(command) \(proxy): \(result.output)")
            #expect(result.stderr.hasPrefix("error: --proxy \(proxy)") && result.stderr.contains(reason), "\(result.stderr)")
        }
    }

    @Test func theProxyAddressIsReadAsTyped() throws {
        #expect(try ProxyAddress(parsing: "http://127.0.0.1:8080/").url == "http://127.0.0.1:8080")
        #expect(try ProxyAddress(parsing: "[::1]:9090").url == "http://[::1]:9090")
        #expect(try ProxyAddress(parsing: "proxy.local:3128") == ProxyAddress(host: "proxy.local", port: 3128))
    }

    /// The `# Use:` line repeats the options given, quoted, so the command it shows sets what these
    /// lines set: it said `eval "$(devproxy env)"` after `env --proxy 127.0.0.1:9 --ca-dir DIR`, which
    /// pointed the shell at 127.0.0.1:8080 and another CA directory's root.
    @Test func theUseLineRepeatsTheOptionsGiven() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let output = try Subprocess.run(Subprocess.devproxy,
                                        ["env", "--ca-dir", ca, "--proxy", "127.0.0.1:9", "--intercept-loopback"],
                                        environment: Self.cleared)
        #expect(output.status == 0, "\(output.output)")
        let use = try #require(output.stdout.split(separator: "\n").first { $0.hasPrefix("# Use: ") }.map(String.init))
        // `eval "$(devproxy env OPTIONS)" (fish: devproxy env --shell fish OPTIONS | source); …`
        func between(_ before: String, _ after: String) -> String? {
            guard let start = use.range(of: before), let end = use.range(of: after, range: start.upperBound..<use.endIndex) else {
                return nil
            }
            return String(use[start.upperBound..<end.lowerBound])
        }
        let sh = try #require(between("eval \"$(devproxy env", ")\" (fish: "))
        let values = try Self.environment(afterRunning: "sh", ["-c", "eval \"$(\"$DEVPROXY\" env\(sh))\" && env -0"],
                                          extra: Self.cleared.merging(["DEVPROXY": Subprocess.devproxy]) { $1 })
        #expect(values["HTTPS_PROXY"] == "http://127.0.0.1:9", "\(use)")
        #expect(values["SSL_CERT_FILE"] == ca + "/terminal/ca-bundle.pem", "\(use)")
        #expect(values["NO_PROXY"] == nil, "--intercept-loopback: \(use)")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") else { return }
        let fish = try #require(between("(fish: devproxy env --shell fish", " | source)"))
        let fishValues = try Self.environment(afterRunning: "fish",
                                              ["-c", "\"$DEVPROXY\" env --shell fish\(fish) | source; env -0"],
                                              extra: Self.cleared.merging(["DEVPROXY": Subprocess.devproxy]) { $1 })
        #expect(fishValues["HTTPS_PROXY"] == "http://127.0.0.1:9", "\(use)")
        #expect(fishValues["SSL_CERT_FILE"] == ca + "/terminal/ca-bundle.pem", "\(use)")
    }

    /// With no CA yet the error names the command that makes one; nothing is printed to evaluate.
    @Test func noCAYetSaysHowToMakeOne() throws {
        let dir = TemporaryDirectory()
        for command in [["env"], ["exec", "--", "true"]] {
            let result = try Subprocess.run(Subprocess.devproxy, [command[0], "--ca-dir", dir.file("none")] + command.dropFirst())
            #expect(result.status == 1 && result.stdout.isEmpty, "\(command): \(result.output)")
            #expect(result.stderr == "error: no CA in \(dir.file("none")) yet: run `devproxy run` once (it creates a local CA), "
                    + "or `devproxy run --intermediate BUNDLE` with your team's; or give --root FILE\n", "\(result.stderr)")
        }
    }

    /// `exec` replaces itself with the command: its exit status, standard input and output, and
    /// the variables; a command that is not there is 127, one that cannot run 126, as in a shell.
    @Test func execPassesTheCommandsStatusAndStreamsThrough() throws {
        let (dir, ca) = try Self.awkwardCA()
        defer { withExtendedLifetime(dir) {} }
        let failing = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "--", "sh", "-c", "exit 42"])
        #expect(failing.status == 42, "\(failing.output)")
        let echoed = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "cat"], stdin: Array("piped\n".utf8))
        #expect(echoed.status == 0 && echoed.stdout == "piped\n", "\(echoed.output)")
        let seen = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "--proxy", "127.0.0.1:9", "--", "sh", "-c",
                                                            "printf '%s|%s' \"$HTTPS_PROXY\" \"$CURL_CA_BUNDLE\""])
        #expect(seen.stdout == "http://127.0.0.1:9|\(ca)/terminal/ca-bundle.pem", "\(seen.output)")
        #expect(seen.stderr.contains("warning: nothing listens at 127.0.0.1:9 yet"), "\(seen.stderr)")
        // The command's own options are its own: `--help` and `-v` after the command go to it.
        let own = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "sh", "-c", "echo \"$0 $1\"", "--help", "-v"])
        #expect(own.stdout == "--help -v\n", "\(own.output)")

        let missing = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "--", "no-such-command-devproxy"])
        #expect(missing.status == 127 && missing.stderr.hasSuffix("error: no-such-command-devproxy: command not found\n"), "\(missing.output)")
        let notExecutable = dir.write("not-executable.sh", "echo hi\n")
        let refused = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "--", notExecutable])
        #expect(refused.status == 126 && refused.stderr.contains("cannot run it: Permission denied"), "\(refused.output)")
        let nothing = try Subprocess.run(Subprocess.devproxy, ["exec", "--ca-dir", ca, "--"])
        #expect(nothing.status == 2 && nothing.stderr.contains("no command to run"), "\(nothing.output)")
    }
}
