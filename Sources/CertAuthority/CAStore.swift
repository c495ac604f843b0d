import Foundation

/// A CA directory on disk: the team root, its ledger, issued bundles and the CRL.
///
/// Layout: `root.pem` (0644), `root.key` (0600, optionally PKCS#8 AES-256 encrypted),
/// `ledger.jsonl`, `crl.pem`, `intermediates/<email>-<serial>.pem` (bundles, 0600); for a root
/// rotation `next-root.key` (0600) and `next-root.pub`, then `cross.pem` and `retired/`
/// (`CAStore+Rotation.swift`); the directory itself is 0700.
public struct CAStore: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public var rootCertificatePath: String { directory + "/root.pem" }
    public var rootKeyPath: String { directory + "/root.key" }
    public var ledgerPath: String { directory + "/ledger.jsonl" }
    public var crlPath: String { directory + "/crl.pem" }
    /// The number of the last CRL written (decimal), so the next is higher even if crl.pem is lost.
    public var crlNumberPath: String { directory + "/crlnumber" }
    public var intermediatesDirectory: String { directory + "/intermediates" }
    public var ledger: Ledger { Ledger(path: ledgerPath) }

    /// Whether a root exists here.
    public var exists: Bool { FileManager.default.fileExists(atPath: rootCertificatePath) }

    /// The CA directory to use: `--ca-dir`, else `$DEVPROXY_HOME`, else `./ca` when it exists
    /// in the working directory, else `$XDG_DATA_HOME/devproxy` (`~/.local/share/devproxy`).
    public static func resolveDirectory(flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                                        workingDirectory: String = FileManager.default.currentDirectoryPath) -> String {
        if let flag { return flag }
        if let home = environment["DEVPROXY_HOME"], !home.isEmpty { return home }
        var isDirectory: ObjCBool = false
        let local = workingDirectory + "/ca"
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDirectory), isDirectory.boolValue { return local }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? HomeDirectory.current(environment) + "/.local/share"
        return data + "/devproxy"
    }

    /// Longest validity a root may have: 100 years. Past 9999-12-31 a certificate's notAfter
    /// cannot be written (OpenSSL wrote "Bad time value" and reported year 1).
    public static let maximumRootDays = 36_500

    /// - Throws: `.invalidInput` for a root validity outside 1...`maximumRootDays` days.
    static func checkRootDays(_ days: Int) throws {
        guard days > 0, days <= maximumRootDays else {
            throw CAError(.invalidInput, "--days must be a number of days from 1 to \(maximumRootDays) (100 years), not \(days)")
        }
    }

    /// Creates a new root here.
    ///
    /// - Parameters:
    ///   - name: the root's common name.
    ///   - keyType: the root key's algorithm.
    ///   - days: validity; 10 years by default in the CLI, at most `maximumRootDays`.
    ///   - passphrase: when given, `root.key` is PKCS#8 encrypted with AES-256-CBC.
    /// - Throws: `.caExists` when a root is already here (never overwritten), `.notWritable`.
    @discardableResult
    public func initialize(name: String, unit: String? = nil, keyType: KeyType, days: Int, passphrase: String?,
                           now: Date = Date()) throws -> Certificate {
        try Self.checkRootDays(days)
        guard !name.isEmpty, name.count <= 64 else {
            throw CAError(.invalidInput, "--name must be 1 to 64 characters (the X.509 limit for a common name)")
        }
        if exists || FileManager.default.fileExists(atPath: rootKeyPath) {
            throw CAError(.caExists, "a CA already exists in \(directory); refusing to overwrite it (use another --ca-dir)")
        }
        try SecureFile.makePrivateDirectory(directory)
        guard access(directory, W_OK) == 0 else {
            throw CAError(.notWritable, "the CA directory \(directory) is not writable")
        }
        let key = try PrivateKey.generate(keyType)
        let root = try CertificateProfile.root(name: name, unit: unit, notBefore: now.addingTimeInterval(-CertificateProfile.backdate),
                                               notAfter: now.addingTimeInterval(TimeInterval(days) * 86400))
            .sign(publicKey: key, issuer: nil, issuerKey: key)
        // Key first: a root certificate without its key would make the directory look usable.
        try SecureFile.write(try key.pem(passphrase: passphrase), to: rootKeyPath, mode: SecureFile.privateMode, exclusive: true)
        do {
            try ledger.create()
            try ledger.append(LedgerRecord(kind: .root, certificate: root, issuer: nil, keyType: keyType.rawValue, bundle: nil, now: now))
            try SecureFile.write(Array(root.pem.utf8), to: rootCertificatePath, mode: SecureFile.publicMode, exclusive: true)
        } catch {
            unlink(rootKeyPath)
            unlink(ledgerPath)
            throw error
        }
        return root
    }

    /// The root certificate.
    ///
    /// - Throws: `.caMissing` with the command that creates one.
    public func rootCertificate() throws -> Certificate {
        guard exists else {
            throw CAError(.caMissing, "no CA in \(directory); create one with `devproxy ca init --ca-dir \(directory)`")
        }
        let bytes = try SecureFile.read(rootCertificatePath, what: "the root certificate")
        do {
            guard let root = try Certificate.all(from: bytes).first else { throw CAError(.corruptCertificate, "empty") }
            return root
        } catch let error as CAError {
            throw CAError(.corruptCertificate, "\(rootCertificatePath) is not a valid certificate (\(error.reason))")
        }
    }

    /// The root certificate with its key, checked to belong together.
    public func rootSigner(passphrase: String?) throws -> Signer {
        let root = try rootCertificate()
        let pem = try SecureFile.read(rootKeyPath, what: "the root key")
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: pem, passphrase: passphrase)
        } catch let error as CAError where error.code == .corruptKey {
            throw CAError(.corruptKey, "\(rootKeyPath): \(error.reason)")
        }
        guard root.matches(key) else {
            throw CAError(.keyMismatch, "\(rootKeyPath) does not belong to \(rootCertificatePath)")
        }
        // The root must be one the ledger records (`ca init`, `ca rotate`): another CA's pair put
        // here (a mixed-up restore) issued, and signed revocations no device could check, without a
        // word, and `trace` called the real root retired by a rotation that never happened.
        let recorded = (try? ledgerRoots()) ?? []
        if !recorded.isEmpty, !recorded.contains(root) {
            throw CAError(.keyMismatch, "\(rootCertificatePath) (\(root.subject), SHA-256 "
                          + "\(Digest.sha256(root.der).hex.prefix(16))…) is not a root \(ledgerPath) records: another CA's root "
                          + "and key were put here; put this CA's root.pem and root.key back")
        }
        return try Signer(certificate: root, key: key, root: root, crossCertificates: crossCertificates(for: root))
    }
}
