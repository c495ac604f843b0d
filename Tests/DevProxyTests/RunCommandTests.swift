import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// `devproxy run` as a process: first-run CA creation, the `listening on` line, the flow log,
/// graceful shutdown, bounded memory on a large download, and refusals.
@Suite struct RunCommandTests {
    /// An origin that accepts TCP and never answers TLS (a hung server, a firewall that stalls):
    /// the client's connection thread waited the whole upstream timeout in the origin's handshake,
    /// so a client that gave up was recorded a minute later, blamed for its own handshake, and a
    /// stop meanwhile took 35 s and lost the flow. Now the client's hang-up ends the wait (its flow
    /// says the origin had not answered), whether it offered h2 (the origin is dialled before its
    /// handshake) or only HTTP/1.1 (its first request waits for the eager connection), and a stop
    /// records the flow as aborted within its grace.
    @Test func aClientThatGivesUpOnASilentOriginIsRecordedAtOnce() throws {
        let dir = TemporaryDirectory()
        let silent = try Listener(host: "127.0.0.1", port: 0)
        let held = Mutex<[Socket]>([])
        let accepting = Thread { while let socket = (try? silent.accept(timeout: 20)) ?? nil { held.withLock { $0.append(socket) } } }
        accepting.start()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl")],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        let url = "https://localhost:\(silent.address.port)/"
        let clock = ContinuousClock()
        for version in ["--http2", "--http1.1"] {
            let start = clock.now
            let result = try Subprocess.run("curl", ["-sS", version, "-m", "2", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "--cacert", dir.file("ca/root.pem"), url], timeout: 20)
            #expect(result.status != 0)
            #expect(clock.now - start < .seconds(5), "\(version)")
        }
        Thread.sleep(forTimeInterval: 1)
        let (recorded, _) = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(recorded.count == 2, "\(recorded.map { String(describing: $0.error) })")
        for flow in recorded {
            #expect(flow.error?.kind == "client_closed", "\(String(describing: flow.error))")
            #expect(flow.error?.message.contains("while DevProxy was still connecting to localhost:\(silent.address.port)") == true,
                    "\(String(describing: flow.error))")
        }
        // A stop while a client waits on the silent origin ends within its grace, the flow aborted.
        let arguments = ["-sS", "-m", "30", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca/root.pem"), url]
        let waiting = Thread { _ = try? Subprocess.run("curl", arguments, timeout: 40) }
        waiting.start()
        Thread.sleep(forTimeInterval: 1)
        let stopping = clock.now
        let stopped = proxy.stop()
        #expect(clock.now - stopping < .seconds(10), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("their flows are missing"), "\(stopped.stderr)")
        let (all, _) = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(all.count == 3)
        #expect(all.last?.error?.kind == "aborted", "\(String(describing: all.last?.error))")
    }

    /// The dual-stack transparent setup `transparent-rules --ipv6` prints starts: `[::]` takes IPv6
    /// only beside `0.0.0.0` (dual-stack, it failed "Address already in use", and alone it took
    /// IPv4 connections v4-mapped, without an original destination, refused as loops).
    @Test func dualStackTransparentListenersStartSideBySide() throws {
        let dir = TemporaryDirectory()
        let free = try Subprocess.run("python3", ["-c", "import socket; s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[1])"])
        let port = try #require(Int(free.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--no-web", "--allow-remote",
                                         "--mode", "transparent@0.0.0.0:\(port)", "--mode", "transparent@[::]:\(port)"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], listen: false)
        // A transparent listener is no HTTP proxy: the banner points at the rules, not at `curl --proxy`.
        #expect(proxy.banner.contains("use it:     redirect traffic to it (`devproxy transparent-rules --port \(port)`"),
                "\(proxy.banner)")
        #expect(!proxy.banner.contains("curl --proxy"), "\(proxy.banner)")
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect((proxy.banner + stopped.stdout).contains("listening on [::]:\(port) (transparent)"), "\(stopped.stdout)")
    }

    @Test func firstRunCreatesACAAndLogsFlowsAndStopsCleanly() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--upstream-ca", origin.caPath],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        #expect(proxy.banner.contains("created a local development CA in \(dir.file("ca"))"))
        #expect(proxy.banner.contains("issued an intermediate for dev@example.test"))
        #expect(proxy.banner.contains("pin sha256/"))
        #expect(proxy.banner.contains("curl --proxy http://127.0.0.1:\(proxy.port) --cacert \(dir.file("ca"))/root.pem"))
        let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca/root.pem"),
                                                 origin.url("/cl?n=5")])
        #expect(result.stdout == "hello", "\(result.output)")
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stdout.contains("GET \(origin.url("/cl?n=5")) → 200"))
        #expect(dir.mode("flows.jsonl") == 0o600)
        let (flows, problems) = try FlowLogReader.read(path: dir.file("flows.jsonl"))
        #expect(problems.isEmpty)
        #expect(flows.count == 1)
        #expect(flows.first?.signer?.email == "dev@example.test")
        #expect(dir.mode("ca") == 0o700)
        #expect(dir.mode("ca/root.key") == 0o600)
    }

    /// Keep-alive connections between requests sleep until their next request, and quiet
    /// passed-through tunnels until traffic (or a failed keepalive probe): forty of each cost the proxy
    /// no wake-ups (a 250 ms polling loop was 160 a second for the first, a 1 s one 40 for the
    /// second), and each still serves its next request.
    @Test func idleConnectionsDoNotWakeTheProxy() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--quiet", "--passthrough", "localhost"])
        let absolute = Array("GET \(origin.url("/cl?n=2", tls: false)) HTTP/1.1\r\nHost: localhost:\(origin.port)\r\n\r\n".utf8)
        let originForm = Array("GET /cl?n=2 HTTP/1.1\r\nHost: localhost:\(origin.port)\r\n\r\n".utf8)
        let connect = Array("CONNECT localhost:\(origin.port) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
        let clients = try (0..<40).map { _ in try PlainClient(port: proxy.port) }
        defer { clients.forEach { $0.close() } }
        let tunnels = try (0..<40).map { _ in
            let tunnel = try PlainClient(port: proxy.port)
            #expect(try tunnel.exchange(connect + originForm) == "HTTP/1.1 200")
            return tunnel
        }
        defer { tunnels.forEach { $0.close() } }
        #expect(try clients.map { try $0.exchange(absolute) } == Array(repeating: "HTTP/1.1 200", count: 40))
        usleep(600_000)  // every connection past its first 250 ms wait
        let before = proxy.voluntaryContextSwitches
        sleep(1)
        let wakeUps = proxy.voluntaryContextSwitches - before
        // What is left: the accept loop's 4 ticks a second and stray runtime threads.
        #expect(wakeUps < 20, "\(wakeUps) wake-ups in a second with 40 idle connections and 40 quiet tunnels")
        #expect(try clients.map { try $0.exchange(absolute) } == Array(repeating: "HTTP/1.1 200", count: 40))
        #expect(try tunnels.map { try $0.exchange(originForm) } == Array(repeating: "HTTP/1.1 200", count: 40))
        _ = proxy.stop()
    }

    @Test func largeDownloadStreamsWithBoundedMemory() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--upstream-ca", origin.caPath, "--quiet"])
        let before = proxy.peakResidentBytes
        // What curl received, hashed by openssl: the flow's SHA-256 (computed beside the relay for
        // a body this large) must be the same.
        let curl = "curl -sS --proxy http://127.0.0.1:\(proxy.port) --cacert \(dir.file("ca/root.pem")) '\(origin.url("/big?mb=100"))'"
        let result = try Subprocess.run("bash", ["-c", "set -o pipefail; \(curl) | openssl dgst -sha256 -r"], timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        let peak = proxy.peakResidentBytes
        #expect(peak - before < 40 * 1024 * 1024, "peak RSS grew by \((peak - before) >> 20) MiB for a 100 MiB body")
        _ = proxy.stop()
        let flow = try #require(try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.first)
        #expect(flow.response?.body?.size == 100 * 1024 * 1024)
        #expect(flow.response?.body?.sha256 == String(result.stdout.prefix(64)), "\(result.output)")
        #expect(flow.response?.body?.truncated == true)
        #expect(flow.response?.body?.base64?.isEmpty == false)
    }

    @Test func nonLoopbackListenNeedsAllowRemote() throws {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "0.0.0.0:0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: refusing to listen on 0.0.0.0"), "\(result.output)")
        #expect(result.stderr.contains("--allow-remote"))
    }

    /// With --allow-remote and no --proxy-auth the proxy is open to whoever reaches it, and it
    /// started without a word of that; with credentials, or on loopback, nothing is said.
    @Test func aRemoteListenerWithoutCredentialsIsWarnedOf() throws {
        let dir = TemporaryDirectory()
        let open = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", "off", "--listen", "0.0.0.0:0",
                                        "--allow-remote"], listen: false)
        let openOutput = open.stop()
        #expect(openOutput.stderr.contains("warning: 0.0.0.0:\(open.port) (regular) takes connections from the network "
                                           + "without credentials"), "\(openOutput.stderr)")
        let credentials = dir.write("proxy.cred", "ana:s3cret\n")
        let guarded = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", "off", "--listen", "0.0.0.0:0",
                                           "--allow-remote", "--proxy-auth", credentials], listen: false)
        #expect(!guarded.stop().stderr.contains("without credentials"))
        let local = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", "off"])
        #expect(!local.stop().stderr.contains("without credentials"))
    }

    /// A port another program holds (8080 is many tools' default) is one `error:` line that says
    /// what to do, and exit 1.
    @Test func aPortInUseSaysWhatToDo() throws {
        let dir = TemporaryDirectory()
        let holder = try Listener(host: "127.0.0.1", port: 0)
        let port = holder.address.port
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:\(port)",
                                                              "--no-web", "--session", "off"], timeout: 20)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr == "error: cannot listen on 127.0.0.1:\(port): Address already in use (another program listens "
                + "there: choose another port, or port 0 for any free one)\n", "\(result.output)")
        _ = holder
    }

    /// The command a refusal names issues from the CA the run was given: without `--ca-dir` it
    /// went to another CA (`./ca`, or the local development CA).
    @Test func theIssueHintNamesTheCAItWasGiven() throws {
        let dir = TemporaryDirectory()
        let ca = dir.file("team-ca")
        #expect(try Subprocess.run(Subprocess.devproxy, ["ca", "init", "--ca-dir", ca]).status == 0)
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", ca, "--listen", "127.0.0.1:0", "--no-web"],
                                        environment: ["DEVPROXY_EMAIL": "ana@acme.dev"], timeout: 20)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("get one with `devproxy ca issue --ca-dir \(ca) --email ana@acme.dev`"), "\(result.stderr)")
    }

    /// `devproxy web` checks `--web` before it reads the file: a mistyped address made a large
    /// log import whole before it was refused.
    @Test(.backstop) func aBadWebAddressIsRefusedBeforeTheFileIsRead() throws {
        let started = Date()
        let result = try Subprocess.run(Subprocess.devproxy, ["web", "--web", "notaport", "/dev/zero"], timeout: 20)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.stderr == "error: --web notaport is not HOST:PORT (such as 127.0.0.1:8081; port 0 picks a free one)\n")
        #expect(Date().timeIntervalSince(started) < 2)
    }

    /// A `--persona` rule that does not parse is a usage error (exit 2, as a bad `--mode`), with
    /// the valid names: it was exit 1, which scripts read as a runtime failure.
    @Test func aBadPersonaRuleIsAUsageError() throws {
        let dir = TemporaryDirectory()
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0",
                                                              "--no-web", "--persona", "x=bogus"], timeout: 20)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.stderr.hasPrefix("error: unknown persona \"bogus\" in \"x=bogus\"; choose one of team, unpinned"),
                "\(result.stderr)")
    }

    /// `--web` on the command line wins over the config file's `no_web` (flags win), and beside
    /// `--no-web` it is a usage error: both times the UI was dropped without a word.
    @Test func aWebFlagIsNeverDroppedSilently() throws {
        let dir = TemporaryDirectory()
        let both = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0",
                                                            "--no-web", "--web", "127.0.0.1:0"], timeout: 20)
        #expect(both.status == 2 && both.stderr == "error: --web and --no-web contradict each other; give one\n",
                "\(both.output)")
        let config = dir.write("c.json", #"{"no_web": true}"#)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--config", config, "--web", "127.0.0.1:0"], webUI: true)
        #expect(proxy.webUI != nil, "\(proxy.banner)")
        _ = proxy.stop()
    }

    /// A run that fails to start keeps no session and prunes none: each failed start left an empty
    /// `session-….sqlite` behind and, keeping the newest 20, deleted the oldest real session.
    @Test func aFailedStartLeavesTheSessionsAsTheyWere() throws {
        let dir = TemporaryDirectory()
        let sessions = dir.file("ca") + "/sessions"
        try FileManager.default.createDirectory(atPath: sessions, withIntermediateDirectories: true)
        let old = (1...20).map { String(format: "%@/session-20250101T0000%02dZ.sqlite", sessions, $0) }
        for (index, file) in old.enumerated() {
            FileManager.default.createFile(atPath: file, contents: Data("x".utf8),
                                           attributes: [.modificationDate: Date(timeIntervalSince1970: Double(1_700_000_000 + index))])
        }
        let holder = try Listener(host: "127.0.0.1", port: 0)
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen",
                                                              "127.0.0.1:\(holder.address.port)", "--no-web"], timeout: 20)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("Address already in use"), "\(result.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: sessions).sorted()
        #expect(left == old.map { ($0 as NSString).lastPathComponent }, "\(left)")
        // Nor does it name one: `session: PATH` named the file it then removed.
        #expect(!result.stdout.contains("session: "), "\(result.stdout)")
        _ = holder
    }

    @Test func configFileSuppliesOptionsAndFlagsWin() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let config = dir.write("devproxy.json", """
        {"log": "\(dir.file("from-config.jsonl"))", "quiet": true, "redact": ["X-Secret"], "listen": "127.0.0.1:1"}
        """)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--config", config])
        #expect(!proxy.banner.contains("root certificate"), "quiet from the config file")
        _ = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "-H", "X-Secret: hunter2",
                                        "http://127.0.0.1:\(origin.port)/cl?n=3"])
        _ = proxy.stop()
        let flow = try #require(try FlowLogReader.read(path: dir.file("from-config.jsonl")).flows.first)
        #expect(flow.request?.headers.contains(["X-Secret", "<redacted>"]) == true)
        // A list flag adds to the file's list: a `--redact` on the command line kept X-Secret
        // in clear (the file's list was replaced).
        let both = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--config", config, "--redact", "X-Api-Key",
                                        "--log", dir.file("both.jsonl")])
        _ = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(both.port)", "-H", "X-Secret: hunter2",
                                        "-H", "X-Api-Key: k3y", "http://127.0.0.1:\(origin.port)/cl?n=3"])
        _ = both.stop()
        let merged = try #require(try FlowLogReader.read(path: dir.file("both.jsonl")).flows.first)
        #expect(merged.request?.headers.contains(["X-Secret", "<redacted>"]) == true, "\(String(describing: merged.request?.headers))")
        #expect(merged.request?.headers.contains(["X-Api-Key", "<redacted>"]) == true)
        let bad = dir.write("bad.json", "{\"lisen\": \"127.0.0.1:1\"}")
        let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--config", bad])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("unknown key \"lisen\"; did you mean \"listen\"?"))
    }

    /// `--listen` given twice listens on the last (an alias `dp='devproxy run --listen
    /// 127.0.0.1:8080'` then `dp --listen …`): it said "--listen was given twice". Here the
    /// harness appends `--listen 127.0.0.1:0` after a `--listen` on a port that cannot be bound
    /// without root; `--resolve`, repeatable, keeps both rules.
    @Test func theLastListenWinsAndRepeatableOptionsAccumulate() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", "off", "--quiet", "--listen", "127.0.0.1:1",
                                         "--resolve", "one.test:\(origin.port):127.0.0.1",
                                         "--resolve", "two.test:\(origin.port):127.0.0.1"])
        #expect(proxy.port != 1)
        for host in ["one.test", "two.test"] {
            let answer = try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                                                     "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                     "http://\(host):\(origin.port)/cl?n=3"])
            #expect(answer.stdout == "200", "\(host): \(answer.output)")
        }
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    /// A team config checked into a repository names its files relative to itself: run from
    /// another directory, its `upstream_ca`, `ca_dir`, `log` and `leaf_key`-style `GLOB=FILE`
    /// values were read against the working directory ("cannot read certs/origin.pem"), and its
    /// log landed wherever the run started. `~` is the home directory, as in ssh_config; a path on
    /// the command line stays the working directory's.
    @Test func aConfigFilesPathsAreReadAgainstItsDirectory() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        try FileManager.default.createDirectory(atPath: dir.file("repo/team/certs"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("home"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: origin.caPath, toPath: dir.file("repo/team/certs/origin.pem"))
        _ = dir.write("repo/team/hmac.key", "k3y")
        _ = dir.write("repo/team/devproxy.json", """
        {"ca_dir": "ca", "log": "flows.jsonl", "upstream_ca": ["certs/origin.pem"], "har": "~/team.har",
         "verify_signature": ["localhost=hmac.key"], "session": "off", "quiet": true}
        """)
        let proxy = try DevProxyProcess(["--config", "../repo/team/devproxy.json", "--keylog", "keys.log"],
                                        environment: ["HOME": dir.file("home"), "DEVPROXY_EMAIL": "dev@example.test"],
                                        directory: dir.file("elsewhere"))
        let answer = try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                                                 "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                 "--cacert", dir.file("repo/team/ca/root.pem"), origin.url("/cl?n=3")])
        #expect(answer.stdout == "200", "\(answer.output)")
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let flow = try #require(try FlowLogReader.read(path: dir.file("repo/team/flows.jsonl")).flows.first)
        #expect(flow.response?.status == 200)
        #expect(flow.signature != nil, "the key file beside the config was read")
        #expect(FileManager.default.fileExists(atPath: dir.file("home/team.har")))
        #expect(FileManager.default.fileExists(atPath: dir.file("elsewhere/keys.log")), "a flag's path is the cwd's")
        #expect(!FileManager.default.fileExists(atPath: dir.file("elsewhere/flows.jsonl")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("elsewhere/ca")))
        // `~USER` that names nobody is one line naming the key.
        _ = dir.write("repo/team/nobody.json", "{\"log\": \"~no-such-user-here/flows.jsonl\", \"session\": \"off\"}")
        let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--config", dir.file("repo/team/nobody.json"),
                                                               "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0"],
                                         timeout: 30)
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr == "error: config key \"log\": ~no-such-user-here/flows.jsonl starts with ~no-such-user-here, "
                + "but there is no user no-such-user-here here\n", "\(refused.stderr)")
    }

    /// A config file's mistakes get one line each that says what to fix: a syntax error by line
    /// and column (it was "is not a JSON object" for every one), an empty value as an empty flag
    /// is, and `true` where a path goes is not the file "1". `"quiet": 1` is not `true`.
    @Test func configFileMistakesSayWhatToFix() throws {
        let dir = TemporaryDirectory()
        let cases: [(String, Int32, String)] = [
            ("{\"listen\": \"127.0.0.1:0\",\n \"quiet\": yes}", 1, "is not valid JSON (line 2, column 11: invalid value)"),
            ("\n", 1, "is empty, not a JSON object"),
            ("[\"--listen\"]", 1, "is a JSON array, not an object"),
            ("{\"log\": true}", 1, "config key \"log\" must be a string"),
            ("{\"log\": \"\"}", 2, "config key \"log\" is empty; give it a value or leave the key out"),
            ("{\"passthrough\": [\"a.dev\", \"\"]}", 2, "config key \"passthrough\" is empty"),
            ("{\"quiet\": 1}", 1, "config key \"quiet\" must be true or false"),
            // Foundation's parser let these through: the first kept a comma RFC 8259 refuses, the
            // second dropped one of two values without a word.
            ("{\"listen\": \"127.0.0.1:0\",\n \"no_web\": true,}", 1,
             "is not valid JSON (line 2, column 16: a comma before the } that closes it)"),
            ("{\"listen\": \"127.0.0.1:0\", \"listen\": \"127.0.0.1:1\"}", 1,
             "is not valid JSON (line 1, column 27: the key listen is given twice in one object)"),
            ("{\"passthrough\": [\"a.dev\", ]}", 1, "a comma before the ] that closes it"),
            // A rule of the file's that does not parse names the file (it named only `--map-remote`).
            ("{\"map_remote\": [\"|example.com|http://localhost:3000\", \"|a(\"]}", 2,
             ".json (the config file): --map-remote |a( is not a rule"),
        ]
        for (index, (text, status, expected)) in cases.enumerated() {
            let config = dir.write("config-\(index).json", text)
            let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--config", config,
                                                                  "--listen", "127.0.0.1:0", "--session", "off"],
                                            directory: dir.path, timeout: 30)
            #expect(result.status == status, "\(text): \(result.output)")
            #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(expected), "\(text): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(text): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("1")))
        // The command line's own bad rule beside the file's good one is the command line's.
        let config = dir.write("rules.json", "{\"map_remote\": \"|example.com|http://localhost:3000\"}")
        let flagged = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--config", config,
                                                               "--map-remote", "|b(", "--listen", "127.0.0.1:0",
                                                               "--session", "off"], directory: dir.path, timeout: 30)
        #expect(flagged.status == 2 && flagged.stderr.hasPrefix("error: --map-remote |b( is not a rule"), "\(flagged.output)")
    }

    /// Output files named by one character, relative to the working directory: Foundation's
    /// `deletingLastPathComponent` traps on such a path on Linux, and `--har a`, `devproxy har l
    /// -o h` and `qa verdict --log l` crashed (signal 4).
    @Test func oneCharacterFileNamesAreFiles() throws {
        let dir = TemporaryDirectory()
        _ = dir.write("l", "")
        let har = try Subprocess.run(Subprocess.devproxy, ["har", "l", "-o", "h"], directory: dir.path, timeout: 30)
        #expect(har.status == 0 && har.stdout.contains("Wrote 0 entries to h"), "\(har.output)")
        #expect(dir.mode("h") == 0o600)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--har", "a", "--log", "b", "--persona",
                                         "x.dev=unpinned", "--session", "off"], directory: dir.path)
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("a"))))
        #expect((written as? [String: Any])?["log"] != nil)
        #expect(FileManager.default.fileExists(atPath: dir.file("reports.jsonl")))
    }

    /// `--header-timeout`, `--upstream-timeout` (here from the config file) and friends set the
    /// proxy's timeouts; a value that is not a whole number of seconds from 1 to 86400 stops the
    /// start with one line.
    @Test func timeoutsComeFromFlagsAndTheConfigFile() throws {
        let dir = TemporaryDirectory()
        let silent = try ScriptedOrigin("", then: .hold(8))
        let config = dir.write("devproxy.json", "{\"upstream_timeout\": 1}")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--config", config, "--header-timeout", "1",
                                         "--log", dir.file("flows.jsonl"), "--quiet", "--session", "off"])
        let started = Date()
        let slowHead = try RawClient.plain(port: proxy.port)
        slowHead.send("GET http://127.0.0.1:\(silent.port)/ HTTP/1.1\r\n")
        let timedOut = RawAnswer(slowHead.readToEnd(timeout: 8))
        #expect(timedOut.status == 408, "\(timedOut.text)")
        let silentAnswer = try Subprocess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "8",
                                                       "--proxy", "http://127.0.0.1:\(proxy.port)", "http://127.0.0.1:\(silent.port)/"])
        #expect(silentAnswer.stdout == "504")
        #expect(Date().timeIntervalSince(started) < 6, "the 1 s timeouts took \(Date().timeIntervalSince(started)) s")
        _ = proxy.stop()
        let kinds = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.compactMap { $0.error?.kind }
        #expect(Set(kinds) == ["client_timeout", "upstream_timeout"], "\(kinds)")
        for bad in ["0", "1.5", "86401", "soon"] {
            let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--idle-timeout", bad,
                                                                   "--listen", "127.0.0.1:0"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--idle-timeout must be a whole number of seconds from 1 to 86400 (got \(bad))"),
                    "\(refused.output)")
        }
    }

    /// With `--intermediate BUNDLE` the banner's `--cacert` and `SSL_CERT_FILE` named the bundle,
    /// which holds the intermediate's private key: a developer who copied that file to trust the
    /// root elsewhere copied the key with it. The root now has a file of its own.
    @Test func theBannerOfABundleNamesARootFileWithoutTheKey() throws {
        let pki = try PKIFixture()
        let origin = try OriginServer()
        let data = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", data.file("ca"), "--intermediate", pki.bundlePath, "--session", "off",
                                         "--upstream-ca", origin.caPath])
        let rootFile = data.file("ca/team-roots/root-\(pki.root.sha256Fingerprint.replacingOccurrences(of: ":", with: "").prefix(8).lowercased()).pem")
        #expect(proxy.banner.contains("DevProxy: root certificate \(rootFile)\n"), "\(proxy.banner)")
        #expect(proxy.banner.contains("--cacert \(rootFile) "), "\(proxy.banner)")
        #expect(!proxy.banner.contains("--cacert \(pki.bundlePath)"))
        let text = try String(contentsOfFile: rootFile, encoding: .utf8)
        #expect(!text.contains("PRIVATE KEY") && text == pki.root.pem)
        let fingerprint = try Subprocess.run("openssl", ["x509", "-in", rootFile, "-noout", "-fingerprint", "-sha256"])
        #expect(fingerprint.stdout.contains(pki.root.sha256Fingerprint), "\(fingerprint.output)")
        // What the banner says to run works with that file.
        let curl = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", rootFile,
                                               "--max-time", "10", origin.url("/cl")])
        #expect(curl.status == 0, "\(curl.output)")
    }

    /// A bundle whose key the engineer encrypted opens with `--passphrase-file`, as the error for
    /// it says: the passphrase was asked for and then never passed on.
    /// Without `--intermediate`, run signs with the engineer's newest active intermediate (a
    /// narrower one the lead issued later wins over an older one that runs longer: it took the
    /// one expiring last), and finds its bundle from any directory: the ledger recorded the path
    /// relative to where `ca issue` ran, so `run --ca-dir ../team-ca` elsewhere found none.
    @Test func runSignsWithTheNewestIntermediateFromAnyDirectory() throws {
        let lead = TemporaryDirectory()
        let elsewhere = TemporaryDirectory()
        func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
            let result = try Subprocess.run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", lead.path, Subprocess.devproxy] + arguments)
            #expect(result.status == 0, "\(result.output)")
            return result
        }
        _ = try devproxy(["ca", "init", "--ca-dir", "team-ca"])
        _ = try devproxy(["ca", "issue", "--ca-dir", "team-ca", "--email", "bo@acme.dev", "--days", "7"])
        Thread.sleep(forTimeInterval: 1.1)
        let newer = try devproxy(["ca", "issue", "--ca-dir", "team-ca", "--email", "bo@acme.dev", "--days", "1",
                                  "--permit-dns", "acme.dev"])
        let serial = try #require(newer.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "serial ") else { return nil }
            return String(line[range.upperBound...].drop { $0 == " " }.prefix { $0.isHexDigit })
        }.first, "\(newer.stdout)")
        // Both directories are in the same temporary directory: the CA is reached relatively.
        let proxy = try DevProxyProcess(["--ca-dir", "../" + URL(fileURLWithPath: lead.path).lastPathComponent + "/team-ca",
                                         "--session", "off", "--no-web"],
                                        environment: ["DEVPROXY_EMAIL": "bo@acme.dev"], directory: elsewhere.path)
        #expect(proxy.banner.contains("signing leaves with the intermediate of bo@acme.dev (serial \(serial)"), "\(proxy.banner)")
        #expect(proxy.stop().status == 0)
    }

    @Test func anEncryptedBundleOpensWithThePassphraseFile() throws {
        let pki = try PKIFixture()
        let data = TemporaryDirectory()
        let pass = data.write("bundle.pass", "correct horse\n")
        let key = try Subprocess.run("openssl", ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", pki.bundlePath,
                                                 "-passout", "file:\(pass)"])
        #expect(key.status == 0, "\(key.output)")
        let certificates = String(decoding: try SecureFile.read(pki.bundlePath, what: "bundle"), as: UTF8.self)
            .components(separatedBy: "-----END PRIVATE KEY-----\n").last ?? ""
        let bundle = data.write("encrypted-bundle.pem", key.stdout + certificates)
        let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", data.file("ca"), "--intermediate", bundle,
                                                               "--listen", "127.0.0.1:0", "--session", "off"])
        #expect(refused.status == 1 && refused.stderr.contains("--passphrase-file"), "\(refused.output)")
        let proxy = try DevProxyProcess(["--ca-dir", data.file("ca"), "--intermediate", bundle, "--passphrase-file", pass,
                                         "--session", "off"])
        #expect(proxy.banner.contains("signing leaves with the intermediate of ana@acme.dev"), "\(proxy.banner)")
        #expect(proxy.stop().status == 0)
    }

    /// A bundle that is not what `ca issue` writes is said: one without its root (no trust line
    /// can be printed), or a self-signed CA given as the intermediate (leaves signed by a root,
    /// traced to no engineer). Both were taken silently, the second as "the intermediate of …".
    @Test func aBundleWithoutItsRootOrWithARootIsSaid() throws {
        let pki = try PKIFixture()
        let data = TemporaryDirectory()
        let text = String(decoding: try SecureFile.read(pki.bundlePath, what: "bundle"), as: UTF8.self)
        let rootless = data.write("rootless.pem", text.replacingOccurrences(of: pki.root.pem, with: ""))
        let proxy = try DevProxyProcess(["--ca-dir", data.file("ca"), "--intermediate", rootless, "--session", "off"])
        let stopped = proxy.stop()
        #expect(stopped.stderr.contains("warning: \(rootless) holds no root certificate"), "\(stopped.stderr)")
        let rootKey = String(decoding: try SecureFile.read(pki.store.rootKeyPath, what: "key"), as: UTF8.self)
        let selfSigned = data.write("root-bundle.pem", rootKey + pki.root.pem)
        let rooted = try DevProxyProcess(["--ca-dir", data.file("ca2"), "--intermediate", selfSigned, "--session", "off"])
        let ended = rooted.stop()
        #expect(ended.stderr.contains("warning: \(selfSigned) holds a self-signed CA (a root)"), "\(ended.stderr)")
        // Ending with a root that did not sign its intermediate: every client would refuse every
        // leaf, and the banner, onboarding page and `ca export` handed that root out.
        let other = try PKIFixture()
        let mismatched = data.write("mismatched.pem", text.replacingOccurrences(of: pki.root.pem, with: other.root.pem))
        let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", data.file("ca3"), "--intermediate", mismatched,
                                                               "--listen", "127.0.0.1:0", "--session", "off"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("did not sign its intermediate"), "\(refused.output)")
    }

    @Test func revokedIntermediateIsRefusedWithTheFix() throws {
        let pki = try PKIFixture()
        _ = try pki.store.revoke(serial: nil, email: "ana@acme.dev", reason: .keyCompromise, passphrase: nil)
        let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", pki.store.directory, "--intermediate", pki.bundlePath,
                                                              "--listen", "127.0.0.1:0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("was revoked"), "\(result.output)")
        #expect(result.stderr.contains("devproxy ca issue --ca-dir \(pki.store.directory) --email ana@acme.dev"), "\(result.stderr)")
    }

    @Test func shutdownRecordsInFlightExchangesAsAborted() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--upstream-ca", origin.caPath,
                                         "--har", dir.file("session.har"), "--quiet"])
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = ["curl", "-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca/root.pem"),
                            "--max-time", "30", origin.url("/slow?s=20")]
        client.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        client.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try client.run()
        defer { if client.isRunning { client.terminate() } }
        usleep(800_000)
        let started = Date()
        let stopped = proxy.stop()
        let took = Date().timeIntervalSince(started)
        #expect(stopped.status == 0)
        #expect(took < 9, "shutdown took \(took) s; the grace is 5 s")
        #expect(took > 4, "in-flight exchanges get their grace period")
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        #expect(flows.count == 1)
        #expect(flows.first?.error?.kind == "aborted", "\(flows)")
        // DevProxy cut it: the client did not close (the message blamed it).
        #expect(flows.first?.error?.message.contains("client_closed") == false, "\(String(describing: flows.first?.error))")
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("session.har")))) as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [Any]
        #expect(entries?.count == 1)
        #expect(dir.mode("session.har") == 0o600)
    }

    @Test func keyLogHoldsSecretsOfBothSides() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--keylog", dir.file("keys.log"), "--upstream-ca", origin.caPath, "--quiet"])
        let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca/root.pem"),
                                                 origin.url("/cl?n=5")])
        #expect(result.stdout == "hello")
        _ = proxy.stop()
        #expect(dir.mode("keys.log") == 0o600)
        let lines = dir.read("keys.log").split(separator: "\n")
        #expect(lines.allSatisfy { $0.split(separator: " ").count == 3 })
        let randoms = Set(lines.filter { $0.hasPrefix("CLIENT_TRAFFIC_SECRET_0 ") }.map { $0.split(separator: " ")[1] })
        #expect(randoms.count == 2, "one TLS 1.3 session with the client, one with the origin: \(lines)")
    }

    /// Files that hold secrets and already exist world-readable are tightened to 0600 (O_CREAT
    /// leaves an existing file's mode alone): the key log, the session store with its WAL, a HAR
    /// written through a link.
    @Test func existingSecretFilesAreTightenedTo0600() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        for name in ["keys.log", "s.sqlite", "real.har"] {
            _ = dir.write(name, "")
            chmod(dir.file(name), 0o644)
        }
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.har"), withDestinationPath: dir.file("real.har"))
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--keylog", dir.file("keys.log"), "--session",
                                         dir.file("s.sqlite"), "--har", dir.file("link.har"), "--upstream-ca", origin.caPath,
                                         "--quiet", "--no-web"])
        try expectHello(through: proxy, root: dir.file("ca/root.pem"), origin: origin)
        #expect(dir.mode("keys.log") == 0o600 && dir.mode("s.sqlite") == 0o600)
        #expect(!FileManager.default.fileExists(atPath: dir.file("s.sqlite-wal")) || dir.mode("s.sqlite-wal") == 0o600)
        _ = proxy.stop()
        #expect(dir.mode("real.har") == 0o600)
    }

    /// A key log that cannot be written any more (a FIFO whose reader went away, as a Wireshark
    /// reading it does; a full disk) stops with one warning, and the proxy goes on serving: the
    /// write had trapped and taken the proxy down on the next handshake.
    @Test func aKeyLogThatFailsStopsWithAWarningAndTheProxyGoesOn() throws {
        let (stopped, _) = try runWritingToAFIFOWhoseReaderLeaves("--keylog")
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("warning: the key log stopped (Broken pipe)"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("Fatal error"))
    }

    /// `--log` on a FIFO whose reader goes away: a warning at the first failed write, the proxy
    /// goes on serving, and at exit `error:` and status 1, since flows were lost. The log had been
    /// opened read-write, a reader of its own FIFO: its writes would have filled the pipe and then
    /// blocked for ever, holding every later line in memory and the proxy's exit with them.
    @Test func aFlowLogThatFailsWarnsAndTheExitStatusSaysSo() throws {
        let (stopped, fifo) = try runWritingToAFIFOWhoseReaderLeaves("--log")
        #expect(stopped.status == 1, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("warning: the flow log failed: cannot write \(fifo): Broken pipe"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("error: cannot write \(fifo): Broken pipe"), "\(stopped.stderr)")
    }

    /// `--log /dev/stdout` streams the flows to stdout (for jq) and exits 0: the log is not a
    /// regular file, so it is neither read back nor synced (fsync says EINVAL on a pipe).
    @Test func aFlowLogOnStdoutStreamsFlowsAndExitsCleanly() throws {
        let stopped = try runWithRequests(["--log", "/dev/stdout"])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("error") && !stopped.stderr.contains("warning"), "\(stopped.stderr)")
        let line = try #require(stopped.stdout.split(separator: "\n").first { $0.hasPrefix("{") })
        let flow = try JSONDecoder().decode(Flow.self, from: Data(line.utf8))
        #expect(flow.response?.status == 200)
        // Reports go beside a flow log that is a file, never into /dev.
        #expect(!FileManager.default.fileExists(atPath: "/dev/reports.jsonl"))
    }

    /// With the flow log on stdout, stdout carries the flows and nothing else, for `| jq` (the
    /// banner, `session:` and `listening on` go to stderr, console lines too without `--quiet`),
    /// and with stdout a file every line stays whole: the log had opened `/dev/stdout` again, with an
    /// offset of its own, and the console's lines through descriptor 1 overwrote flow lines.
    @Test func stdoutCarryingTheFlowLogCarriesOnlyFlows() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let out = dir.file("out.jsonl"), err = dir.file("err.txt")
        let command = "exec \(Subprocess.devproxy) run --ca-dir \(dir.file("ca")) --upstream-ca \(origin.caPath) --session off "
            + "--no-web --listen 127.0.0.1:0 --log /dev/stdout > \(out) 2> \(err)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var port: String?
        for _ in 0..<200 where port == nil {
            usleep(50_000)
            port = dir.read("err.txt").split(separator: "\n").first { $0.hasPrefix("listening on") }
                .flatMap { $0.split(separator: " ")[2].split(separator: ":").last.map(String.init) }
        }
        let proxyPort = try #require(port, "no listening line on stderr: \(dir.read("err.txt"))")
        for path in ["/cl?n=5", "/cl?n=7", "/cl?n=9"] {
            let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxyPort)", "--cacert",
                                                     dir.file("ca/root.pem"), origin.url(path)])
            #expect(result.status == 0, "\(result.output)")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let lines = dir.read("out.jsonl").split(separator: "\n")
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.allSatisfy { (try? JSONDecoder().decode(Flow.self, from: Data($0.utf8))) != nil }, "\(lines)")
        #expect(dir.read("err.txt").contains("listening on"))
    }

    /// SIGHUP (the terminal closed, an SSH session dropped) stops the proxy as SIGTERM does, so
    /// `--har`, written at exit, holds the flows: it ended the process at once and the HAR stayed
    /// the empty document.
    @Test func aHangUpWritesTheHARAsAStopDoes() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let har = dir.file("s.har")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--har", har, "--upstream-ca", origin.caPath,
                                         "--session", "off", "--quiet"])
        try expectHello(through: proxy, root: dir.file("ca/root.pem"), origin: origin)
        kill(proxy.process.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(20)
        while proxy.process.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!proxy.process.isRunning)
        #expect(proxy.stop().status == 0)
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any]
        #expect(((document?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 1)
    }

    /// `--har` through a link (`/dev/stdout`, a link to a file elsewhere) is written in place: the
    /// atomic write renamed a new file over the path, which replaced the link itself, and run as
    /// root with stdout going to a file, `/dev/stdout` became a regular file.
    @Test func aHARThroughALinkIsWrittenInPlace() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let real = dir.file("real.har"), link = dir.file("link.har")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--har", link, "--upstream-ca", origin.caPath,
                                         "--session", "off", "--quiet"])
        try expectHello(through: proxy, root: dir.file("ca/root.pem"), origin: origin)
        #expect(proxy.stop().status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == real)
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: real))) as? [String: Any]
        #expect(((har?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 1)

        let piped = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--har", "/dev/stdout", "--upstream-ca", origin.caPath,
                                         "--session", "off", "--quiet"])
        try expectHello(through: piped, root: dir.file("ca/root.pem"), origin: origin)
        let stopped = piped.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let document = try #require(stopped.stdout.firstIndex(of: "{").map { String(stopped.stdout[$0...]) })
        let entries = ((try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])?["log"]
                       as? [String: Any])?["entries"] as? [Any]
        #expect(entries?.count == 1, "\(stopped.stdout)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/dev/stdout")) != nil)
    }

    /// `--har` to a path that cannot be written fails at start-up with one `error:` line, rather
    /// than losing the session's flows at exit without a word; a writable path holds a valid
    /// (empty) HAR from the start.
    @Test func aHARPathIsCheckedAtStartUp() throws {
        let dir = TemporaryDirectory()
        let missing = dir.file("no-such-dir/session.har")
        let refused = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0",
                                                               "--session", "off", "--har", missing], timeout: 20)
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr == "error: cannot write \(missing): No such file or directory; choose a writable path\n",
                "\(refused.stderr)")
        // A directory too: it passed, and the flows were lost at exit.
        let directory = dir.file("out")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let toDirectory = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", dir.file("ca"), "--listen", "127.0.0.1:0",
                                                                   "--session", "off", "--har", directory], timeout: 20)
        #expect(toDirectory.status == 1 && toDirectory.stderr.contains("it is a directory"), "\(toDirectory.output)")
        let har = dir.file("session.har")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--har", har, "--session", "off", "--quiet"])
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any]
        #expect(((document?["log"] as? [String: Any])?["entries"] as? [Any])?.isEmpty == true)
        #expect(dir.mode("session.har") == 0o600)
        #expect(proxy.stop().status == 0)
    }

    /// A session store on a disk that fills up (a 1 MiB tmpfs; needs root to mount): the proxy
    /// goes on serving, says at once on stderr that the store failed, `/api/info` says why
    /// (`store_error`), and at exit `error:` and status 1. The writer had rolled the batches back
    /// and kept the failure where nobody read it: the web UI just stopped showing new flows.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aSessionStoreOnAFullDiskSaysSo() throws {
        let dir = TemporaryDirectory()
        let small = try SmallDisk()
        defer { withExtendedLifetime(small) {} }
        let disk = small.path
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", disk + "/session.sqlite",
                                         "--upstream-ca", origin.caPath, "--web", "127.0.0.1:0", "--quiet"], webUI: true)
        let body = dir.write("body.bin", String(repeating: "0123456789abcdef", count: 20_000))
        for _ in 0..<8 {
            let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                                                     dir.file("ca/root.pem"), "--data-binary", "@" + body, "-o", "/dev/null",
                                                     "-w", "%{http_code}", origin.url("/echo")])
            #expect(result.stdout == "200", "\(result.output)")
        }
        let ui = try #require(proxy.webUI)
        let (base, token) = DevProxyProcess.webAPI(ui)
        var info = ""
        for _ in 0..<50 where !info.contains("database or disk is full") {
            info = try Subprocess.run("curl", ["-sS", "-H", "Authorization: Bearer \(token)", base + "/api/info"]).stdout
            usleep(100_000)
        }
        #expect(info.contains("\"store_error\":\"database or disk is full"), "\(info)")
        let stopped = proxy.stop()
        #expect(stopped.status == 1, "\(stopped.stderr)")
        #expect(stopped.stderr.hasPrefix("warning: the session store \(disk)/session.sqlite failed: database or disk is full"),
                "\(stopped.stderr)")
        // Said when the store starts failing, not once a batch, and again (after a commit that
        // worked) only 30 s later: a disk on the edge of full, where some batches fit, said it up
        // to six times here.
        let warnings = stopped.stderr.components(separatedBy: "warning: the session store").count - 1
        #expect(warnings == 1, "\(warnings) warnings: \(stopped.stderr)")
        #expect(stopped.stderr.contains("error: the session store \(disk)/session.sqlite could not write some flows"),
                "\(stopped.stderr)")
    }

    /// `--log /dev/full` (every write ENOSPC, as a full disk): a warning at once, the proxy goes
    /// on, `error:` and status 1 at exit; and the device keeps its mode (the log tightened any
    /// path it opened to 0600, a device node included when run as root).
    @Test func aFlowLogOnAFullDiskWarnsAndLeavesADeviceAlone() throws {
        let stopped = try runWithRequests(["--log", "/dev/full"])
        #expect(stopped.status == 1, "\(stopped.stderr)")
        #expect(stopped.stderr.hasPrefix("warning: the flow log failed: cannot write /dev/full: No space left on device"),
                "\(stopped.stderr)")
        var status = stat()
        #expect(stat("/dev/full", &status) == 0 && status.st_mode & 0o777 == 0o666)
    }

    /// GET `/cl?n=5` of `origin` through `proxy` with curl, trusting the run's `root`: "hello".
    private func expectHello(through proxy: DevProxyProcess, root: String, origin: OriginServer) throws {
        let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", root,
                                                 origin.url("/cl?n=5")])
        #expect(result.stdout == "hello", "\(result.output)")
    }

    /// Runs the proxy with `option` naming a FIFO whose reader goes away once the proxy has opened
    /// it, sends two requests through it (both answered), and stops it.
    private func runWritingToAFIFOWhoseReaderLeaves(_ option: String) throws
        -> (stopped: (status: Int32, stdout: String, stderr: String), fifo: String) {
        let dir = TemporaryDirectory()
        let fifo = dir.file("output.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader, so that the proxy's open for writing does not wait; it goes away at once.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        return (try runWithRequests([option, fifo], requests: 2, started: { close(reader) }), fifo)
    }

    /// Runs the proxy with `options` (a CA of its own, no session store), calls `started` once it
    /// listens, sends `requests` GETs through it (each must be answered), and stops it.
    private func runWithRequests(_ options: [String], requests: Int = 1, started: () -> Void = {}) throws
        -> (status: Int32, stdout: String, stderr: String) {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--upstream-ca", origin.caPath, "--session", "off",
                                         "--quiet"] + options)
        started()
        for _ in 0..<requests {
            try expectHello(through: proxy, root: dir.file("ca/root.pem"), origin: origin)
        }
        return proxy.stop()
    }
}
