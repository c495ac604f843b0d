import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import TestSupport

/// A DevProxy server in this process on 127.0.0.1:0 with a team PKI, collecting its flows.
/// Stopped when released.
final class ProxyHarness {
    let pki: PKIFixture
    let server: ProxyServer
    let sink = CollectingSink()
    let port: Int

    init(pki: PKIFixture? = nil, configure: (inout ProxyConfiguration) -> Void = { _ in }, leaves: LeafSource? = nil,
         extraSinks: [FlowSink] = []) throws {
        let pki = try pki ?? PKIFixture()
        self.pki = pki
        var configuration = ProxyConfiguration()
        configuration.listenPort = 0
        configuration.shutdownGrace = 1
        configure(&configuration)
        server = try ProxyServer(configuration: configuration, leaves: leaves ?? LeafCache(issuer: LeafIssuer(signer: pki.signer)),
                                 sinks: [sink] + extraSinks)
        try server.start()
        port = try require(server.address?.port)
    }

    deinit { server.stop() }

    var proxyURL: String { "http://127.0.0.1:\(port)" }

    /// curl through the proxy, trusting only the team root.
    func curl(_ arguments: [String], timeout: TimeInterval = 30) throws -> Subprocess.Result {
        try Subprocess.run("curl", ["-sS", "--proxy", proxyURL, "--cacert", pki.rootPath, "--max-time", "20"] + arguments, timeout: timeout)
    }

    /// Python lines that open `t`, a TLS socket through this proxy to `host:port` (CONNECT, then
    /// TLS trusting only the team root); scripts continue from there.
    func pythonTunnel(to port: Int, host: String = "localhost") -> String {
        """
        import base64, os, socket, ssl, sys
        s = socket.create_connection(("127.0.0.1", \(self.port)))
        s.sendall(b"CONNECT \(host):\(port) HTTP/1.1\\r\\nHost: \(host):\(port)\\r\\n\\r\\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 200")
        t = ssl.create_default_context(cafile="\(pki.rootPath)").wrap_socket(s, server_hostname="\(host)")
        """
    }

    /// Python lines that read `t` until the proxy closes it and print what came.
    static let pythonPrintUntilClose = """

        data = b""
        while True:
            chunk = t.recv(65536)
            if not chunk: break
            data += chunk
        sys.stdout.write(data.decode())
        """

    /// Waits until `count` flows have been recorded (they are emitted as exchanges finish).
    @discardableResult
    func flows(count: Int, timeout: TimeInterval = 10) -> [Flow] {
        let deadline = Date().addingTimeInterval(timeout)
        while sink.flows.count < count && Date() < deadline { usleep(10_000) }
        return sink.flows
    }
}

/// A sink that keeps every flow in memory.
final class CollectingSink: FlowSink {
    private let stored = Mutex<[Flow]>([])
    func record(_ flow: Flow) { stored.withLock { $0.append(flow) } }
    var flows: [Flow] { stored.withLock { $0 } }
}

/// `#require` outside a test function: throws instead of recording an issue.
func `require`<T>(_ value: T?, _ message: String = "missing value") throws -> T {
    guard let value else { throw TestFailure(message) }
    return value
}
