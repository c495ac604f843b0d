import CertAuthority
import DevProxy
import Foundation

/// `devproxy env`: the lines that point a shell's tools at DevProxy and make them trust its root
/// (`eval "$(devproxy env)"`), as HTTP Toolkit's "intercept a fresh terminal" does.
enum EnvCommand {
    static let usage = """
    devproxy env: the lines that send this shell's tools through DevProxy, trusting its root.

      eval "$(devproxy env)"                          bash, zsh, sh: curl, Python, pip, git, Go, Node.js, Java… from now on
      devproxy env --shell fish | source              fish
      devproxy env --shell powershell | Out-String | Invoke-Expression
      eval "$(devproxy env --proxy 127.0.0.1:9090)"   the proxy of `devproxy run --listen 127.0.0.1:9090`
      eval "$(devproxy env --unset)"                  stop: remove what it set
      devproxy exec -- curl https://example.com/      one command alone, the shell left as it is

    \(options)
    Exit codes: 0 printed; 1 no CA yet, or its files cannot be written (the message says what to do); 2 usage.
    Next: run `devproxy run` if it is not running; its flows show what this shell's tools send.
    """

    /// What `env` and `exec` both take and set.
    static let options = """
    Options: --proxy HOST:PORT (default 127.0.0.1:8080, where `devproxy run` listens)  --shell sh|fish|powershell
             (default sh)  --ca-dir DIR  --root FILE (default the CA directory's root.pem)  --intercept-loopback
             --unset (env only)
    It sets HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy and grpc_proxy to http://HOST:PORT; NO_PROXY and no_proxy to
    localhost,127.0.0.1,::1 and the hosts they held (--intercept-loopback: loopback too goes through DevProxy);
    SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO, PIP_CERT, AWS_CA_BUNDLE,
    CARGO_HTTP_CAINFO, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH and DENO_CERT to DIR/terminal/ca-bundle.pem, the system's
    CAs and the root (hosts DevProxy passes through still verify); NODE_USE_ENV_PROXY=1 (Node.js 24); and, with a
    JDK, JAVA_TOOL_OPTIONS: the proxy properties and DIR/terminal/truststore.p12 (the JDK's CAs and the root).
    The system trust store is not touched. Node.js before 24 reads the CA but not the proxy variables.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(raw, valued: ["proxy", "shell", "ca-dir", "root"], booleans: ["intercept-loopback", "unset"])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument `\(arguments.positionals[0])`; to run a command with it: devproxy exec -- COMMAND")
        }
        let shellName = arguments.value("shell") ?? "sh"
        guard let shell = ShellSyntax(rawValue: shellName == "bash" || shellName == "zsh" ? "sh" : shellName == "pwsh" ? "powershell" : shellName) else {
            throw UsageError("--shell must be sh, fish or powershell, not \(shellName)")
        }
        let current = ProcessInfo.processInfo.environment
        var lines: [String] = []
        if arguments.flag("unset") {
            lines.append(shell.comment("DevProxy: removing what `devproxy env` set"))
            lines += TerminalEnvironment.removal(current: current).map { line(for: $0, in: shell) }
        } else {
            let setup = try TerminalSetup(arguments)
            lines += setup.summary.map(shell.comment)
            lines += setup.environment.variables(current: current).map { line(for: $0, in: shell) }
            setup.warnIfNothingListens()
        }
        Output.raw(Array((lines.joined(separator: "\n") + "\n").utf8))
        return 0
    }

    private static func line(for variable: TerminalEnvironment.Variable, in shell: ShellSyntax) -> String {
        variable.value.map { shell.assignment(variable.name, $0) } ?? shell.removal(variable.name)
    }
}

/// What `env` and `exec` share: the proxy address, the root, the files made for it, and the
/// environment that names them.
struct TerminalSetup {
    let environment: TerminalEnvironment
    /// Comment lines for `env`: what the lines do and what they trust.
    let summary: [String]
    let proxy: ProxyAddress

    /// - Throws: `UsageError` for a malformed `--proxy`; `CommandFailure` with no CA yet, or
    ///   when the files cannot be written.
    init(_ arguments: Arguments) throws {
        if let given = arguments.value("proxy") {
            do {
                proxy = try ProxyAddress(parsing: given)
            } catch {
                throw UsageError(error.reason)
            }
        } else {
            proxy = .runDefault
        }
        let directory = CAStore.resolveDirectory(flag: arguments.value("ca-dir"))
        let (root, rootPath) = try Self.root(arguments.value("root"), caDirectory: directory)
        let prepared: TerminalTrust.Prepared
        do {
            prepared = try TerminalTrust(caDirectory: directory).prepare(root: root)
        } catch let error as TrustStoreError {
            throw CommandFailure(error.reason)
        }
        if let problem = prepared.javaProblem {
            Output.warning("Java is left out (JAVA_TOOL_OPTIONS not set): cannot make its trust store: \(problem)")
        }
        if prepared.systemBundle == nil {
            Output.warning("no system CA bundle found ($SSL_CERT_FILE, OpenSSL's default file, /etc/ssl/certs/ca-certificates.crt, "
                           + "/etc/pki/tls/certs/ca-bundle.crt, …): \(prepared.bundle) holds the root alone, so hosts DevProxy "
                           + "passes through fail verification; install ca-certificates, or set SSL_CERT_FILE to your CA bundle")
        }
        environment = TerminalEnvironment(proxy: proxy, caBundle: prepared.bundle, javaTrustStore: prepared.javaTrustStore,
                                          interceptLoopback: arguments.flag("intercept-loopback"))
        let name = root.commonName ?? root.subject
        let system = prepared.systemBundle.map { "\(prepared.systemCount) CAs of \($0)" } ?? "no system CAs"
        summary = [
            "DevProxy: HTTP(S) through \(proxy.url), trusting \(name) (\(rootPath)) and the system's CAs.",
            "Use: eval \"$(devproxy env\(Self.repeated(arguments, in: .sh)))\" (fish: devproxy env --shell fish"
                + "\(Self.repeated(arguments, in: .fish)) | source); stop: eval \"$(devproxy env --unset)\".",
            "CA bundle \(prepared.bundle): \(system) and the root"
                + (prepared.javaTrustStore.map { "; Java trust store \($0)" } ?? "; no JDK found, Java left out") + ".",
        ]
    }

    /// The options given that choose what the lines say (`--proxy`, `--ca-dir`, `--root`,
    /// `--intercept-loopback`), each with a leading space and quoted for `shell`: the `Use:` line
    /// repeats them, where its bare `devproxy env` pointed the shell at 127.0.0.1:8080 and the CA
    /// directory's root instead.
    private static func repeated(_ arguments: Arguments, in shell: ShellSyntax) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-[]".unicodeScalars)
        let valued = ["proxy", "ca-dir", "root"].compactMap { name in
            arguments.value(name).map { value in
                " --\(name) " + (value.unicodeScalars.allSatisfy(plain.contains) ? value : shell.quoted(value))
            }
        }
        return (valued + (arguments.flag("intercept-loopback") ? [" --intercept-loopback"] : [])).joined()
    }

    /// The root to trust: `--root FILE` (a bundle names it as its self-signed CA), else the CA
    /// directory's root.pem, else the team root `run --intermediate` wrote under team-roots/ (the
    /// newest).
    static func root(_ given: String?, caDirectory: String) throws -> (Certificate, String) {
        var path = given
        if path == nil {
            let store = CAStore(directory: caDirectory)
            if store.exists {
                path = store.rootCertificatePath
            } else {
                let teamRoots = caDirectory + "/team-roots"
                let files = ((try? FileManager.default.contentsOfDirectory(atPath: teamRoots)) ?? [])
                    .filter { $0.hasSuffix(".pem") }.map { teamRoots + "/" + $0 }
                path = files.max { modified($0) < modified($1) }
            }
        }
        guard let path else {
            throw CommandFailure("no CA in \(caDirectory) yet: run `devproxy run` once (it creates a local CA), "
                                 + "or `devproxy run --intermediate BUNDLE` with your team's; or give --root FILE")
        }
        let certificates: [Certificate]
        do {
            certificates = try Certificate.all(from: try SecureFile.read(path, what: "the root certificate"))
        } catch let error as CAError {
            throw CommandFailure("\(path): \(error.reason)")
        }
        guard let root = certificates.count == 1 ? certificates.first : certificates.last(where: { $0.isSelfSigned && $0.isCA }) else {
            throw CommandFailure("\(path) holds \(certificates.count) certificates and no self-signed root; give the root alone with --root FILE")
        }
        guard root.isCA else {
            throw CommandFailure("\(path) is not a CA certificate (\(root.subject)); give the root clients trust with --root FILE")
        }
        return (root, path)
    }

    private static func modified(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }

    /// A warning when nothing accepts connections at the proxy address: the tools would fail to
    /// connect (`curl: (7) Failed to connect to 127.0.0.1 port 8080`) with no word of DevProxy.
    func warnIfNothingListens() {
        Self.warnIfNothingListens(at: proxy, or: "tools going through it fail to connect")
    }

    /// The warning when nothing listens at `proxy`, saying what fails (`consequence`) otherwise.
    static func warnIfNothingListens(at proxy: ProxyAddress, or consequence: String) {
        guard !proxy.isListening() else { return }
        Output.warning("nothing listens at \(proxy) yet: start `devproxy run"
                       + (proxy == .runDefault ? "" : " --listen \(proxy)") + "`, or " + consequence)
    }
}
