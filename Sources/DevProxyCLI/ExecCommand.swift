import DevProxy
import Foundation

/// `devproxy exec -- COMMAND [ARGS…]`: runs one command with the environment of `devproxy env`.
/// The command replaces devproxy (execvp), so it has the terminal's standard input, output and
/// error, its signals, and its exit status is the one the shell sees.
enum ExecCommand {
    static let usage = """
    devproxy exec: run one command through DevProxy, trusting its root, with the environment of `devproxy env`.

      devproxy exec -- curl https://example.com/      no --proxy, no --cacert: the flow is in DevProxy
      devproxy exec -- python3 app.py                 requests, httpx, urllib, pip, grpcio…
      devproxy exec --proxy 127.0.0.1:9090 -- npm install
      devproxy exec -- bash                           a shell whose every command is intercepted
      devproxy exec --transparent -- node app.js      every TCP connection, whether or not it reads proxy settings (Linux)

    Options come before the command (or before --): --proxy HOST:PORT (default 127.0.0.1:8080)  --ca-dir DIR
    --root FILE  --intercept-loopback  --transparent. `devproxy env --help` says what is set.
    --transparent runs the command in a network namespace of its own, where every TCP connection and DNS lookup
    goes to DevProxy (as mitmproxy's local mode); other UDP (QUIC), ping and IPv6 this machine cannot reach are
    refused at once. It sets the CA variables alone (no proxy variable: an app that looks for a proxy finds
    none). It needs root or unprivileged user namespaces, ip and iptables.
    Exit codes: the command's own; 127 the command was not found, 126 it could not be run (as a shell
    says); 1 no CA yet or its files cannot be written; 2 usage.
    """

    static let valued: Set<String> = ["proxy", "ca-dir", "root"]
    static let booleans: Set<String> = ["intercept-loopback", "transparent"]

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        let (options, command) = split(raw)
        if options.contains("--help") || options.contains("-h") {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(options, valued: valued, booleans: booleans)
        guard let program = command.first else {
            if raw.isEmpty { return Output.usage(usage, missing: true) }
            throw UsageError("no command to run: devproxy exec [OPTIONS] -- COMMAND [ARGS…]")
        }
        let setup = try TerminalSetup(arguments)
        setup.warnIfNothingListens()
        if arguments.flag("transparent") {
            return try runTransparent(command, setup: setup, loopback: arguments.flag("intercept-loopback"))
        }
        for variable in setup.environment.variables(current: ProcessInfo.processInfo.environment) {
            if let value = variable.value { setenv(variable.name, value, 1) } else { unsetenv(variable.name) }
        }
        // devproxy ignores SIGPIPE (main.swift); an ignored signal stays ignored across exec, and
        // `yes | head` inside the command would then get EPIPE errors instead of ending quietly.
        signal(SIGPIPE, SIG_DFL)
        fflush(nil)
        let argv = command.map { strdup($0) } + [nil]
        execvp(program, argv)
        let code = errno
        argv.forEach { free($0) }
        // As bash and dash: 127 when there is no such command, 126 when it is there but cannot run.
        if code == ENOENT {
            throw CommandFailure("\(program): command not found", exitCode: 127)
        }
        throw CommandFailure("\(program): cannot run it: \(String(cString: strerror(code)))", exitCode: 126)
    }

    /// The options (before the command) and the command: it starts after `--`, or at the first
    /// word that is not an option or an option's value (`devproxy exec curl -v URL`, as `sudo`
    /// and `env` read it), so the command's own options are never taken for devproxy's.
    static func split(_ raw: ArraySlice<String>) -> (options: ArraySlice<String>, command: [String]) {
        var index = raw.startIndex
        while index < raw.endIndex {
            let word = raw[index]
            if word == "--" { return (raw[raw.startIndex..<index], Array(raw[(index + 1)...])) }
            guard word.hasPrefix("-"), word != "-" else { break }
            let name = String(word.drop { $0 == "-" })
            index += valued.contains(name) ? 2 : 1
        }
        let end = min(index, raw.endIndex)
        return (raw[raw.startIndex..<end], Array(raw[end...]))
    }
}
