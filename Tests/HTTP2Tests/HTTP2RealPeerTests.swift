import Foundation
import Testing
import TestSupport
@testable import HTTP2

/// The codec against libnghttp2's own tools over real TCP on 127.0.0.1 (h2c, prior knowledge):
/// our client session fetches from `nghttpd`, and `nghttp` fetches from our server session.
@Suite(.serialized) struct HTTP2RealPeerTests {
    /// Where Debian's nghttp2-server puts `nghttpd`; nil when it is not installed.
    private static var nghttpd: String? {
        ["/usr/sbin/nghttpd", "/usr/bin/nghttpd"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static var haveTools: Bool {
        nghttpd != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/nghttp")
    }

    @Test(.enabled(if: haveTools, "needs nghttp2-server and nghttp2-client (scripts/test installs them)"))
    func clientSessionFetchesAFileFromNghttpd() throws {
        let directory = TemporaryDirectory()
        // Larger than the stream window, so the fetch only completes if consume reopens it.
        let body = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        _ = directory.write("big.bin", bytes: body)
        let (server, port) = try HTTP2Origin.launchOnFreePort { port in
            let server = Process()
            server.executableURL = URL(fileURLWithPath: try #require(Self.nghttpd))
            server.arguments = ["--no-tls", "--address=127.0.0.1", "-d", directory.path, String(port)]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            return server
        }
        defer { Self.stop(server) }

        let socket = try LoopbackSocket.connect(port: port)
        let session = try HTTP2Session(role: .client)
        let stream = try session.submitRequest(
            .request(method: "GET", scheme: "http", authority: "127.0.0.1:\(port)", path: "/big.bin"), endStream: true)
        var received: [UInt8] = []
        var status: Int?
        var ended = false
        let deadline = Date().addingTimeInterval(15)
        while !ended && Date() < deadline {
            try socket.write(session.pendingOutput())
            guard let bytes = try socket.read(timeout: 0.5) else { break }
            for event in try session.receive(bytes) {
                switch event {
                case let .responseHead(s, head, end) where s == stream:
                    status = head.status
                    ended = end
                case let .data(s, chunk, end) where s == stream:
                    received += chunk
                    try session.consume(stream: s, count: chunk.count)
                    ended = end
                default:
                    break
                }
            }
        }
        #expect(status == 200)
        #expect(ended)
        #expect(received == body)
        try session.goAway()
        try socket.write(session.pendingOutput())
    }

    @Test(.enabled(if: haveTools, "needs nghttp2-client (scripts/test installs it)"))
    func nghttpFetchesFromTheServerSession() throws {
        let listener = try LoopbackSocket.listen()
        let port = listener.port
        let served = ServedRequests()
        let thread = Thread {
            served.error = Self.serveOne(listener, record: served)
            served.done.signal()
        }
        thread.start()
        let result = try Subprocess.run("nghttp", ["-v", "-H", "x-test: yes", "http://127.0.0.1:\(port)/hello"], timeout: 15)
        #expect(served.done.wait(timeout: .now() + 10) == .success)
        #expect(served.error == nil)
        #expect(result.status == 0)
        #expect(result.stdout.contains("hello from the server session"))
        #expect(result.stdout.contains("x-served-by: devproxy"))
        #expect(result.stdout.contains("x-checksum: 42"), "the trailers reach nghttp")
        #expect(served.paths == ["/hello"])
        #expect(served.testHeader == ["yes"])
    }

    /// The test servers start on a port chosen beforehand; one that exits before listening
    /// (the port was taken meanwhile) is started again on another port.
    @Test(.enabled(if: haveTools, "needs nghttp2-server (scripts/test installs it)"))
    func aServerThatCannotListenIsStartedAgainOnAnotherPort() throws {
        var ports: [Int] = []
        let (server, port) = try HTTP2Origin.launchOnFreePort { port in
            ports.append(port)
            let server = Process()
            server.executableURL = URL(fileURLWithPath: ports.count == 1 ? "/bin/false" : try #require(Self.nghttpd))
            server.arguments = ports.count == 1 ? [] : ["--no-tls", "--address=127.0.0.1", String(port)]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            return server
        }
        defer { Self.stop(server) }
        #expect(ports.count == 2)
        #expect(port == ports.last)
        #expect(server.isRunning)
        _ = try LoopbackSocket.connect(port: port, timeout: 1)
    }

    /// Stops a server this test started: SIGTERM, then SIGKILL if it is still there after 2 s
    /// (nghttpd started by Foundation's Process was seen to outlive SIGTERM).
    private static func stop(_ process: Process) {
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// What the server thread saw (written by that thread, read after `done`).
    private final class ServedRequests: @unchecked Sendable {
        var paths: [String] = []
        var testHeader: [String] = []
        var error: String?
        let done = DispatchSemaphore(value: 0)
    }

    /// Accepts one connection and answers every request with a body and trailers until nghttp leaves.
    private static func serveOne(_ listener: LoopbackSocket, record: ServedRequests) -> String? {
        do {
            let socket = try listener.accept(timeout: 10)
            let session = try HTTP2Session(role: .server)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                try socket.write(session.pendingOutput())
                guard let bytes = try socket.read(timeout: 0.5) else { return nil }
                for event in try session.receive(bytes) {
                    if case let .requestHead(stream, head, _) = event {
                        record.paths.append(head.path ?? "")
                        record.testHeader += head.values("x-test")
                        try session.submitResponse(stream: stream, .response(status: 200, fields: [
                            HTTP2Field("content-type", "text/plain"), HTTP2Field("x-served-by", "devproxy"),
                        ]), endStream: false)
                        try session.submitData(stream: stream, Array("hello from the server session\n".utf8), endStream: false)
                        try session.submitTrailers(stream: stream, [HTTP2Field("x-checksum", "42")])
                    }
                    if case let .data(stream, chunk, _) = event { try session.consume(stream: stream, count: chunk.count) }
                }
            }
            return "nghttp did not close within 10 s"
        } catch {
            return "\(error)"
        }
    }
}
