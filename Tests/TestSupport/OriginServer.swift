import CertAuthority
import Foundation

/// The Python origin server (`Resources/origin.py`) on 127.0.0.1 with a free port, over TLS
/// with a certificate from its own CA, or plain. Stopped when released.
public final class OriginServer {
    public let port: Int
    /// The CA that signed the origin's certificate (pass it as an upstream CA).
    public let caPath: String
    public let reportsPath: String
    private let process: Process
    private let stdin: Pipe
    private let directory = TemporaryDirectory()

    /// - Parameters:
    ///   - names: the host names in the origin's certificate.
    ///   - launcher: a command the server runs under (`ip netns exec NAME` for a network namespace).
    ///   - bind, port: where it listens (default 127.0.0.1, a free port).
    ///   - certificate: the PEM certificate (chain) and key files to serve instead of a leaf of
    ///     the origin's own CA (`caPath` is then empty).
    public init(tls: Bool = true, names: [String] = ["localhost", "origin.test"], launcher: [String] = [],
                bind: String = "127.0.0.1", port: Int = 0, certificate: (chain: String, key: String)? = nil) throws {
        let certPath: String, keyPath: String
        if let certificate {
            (certPath, keyPath) = certificate
            caPath = ""
        } else {
            let store = CAStore(directory: directory.file("origin-ca"))
            try store.initialize(name: "Origin Test CA", keyType: .p256, days: 2, passphrase: nil)
            let signer = try store.rootSigner(passphrase: nil)
            let leaf = try LeafIssuer(signer: signer).issue(for: try names.map(LeafName.init))
            caPath = store.rootCertificatePath
            certPath = directory.write("origin.pem", leaf.certificate.pem)
            keyPath = directory.write("origin.key", bytes: try leaf.key.pem())
        }
        reportsPath = directory.file("reports.txt")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = launcher + ["python3", Self.scriptPath, "--reports", reportsPath, "--bind", bind, "--port",
                                        String(port)]
            + (tls ? ["--tls", certPath, keyPath] : [])
        let stdout = Pipe()
        stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        try process.run()
        let line = stdout.fileHandleForReading.readLine()
        guard let port = Int(line) else {
            process.terminate()
            throw TestFailure("origin.py did not print its port (got \"\(line)\")")
        }
        self.port = port
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    /// `https://localhost:PORT/path`.
    public func url(_ path: String, tls: Bool = true) -> String { "\(tls ? "https" : "http")://localhost:\(port)\(path)" }

    static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/origin.py").path
    }
}

extension FileHandle {
    /// Reads one line (without the newline), byte by byte; for a child's first line only.
    public func readLine() -> String {
        var bytes: [UInt8] = []
        while true {
            let data = readData(ofLength: 1)
            guard let byte = data.first, byte != UInt8(ascii: "\n") else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
