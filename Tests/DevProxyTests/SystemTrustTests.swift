import CertAuthority
import CTLS
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Upstream roots come from a hashed certificate directory, read a root at a time as chains
/// need them, unless the environment points OpenSSL elsewhere or there is no such directory.
@Suite struct SystemTrustTests {
    @Test func hashLinkNames() {
        #expect(TLSContext.SystemTrust.isHashLink("5ad8a5d6.0"))
        #expect(TLSContext.SystemTrust.isHashLink("9D04F354.12"))
        #expect(!TLSContext.SystemTrust.isHashLink("5ad8a5d6"))
        #expect(!TLSContext.SystemTrust.isHashLink("5ad8a5d.0"))
        #expect(!TLSContext.SystemTrust.isHashLink("5ad8a5d6.r0"), "a CRL link is not a certificate")
        #expect(!TLSContext.SystemTrust.isHashLink("ca-certificates.crt"))
    }

    @Test func detectPrefersAHashedDirectoryUnlessTheEnvironmentSaysOtherwise() throws {
        let dir = TemporaryDirectory()
        #expect(TLSContext.SystemTrust.detect(environment: [:], directory: dir.path) == .openSSLDefaults, "no hash links")
        try Data().write(to: URL(fileURLWithPath: dir.file("0123abcd.0")))
        #expect(TLSContext.SystemTrust.detect(environment: [:], directory: dir.path) == .hashedDirectory(dir.path))
        #expect(TLSContext.SystemTrust.detect(environment: ["SSL_CERT_FILE": "/x.pem"], directory: dir.path) == .openSSLDefaults)
        #expect(TLSContext.SystemTrust.detect(environment: ["SSL_CERT_DIR": "/x"], directory: dir.path) == .openSSLDefaults)
        #expect(TLSContext.SystemTrust.detect(environment: [:], directory: dir.file("missing")) == .openSSLDefaults)
    }

    /// A real handshake verifies against a root found by hash in the directory, and fails with
    /// OpenSSL's reason when the directory does not hold it.
    @Test func upstreamVerifiesAgainstARootFoundByHash() throws {
        let origin = try OriginServer()
        let hash = try Subprocess.run("openssl", ["x509", "-hash", "-noout", "-in", origin.caPath])
        #expect(hash.status == 0, "\(hash.output)")
        let trusted = TemporaryDirectory()
        try FileManager.default.copyItem(atPath: origin.caPath,
                                         toPath: trusted.file(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + ".0"))
        let empty = TemporaryDirectory()
        var outcomes: [String] = []
        for directory in [trusted, empty] {
            let context = try TLSContext.client(extraCAs: [], insecure: false, systemTrust: .hashedDirectory(directory.path))
            let socket = try Socket.connect(host: "127.0.0.1", port: origin.port, timeout: 5)
            socket.setTimeout(5)
            do {
                let tls = try TLSConnection.connect(socket: socket, context: context, serverName: "localhost")
                outcomes.append(tls.verification.verified ? "verified" : "unverified")
                tls.close()
            } catch let error as TLSError {
                outcomes.append(error.message)
                socket.close()
            }
        }
        #expect(outcomes == ["verified", "certificate verify failed: unable to get local issuer certificate"])
    }

    /// OpenSSL's defaults, a bundle file parsed whole (`SSL_CERT_FILE`, or no hashed directory),
    /// are read at the first connection rather than when the context is made, and once.
    @Test func openSSLDefaultsAreReadAtTheFirstConnectionOnly() throws {
        let bundle = ProcessInfo.processInfo.environment["SSL_CERT_FILE"] ?? String(cString: X509_get_default_cert_file())
        try #require(FileManager.default.fileExists(atPath: bundle), "no CA bundle at \(bundle) on this machine")
        let origin = try OriginServer()
        let context = try TLSContext.client(extraCAs: [], insecure: true, systemTrust: .openSSLDefaults)
        #expect(context.storedObjectCount == 0, "nothing read when the context is made")
        var counts: [Int] = []
        for _ in 0..<2 {
            let socket = try Socket.connect(host: "127.0.0.1", port: origin.port, timeout: 5)
            socket.setTimeout(5)
            let tls = try TLSConnection.connect(socket: socket, context: context, serverName: "localhost")
            tls.close()
            counts.append(context.storedObjectCount)
        }
        #expect(counts[0] > 10, "the bundle's roots are read by the first connection: \(counts)")
        #expect(counts[1] == counts[0], "and not again")
    }
}
