@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Open descriptors are a resource hostile traffic exhausts first: `devproxy run` raises its soft
/// limit to the hard one, and at the limit it waits for a descriptor to free instead of spinning.
@Suite(.serialized) struct DescriptorLimitTests {
    /// Under a soft limit of 256 with a hard limit of 4,096 (`prlimit`), the proxy runs with 4,096:
    /// it kept 256 and failed connections with "too many open files" from about 120 tunnels.
    @Test(.backstop) func theSoftLimitIsRaisedToTheHardOne() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--no-web", "--session", "off", "--quiet"],
                                        launcher: ["prlimit", "--nofile=256:4096", "--"])
        #expect(try Self.openFilesLimit(pid: proxy.process.processIdentifier) == "4096")
        #expect(proxy.stop().status == 0)
    }

    /// With every descriptor in use (a hard limit of 64, clients that have sent nothing yet), the
    /// clients that come wait in the listen queue while the proxy sleeps: the accept loop retried at
    /// once and spun a core (98 % measured). Once the others close, a waiting client is served.
    @Test(.backstop) func outOfDescriptorsTheProxyWaitsWithoutSpinning() throws {
        let origin = try ScriptedOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--no-web", "--session", "off", "--quiet"],
                                        launcher: ["prlimit", "--nofile=64:64", "--"])
        let probe = ProcessProbe(pid: proxy.process.processIdentifier)
        var holders: [RawClient] = []
        for _ in 0..<80 { holders.append(try RawClient.plain(port: proxy.port)) }
        usleep(1_500_000)
        #expect(probe.descriptors() >= 62, "the proxy holds \(probe.descriptors()) descriptors: not at its limit")
        let before = try Self.cpuSeconds(pid: proxy.process.processIdentifier)
        usleep(3_000_000)
        let used = try Self.cpuSeconds(pid: proxy.process.processIdentifier) - before
        #expect(used < 0.75, "the proxy used \(used) s of CPU in 3 s at its descriptor limit")
        holders.removeAll()
        let result = try Subprocess.run("curl", ["-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                 "http://127.0.0.1:\(origin.port)/"], timeout: 30)
        #expect(result.stdout == "ok", "\(result.output)")
        #expect(proxy.stop().status == 0)
    }

    /// `Max open files`' soft limit in /proc/PID/limits.
    static func openFilesLimit(pid: Int32) throws -> String {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") } ?? ""
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.map(String.init) ?? ""
    }

    /// User and system CPU time of the process so far, in seconds.
    static func cpuSeconds(pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        // After the command: state is field 3, utime 14 and stime 15 (proc(5)).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw TestFailureMessage("unreadable /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
