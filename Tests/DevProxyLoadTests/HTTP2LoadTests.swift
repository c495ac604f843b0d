import CertAuthority
import Foundation
import Testing
import TestSupport
@testable import DevProxyLoad

/// `devproxy-load --http2` against real h2 origins (nghttpd, hypercorn, the grpcio echo server),
/// direct and through a CONNECT tunnel, checking the `--json` report bench/run reads.
@Suite(.serialized) struct HTTP2LoadTests {
    /// The report fields these tests read.
    struct Report: Decodable {
        var requests: Int
        var req_per_s: Double
        var bytes: Int
        var errors_total: Int
        var statuses: [String: Int]
        var first_error: String?
        var established: Int?
        var streams_completed: Int?
        var http_version: String
        var streams_per_connection: Int?
        var latency_ms: [String: Double]
    }

    /// Runs the built `devproxy-load` with `arguments` plus `--json` and decodes its report.
    static func load(_ arguments: [String]) throws -> Report {
        let result = try Subprocess.run(Subprocess.productsDirectory + "/devproxy-load", arguments + ["--json"], timeout: 60)
        guard result.status == 0, let report = try? JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8)) else {
            throw TestFailure("devproxy-load \(arguments.joined(separator: " ")) exited \(result.status): \(result.output)")
        }
        return report
    }

    /// Keep-alive streams on a few connections to nghttpd: every response is a 200 over HTTP/2,
    /// no errors, and the body bytes add up (nghttpd's index.html is 19 bytes).
    @Test func keepAliveStreamsAgainstNghttpd() throws {
        let origin = try HTTP2Origin(.nghttpd)
        let report = try Self.load([origin.url("/index.html"), "--http2", "-c", "2", "-m", "5", "-t", "1",
                                    "--duration", "1", "--warmup", "0.2", "--connect-to", "127.0.0.1:\(origin.port)",
                                    "--cafile", origin.caPath])
        #expect(report.errors_total == 0, "\(report.first_error ?? "")")
        #expect(report.requests > 50, "\(report)")
        #expect(report.statuses.keys.sorted() == ["200"])
        #expect(report.bytes == report.requests * "hello from nghttpd\n".utf8.count)
        #expect(report.http_version == "HTTP/2")
        #expect(report.streams_per_connection == 5)
    }

    /// Several large downloads on one connection arrive whole (the windows are acknowledged as the
    /// bytes come, so each stream runs past the 64 KiB initial window many times over).
    @Test func concurrentDownloadsArriveWhole() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("big.bin", [UInt8](repeating: 7, count: 3 << 20))
        let report = try Self.load([origin.url("/big.bin"), "--http2", "--mode", "stream", "-m", "4", "--duration", "30",
                                    "--connect-to", "127.0.0.1:\(origin.port)", "--cafile", origin.caPath])
        #expect(report.errors_total == 0, "\(report.first_error ?? "")")
        #expect(report.streams_completed == 4)
        #expect(report.bytes == 4 * (3 << 20))
    }

    /// Stall mode holds every stream with its head in and reads no body byte: nghttpd cannot send
    /// any into a zero window.
    @Test func stallHoldsStreamsWithoutReadingTheirBodies() throws {
        let origin = try HTTP2Origin(.nghttpd)
        try origin.serve("big.bin", [UInt8](repeating: 1, count: 1 << 20))
        let report = try Self.load([origin.url("/big.bin"), "--http2", "--mode", "stall", "-m", "20", "--duration", "1.5",
                                    "--connect-to", "127.0.0.1:\(origin.port)", "--cafile", origin.caPath])
        #expect(report.errors_total == 0, "\(report.first_error ?? "")")
        #expect(report.established == 20)
        #expect(report.bytes == 0)
    }

    /// gRPC unary calls to the grpcio echo server count when grpc-status is 0; a method that fails
    /// (NOT_FOUND, trailers-only) is counted as an error with its status, not as a success.
    @Test func grpcUnaryCallsAndTheirStatus() throws {
        let server = try GRPCEchoServer()
        let directory = TemporaryDirectory()
        // The 5-byte prefix, then field 1 = "hello" and field 2 = 7.
        let message = directory.write("msg.bin", bytes: [0, 0, 0, 0, 9, 0x0A, 5] + Array("hello".utf8) + [0x10, 7])
        let common = ["--http2", "-c", "1", "-m", "4", "--duration", "1", "--warmup", "0.2", "--data", message,
                      "-H", "content-type: application/grpc", "-H", "te: trailers",
                      "--connect-to", "127.0.0.1:\(server.port)", "--cafile", server.caPath]
        let ok = try Self.load(["https://localhost:\(server.port)/lab.Echo/Unary"] + common)
        #expect(ok.errors_total == 0, "\(ok.first_error ?? "")")
        #expect(ok.requests > 10)
        #expect(ok.bytes == ok.requests * 14, "each answer echoes the 14-byte message")
        let failing = try Self.load(["https://localhost:\(server.port)/lab.Echo/Fail"] + common)
        #expect(failing.requests == 0)
        #expect(failing.errors_total > 0)
        #expect(failing.first_error == "http: grpc-status 5")
    }

    /// Through a CONNECT proxy (a plain relay in Python) the tunnel carries h2 as well.
    @Test func throughAConnectTunnel() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let relay = try ConnectRelay()
        let report = try Self.load([origin.url("/echo"), "--http2", "-c", "2", "-m", "3", "--duration", "1", "--warmup", "0.2",
                                    "--proxy", "127.0.0.1:\(relay.port)", "--cafile", origin.caPath])
        #expect(report.errors_total == 0, "\(report.first_error ?? "")")
        #expect(report.requests > 10)
        #expect(relay.connectLines().allSatisfy { $0 == "CONNECT localhost:\(origin.port) HTTP/1.1" })
        #expect(!relay.connectLines().isEmpty)
    }

    /// An origin that does not choose h2 in ALPN is an error that says so, not a hang or a crash.
    @Test func originWithoutH2IsATLSErrorNamingALPN() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let report = try Self.load([origin.url("/echo"), "--http2", "--duration", "0.5", "--warmup", "0",
                                    "--connect-to", "127.0.0.1:\(origin.port)", "--cafile", origin.caPath])
        #expect(report.requests == 0)
        #expect(report.first_error?.hasPrefix("tls: the server chose") == true, "\(report.first_error ?? "")")
        #expect(report.first_error?.contains("in ALPN, not h2") == true)
    }

    /// The options refuse combinations HTTP/2 mode does not do, with a message saying what works.
    @Test func optionsRefuseWhatHTTP2ModeDoesNotDo() {
        func message(_ args: [String]) -> String? {
            do throws(ArgumentError) {
                _ = try LoadOptions.parse(args)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(message(["http://x:1/", "--http2"])?.contains("https://") == true)
        #expect(message(["https://x:1/", "--http2", "--mode", "newconn"])?.contains("keepalive, stream or stall") == true)
        #expect(message(["https://x:1/", "--mode", "stall"]) == "--mode stall needs --http2")
        #expect(message(["https://x:1/", "-m", "4"]) == "-m (streams per connection) needs --http2")
        #expect(message(["https://x:1/", "-H", "no colon"])?.contains("NAME: VALUE") == true)
        #expect(message(["https://x:1/", "-H", "x: a\rb"])?.contains("CR, LF or NUL") == true)
        let options = try? LoadOptions.parse(["https://x:1/", "--http2", "-c", "3", "-m", "7", "-H", "X-A: 1"])
        #expect(options?.concurrency == 21)
        #expect(options?.headers.first?.name == "x-a")
        #expect(options?.effectiveMethod == "GET")
    }
}

/// The grpcio echo server of `TestSupport/Resources/grpc_echo.py` with a certificate for
/// `localhost` from its own CA; stopped (SIGKILL) when released.
final class GRPCEchoServer {
    let port: Int
    let caPath: String
    private let process = Process()
    private let stdin = Pipe()
    private let directory = TemporaryDirectory()

    init() throws {
        let store = CAStore(directory: directory.file("ca"))
        try store.initialize(name: "gRPC Echo Test CA", keyType: .p256, days: 2, passphrase: nil)
        let leaf = try LeafIssuer(signer: try store.rootSigner(passphrase: nil)).issue(for: [try LeafName("localhost")])
        caPath = store.rootCertificatePath
        let cert = directory.write("server.pem", leaf.certificate.pem)
        let key = directory.write("server.key", bytes: try leaf.key.pem())
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script, "server", cert, key]
        process.standardInput = stdin
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = Int(stdout.fileHandleForReading.readLine()) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("grpc_echo.py did not print its port; is grpcio installed?")
        }
        self.port = port
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TestSupport/Resources/grpc_echo.py").path
    }
}

/// A CONNECT proxy that only relays bytes (Python, threads), recording each CONNECT line.
final class ConnectRelay {
    let port: Int
    private let process = Process()
    private let stdin = Pipe()
    private let log = TemporaryDirectory()

    init() throws {
        let script = """
            import socket, sys, threading
            log = open(sys.argv[1], "a", buffering=1)
            def pipe(a, b):
                try:
                    while True:
                        data = a.recv(65536)
                        if not data:
                            break
                        b.sendall(data)
                except OSError:
                    pass
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            def serve(client):
                head = b""
                while b"\\r\\n\\r\\n" not in head:
                    chunk = client.recv(1)
                    if not chunk:
                        return
                    head += chunk
                line = head.split(b"\\r\\n")[0].decode()
                log.write(line + "\\n")
                host, port = line.split()[1].rsplit(":", 1)
                upstream = socket.create_connection(("127.0.0.1", int(port)))
                client.sendall(b"HTTP/1.1 200 Connection established\\r\\n\\r\\n")
                threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
                pipe(upstream, client)
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(64)
            print(listener.getsockname()[1], flush=True)
            threading.Thread(target=lambda: (sys.stdin.read(), listener.close()), daemon=True).start()
            while True:
                conn, _ = listener.accept()
                threading.Thread(target=serve, args=(conn,), daemon=True).start()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, log.file("connect.log")]
        process.standardInput = stdin
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = Int(stdout.fileHandleForReading.readLine()) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("the CONNECT relay did not start")
        }
        self.port = port
    }

    /// The CONNECT request lines received so far.
    func connectLines() -> [String] {
        ((try? String(contentsOfFile: log.file("connect.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
