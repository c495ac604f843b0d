import Foundation

/// The QA alternate root: a second root that testers install on devices beside the team root.
///
/// Apps pin the team root, so a leaf from this root is trusted by the device but matches no pin:
/// the `unpinned` persona. Kept in the CA directory as `qa-alternate-root.pem` (0644) and
/// `qa-alternate-root.key` (0600, never encrypted: it guards nothing apps pin).
public struct QAAlternateRoot: Sendable {
    public let store: CAStore

    public init(store: CAStore) {
        self.store = store
    }

    public var certificatePath: String { store.directory + "/qa-alternate-root.pem" }
    public var keyPath: String { store.directory + "/qa-alternate-root.key" }

    /// Whether the alternate root exists.
    public var exists: Bool { FileManager.default.fileExists(atPath: certificatePath) }

    /// The alternate root's certificate; nil when there is none (or it does not read).
    public var certificate: Certificate? {
        guard exists else { return nil }
        return try? Certificate.all(from: SecureFile.read(certificatePath, what: "the QA alternate root")).first
    }

    /// The alternate root, when `certificates` (a chain, a report's, a file traced) hold it or one
    /// it issued: the `unpinned` persona's chain, no engineer's intermediate.
    public func root(of certificates: [Certificate]) -> Certificate? {
        guard let root = certificate, certificates.contains(where: { $0 == root || $0.isIssued(by: root) }) else { return nil }
        return root
    }

    /// Creates the alternate root (P-256, `O=DevProxy, CN=DevProxy QA Alternate Root`).
    ///
    /// - Throws: `.caExists` when one is already there (never overwritten), `.notWritable`.
    @discardableResult
    public func create(days: Int = 825, now: Date = Date()) throws -> Certificate {
        if exists || FileManager.default.fileExists(atPath: keyPath) {
            throw CAError(.caExists, "a QA alternate root already exists at \(certificatePath); remove both files to make a new one")
        }
        try SecureFile.makePrivateDirectory(store.directory)
        let key = try PrivateKey.generate(.p256)
        let root = try CertificateProfile.root(name: "DevProxy QA Alternate Root", unit: nil, notBefore: now.addingTimeInterval(-3600),
                                               notAfter: now.addingTimeInterval(TimeInterval(days) * 86400))
            .sign(publicKey: key, issuer: nil, issuerKey: key)
        try SecureFile.write(try key.pem(), to: keyPath, mode: SecureFile.privateMode, exclusive: true)
        try SecureFile.write(Array(root.pem.utf8), to: certificatePath, mode: SecureFile.publicMode, exclusive: true)
        return root
    }

    /// The alternate root with its key.
    ///
    /// - Throws: `.caMissing` with the command that creates it.
    public func signer() throws -> Signer {
        guard exists else {
            throw CAError(.caMissing, "no QA alternate root in \(store.directory); create it with `devproxy qa init --ca-dir \(store.directory)`")
        }
        let certificate = try Certificate.all(from: try SecureFile.read(certificatePath, what: "the QA alternate root"))[0]
        let key = try PrivateKey(pem: try SecureFile.read(keyPath, what: "the QA alternate root key"))
        return try Signer(certificate: certificate, key: key, root: certificate)
    }
}
