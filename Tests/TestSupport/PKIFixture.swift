import CertAuthority
import Foundation

/// A CA directory built in code for a test: root → intermediate(email) → leaves.
public final class PKIFixture {
    public let directory = TemporaryDirectory()
    public let store: CAStore
    public let root: Certificate
    public let intermediate: Certificate
    public let bundlePath: String
    public let signer: Signer

    /// - Parameters:
    ///   - rootKey / intermediateKey: key types.
    ///   - permittedDNS: name constraints for the intermediate.
    public init(rootKey: KeyType = .p256, intermediateKey: KeyType = .p256, email: String = "ana@acme.dev",
                permittedDNS: [String] = [], days: Int = 7) throws {
        store = CAStore(directory: directory.file("ca"))
        root = try store.initialize(name: "Test Root", keyType: rootKey, days: 30, passphrase: nil)
        (intermediate, bundlePath) = try store.issueIntermediate(email: email, days: days, permittedDNS: permittedDNS,
                                                                 keyType: intermediateKey, output: nil, passphrase: nil)
        signer = try Signer(bundle: try SecureFile.read(bundlePath, what: "bundle"))
    }

    public var rootPath: String { store.rootCertificatePath }

    /// Writes the intermediate alone to a file and returns its path.
    public func intermediatePath() -> String {
        directory.write("intermediate.pem", intermediate.pem)
    }

    /// `openssl verify` of `leaf` against this root with the intermediate as untrusted.
    public func opensslVerify(_ leaf: Certificate, host: String?, extra: [String] = []) throws -> Subprocess.Result {
        let leafPath = directory.write("leaf-\(UUID().uuidString).pem", leaf.pem)
        var arguments = ["verify", "-x509_strict", "-purpose", "sslserver"]
        if let host { arguments += IPAddressCheck.isIP(host) ? ["-verify_ip", host] : ["-verify_hostname", host] }
        arguments += extra + ["-CAfile", rootPath, "-untrusted", intermediatePath(), leafPath]
        return try Subprocess.run("openssl", arguments)
    }
}

enum IPAddressCheck {
    static func isIP(_ text: String) -> Bool { text.allSatisfy { $0.isNumber || $0 == "." } || text.contains(":") }
}
