import CertAuthority
import DevProxy
import Foundation
import QRCode
import SessionStore
import WebUI

/// `devproxy run`: the intercepting proxy. With no arguments it is what `devproxy` does.
enum RunCommand {
    static let usage = """
    Run the intercepting proxy (the default command).

      devproxy                                          127.0.0.1:8080, local CA created on first run
      devproxy run --listen 127.0.0.1:0 --log flows.jsonl --har session.har
      devproxy run --intermediate ana@acme.dev.pem      sign leaves with the bundle your security lead gave you
      devproxy run --passthrough '*.apple.com' --passthrough 'api.*.bank.com'
      devproxy run --upstream-ca staging-ca.pem --resolve api.example.com:443:10.0.0.7
      devproxy run --keylog keys.log                    TLS secrets for Wireshark (NSS key log format)
      devproxy run --config config/devproxy.example.json
      devproxy run --persona '*.acme.dev=unpinned' --log flows.jsonl --sink-reports   QA: does the app enforce its pins?
      devproxy run --mode regular --mode socks5@127.0.0.1:1080      an HTTP proxy on --listen and a SOCKS5 one
      devproxy run --mode transparent@127.0.0.1:8090     what iptables/nft redirect here (devproxy transparent-rules)
      devproxy run --mode reverse:https://api.example.com --reverse-tls    this listener is the origin for an app
      devproxy run --upstream-proxy http://proxy.corp:3128 --upstream-proxy-auth-file proxy.cred
                                                        behind a corporate proxy
      devproxy run --leaf-key 'api.acme.dev=debug-leaf.key'   a leaf-only pinner pins this key (devproxy pins --format raw-key debug-leaf.key)
      devproxy run --client-cert 'api.acme.dev=client.p12' --client-cert-passphrase-file p12.pass   mTLS to the origin
      devproxy run --verify-signature 'api.acme.dev=hmac.key' --log flows.jsonl   check RequestSigner's X-Signature
      devproxy run --map-remote '|https://api\\.example\\.com/|http://localhost:3000/' --map-local '|/v1/user$|mocks/user.json'
                                                        send the API to a local build, answer one call from a file

    Options: --listen HOST:PORT  --ca-dir DIR  --intermediate BUNDLE  --sign-with-root  --log FILE  --har FILE
             --passthrough GLOB  --upstream-ca FILE  --insecure-upstream  --lazy-upstream  --no-http2  --resolve HOST:PORT:ADDRESS
             --keylog FILE  --mode regular|socks5|transparent|reverse:URL|upstream:URL[@HOST:PORT] (repeatable; the
                   first takes --listen)  --reverse-tls  --upstream-proxy URL
             --upstream-proxy-auth-file FILE (user:password)
             --body-limit BYTES (default 1048576)  --redact HEADER  --via  --keep-alt-svc  --quiet
             --config FILE (JSON, keys as in config/devproxy.example.json; its relative paths are read from its
                   directory, ~ is the home directory; flags win, and their paths are the working directory's)
             --header-timeout S (default 30)  --idle-timeout S (120)  --connect-timeout S (10)  --upstream-timeout S (60)
             --allow-remote  --proxy-auth FILE (user:password lines)  --passphrase-file FILE
             --persona GLOB=NAME (team, unpinned, untrusted, expired, wrong-host, self-signed, passthrough, tls12,
                                   no-forward-secrecy)
             --session FILE|new|off (the SQLite session store; default `new`: under the data directory, newest 20
                   kept; `off`: none, and no web UI)
             --store-body-limit BYTES (default 67108864)  --web HOST:PORT (default 127.0.0.1:8081)  --no-web
             --web-password-file FILE (needed, with --allow-remote, for --web beyond loopback)
             --report-uri GLOB  --reports FILE (default: reports.jsonl beside --log)  --sink-reports
             --leaf-key GLOB=KEY.pem (matching hosts' leaves carry this key: for leaf-only pinners; never a CA key)
             --client-cert [GLOB=]FILE (PEM cert+chain+key or .p12, repeatable; presented when an origin asks)
             --client-cert-passphrase-file FILE (else $DEVPROXY_CLIENT_CERT_PASSPHRASE)
             --verify-signature GLOB=KEYFILE[,SCHEME.json] (HMAC request signatures: flow field `signature`)
             --proto FILE (a .proto, compiled by protoc at start, or a FileDescriptorSet, protoc --include_imports
                   --descriptor_set_out=FILE; repeatable: gRPC and gRPC-Web messages of its methods are recorded
                   with field names, grpc.messages[].typed)
             --grpc-reflection (ask a gRPC server for a service --proto does not define, by server
                   reflection, once; its later calls are recorded with field names)
             --qr (the onboarding address's QR code, also when stdout is not a terminal)
             --pinset-rewrite URL_GLOB (QA: add the team root's pin to remote pin sets' "hashes" in flight;
                                        HTTP/1.1 and HTTP/2; see `qa verdict`'s pinset_injectable)
             --map-remote |FLOW-FILTER|URL-REGEX|REPLACEMENT (repeatable, mitmproxy's syntax: matching requests go to the
                   rewritten URL, \\1 its groups; the filter part may be left out: |URL-REGEX|REPLACEMENT)
             --map-local |FLOW-FILTER|URL-REGEX|FILE-OR-DIRECTORY (repeatable: answer matching requests from local files)
             --modify-headers |FLOW-FILTER|NAME|VALUE (repeatable, mitmproxy's syntax: on matching requests and
                   responses remove every NAME header, then set NAME: VALUE; an empty VALUE only removes, @FILE reads
                   the value; ~q requests only, ~s or ~c 404 responses only, no filter both)
             --modify-body |FLOW-FILTER|REGEX|REPLACEMENT (repeatable, mitmproxy's syntax: in matching request and
                   response bodies, decoded, replace every REGEX match (\\1 its groups), re-encoded and sent with a new
                   Content-Length; ~q requests only, ~s responses only, no filter both; @FILE reads the replacement
                   each time; larger bodies (8 MiB; 256 KiB to an HTTP/2 client, 4 MiB from one), event streams and
                   gRPC go on as they came)
             --block-list |FLOW-FILTER|STATUS-CODE (repeatable, mitmproxy's syntax: answer matching requests with the
                   status, never sending them on; 444 closes the connection without an answer)
             --intercept FLOW-FILTER (mitmproxy's option: hold matching requests, with their bodies, until the web UI
                   resumes them, as sent or edited, or aborts them; the UI's Intercept box changes it while running)
             --throttle PROFILE (a slow link for each client device, shared by its connections: Chrome DevTools'
                   presets fast-4g, slow-4g, 3g, offline (requests fail, as with no network), or DOWN/UP/LATENCY,
                   rates in kbit or mbit a second, the latency in ms: 1.6mbit/750kbit/150ms; the web UI's throttle
                   menu changes it while running)
             --throttle-hosts GLOB (repeatable: throttle only connections to these hosts; default all)
    Then: curl --proxy http://127.0.0.1:8080 --cacert ROOT.pem https://example.com/
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let options = try RunOptions(raw)
        // A flow log or HAR on standard output (`--log /dev/stdout | jq`): the banner, the status
        // lines and the console's flow lines go to stderr, or they land inside the data.
        let dataOnStandardOutput = try [options.value("log"), options.value("har")].contains {
            $0.flatMap(SecureFile.standardDescriptor(for:)) == STDOUT_FILENO
        }
        if dataOnStandardOutput { Output.linesToStandardError = true }
        var configuration: ProxyConfiguration
        do {
            configuration = try options.configuration()
        } catch let error as ConfigurationError {
            throw UsageError(error.description)
        }
        let quiet = try options.flag("quiet")
        if let keylog = try options.value("keylog") {
            try KeyLog.open(path: keylog)
        }
        let store = CAStore(directory: CAStore.resolveDirectory(flag: try options.value("ca-dir")))
        let passphrase = try PassphraseSource.resolve(file: try options.value("passphrase-file")).read()
        let email = LocalIdentity.email()
        let selector = SignerSelection(store: store, email: email, bundlePath: try options.value("intermediate"),
                                       signWithRoot: try options.flag("sign-with-root"), passphrase: passphrase)
        let selection = try selector.select()
        var issuer = LeafIssuer(signer: selection.signer)
        let fixedKeys = try fixedLeafKeys(options, store: store, signer: selection.signer)
        issuer.fixedKeys = fixedKeys
        // A local development CA (made by `run` itself) issues itself a new intermediate a day
        // before the current one ends, while running: a proxy left running past it refused every
        // host until restarted. A team CA's intermediates come from its security lead.
        let ownsItsIntermediates = try options.value("intermediate") == nil && !(try options.flag("sign-with-root"))
            && SignerSelection.isLocal(store)
        var renewal: (@Sendable (Date) throws -> LeafIssuer)?
        if ownsItsIntermediates {
            renewal = { [store, email] now in
                var renewed = LeafIssuer(signer: try SignerSelection.issueLocalIntermediate(store: store, email: email,
                                                                                             passphrase: nil, now: now))
                renewed.fixedKeys = fixedKeys
                Output.line("DevProxy: issued the local CA a new intermediate for \(email) (the last one ended within a day)")
                return renewed
            }
        } else if !(try options.flag("sign-with-root")) {
            // A team CA's intermediate: from a day before its end, the one that replaces it (the
            // bundle copied over --intermediate, or a newer one in the CA directory) is taken as it
            // arrives, and the end is announced once before and once after.
            let watch = SignerWatch(selection: selector, current: selection.signer)
            renewal = { now in
                let outcome = watch.look(at: now)
                for warning in outcome.warnings { Output.warning(warning) }
                guard let signer = outcome.replacement else { throw CAError(.notFound, "no new intermediate yet") }
                var renewed = LeafIssuer(signer: signer)
                renewed.fixedKeys = fixedKeys
                Output.line("DevProxy: signing leaves with the new intermediate of \(signer.certificate.email ?? email) (serial "
                            + "\(signer.certificate.serialHex), valid until \(ISO8601.string(signer.certificate.notAfter)))")
                return renewed
            }
        }
        let team = LeafCache(issuer: issuer, renewal: renewal)
        // A rule that does not parse is a usage error (exit 2), as a bad --mode is.
        let personaRules: PersonaRules
        do {
            personaRules = try PersonaRules(parsing: try options.values("persona"))
        } catch let error as CAError {
            throw UsageError(error.reason)
        }
        let leaves: LeafSource = personaRules.rules.isEmpty
            ? team : PersonaLeafSource(rules: personaRules, certificates: try PersonaCertificates(store: store, team: team))
        let pinSetRewrites = try options.values("pinset-rewrite")
        if !pinSetRewrites.isEmpty {
            guard let root = selection.signer.root else {
                throw CommandFailure("--pinset-rewrite needs the team root's certificate "
                                     + "(a bundle or CA directory that holds it)")
            }
            configuration.pinSetRewrite = PinSetRewrite(patterns: pinSetRewrites.map(GlobPattern.init),
                                                        pins: [Digest.sha256(root.spkiDER).base64])
        }
        var sinks = try makeSinks(options, quiet: quiet)
        let (session, sessions) = try sessionSink(options, store: store)
        if let session { sinks.append(session) }
        // A run that fails to start (a port in use, a bad option found late) keeps no session: the
        // new file would be an empty entry in `devproxy sessions`, and pruning for it would have
        // deleted the oldest real one each time.
        var started = false
        defer {
            if !started, let session {
                session.close()
                if sessions != nil { SessionDirectory.remove(session.store.path) }
            }
        }
        configuration.bodySpool = session?.spool
        let webListener = session == nil ? try noWebWithoutSession(options) : try webListener(options)
        if let webListener {
            configuration.forbiddenDestinations = [webListener.address]
            configuration.replaySecret = WebUI.newSecret()
            // Its throttle menu sets the network conditions while the proxy runs.
            configuration.throttleSwitch = ThrottleSwitch(configuration.throttle.map {
                ThrottleSwitch.Setting(profile: $0, hosts: configuration.throttleHosts)
            })
            // Its Rules view adds, switches and deletes map rules while the proxy runs.
            do {
                configuration.ruleBoard = try RuleBoard(start: try options.startRules(),
                                                        redact: configuration.redactHeaders)
            } catch let error as ConfigurationError {
                throw UsageError(error.description)
            }
            // Breakpoints: the web UI (or its API) resumes what they hold, so they come with it;
            // its Intercept box sets the filter when --intercept did not.
            do {
                configuration.intercepts = try Intercepts(filter: try options.value("intercept"))
            } catch let error as ConfigurationError {
                throw UsageError(error.description)
            }
        } else if try options.value("intercept") != nil {
            throw UsageError("--intercept holds requests until the web UI resumes them: it cannot go with "
                             + (session == nil ? "--session off" : "--no-web"))
        }
        if let reports = try reportCollector(options, store: store, personas: !personaRules.rules.isEmpty) {
            sinks.append(reports)
            if try options.flag("sink-reports") {
                configuration.localRoutes.append(.sinkReports { reports.isReportRequest(method: $0, url: $1, contentType: $2) })
            }
        } else if try options.flag("sink-reports") {
            throw UsageError("--sink-reports needs somewhere to store the reports: --log FILE or --reports FILE")
        }
        // The onboarding site installs the root the leaves chain to (the bundle's, with --intermediate).
        let fromStore = try options.value("intermediate") == nil ? try? store.rootCertificate() : nil
        let teamRoot = fromStore ?? selection.signer.root
        let onboarding = teamRoot.map(OnboardingSite.init(root:))
        configuration.onboarding = onboarding
        let server: ProxyServer
        var wireGuardKeys: WireGuardKeyFile?
        DescriptorLimit.raise()
        do {
            server = try ProxyServer(configuration: configuration, leaves: leaves, sinks: sinks)
            if configuration.modes.filter({ $0.kind == .wireguard }).count > 1 {
                throw UsageError("--mode wireguard is given twice: one WireGuard listener serves every device "
                                 + "(devproxy wireguard --peer N adds one)")
            }
            if let mode = configuration.modes.first(where: { $0.kind == .wireguard }) {
                #if os(Linux)
                (server.wireGuard, wireGuardKeys) = try WireGuardSetup.capture(mode, directory: store.directory,
                                                                               allowRemote: configuration.allowRemote)
                #else
                throw CommandFailure("--mode wireguard needs Linux (a TUN device in a network namespace)")
                #endif
            }
            try server.start()
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        } catch let error as NetworkError {
            throw CommandFailure(error.message)
        }
        started = true
        keepGRPCSchemas(server: server, configuration: configuration, session: session?.store, sinks: sinks)
        // Said once the run has started: a failed start named a file it then removed.
        if let session { Output.line("session: \(session.store.path)") }
        if let session, let sessions { sessions.prune(sparing: session.store.path) }
        let address = server.address?.description ?? "?"
        if !quiet {
            printBanner(selection: selection, store: store, address: address, configuration: configuration,
                        bundle: try options.value("intermediate"))
        }
        selection.warnings.forEach(Output.warning)
        // Said even with --quiet: a proxy that is slow on purpose says so.
        if let throttle = configuration.throttle {
            Output.line("throttle: \(ThrottleSwitch.Setting(profile: throttle, hosts: configuration.throttleHosts))")
        }
        // Said even with --quiet, as the throttle is: rules change what the app gets, and one kept in
        // a config file is easily forgotten (`rules: 2 map-remote, 1 block-list (1 from devproxy.json)`).
        if let line = try rulesLine(options) { Output.line(line) }
        // The web UI's throttle menu changes it while the proxy runs; the console says each change.
        configuration.throttleSwitch?.observe { setting in
            Output.line("throttle: " + (setting.map { "\($0) (set in the web UI)" } ?? "off (set in the web UI)"))
        }
        // The web UI's Rules view changes the map rules while the proxy runs; the console says each change.
        configuration.ruleBoard?.observe { Output.line($0.description) }
        // Said even with --quiet: requests and responses will wait until someone resumes them.
        if let filter = configuration.intercepts?.filterText {
            Output.line("intercept: \(filter) (matching requests and responses wait in the web UI until they are "
                        + "resumed or aborted there)")
        }
        if configuration.proxyCredentials.isEmpty {
            // --allow-remote was given (else the bind was refused): say what it opens without --proxy-auth.
            for listener in server.boundListeners where !listener.address.isLoopback
                && [.regular, .socks5, .upstream].contains(listener.kind) {
                Output.warning("\(listener.address) (\(listener.name)) takes connections from the network without "
                               + "credentials: anyone who reaches it can use the proxy, and whatever this machine reaches; "
                               + "--proxy-auth FILE asks for a user and password (Android's Wi-Fi proxy setting cannot send them)")
            }
        }
        if let onboarding { try printOnboarding(onboarding, server: server, options: options, quiet: quiet) }
        // Catch SIGINT/SIGTERM before saying we listen: a script that stops us as soon as it reads
        // that line must not find the signal discarded (setting SIG_IGN drops a pending one).
        let termination = TerminationSignals()
        // Scripts and tests read these lines for the ports: `listening on HOST:PORT (MODE)`.
        for (_, name, bound) in server.boundListeners { Output.line("listening on \(bound) (\(name))") }
        if let capture = server.wireGuard, let wireGuardKeys {
            capture.start { Output.line($0) }
            try printWireGuard(capture, keys: wireGuardKeys, options: options, quiet: quiet)
        }
        let reportsPath = sinks.lazy.compactMap { ($0 as? ReportCollector)?.path }.first
        let web = try session.flatMap { session in
            try webListener.map {
                try startWeb($0, options: options, store: session.store, server: server, configuration: configuration,
                             selection: selection, ca: store, reportsPath: reportsPath, wireGuardKeys: wireGuardKeys)
            }
        }
        termination.wait()
        web?.stop()
        if !quiet {
            // Through the console's queue: nobody may be reading stdout, and we must still exit.
            let stopping = "stopping: finishing in-flight exchanges (up to \(Int(configuration.shutdownGrace)) s)"
            let console = sinks.lazy.compactMap { $0 as? ConsoleFlowPrinter }.first
            if let console { console.note(stopping) } else { Output.line(stopping) }
        }
        server.stop()
        if !quiet, let store = session?.store {
            let saved = savedSessionLine(path: store.path)
            let console = sinks.lazy.compactMap { $0 as? ConsoleFlowPrinter }.first
            if let console {
                // The console is closed but still writes; at most its close timeout again for a
                // stalled output.
                console.note(saved)
                console.flush(timeout: ConsoleFlowPrinter.closeTimeout)
            } else {
                Output.line(saved)
            }
        }
        // A flow log or HAR file that could not be written lost flows: the run failed.
        var failures = sinks.compactMap { ($0 as? JSONLinesFlowLog)?.writeError ?? ($0 as? HARFlowSink)?.writeError }
            .map(\.reason) + sinks.compactMap { ($0 as? ReportCollector)?.writeError }
        if let store = session?.store, let failure = store.writeFailure {
            failures.append("the session store \(store.path) could not write some flows: \(failure.reason)")
        }
        failures.forEach { Output.error($0) }
        return failures.isEmpty ? 0 : 1
    }

    /// `rules: 2 map-remote, 1 map-local`, the rules given at start by kind, with how many came from
    /// the config file; nil for none.
    static func rulesLine(_ options: RunOptions) throws -> String? {
        let rules = try options.startRules()
        guard !rules.isEmpty else { return nil }
        var counts: [(RuleBoard.Kind, Int)] = []
        for rule in rules {
            if let index = counts.firstIndex(where: { $0.0 == rule.kind }) { counts[index].1 += 1 } else { counts.append((rule.kind, 1)) }
        }
        let fromFile = rules.filter { $0.origin == .config }.count
        let file = try options.value("config") ?? "the config file"
        return "rules: " + counts.map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", ")
            + (fromFile > 0 ? " (\(fromFile) from \(file))" : "")
    }

    /// What the run leaves, said at exit: `session saved: PATH (N flows; devproxy web PATH opens it)`,
    /// counted from the closed file (read-only); a file that cannot be read back is named without a count.
    static func savedSessionLine(path: String) -> String {
        let count = (try? SessionStore(path: path, readOnly: true)).flatMap { store -> Int? in
            defer { store.close() }
            return try? store.count()
        }
        let flows = count.map { "\($0) " + ($0 == 1 ? "flow" : "flows") + "; " } ?? ""
        return "session saved: \(path) (\(flows)`devproxy web \(ShellSyntax.sh.word(path))` opens it)"
    }

    /// `--leaf-key GLOB=KEY.pem` rules, each refused when its key is a CA's (the root, the
    /// signer and its chain, the QA alternate root, any CA in the ledger).
    private static func fixedLeafKeys(_ options: RunOptions, store: CAStore, signer: Signer) throws -> [FixedLeafKey] {
        let arguments = try options.values("leaf-key")
        guard !arguments.isEmpty else { return [] }
        var authorities = [signer.certificate] + signer.chain + [signer.root].compactMap { $0 }
        if store.exists, let root = try? store.rootCertificate() { authorities.append(root) }
        let alternate = QAAlternateRoot(store: store)
        if alternate.exists, let signer = try? alternate.signer() { authorities.append(signer.certificate) }
        let ledgerPins = Set(((try? store.ledger.read().records) ?? []).filter { $0.type != .revocation }.compactMap(\.spkiPin))
        return try arguments.map { argument in
            do {
                let rule = try FixedLeafKey.parse(argument)
                try rule.refusingCAKeys(authorities, ledgerPins: ledgerPins)
                return rule
            } catch let error as CAError {
                throw CommandFailure(error.reason)
            }
        }
    }

    /// Pin-failure reports go to `--reports FILE`, else `reports.jsonl` beside the flow log (a plain
    /// file), else
    /// `./reports.jsonl` when the run is about pinning (personas, `--report-uri`, `--sink-reports`).
    private static func reportCollector(_ options: RunOptions, store: CAStore, personas: Bool) throws -> ReportCollector? {
        let patterns = try options.values("report-uri")
        let sinking = try options.flag("sink-reports")
        let path: String
        if let explicit = try options.value("reports") {
            path = explicit
        } else if let log = try options.value("log"), JSONLinesFlowLog.isPlainFile(log) {
            // Not beside `/dev/stdout`: that would be a file in /dev.
            path = PathName.join(PathName.directory(of: log), "reports.jsonl")
        } else if personas || !patterns.isEmpty || sinking {
            path = "reports.jsonl"
        } else {
            return nil
        }
        return try ReportCollector(path: path, reportURIPatterns: patterns, store: store.exists ? store : nil)
    }

    /// `--session off`: the run keeps no session store.
    private static func sessionIsOff(_ options: RunOptions) throws -> Bool {
        try options.value("session") == "off"
    }

    /// Every flow also goes to a SQLite session store (0600): `--session FILE`, or by default
    /// (`--session new`) a new file under the data directory's `sessions/`, of which the newest
    /// 20 are kept. Bodies up to `--store-body-limit` (default 64 MiB) each, past their first
    /// 64 KiB through a spool under the data directory's `spool/` (docs/session-store.md).
    /// `--session off`: no store (nil), as mitmdump keeps nothing unless told to: flows go only
    /// to `--log`, `--har` and the console, and the web UI, which reads the store, is off.
    /// - Returns: the sink (nil with `--session off`), and the directory its file was made in for
    ///   this run (`--session new`), which the run prunes once it has started; nil for `--session FILE`.
    private static func sessionSink(_ options: RunOptions, store: CAStore) throws
        -> (sink: SessionStoreSink?, sessions: SessionDirectory?) {
        let value = try options.value("session") ?? "new"
        if try sessionIsOff(options) {
            if try options.value("store-body-limit") != nil {
                throw UsageError("--store-body-limit sets the session store's limit: it cannot go with --session off")
            }
            Output.line("session: off (flows are not stored; the web UI is off)")
            return (nil, nil)
        }
        var configuration = SessionStoreConfiguration()
        if let limit = try options.value("store-body-limit") {
            guard let bytes = Int(limit), bytes >= 0 else {
                throw UsageError("--store-body-limit must be a number of bytes")
            }
            configuration.bodyLimit = bytes
        }
        var path = value
        let sessions = value == "new" ? SessionDirectory(path: store.directory + "/sessions") : nil
        if let sessions { path = try sessions.newSessionPath() }
        do {
            let sink = try SessionStoreSink(store: try SessionStore(path: path, configuration: configuration),
                                            spoolDirectory: store.directory + "/spool")
            return (sink, sessions)
        } catch let error as SessionStoreError where error.code == .inUse {
            throw CommandFailure("cannot open the session store \(path): \(error.reason); give this run another "
                                 + "--session FILE (or watch that one with: devproxy web \(shellQuoted(path)))")
        } catch let error as SessionStoreError {
            throw CommandFailure("cannot open the session store \(path): \(error.reason)")
        }
    }

    /// `path` as a shell reads it back: as it is when it has nothing a shell treats specially,
    /// else single-quoted (a printed command is copied and run).
    static func shellQuoted(_ path: String) -> String {
        guard path.contains(where: { !($0.isLetter || $0.isNumber || "/._-~+@:,=".contains($0)) }) else { return path }
        return "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func makeSinks(_ options: RunOptions, quiet: Bool) throws -> [FlowSink] {
        var sinks: [FlowSink] = []
        if let log = try options.value("log") {
            sinks.append(try JSONLinesFlowLog(path: log))
        }
        if let har = try options.value("har") {
            let sink = HARFlowSink(path: har)
            try sink.writeEmpty()
            sinks.append(sink)
        }
        if !quiet {
            // Where the flows of lines the console drops can still be seen.
            let stored = try !sessionIsOff(options)
            let log = try options.value("log") != nil
            let keptBy = stored && log ? "the session store and --log have them"
                : stored ? "the session store has them" : log ? "--log has them" : nil
            sinks.append(ConsoleFlowPrinter(fileHandle: Output.linesToStandardError ? .standardError : .standardOutput,
                                            keptBy: keptBy))
        }
        return sinks
    }

    private static func printBanner(selection: SignerSelection.Result, store: CAStore, address: String, configuration: ProxyConfiguration,
                                    bundle: String?) {
        for note in selection.notes { Output.line("DevProxy: \(note)") }
        let proxy = "http://\(address)"
        // An engineer running from a bundle may have no CA directory: the bundle holds the root.
        let root = bundle == nil ? (try? store.rootCertificate()) : selection.signer.root
        guard let root else { return }
        var rootFile = store.rootCertificatePath
        if let bundle {
            rootFile = teamRootFile(root, store: store) ?? bundle
            if rootFile == bundle {
                Output.warning("could not write the team root apart from \(bundle); the commands below name the bundle, "
                               + "which holds your intermediate's key: never copy it to a device")
            }
        }
        let rootLine = "DevProxy: root certificate \(rootFile == bundle ? "in \(rootFile) (its last certificate)" : rootFile)\n"
            + "          pin \(root.pin)"
        // The use lines follow the first listener: a transparent or reverse one is no HTTP proxy
        // (pointed at as one, it refused the connection as a loop), a SOCKS5 one takes SOCKS.
        let port = address.split(separator: ":").last.map(String.init) ?? "PORT"
        // A name-constrained intermediate passes example.com through with its real certificate,
        // which `--cacert ROOT` then refuses: the example names a host it decrypts.
        let example = selection.signer.permittedDNS.first.map { "https://\($0.hasPrefix(".") ? String($0.dropFirst()) : $0)/" }
            ?? "https://example.com/"
        switch configuration.modes.first?.kind {
        case .transparent?:
            Output.line(rootLine + "\n  use it:     redirect traffic to it (`devproxy transparent-rules --port \(port)` prints the "
                        + "rules), and trust the root where the apps run: SSL_CERT_FILE=\(rootFile), or `devproxy trust install`")
        case .reverse?:
            Output.line(rootLine + "\n  use it:     point clients at \(address) in place of \(configuration.modes.first?.url.map { "\($0)" } ?? "the origin")"
                        + "; for HTTPS (--reverse-tls) they trust the root: curl --cacert \(rootFile)")
        case .socks5?:
            Output.line(rootLine + "\n  trust it:   curl --socks5-hostname \(address) --cacert \(rootFile) \(example)")
        case .wireguard?:
            Output.line(rootLine + "\n  use it:     a device's WireGuard app with the config `devproxy wireguard` prints (or its QR "
                        + "code), then the root installed on the device from http://devproxy.test/")
        default:
            // A terminal's tools through the proxy (`devproxy exec`): the root alone in
            // SSL_CERT_FILE, as this line used to say, failed every host passed through.
            let options = ((address == "127.0.0.1:8080" ? [] : [" --proxy \(address)"])
                + (bundle == nil && store.directory == CAStore.resolveDirectory(flag: nil) ? [] : [" --root \(rootFile)"]))
                .joined()
            Output.line("""
            \(rootLine)
              trust it:   curl --proxy \(proxy) --cacert \(rootFile) \(example)
                          devproxy exec\(options) -- your-tool   (this shell: eval "$(devproxy env\(options))")
              on a phone: set the Wi-Fi proxy to this machine's address and port, then open http://devproxy.test/
                          (or the onboarding address below before the proxy is set) and install the root from there;
                          apps that ignore the Wi-Fi proxy (Flutter): --mode wireguard (devproxy wireguard --help)
            """)
        }
    }

    /// The team root of an `--intermediate` bundle in a file of its own, `DIR/team-roots/root-XXXXXXXX.pem`
    /// (0644, the first 8 hex digits of its SHA-256) under the CA directory: the banner's `--cacert`
    /// and `SSL_CERT_FILE` named the bundle, which holds the intermediate's private key, so a
    /// developer who copied it to a device or a CI job to trust the root copied the key with it.
    /// Nil when the file cannot be written.
    static func teamRootFile(_ root: Certificate, store: CAStore) -> String? {
        let directory = store.directory + "/team-roots"
        let name = "root-" + root.sha256Fingerprint.replacingOccurrences(of: ":", with: "").prefix(8).lowercased() + ".pem"
        let path = directory + "/" + name
        do {
            try SecureFile.makePrivateDirectory(directory)
            if (try? SecureFile.read(path, what: "the team root")) != Array(root.pem.utf8) {
                try SecureFile.write(Array(root.pem.utf8), to: path, mode: SecureFile.publicMode)
            }
            return path
        } catch {
            return nil
        }
    }

    /// `onboarding: http://HOST:PORT/` (scripts read the address from this line), and its QR code
    /// when stdout is a terminal or with `--qr`.
    private static func printOnboarding(_ site: OnboardingSite, server: ProxyServer, options: RunOptions,
                                        quiet: Bool) throws {
        guard let listener = server.boundListeners.first(where: { $0.kind == .regular })?.address else { return }
        let address = OnboardingAddress(listener: listener)
        site.setAddress(address.url, loopbackOnly: address.loopbackOnly)
        let reach = address.loopbackOnly
            ? " (this machine only: a phone cannot reach it; for a phone run with --listen 0.0.0.0:\(listener.port)"
              + " --allow-remote)"
            : " (open it on the device, or http://\(OnboardingSite.host)/ once the device uses the proxy)"
        Output.line("onboarding: \(address.url)" + reach)
        // No QR code a phone would open as itself (127.0.0.1), even asked for; the line above says why.
        guard !address.loopbackOnly else { return }
        guard try options.flag("qr") || (!quiet && isatty(STDOUT_FILENO) == 1),
              let code = try? QRCode(encoding: address.url) else { return }
        Output.raw(String(code.terminalText().dropLast()))
    }

    /// SIGINT and SIGTERM, caught from `init` on; `wait()` blocks until one arrives.
    final class TerminationSignals {
        private let done = DispatchSemaphore(value: 0)
        private var sources: [DispatchSourceSignal] = []

        /// SIGHUP too (the terminal closed, an SSH session dropped): it ended the process at once,
        /// and `--har`, written at exit, stayed the empty document, and the store's last batch
        /// went uncommitted. Not when it arrives ignored (`nohup devproxy run`), which is kept.
        init() {
            let queue = DispatchQueue(label: "devproxy.signals")
            var signals = [SIGINT, SIGTERM]
            let hangUp = signal(SIGHUP, SIG_IGN)
            if unsafeBitCast(hangUp, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self) { signals.append(SIGHUP) }
            for signalNumber in signals {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
                source.setEventHandler { [done] in done.signal() }
                source.resume()
                sources.append(source)
            }
        }

        func wait() {
            done.wait()
            sources.forEach { $0.cancel() }
        }
    }
}
