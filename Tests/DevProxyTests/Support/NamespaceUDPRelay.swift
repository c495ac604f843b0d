import Foundation
import TestSupport

/// UDP between `namespace`'s 127.0.0.1:PORT and this namespace's 127.0.0.1:PORT
/// (`Resources/netns_udp_relay.py`): a device namespace reaches a WireGuard endpoint on this
/// machine's loopback with no veth pair. A veth pair puts an address on a new interface here, and
/// every headless Chromium running in parallel (the browser tests) dropped its page load with
/// `ERR_NETWORK_CHANGED` (CI saw it). Ended by `stop()` or when released.
final class NamespaceUDPRelay {
    private let process = Process()
    private let input = Pipe()

    init(namespace: NetworkNamespace, port: Int) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", HTTP2Origin.resource("netns_udp_relay.py"), namespace.name, String(port)]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let ready = output.fileHandleForReading.readLine()
        guard ready == "ready" else {
            stop()
            throw TestFailure("netns_udp_relay.py \(namespace.name) \(port): \(ready)")
        }
    }

    deinit { stop() }

    func stop() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
