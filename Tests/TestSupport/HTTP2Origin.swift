import CertAuthority
import Foundation

/// A real HTTPS origin for the HTTP/2 tests on 127.0.0.1 with a free port and a certificate
/// from its own CA: `nghttpd` (HTTP/2 only; it negotiates no ALPN when offered only
/// `http/1.1`), or hypercorn (`Resources/h2origin.py`) speaking h2 and HTTP/1.1, or HTTP/1.1
/// only. Stopped when released.
public final class HTTP2Origin {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        /// nghttpd: h2 only, serving files from a directory (`index.html`, `big.bin`).
        case nghttpd
        /// hypercorn answering `h2` or `http/1.1` in ALPN.
        case hypercornBoth
        /// hypercorn answering `http/1.1` only.
        case hypercornHTTP1
        /// hypercorn without TLS: HTTP/1.1, and h2 by prior knowledge (h2c, as a plaintext gRPC
        /// server speaks it). `url(_:)` does not apply; its scheme is `http`.
        case hypercornCleartext
        /// `Resources/h2bad.py`: Python h2 misbehaving on purpose (resets, GOAWAY, a slow answer).
        case misbehaving
        /// `h2bad.py` whose first connection enables extended CONNECT (RFC 8441) and whose later
        /// ones do not: an origin that changed between two connections.
        case misbehavingConnectOnce
        /// The same first connection, then HTTP/1.1 only (ALPN `http/1.1`, every request 200 "ok").
        case misbehavingThenHTTP1
        /// `Resources/grpcweb_origin.py`: sonora's gRPC-Web server under hypercorn (h2 and HTTP/1.1).
        case grpcWeb
        /// The same with server reflection describing lab.Echo, over gRPC-Web (`--reflect`).
        case grpcWebReflecting
        /// The same without TLS (`http://`; `url(_:)` does not apply).
        case grpcWebReflectingCleartext
        /// `Resources/connect_origin.py`: connect-python's Connect server under hypercorn (h2 and HTTP/1.1).
        case connect
        public var description: String { rawValue }
    }

    public let kind: Kind
    public let port: Int
    /// The CA that signed the origin's certificate (pass it as an upstream CA).
    public let caPath: String
    /// For nghttpd: the directory it serves.
    public let documentRoot: String
    private let process: Process
    private let stdin = Pipe()
    private let directory = TemporaryDirectory()

    /// - Parameter clientCA: hypercorn only: require a client certificate issued by this CA (mTLS).
    public init(_ kind: Kind, clientCA: String? = nil) throws {
        self.kind = kind
        let store = CAStore(directory: directory.file("origin-ca"))
        try store.initialize(name: "HTTP2 Origin Test CA", keyType: .p256, days: 2, passphrase: nil)
        let leaf = try LeafIssuer(signer: try store.rootSigner(passphrase: nil)).issue(for: [try LeafName("localhost")])
        caPath = store.rootCertificatePath
        let certPath = directory.write("origin.pem", leaf.certificate.pem)
        let keyPath = directory.write("origin.key", bytes: try leaf.key.pem())
        documentRoot = directory.file("docroot")
        try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
        try Data("hello from nghttpd\n".utf8).write(to: URL(fileURLWithPath: documentRoot + "/index.html"))
        let stdin = stdin
        let documentRoot = documentRoot
        switch kind {
        case .nghttpd:
            (process, port) = try Self.launchOnFreePort { chosen in
                let process = Process()
                process.standardInput = stdin
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                process.executableURL = URL(fileURLWithPath: "/usr/sbin/nghttpd")
                process.arguments = ["--address=127.0.0.1", "-d", documentRoot, "\(chosen)", keyPath, certPath]
                return process
            }
        case .hypercornBoth, .hypercornHTTP1, .hypercornCleartext, .misbehaving, .misbehavingConnectOnce,
             .misbehavingThenHTTP1, .grpcWeb, .grpcWebReflecting, .grpcWebReflectingCleartext, .connect:
            process = Process()
            process.standardInput = stdin
            let stdout = Pipe()
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let script = [Kind.misbehaving: "h2bad.py", .misbehavingConnectOnce: "h2bad.py", .misbehavingThenHTTP1: "h2bad.py",
                          .grpcWeb: "grpcweb_origin.py", .grpcWebReflecting: "grpcweb_origin.py",
                          .grpcWebReflectingCleartext: "grpcweb_origin.py",
                          .connect: "connect_origin.py"][kind]
            let flags = [Kind.misbehavingConnectOnce: ["--connect-protocol-once"],
                         .misbehavingThenHTTP1: ["--connect-protocol-once", "--then-http1"],
                         .grpcWebReflecting: ["--reflect"], .grpcWebReflectingCleartext: ["--reflect", "--cleartext"]][kind] ?? []
            process.arguments = script != nil
                ? ["python3", Self.resource(script ?? ""), certPath, keyPath] + flags
                : ["python3", Self.resource("h2origin.py"), certPath, keyPath,
                   kind == .hypercornBoth ? "h2,http/1.1" : kind == .hypercornCleartext ? "cleartext" : "http/1.1"]
                    + (clientCA.map { [$0] } ?? [])
            try process.run()
            let line = stdout.fileHandleForReading.readLine()
            guard let chosen = Int(line) else {
                process.terminate()
                throw TestFailure("the \(kind) origin did not print its port (got \"\(line)\"); are hypercorn and h2 (and for grpcWeb, sonora; for connect, connect-python) installed?")
            }
            port = chosen
        }
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        // SIGKILL: a child started by Foundation's Process inherits the blocked signal mask of
        // the dispatch thread that spawned it, and nghttpd never unblocks SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// `https://localhost:PORT/path`.
    public func url(_ path: String) -> String { "https://localhost:\(port)\(path)" }

    /// Writes a file nghttpd serves.
    public func serve(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: documentRoot + "/" + name))
    }

    public static func resource(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/\(name)").path
    }

    /// A loopback port nothing is bound to right now, below the kernel's ephemeral range (so
    /// neither a listener on port 0 nor an outgoing connection's source port can take it between
    /// this call and the server's bind; only another caller of this could, at random).
    public static func freePort() throws -> Int {
        let ephemeralLow = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") } ?? 32768
        let range = 10_000..<max(ephemeralLow, 20_000)
        for _ in 0..<200 {
            let candidate = Int.random(in: range)
            if bindable(candidate) { return candidate }
        }
        throw TestFailure("cannot find a free port in \(range)")
    }

    private static func bindable(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withLoopback(port) { bind(fd, $0, $1) == 0 }
    }

    /// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length.
    private static func withLoopback<R>(_ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// Starts the server `make` builds for a free port and waits until it listens; when the
    /// process exits first (the port was taken after all), tries again with another port, up to
    /// five times. Returns the running process and its port.
    public static func launchOnFreePort(_ make: (Int) throws -> Process) throws -> (Process, Int) {
        var reasons: [String] = []
        for _ in 0..<5 {
            let port = try freePort()
            let process = try make(port)
            try process.run()
            if try waitUntilListening(port, process: process) { return (process, port) }
            process.waitUntilExit()
            reasons.append("port \(port): exited with \(process.terminationStatus)")
        }
        throw TestFailure("the server never listened (\(reasons.joined(separator: "; ")))")
    }

    /// Waits up to 10 s for a listener on `port`; false as soon as `process` has exited (it could
    /// not listen) instead of waiting on.
    private static func waitUntilListening(_ port: Int, process: Process) throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            guard process.isRunning else { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = withLoopback(port) { connect(fd, $0, $1) == 0 }
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        throw TestFailure("nothing listens on port \(port) after 10 s")
    }
}
