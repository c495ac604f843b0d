import Foundation
import Testing
import TestSupport

/// `devproxy run` without `--quiet` whose standard output nobody reads: the proxy keeps serving,
/// drops console lines it cannot print (and says how many), and still exits on SIGTERM.
@Suite struct RunCommandConsoleTests {
    /// Sends `ARGV[3]` keep-alive GETs through the proxy at port `ARGV[1]` to the plain origin at
    /// `ARGV[2]`, each URL ~6 kB long (the request line limit is 8 KiB) so that ~10 console lines
    /// fill a 64 KiB pipe and ~40 the console's 256 KiB queue; prints how many were answered 200.
    static let client = """
    import http.client, sys
    proxy, origin, count = (int(a) for a in sys.argv[1:4])
    connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10)
    answered = 0
    for i in range(count):
        connection.request("GET", "http://127.0.0.1:%d/cl?n=3&i=%d&pad=%s" % (origin, i, "p" * 6000))
        response = connection.getresponse()
        answered += response.status == 200 and response.read() == b"hel"
    print(answered)
    """

    /// Runs `count` requests; they must all be answered, in well under the client's time limit.
    static func drive(_ proxy: DevProxyProcess, origin: OriginServer, count: Int) throws {
        let started = Date()
        let arguments = ["-c", client, String(proxy.port), String(origin.port), String(count)]
        let result = try Subprocess.run("python3", arguments, timeout: 60)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.stdout == "\(count)\n", "\(result.output)")
        #expect(elapsed < 30, "\(count) requests took \(elapsed) s")
    }

    @Test func aConsoleNobodyReadsNeverStallsTheProxy() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca")])
        try Self.drive(proxy, origin: origin, count: 120)

        // Now read: the lines kept come out, then the notice, then the shutdown line.
        let console = PipeDrain(proxy.stdout.fileHandleForReading)
        kill(proxy.process.processIdentifier, SIGTERM)
        let text = try #require(console.finish(timeout: 15), "devproxy did not exit after SIGTERM")
        let stop = proxy.stop()
        #expect(stop.status == 0 && proxy.process.terminationReason == .exit, "\(stop.stderr)")
        let lines = text.split(separator: "\n").map(String.init)
        let flows = lines.filter {
            $0.contains(" GET http://127.0.0.1:\(origin.port)/cl?n=3&i=") && $0.contains(" → 200 ")
        }
        let notices = lines.compactMap(ConsoleFlowPrinterQueueTests.droppedCount)
        #expect(notices.count == 1, "\(lines.filter { !$0.contains(" GET ") })")
        // Run with the session store and no --log: the notice names only the store.
        #expect(lines.contains { $0.hasSuffix("(the console could not keep up; the session store has them)") })
        #expect(flows.count + (notices.first ?? 0) == 120, "\(flows.count) printed, \(notices) dropped")
        #expect(Set(flows).count == flows.count)
        // Then what the run leaves: the session, with its flows counted.
        #expect(lines.dropLast().last?.hasPrefix("stopping: finishing in-flight exchanges") == true, "\(lines.suffix(2))")
        #expect(lines.last?.hasPrefix("session saved: ") == true && lines.last?.contains(" (120 flows; `devproxy web ") == true,
                "\(lines.suffix(2))")
    }

    @Test func theProxyExitsWhileNobodyReadsItsConsole() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca")])
        try Self.drive(proxy, origin: origin, count: 100)
        let stopping = Date()
        let stop = proxy.stop(timeout: 10)
        let elapsed = Date().timeIntervalSince(stopping)
        #expect(stop.status == 0 && proxy.process.terminationReason == .exit, "killed, not exited: \(stop.stderr)")
        #expect(elapsed < 6, "exit took \(elapsed) s")
        // What sat in the pipe: some of the flows' lines, so the console really was stalled.
        let printed = stop.stdout.split(separator: "\n").filter { $0.contains("/cl?n=3&i=") }.count
        #expect(printed > 0 && printed < 100, "\(printed) lines in the pipe")
        #expect(!stop.stdout.contains("stopping:"))
    }
}
