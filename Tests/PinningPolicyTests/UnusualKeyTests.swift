import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// Keys TrustKit cannot hash or hashes differently (spec §1.2), as self-signed certificates made
/// with the `openssl` tool. A self-signed certificate is its own anchor, so the chain verifies.
@Suite struct UnusualKeyTests {
    /// A self-signed certificate for `www.good.com` over a key made by `openssl genpkey args`.
    static func selfSigned(_ keyArguments: [String], compressed: Bool = false) throws -> Certificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let cert = directory.appendingPathComponent("cert.pem").path
        try run(["genpkey"] + keyArguments + ["-out", key])
        if compressed {
            try run(["pkey", "-in", key, "-out", key + ".c", "-ec_conv_form", "compressed"])
            try FileManager.default.removeItem(atPath: key)
            try FileManager.default.moveItem(atPath: key + ".c", toPath: key)
        }
        try run(["req", "-x509", "-new", "-key", key, "-out", cert, "-days", "30", "-subj", "/CN=www.good.com",
                 "-addext", "subjectAltName=DNS:www.good.com"])
        return try Certificate.all(from: [UInt8](Data(contentsOf: URL(fileURLWithPath: cert))))[0]
    }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " "))")
    }

    static let unsupported: [(String, [String])] = [
        ("RSA-1024", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"]),
        ("P-521", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"]),
        ("Ed25519", ["-algorithm", "ED25519"]),
    ]

    @Test(arguments: unsupported)
    func unsupportedKeyBlocksEvenWhenReportOnly(_ label: String, _ arguments: [String]) throws {
        let certificate = try Self.selfSigned(arguments)
        #expect(TrustKitKeyHash.hash(of: certificate) == nil, "\(label)")
        let policy = try TrustKitPolicyParser().parse(configuration: ["TSKPinnedDomains": ["www.good.com": [
            "TSKEnforcePinning": false, "TSKPublicKeyHashes": [String(certificate.pin.dropFirst(7))]]]])
        let verification = ChainVerifier(trustAnchors: [certificate]).verify(chain: [certificate], host: "www.good.com")
        #expect(verification.isVerified)
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification, at: Date())
        #expect(evaluation.validationResult == .errorCouldNotGenerateSpkiHash)
        #expect(evaluation.decision == .shouldBlockConnection)
    }

    @Test func rsaExponent3HashDiffersFromSPKIPin() throws {
        let certificate = try Self.selfSigned(["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                                               "-pkeyopt", "rsa_keygen_pubexp:3"])
        let trustKit = try #require(TrustKitKeyHash.pin(of: certificate))
        #expect("sha256/" + trustKit != certificate.pin)
    }

    @Test func compressedP256HashesTheUncompressedForm() throws {
        let certificate = try Self.selfSigned(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], compressed: true)
        let raw = try #require(TrustKitKeyHash.externalRepresentation(of: certificate))
        #expect(raw.count == 65 && raw.first == 0x04)
        #expect(certificate.spkiDER.count == 59, "the certificate should carry a compressed point")
        let uncompressedSPKI = TrustKitKeyHash.SupportedKey.ecP256.header + raw
        #expect(TrustKitKeyHash.pin(of: certificate) == Digest.sha256(uncompressedSPKI).base64)
        #expect("sha256/" + TrustKitKeyHash.pin(of: certificate)! != certificate.pin)
    }
}
