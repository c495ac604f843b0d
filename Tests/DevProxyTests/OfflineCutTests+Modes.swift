@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Offline on the other listeners: a SOCKS5 one (`--mode socks5`, curl `--socks5-hostname`) and a
/// reverse one (`--mode reverse:URL`) are cut as the regular one is (`OfflineCutTests`), and a run
/// with only such listeners can switch Offline on from the web UI.
extension OfflineCutTests {
    /// Two downloads through `proxy`, each stalling after 40 KiB (origin.py's `/drip`, waiting
    /// for `DIR/NAME.gate`): curl with `-sS -o DIR/NAME -w %{http_code} --max-time 40` and
    /// `covered` or `other` (its proxy and URL). Offline for `localhost` is switched on once both
    /// are flowing; then the other's gate opens; back online, curl runs once more with `fresh`.
    func cutOneOfTwo(_ dir: TemporaryDirectory, _ prelude: String, covered: [String], other: [String],
                             fresh: [String]) throws -> [String: Any] {
        func list(_ arguments: [String]) -> String {
            "[" + arguments.map { "'" + $0 + "'" }.joined(separator: ", ") + "]"
        }
        let script = prelude + """
            def curl(name, arguments):
                return subprocess.Popen(["curl", "-sS", "-o", "\(dir.path)/" + name, "-w", "%{http_code}",
                                         "--max-time", "40"] + arguments,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            covered, other = curl("covered", \(list(covered))), curl("other", \(list(other)))
            out = {"flowing": wait_for_size("\(dir.path)/covered", 40960) and wait_for_size("\(dir.path)/other", 40960)}
            out["set"] = throttle("offline", ["localhost"])["profile"]
            out["covered"] = finish(covered, 8)
            out["other_running"] = other.poll() is None
            open("\(dir.path)/other.gate", "w").close()
            out["other"] = finish(other, 10) + [other.stdout.read(), os.path.getsize("\(dir.path)/other")]
            out["cleared"] = throttle(None)
            fresh = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"]
                                   + \(list(fresh)), capture_output=True, text=True)
            out["fresh"] = fresh.stdout + fresh.stderr
            sys.stdout.write(json.dumps(out))
            """
        return try run(script)
    }

    /// What `cutOneOfTwo` saw, and the flow log of the stopped `proxy`: curl read a reset at once
    /// (56, `Recv failure: Connection reset by peer`) on the download to localhost, the other went on
    /// to its end; the cut flow says `offline`, with its 200 and the 40 KiB so far, on `listener`.
    func expectCutOneOfTwo(_ out: [String: Any], _ dir: TemporaryDirectory, _ proxy: DevProxyProcess,
                           listener: String, other: String) throws {
        #expect(out["flowing"] as? Bool == true && out["set"] as? String == "offline", "\(out)")
        let covered = out["covered"] as? [Any]
        #expect(covered?.first as? Int == 56 && (covered?[1] as? String)?.contains("reset") == true
                && (covered?.last as? Double ?? 99) < 5, "\(out)")
        #expect(out["other_running"] as? Bool == true, "\(out)")
        let otherRun = out["other"] as? [Any]
        #expect(otherRun?.first as? Int == 0 && otherRun?[3] as? String == "200" && otherRun?[4] as? Int == 40965,
                "\(out)")
        #expect(out["cleared"] is NSNull && out["fresh"] as? String == "200", "\(out)")
        _ = proxy.stop()
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        let cut = flows.filter { $0.error?.kind == "offline" }
        #expect(cut.count == 1 && cut.first?.server.host == "localhost" && cut.first?.throttle == "offline"
                && cut.first?.listener?.mode == listener
                && cut.first?.response?.status == 200 && (cut.first?.response?.body?.size ?? 0) >= 40960,
                "\(flows.map { ($0.server.host, $0.listener?.mode, $0.error, $0.response?.body?.size) })")
        #expect(flows.contains { $0.server.host == other && $0.error == nil && $0.response?.body?.size == 40965 },
                "\(flows.map { ($0.server.host, $0.error?.kind, $0.response?.body?.size) })")
    }

    /// A SOCKS5 listener (`--mode socks5`, curl `--socks5-hostname`): an intercepted HTTPS download
    /// to localhost is cut, one to origin.test (the same origin, `--resolve`) goes on.
    @Test func aSOCKS5HTTPSDownloadIsCut() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let socks = try HTTP2Origin.freePort()
        let (proxy, prelude) = try webProxy(dir, ["--mode", "regular", "--mode", "socks5@127.0.0.1:\(socks)",
                                                  "--upstream-ca", origin.caPath,
                                                  "--resolve", "origin.test:\(origin.port):127.0.0.1"])
        defer { _ = proxy.stop() }
        let client = ["--socks5-hostname", "127.0.0.1:\(socks)", "--cacert", dir.file("ca/root.pem")]
        let drip = "/drip?kb=40&gate=\(dir.path)/"
        let out = try cutOneOfTwo(dir, prelude,
                                  covered: client + ["https://localhost:\(origin.port)\(drip)covered.gate"],
                                  other: client + ["https://origin.test:\(origin.port)\(drip)other.gate"],
                                  fresh: client + ["https://localhost:\(origin.port)/headers"])
        try expectCutOneOfTwo(out, dir, proxy, listener: "socks5", other: "origin.test")
    }

    /// A SOCKS5 listener alone (no regular one: the web UI still sets the throttle; before, it
    /// answered 409, "no proxy runs behind it") with plain HTTP inside: the download to localhost
    /// is cut, the one to 127.0.0.1 goes on.
    @Test func aSOCKS5PlainDownloadIsCut() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let (proxy, prelude) = try webProxy(dir, ["--mode", "socks5"])
        defer { _ = proxy.stop() }
        let client = ["--socks5-hostname", "127.0.0.1:\(proxy.port)"]
        let drip = "/drip?kb=40&gate=\(dir.path)/"
        let out = try cutOneOfTwo(dir, prelude,
                                  covered: client + ["http://localhost:\(origin.port)\(drip)covered.gate"],
                                  other: client + ["http://127.0.0.1:\(origin.port)\(drip)other.gate"],
                                  fresh: client + ["http://localhost:\(origin.port)/headers"])
        // Replay alone needs a regular listener to enter through: refused with the way to add one.
        let (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        let replay = try Subprocess.run("curl", ["-sS", "-X", "POST", "-H", "Authorization: Bearer \(token)",
                                                 "--data", "{}", "-w", " %{http_code}", "--max-time", "10",
                                                 base + "/api/replay"], timeout: 15)
        #expect(replay.stdout.hasSuffix(" 409") && replay.stdout.contains("add --mode regular@127.0.0.1:PORT"),
                "\(replay.output)")
        try expectCutOneOfTwo(out, dir, proxy, listener: "socks5", other: "127.0.0.1")
    }

    /// Two reverse listeners alone to the same plain origin, one as `http://localhost:PORT`, one
    /// as `http://127.0.0.1:PORT`: Offline for localhost cuts the first's download, the second's
    /// goes on.
    @Test func aReverseDownloadIsCut() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let otherPort = try HTTP2Origin.freePort()
        let (proxy, prelude) = try webProxy(dir, ["--mode", "reverse:http://localhost:\(origin.port)", "--mode",
                                                  "reverse:http://127.0.0.1:\(origin.port)@127.0.0.1:\(otherPort)"])
        defer { _ = proxy.stop() }
        let drip = "/drip?kb=40&gate=\(dir.path)/"
        let out = try cutOneOfTwo(dir, prelude, covered: ["http://127.0.0.1:\(proxy.port)\(drip)covered.gate"],
                                  other: ["http://127.0.0.1:\(otherPort)\(drip)other.gate"],
                                  fresh: ["http://127.0.0.1:\(proxy.port)/headers"])
        try expectCutOneOfTwo(out, dir, proxy, listener: "reverse:http://localhost:\(origin.port)", other: "127.0.0.1")
    }
}
