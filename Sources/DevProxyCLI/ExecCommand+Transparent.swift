import DevProxy
import Foundation
import Synchronization

/// `devproxy exec --transparent -- COMMAND`: the command in a network namespace of its own, every
/// TCP connection it opens sent to DevProxy whether or not it reads proxy settings
/// (`NamespaceCapture`). devproxy stays as the parent: it relays the namespace's connections to
/// the proxy, waits for the command and exits with its status.
extension ExecCommand {
    /// The hidden subcommand that runs inside the namespace.
    static let insideCommand = "__exec-namespace"

    /// What tells the parent the namespace is ready, written on descriptor 3 before the command runs.
    static let readyLine = "ready\n"

    static func runTransparent(_ command: [String], setup: TerminalSetup, loopback: Bool) throws -> Int32 {
        #if os(Linux)
        let directory = try temporaryDirectory("devproxy-exec")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relayPath = directory + "/relay.sock"
        let relay: NamespaceCapture.HostRelay
        do {
            relay = try NamespaceCapture.HostRelay(path: relayPath, proxyHost: setup.proxy.host,
                                                   proxyPort: setup.proxy.port)
        } catch let error as NetworkError {
            throw CommandFailure("--transparent: \(error.message)")
        }
        relay.start()
        defer { relay.stop() }
        for variable in setup.environment.variables(current: ProcessInfo.processInfo.environment, trustOnly: true) {
            if let value = variable.value { setenv(variable.name, value, 1) } else { unsetenv(variable.name) }
        }
        // What this machine's IPv6 reaches, which the namespace copies (it cannot see this namespace's routes).
        var inside = [try ownExecutable(), insideCommand, "--relay", relayPath, "--proxy", setup.proxy.description,
                      "--ipv6", NamespaceCapture.IPv6Reach.probe().rawValue]
        if loopback { inside.append("--intercept-loopback") }
        inside += ["--"] + command
        // As root the network namespace alone; otherwise a user namespace too, in which this user
        // is root and may make the namespace's network (where the kernel allows unprivileged user
        // namespaces).
        let unshare = geteuid() == 0 ? ["unshare", "--net", "--"] : ["unshare", "--user", "--map-root-user", "--net", "--"]
        let status: Int32
        let ready: Bool
        do {
            (status, ready) = try spawnAndWait(unshare + inside)
        } catch let failure as CommandFailure where failure.exitCode == 127 {
            throw CommandFailure("--transparent needs unshare (util-linux) on PATH", exitCode: 1)
        }
        guard ready else {
            throw CommandFailure("--transparent could not make the command's network namespace (said above); it needs "
                                 + "root, or unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; "
                                 + "on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0), and ip and "
                                 + "iptables (iproute2, iptables)", exitCode: 1)
        }
        return status
        #else
        throw UsageError("--transparent needs Linux (network namespaces); use devproxy exec without it, or "
                         + "devproxy run --mode transparent with pf on macOS")
        #endif
    }

    /// Inside the namespace, as its root: the network made (`NamespaceCapture`), the bridge
    /// serving, then the command, whose exit status is this process's.
    static func runInside(_ raw: ArraySlice<String>) throws -> Int32 {
        // The parent always ends the options with `--`.
        let separator = raw.firstIndex(of: "--") ?? raw.endIndex
        let (options, command) = (raw[raw.startIndex..<separator], Array(raw[min(separator + 1, raw.endIndex)...]))
        let arguments = try Arguments(options, valued: ["relay", "proxy", "ipv6"], booleans: ["intercept-loopback"])
        guard let relayPath = arguments.value("relay"), let proxyText = arguments.value("proxy"),
              let proxy = try? ProxyAddress(parsing: proxyText), !command.isEmpty,
              let reach = NamespaceCapture.IPv6Reach(rawValue: arguments.value("ipv6") ?? "global") else {
            throw UsageError("\(insideCommand) is devproxy exec --transparent's own: run devproxy exec --transparent")
        }
        let environment = ProcessInfo.processInfo.environment
        let bridge: NamespaceCapture.Bridge
        do {
            try NamespaceCapture.configureNetwork(NamespaceCapture.preparationCommands(proxyHost: proxy.host),
                                                  environment: environment)
            let said = Mutex<Set<String>>([])
            bridge = try NamespaceCapture.Bridge(relayPath: relayPath, proxyHost: proxy.host, proxyPort: proxy.port) {
                target, reason in
                // Once per reason: a program retrying, or opening many connections, is told once.
                guard said.withLock({ $0.insert(reason).inserted }) else { return }
                let hint = reason.hasPrefix("407 ") ? " (devproxy exec sends no proxy credentials: point --proxy at a "
                    + "listener without --proxy-auth)" : ""
                Output.warning("--transparent: DevProxy at \(proxy) refused the connection to \(target), so the "
                               + "command saw it reset: \(reason)\(hint)")
            }
            let loopback = arguments.flag("intercept-loopback")
            let excluded = [bridge.explicit.address.port]
            try NamespaceCapture.configureNetwork(
                NamespaceCapture.networkCommands(bridgePort: bridge.redirected.address.port, dnsPort: bridge.dnsPort,
                                                 dnsStreamPort: bridge.dnsStreamPort, excluded: excluded,
                                                 loopback: loopback, proxy: (proxy.host, proxy.port)),
                environment: environment)
            do {
                try NamespaceCapture.configureNetwork(NamespaceCapture.refusalCommands(), environment: environment)
                for (path, value) in NamespaceCapture.refusalSwitches {
                    try NamespaceCapture.setSwitch(path, to: value)
                }
            } catch let error as NetworkError {
                try NamespaceCapture.configureNetwork(NamespaceCapture.loopbackRoute, environment: environment)
                Output.warning("--transparent: ping and other ICMP get no answer rather than a refusal: "
                               + error.message)
            }
            if let v6 = bridge.redirectedV6 {
                do {
                    try NamespaceCapture.configureNetwork(
                        NamespaceCapture.networkCommandsV6(
                            bridgePort: v6.address.port, dnsPorts: bridge.dnsPortsV6, excluded: excluded,
                            loopback: loopback, reach: reach,
                            nameservers: NamespaceCapture.nameserversV6(
                                resolvConf: (try? String(contentsOfFile: "/etc/resolv.conf", encoding: .utf8)) ?? ""),
                            proxy: (proxy.host, proxy.port)),
                        environment: environment)
                } catch let error as NetworkError {
                    Output.warning("--transparent: IPv6 left out, so an IPv6 address is not reachable from the "
                                   + "command: \(error.message)")
                }
            }
        } catch let error as NetworkError {
            throw CommandFailure("--transparent: \(error.message)")
        }
        bridge.start()
        _ = readyLine.withCString { write(3, $0, strlen($0)) }
        close(3)
        let (status, _) = try spawnAndWait(command, reportsReady: false)
        return status
    }

    /// Runs `argv` with this process's standard input, output, error and environment and waits
    /// for it; SIGINT and SIGQUIT, which the terminal sends the whole foreground group, are left
    /// to it meanwhile. Returns its exit status (128 + the signal that killed it) and, when
    /// `reportsReady`, whether it wrote `readyLine` on descriptor 3 first.
    static func spawnAndWait(_ argv: [String], reportsReady: Bool = true) throws -> (Int32, Bool) {
        var pipeEnds: [Int32] = [-1, -1]
        if reportsReady {
            guard pipe(&pipeEnds) == 0 else { throw CommandFailure("pipe: \(String(cString: strerror(errno)))") }
            // Neither end for the command: the write end goes to the namespace's side as descriptor 3 alone.
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if reportsReady { posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGQUIT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let previous = (signal(SIGINT, SIG_IGN), signal(SIGQUIT, SIG_IGN))
        defer {
            signal(SIGINT, previous.0)
            signal(SIGQUIT, previous.1)
        }
        fflush(nil)
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, arguments, environ)
        if reportsReady { close(pipeEnds[1]) }
        defer { if reportsReady { close(pipeEnds[0]) } }
        guard spawned == 0 else {
            // As bash and dash: 127 when there is no such command, 126 when it cannot run.
            if spawned == ENOENT { throw CommandFailure("\(argv[0]): command not found", exitCode: 127) }
            throw CommandFailure("\(argv[0]): cannot run it: \(String(cString: strerror(spawned)))", exitCode: 126)
        }
        var ready = false
        if reportsReady {
            var said: [UInt8] = []
            var byte: UInt8 = 0
            while said.count < readyLine.utf8.count, read(pipeEnds[0], &byte, 1) == 1 { said.append(byte) }
            ready = said == Array(readyLine.utf8)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), ready)
    }

    /// This program's own path, for the namespace's side (`/proc/self/exe` names it even when
    /// devproxy was run by a relative path from another directory).
    static func ownExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw CommandFailure("cannot find devproxy's own executable (/proc/self/exe)") }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A fresh 0700 directory `PREFIX-XXXXXX` under `$TMPDIR` (else /tmp): the relay's socket's,
    /// `devproxy browser`'s profile used once. `what` names it in the error.
    static func temporaryDirectory(_ prefix: String, what: String = "a directory") throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure("cannot make \(what) in \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }
}
