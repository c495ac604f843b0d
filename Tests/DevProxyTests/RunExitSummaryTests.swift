import Foundation
import Testing
import TestSupport

/// What `devproxy run` says of itself around the flows. At exit: what it leaves, the session file,
/// its flows counted from the closed file, and the command that opens it (mitmdump's `-w` leaves a
/// file without a word; a user who ran with the default `--session new` had to find it with
/// `devproxy sessions`). At start: the rules in force, by kind.
@Suite struct RunExitSummaryTests {
    @Test func theExitNamesTheSessionItsFlowsAndHowToOpenIt() throws {
        let dir = TemporaryDirectory()
        // A directory whose name the shell would split: the command is quoted for it.
        let folder = dir.file("it's here")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let session = folder + "/run.sqlite"
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--upstream-ca", origin.caPath, "--session", session,
                                         "--no-web"])
        for n in [5, 7] {
            let result = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                                                     dir.file("ca/root.pem"), origin.url("/cl?n=\(n)")])
            #expect(result.status == 0, "\(result.output)")
        }
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let last = stopped.stdout.split(separator: "\n").last.map(String.init)
        #expect(last == "session saved: \(session) (2 flows; `devproxy web '\(folder.replacingOccurrences(of: "'", with: "'\\''"))/run.sqlite'` opens it)",
                "\(stopped.stdout.split(separator: "\n").suffix(3))")

        // The command it names, as a shell reads it, names that file, which holds the two flows.
        let command = try #require(last?.split(separator: "`").dropFirst().first.map(String.init))
        let word = try Subprocess.run("/bin/sh", ["-c", command.replacingOccurrences(of: "devproxy web ", with: "printf %s ")])
        #expect(word.stdout == session, "\(word.output)")
        let rows = try Subprocess.run("python3", ["-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("
                                                  + "'select count(*) from flows').fetchone()[0])", session])
        #expect(rows.stdout == "2\n", "\(rows.output)")
    }

    /// The rules in force are said at start, even with `--quiet` (as the throttle is): a rule kept
    /// in a config file changes what the app gets and is easily forgotten; none, no line.
    @Test func theRulesInForceAreSaidAtStart() throws {
        let dir = TemporaryDirectory()
        let config = dir.write("devproxy.json", """
            {"map_remote": "|example.com|http://localhost:3000", "block_list": ["|~d ads|404", "|~d track|444"]}
            """)
        _ = dir.write("user.json", "{}")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--config", config, "--map-local",
                                         "|/user|" + dir.file("user.json"), "--session", "off", "--quiet"])
        #expect(proxy.banner.split(separator: "\n").contains("rules: 2 block-list, 1 map-remote, 1 map-local (3 from \(config))"),
                "\(proxy.banner)")
        _ = proxy.stop()
        let plain = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", "off", "--quiet"])
        #expect(!plain.banner.contains("rules:"), "\(plain.banner)")
        _ = plain.stop()
    }

    @Test func quietSaysNothingAtExit() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--session", dir.file("run.sqlite"), "--no-web", "--quiet"])
        let stopped = proxy.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(!stopped.stdout.contains("session saved"), "\(stopped.stdout)")
    }
}
