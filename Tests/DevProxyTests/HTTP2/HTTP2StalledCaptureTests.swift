import Foundation
import Synchronization
import Testing
import TestSupport

/// Issue 15's stall, with bodies past the capture's in-memory head: what each stalled stream has
/// already relayed is captured in the session store's spool on disk, not in the proxy's memory,
/// so the proxy's memory does not grow with streams × `--body-limit`.
@Suite struct HTTP2StalledCaptureTests {
    @Test(.backstop) func stalledStreamsKeepTheirCapturedBodiesOnDiskNotInMemory() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("big.bin", [UInt8](repeating: 0x5A, count: 10 << 20))
        let directory = TemporaryDirectory()
        // A log limit above what each stream relays: without the spool every stream's 4 MiB is in memory.
        let proxy = try DevProxyProcess(["--ca-dir", directory.file("ca"), "--upstream-ca", origin.caPath, "--quiet",
                                         "--body-limit", String(8 << 20)])
        let root = directory.file("ca/root.pem")
        let before = proxy.peakResidentBytes
        let stalled = Mutex<H2Attack.Output?>(nil)
        let failure = Mutex<String?>(nil)
        let (proxyPort, originPort) = (proxy.port, origin.port)
        let window = 4 << 20
        let streams = 40
        let attacker = Thread {
            do {
                let arguments = ["stall", String(streams), "/big.bin", "/index.html", "4", String(window)]
                let output = try H2Attack.run(proxyPort: proxyPort, root: root, port: originPort, arguments)
                stalled.withLock { $0 = output }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        attacker.start()
        // While the streams are stalled, their captures are files in the spool.
        let spool = directory.file("ca/spool")
        var files = 0
        let filesDeadline = Date().addingTimeInterval(30)
        while files < streams && Date() < filesDeadline && stalled.withLock({ $0 }) == nil {
            files = ((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? []).count
            usleep(50_000)
        }
        #expect(files == streams, "spool files while stalled: \(files)")
        let deadline = Date().addingTimeInterval(60)
        while stalled.withLock({ $0 }) == nil && failure.withLock({ $0 }) == nil && Date() < deadline { usleep(20_000) }
        let result = try #require(stalled.withLock { $0 }, "\(failure.withLock { $0 } ?? "timed out")")
        let relayed = result.bytes.filter { $0.key != String(2 * streams + 1) }
        #expect(relayed.count == streams && relayed.values.allSatisfy { $0 == window }, "\(result.bytes)")
        #expect(result.goaway == nil)
        let grown = proxy.peakResidentBytes - before
        // 40 × 4 MiB = 160 MiB relayed and captured; in memory per stream: the 64 KiB head (written
        // out once passed) and the one 256 KiB window queued for the client.
        #expect(grown < 64 << 20, "peak RSS grew by \(grown >> 20) MiB")
        _ = proxy.stop()
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? ["?"]).isEmpty, "spool left behind")
    }
}
